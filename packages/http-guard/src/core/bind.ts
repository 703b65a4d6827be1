/**
 * The start-up rule: an HTTP server may listen beyond loopback only with bearer tokens, unless the
 * operator said `allow_unauthenticated = true` (a trusted network, a proxy that authenticates).
 */
import { isLoopbackHost } from "@toolbus/config";

export { isLoopbackHost };

export type BindCheck = { ok: true } | { ok: false; message: string };

export function checkBind(options: {
  host: string;
  authenticated: boolean;
  allowUnauthenticated: boolean;
  /** What is starting, for the message: "the gateway", "the approvals inbox". */
  what: string;
}): BindCheck {
  if (options.authenticated || options.allowUnauthenticated || isLoopbackHost(options.host)) {
    return { ok: true };
  }
  return {
    ok: false,
    message: `Refusing to start ${options.what} on ${options.host} without bearer tokens: anyone who can reach that address could call tools and answer approvals. Set [gateway] tokens_env or [gateway.oauth], listen on 127.0.0.1, or set [gateway] allow_unauthenticated = true if something else guards it`,
  };
}
