/**
 * The gateway's metrics: sessions held, HTTP requests answered, and tool calls sent through the
 * edge (MCP `tools/call` and REST `POST /v1/calls`), counted where they meet the dispatch port.
 */
import { AttributeCache, defineMetrics, type Instruments, observeGauge } from "@toolbus/bus";
import type { FastifyInstance } from "fastify";
import type { DispatchPort } from "./ports.js";

export const GATEWAY_METRICS = defineMetrics("@toolbus/gateway", {
  sessions: {
    kind: "gauge",
    name: "toolbus.gateway.sessions",
    unit: "{session}",
    description: "MCP sessions this gateway replica holds open.",
    attributes: [],
  },
  httpRequests: {
    kind: "counter",
    name: "toolbus.gateway.http.requests",
    unit: "{request}",
    description:
      "HTTP requests answered, by method, route (the pattern, e.g. `/v1/approvals/:requestId`; `unmatched` when none matched) and status code.",
    attributes: ["http.request.method", "http.route", "http.response.status_code"],
  },
  toolCalls: {
    kind: "counter",
    name: "toolbus.gateway.tool_calls",
    unit: "{call}",
    description:
      "Tool calls sent through the edge, by API (`mcp` or `rest`) and status: the dispatcher's (`completed`, `failed`, `skipped`, `invalid_arguments`), or `error` when it could not be asked or did not answer.",
    attributes: ["toolbus.gateway.api", "toolbus.call.status"],
  },
});

export type GatewayInstruments = Instruments<(typeof GATEWAY_METRICS)["specs"]>;

export type EdgeApi = "mcp" | "rest";

/** The route label of a request no route matched (a 404, or refused before routing). */
const UNMATCHED = "unmatched";

export function gatewayRecorder(instruments: GatewayInstruments = GATEWAY_METRICS.create()) {
  const callAttributes = new AttributeCache((api: string, status: string) => ({
    "toolbus.gateway.api": api,
    "toolbus.call.status": status,
  }));
  const requestAttributes = new AttributeCache((route: string, method: string, status: number) => ({
    "http.request.method": method,
    "http.route": route,
    "http.response.status_code": status,
  }));
  return {
    /** `port`, counting each call's outcome under `api`. */
    countingCalls(port: DispatchPort, api: EdgeApi): DispatchPort {
      const count = (status: string) => instruments.toolCalls.add(1, callAttributes.get(api, status));
      return {
        poll: (request) => port.poll(request),
        call: (request, options) =>
          port.call(request, options).then(
            (reply) => {
              count(reply.status);
              return reply;
            },
            (error: unknown) => {
              count("error");
              throw error;
            },
          ),
      };
    },
    /** Counts every response `app` sends, hijacked ones (`/mcp`) included. */
    countRequests(app: FastifyInstance): void {
      // Callback style: no promise per request.
      app.addHook("onResponse", (request, reply, done) => {
        const route = request.routeOptions.url ?? UNMATCHED;
        instruments.httpRequests.add(1, requestAttributes.get(route, request.method, reply.statusCode));
        done();
      });
    },
    /** Reports `size()` as the open sessions on each export; returns the function that stops it. */
    observeSessions(size: () => number): () => void {
      return observeGauge(instruments.sessions, (result) => result.observe(size()));
    },
  };
}
