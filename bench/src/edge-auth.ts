/**
 * What authenticating a request costs at the edge: the gateway's guard (`installHttpGuard`) in
 * front of one route that answers at once, on a fastify app driven with `inject` (no sockets,
 * so only the guard and fastify are measured). Four ways in: auth off, a static token (a
 * SHA-256 and constant-time compares), a JWT access token of a real identity provider (the
 * testkit's oidc-provider; RS256, the issuer's keys fetched once and cached), reused as the
 * gateway does (a good token's principal is kept for 30 s, never past its exp) and verified on
 * every request (the cost of a token's first request: a signature verification and the claim
 * checks), and an opaque token by introspection (its answer reused likewise). Rounds alternate between them so
 * the machine's load falls on all alike. Reported: requests/s, p50/p99 of one request, CPU per
 * request (`process.cpuUsage` over the rounds), and the difference from a static token.
 *
 * Standalone, after `pnpm build`: `node --conditions=@toolbus/source --import tsx bench/src/edge-auth.ts`.
 */
import { performance } from "node:perf_hooks";
import type { OAuthConfig } from "@toolbus/config";
import { createOAuthResourceServer, installHttpGuard, routeAccess } from "@toolbus/http-guard";
import { startIdentityProvider } from "@toolbus/testkit/identity-provider";
import Fastify, { type FastifyInstance } from "fastify";
import { type BenchRow, formatTable, isEntryModule, percentile } from "./bench-table.js";

const WARMUP = 2_000;
const ROUNDS = 10;
const PER_ROUND = 2_000;
const ORIGIN = "http://toolbus.bench";
/** Another origin, whose resource the provider issues opaque tokens for. */
const OPAQUE_ORIGIN = "http://opaque.toolbus.bench";
const STATIC_TOKEN = "bench-static-token-0123456789abcdef";

interface Way {
  name: string;
  app: FastifyInstance;
  headers: Record<string, string>;
  latencies: number[];
  cpuMicros: number;
  elapsedMs: number;
}

export async function runGatewayAuthBench(): Promise<BenchRow[]> {
  const idp = await startIdentityProvider({ opaqueResources: [`${OPAQUE_ORIGIN}/mcp`] });
  const apps: FastifyInstance[] = [];
  try {
    const oauth = (introspect: boolean): OAuthConfig => ({
      issuer: idp.issuer,
      scopesSupported: [],
      principalClaim: "sub",
      nameClaim: "name",
      groupsClaim: "groups",
      adminGroups: [],
      approverGroups: [],
      adminScopes: [],
      approverScopes: [],
      algorithms: ["RS256"],
      ...(introspect
        ? { introspection: { clientId: idp.introspectionClient.clientId, clientSecretEnv: "unused" } }
        : {}),
    });
    const app = async (options: {
      tokens: boolean;
      oauth?: OAuthConfig;
      publicUrl?: string;
      /** Reuse a good token's principal (the default), or check the token on every request. */
      reuse?: boolean;
    }) => {
      const server = Fastify({ logger: false });
      apps.push(server);
      installHttpGuard(server, {
        allowedHosts: ["*"],
        principals: options.tokens ? [{ name: "bench", role: "caller", token: STATIC_TOKEN }] : [],
        ...(options.oauth
          ? {
              oauth: createOAuthResourceServer({
                config: options.oauth,
                introspectionSecret: idp.introspectionClient.clientSecret,
                ...(options.reuse === false ? { limits: { tokens: { entries: 0 } } } : {}),
              }),
            }
          : {}),
        ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
        streams: { total: 10, perClient: 10 },
      });
      server.post("/mcp", routeAccess("call"), async () => ({ ok: true }));
      await server.ready();
      return server;
    };
    const jwt = await idp.accessToken({ login: "bench", resource: `${ORIGIN}/mcp` });
    const opaque = await idp.accessToken({ login: "bench", resource: `${OPAQUE_ORIGIN}/mcp` });
    const way = (name: string, server: FastifyInstance, token?: string): Way => ({
      name,
      app: server,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      latencies: [],
      cpuMicros: 0,
      elapsedMs: 0,
    });
    const ways = [
      way("auth off", await app({ tokens: false })),
      way("static token", await app({ tokens: true }), STATIC_TOKEN),
      way(
        "JWT access token (RS256)",
        await app({ tokens: true, oauth: oauth(false), publicUrl: ORIGIN }),
        jwt,
      ),
      way(
        "JWT, verified on every request",
        await app({ tokens: true, oauth: oauth(false), publicUrl: ORIGIN, reuse: false }),
        jwt,
      ),
      way(
        "opaque token (introspected, cached)",
        await app({ tokens: true, oauth: oauth(true), publicUrl: OPAQUE_ORIGIN }),
        opaque,
      ),
    ];
    for (const each of ways) {
      await batch(each, WARMUP, false);
      const probe = await each.app.inject({
        method: "POST",
        url: "/mcp",
        headers: each.headers,
        payload: {},
      });
      if (probe.statusCode !== 200)
        throw new Error(`${each.name}: the guard answered ${probe.statusCode}: ${probe.body}`);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (let turn = 0; turn < ways.length; turn++)
        await batch(ways[(round + turn) % ways.length]!, PER_ROUND, true);
    }
    const perRequest = (each: Way) => each.cpuMicros / each.latencies.length;
    const staticCpu = perRequest(ways[1]!);
    return ways.map((each) => {
      const sorted = [...each.latencies].sort((a, b) => a - b);
      return {
        name: each.name,
        requests: sorted.length,
        "req/s": Math.round(sorted.length / (each.elapsedMs / 1000)),
        "p50 µs": Math.round(percentile(sorted, 0.5) * 1000),
        "p99 µs": Math.round(percentile(sorted, 0.99) * 1000),
        "CPU µs/req": Math.round(perRequest(each)),
        "CPU vs static token, µs": Math.round(perRequest(each) - staticCpu),
      };
    });
  } finally {
    for (const server of apps) await server.close();
    await idp.stop();
  }
}

/** `n` requests one after another (inject), timed one by one, CPU over the whole batch. */
async function batch(way: Way, n: number, record: boolean): Promise<void> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const begun = performance.now();
    const response = await way.app.inject({ method: "POST", url: "/mcp", headers: way.headers, payload: {} });
    if (record) way.latencies.push(performance.now() - begun);
    if (response.statusCode !== 200) throw new Error(`${way.name}: answered ${response.statusCode}`);
  }
  if (!record) return;
  way.elapsedMs += performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  way.cpuMicros += cpu.user + cpu.system;
}

if (isEntryModule(import.meta.url)) {
  console.log(formatTable(await runGatewayAuthBench()));
  process.exit(0);
}
