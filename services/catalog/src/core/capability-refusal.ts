/**
 * A 2026-07-28 server's refusal of a call for want of a capability the caller did not declare
 * (MCP -32021, `data.requiredCapabilities`): not a failure of toolbus's, but the server's answer
 * about this caller. It is carried as an error result (the tool did not run; a model reads why)
 * naming the capabilities in `_meta`, so the edge can answer a 2026-07-28 client with the
 * server's own error.
 */
import { MISSING_CLIENT_CAPABILITY_CODE, REQUIRED_CLIENT_CAPABILITIES_META } from "@toolbus/protocol";

export function capabilityRefusal(error: unknown, server: string): Record<string, unknown> | undefined {
  const { code, message, data } = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  if (code !== MISSING_CLIENT_CAPABILITY_CODE) return undefined;
  const declared = (data as { requiredCapabilities?: unknown } | undefined)?.requiredCapabilities;
  const required = isRecord(declared) ? declared : {};
  const names = Object.keys(required);
  const said = String(message ?? "").replace(/^(MCP error -?\d+: )+/, "");
  return {
    content: [
      {
        type: "text",
        text: `MCP server ${server} did not run the tool: the calling MCP client must declare ${names.length > 0 ? names.join(", ") : "a capability it did not"} (${said})`,
      },
    ],
    isError: true,
    _meta: { [REQUIRED_CLIENT_CAPABILITIES_META]: required },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
