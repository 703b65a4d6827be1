/** The raw call to a server's connector, `<prefix>.connector.<server>.call`, in its own span. */
import { type Bus, withSpan } from "@toolbus/bus";
import { type CallToolResult, ConnectorCallResultSchema, type Subjects } from "@toolbus/protocol";
import type { ConnectorPort } from "../../handlers/dispatch-call.js";

/** Longer than any tool timeout: the connector enforces `tool_timeout_sec` and answers. */
const CONNECTOR_GRACE_MS = 5_000;

export function createConnectorClient(deps: {
  bus: Bus;
  subjects: Subjects;
  toolTimeoutMs: (server: string) => number;
}): ConnectorPort {
  return {
    call(server, request): Promise<CallToolResult> {
      return withSpan(
        "toolbus.connector.call",
        { "mcp.call_id": request.callId, "mcp.server": server, "mcp.tool": request.tool },
        async () => {
          const reply = await deps.bus.request(
            deps.subjects.connectorCall(server),
            request,
            ConnectorCallResultSchema,
            {
              timeoutMs: deps.toolTimeoutMs(server) + CONNECTOR_GRACE_MS,
            },
          );
          return reply.result;
        },
      );
    },
  };
}
