/**
 * `/healthz` and `/readyz` of every toolbus HTTP server, in one shape: alive is `{status:"ok"}`;
 * ready is `200 {status:"ready", …}` or `503 {status:"not_ready", …}` with one boolean per
 * dependency (the gateway: `bus`, `catalog`; the approvals inbox: `bus`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from "fastify";
import { routeAccess } from "./guard.js";

export function installProbes<L extends FastifyBaseLogger>(
  app: FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, L>,
  readiness: () => Record<string, boolean>,
): void {
  app.get("/healthz", routeAccess("health"), async () => ({ status: "ok" }));
  app.get("/readyz", routeAccess("probe"), async (_request, reply) => {
    const state = readiness();
    const ready = Object.values(state).every(Boolean);
    return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "not_ready", ...state });
  });
}
