/**
 * One way to start a service (issue 23, item 7): `pnpm start` and each service's own process
 * (`services/<name>/src/main.ts`, what deployments and the cluster harness run) start every
 * service from the same definition, read its settings with the same code, and so cannot drift.
 * Both run side by side on one nats-server of this test's own and one prefix: each service that
 * serves the bus announces itself in `$SRV.INFO` twice, the same way, and both gateways (which
 * serve HTTP, not the bus) take their limits from `TOOLBUS_GATEWAY_*`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { freePort, isolation, type NatsServerProcess, startNatsServer, withPgSchema } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exited, ROOT, type RunningToolbus, startEntry, startToolbus, until } from "./support/pnpm-start.js";

const ROLES = ["catalog", "dispatcher", "approvals", "memory", "gateway"] as const;
/** The services with endpoints on the bus, so in `$SRV.INFO` (the gateway only sends requests). */
const ANNOUNCED = ["catalog", "dispatcher", "approvals", "memory"] as const;
/** Far below the default (4 MiB): a body over it is refused only where the variable was read. */
const BODY_LIMIT_BYTES = 4096;

describe("pnpm start and each service's own process", () => {
  const { prefix } = isolation("one-definition");
  let nats: NatsServerProcess;
  let schema: Awaited<ReturnType<typeof withPgSchema>>;
  let client: NatsConnection;
  const processes: RunningToolbus[] = [];
  let allInOneUrl: string;
  let gatewayUrl: string;
  const dir = mkdtempSync(join(tmpdir(), "toolbus-one-definition-"));

  beforeAll(async () => {
    nats = await startNatsServer();
    schema = await withPgSchema(process.env.DATABASE_URL!, "one-definition");
    const config = join(dir, "toolbus.toml");
    const allInOnePort = await freePort();
    // No MCP server: this is about how the services start, not what they serve.
    writeFileSync(config, `[gateway]\nport = ${allInOnePort}\n`);
    const env = {
      NATS_URL: nats.url,
      TOOLBUS_PREFIX: prefix,
      DATABASE_URL: schema.url,
      TOOLBUS_GATEWAY_BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES),
      LOG_LEVEL: "info",
    };
    const allInOne = startToolbus(["--config", config], env, dir);
    processes.push(allInOne);
    await until(() => allInOne.output().includes("MCP endpoint"), "pnpm start's announcement");
    allInOneUrl = `http://127.0.0.1:${allInOnePort}`;

    // Then each service as its own process, on the prefix `pnpm start` provisioned.
    const gatewayPort = await freePort();
    const flags: Record<(typeof ROLES)[number], string[]> = {
      catalog: [],
      dispatcher: [],
      approvals: ["--port", "0"],
      memory: [],
      gateway: ["--host", "127.0.0.1", "--port", String(gatewayPort)],
    };
    const services = ROLES.map((role) =>
      startEntry(
        [join(ROOT, "services", role, "src", "main.ts")],
        ["--config", config, ...flags[role]],
        env,
        dir,
      ),
    );
    processes.push(...services);
    await Promise.all(
      services.map((service, index) =>
        until(
          () => service.output().includes(`"msg":"${ROLES[index]} ready"`) || service.child.exitCode !== null,
          `${ROLES[index]} ready`,
        ),
      ),
    );
    const exitedEarly = services.flatMap((service, index) =>
      service.child.exitCode === null ? [] : [`${ROLES[index]}: ${service.output()}`],
    );
    expect(exitedEarly).toEqual([]);
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    client = await connect({ servers: nats.url });
  });

  afterAll(async () => {
    await client?.close();
    for (const running of processes) running.child.kill("SIGTERM");
    await Promise.all(processes.map((running) => exited(running.child)));
    await nats?.stop();
    await schema?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("announce each service on the bus in $SRV.INFO with the same description, from its one definition", async () => {
    const descriptions = new Map<string, string[]>();
    // Only this test's processes are on this nats-server: two of each service that serves the bus.
    for await (const reply of await client.requestMany("$SRV.INFO", "", {
      strategy: "count",
      maxMessages: ANNOUNCED.length * 2,
      maxWait: 30_000,
    })) {
      const info = reply.json<{ name: string; description: string }>();
      descriptions.set(info.name, [...(descriptions.get(info.name) ?? []), info.description]);
    }
    // Two instances of each (pnpm start's and the process's), both described alike, and not blank.
    const seen = ANNOUNCED.map((role) => {
      const each = descriptions.get(role) ?? [];
      return {
        role,
        instances: each.length,
        kinds: new Set(each).size,
        blank: each.some((d) => d.trim() === ""),
      };
    });
    expect(seen).toEqual(ANNOUNCED.map((role) => ({ role, instances: 2, kinds: 1, blank: false })));
  });

  it("gives both gateways the body limit of TOOLBUS_GATEWAY_BODY_LIMIT_BYTES", async () => {
    const refusal = async (url: string) => {
      const response = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "ping",
          params: { pad: "x".repeat(8 * 1024) },
        }),
      });
      const body = (await response.json()) as { error?: { message?: string } };
      return { status: response.status, message: body.error?.message };
    };
    const [allInOne, standalone] = await Promise.all([refusal(allInOneUrl), refusal(gatewayUrl)]);
    expect(standalone).toEqual({
      status: 413,
      message: expect.stringContaining("Payload Too Large: the request body is over the limit of 4 KiB"),
    });
    expect(allInOne).toEqual(standalone);
  });
});
