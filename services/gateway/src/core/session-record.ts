/**
 * What a gateway replica needs to serve a session another replica started: the client's
 * initialize request (protocol version, capabilities, client info) plus the little state the
 * client set since (log level, the catalog revision it last listed, the threads it named). Kept
 * in the NATS KV bucket `<prefix>_gateway_sessions`; a replica that does not hold a session
 * rebuilds it from this.
 */
import { VIEW_NAME_PATTERN } from "@toolbus/config";
import { LoggingLevel, MAX_ID_LENGTH } from "@toolbus/protocol";
import { z } from "zod";
import { MAX_SESSION_THREADS } from "./session-threads.js";

/** The ids this gateway issues are UUIDs; anything else is never looked up. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9-]{8,128}$/;

export const SessionRecordSchema = z.object({
  sessionId: z.string().regex(SESSION_ID_PATTERN),
  protocolVersion: z.string().min(1),
  capabilities: z.record(z.string(), z.unknown()),
  clientInfo: z.looseObject({ name: z.string(), version: z.string() }),
  createdAt: z.string(),
  /** Who started the session (the token's principal): only they may use it. Absent: `anonymous`. */
  principal: z.string().min(1).optional(),
  /** The view it was started on (`/mcp/<view>`): it serves that view alone. Absent: `/mcp`. */
  view: z.string().regex(VIEW_NAME_PATTERN).optional(),
  /** The catalog revision of the client's last `tools/list`: calls are checked against it. */
  listedRevision: z.int().nonnegative().optional(),
  logLevel: z.enum(LoggingLevel).optional(),
  /**
   * The threads the client named in `_meta.threadId` (first named first, at most
   * MAX_SESSION_THREADS): their session grants end with the session, as the session's own do.
   */
  threads: z.array(z.string().min(1).max(MAX_ID_LENGTH)).max(MAX_SESSION_THREADS).optional(),
});
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

/** Whether a client's initialize capabilities allow an elicitation of this mode. */
export function supportsElicitation(capabilities: Record<string, unknown>, mode: "form" | "url"): boolean {
  const elicitation = capabilities.elicitation;
  if (elicitation === null || typeof elicitation !== "object") return false;
  const keys = Object.keys(elicitation);
  // `elicitation: {}` is the pre-2025-11-25 way of saying form support.
  if (keys.length === 0) return mode === "form";
  return (elicitation as Record<string, unknown>)[mode] !== undefined;
}

/**
 * Whether a client's initialize capabilities allow `sampling/createMessage`; `withTools`: one that
 * offers the model tools (`sampling.tools`, MCP 2025-11-25).
 */
export function supportsSampling(capabilities: Record<string, unknown>, withTools = false): boolean {
  const sampling = capabilities.sampling;
  if (sampling === null || typeof sampling !== "object") return false;
  return !withTools || (sampling as Record<string, unknown>).tools !== undefined;
}
