/**
 * Startup and catalog events on the events stream (docs/contract.md "Catalog", docs/reference-behavior.md §2.3):
 * one server's status change, the startup summary, "these servers' tools changed", and "this
 * server's prompts changed".
 */
import { z } from "zod";
import { MAX_SERVER_NAME_LENGTH, RevisionSchema, ServerNameSchema, TimestampSchema } from "./primitives.js";

/** The states a started server passes through: `starting`, then exactly one of the others. */
export const StartupState = {
  starting: "starting",
  ready: "ready",
  failed: "failed",
  cancelled: "cancelled",
} as const;
export type StartupState = (typeof StartupState)[keyof typeof StartupState];

export const StartupFailureReason = { reauthenticationRequired: "reauthentication_required" } as const;
export type StartupFailureReason = (typeof StartupFailureReason)[keyof typeof StartupFailureReason];

/** Tagged by `state`; `failed` carries the display error and maybe a reason. */
export const StartupStatusSchema = z.discriminatedUnion("state", [
  z.object({ state: z.literal(StartupState.starting) }),
  z.object({ state: z.literal(StartupState.ready) }),
  z.object({
    state: z.literal(StartupState.failed),
    error: z.string(),
    reason: z.enum(StartupFailureReason).optional(),
  }),
  z.object({ state: z.literal(StartupState.cancelled) }),
]);
export type StartupStatus = z.infer<typeof StartupStatusSchema>;

/** `<prefix>.events.server.<server>` */
export const ServerStatusEventSchema = z.object({
  server: ServerNameSchema,
  status: StartupStatusSchema,
  at: TimestampSchema,
});
export type ServerStatusEvent = z.infer<typeof ServerStatusEventSchema>;

export const StartupFailureSchema = z.object({
  /** Any configured name: a server whose name breaks the pattern fails start-up for that reason (§2.1). */
  server: z.string().max(MAX_SERVER_NAME_LENGTH),
  /** The raw error, not the display string of the status event. */
  error: z.string(),
});
export type StartupFailure = z.infer<typeof StartupFailureSchema>;

/** `<prefix>.events.startup_complete`: once every started server has settled. */
export const StartupCompleteEventSchema = z.object({
  ready: z.array(ServerNameSchema),
  failed: z.array(StartupFailureSchema),
  cancelled: z.array(ServerNameSchema),
});
export type StartupCompleteEvent = z.infer<typeof StartupCompleteEventSchema>;

/** `<prefix>.events.catalog`: the catalog moved to `revision`; these servers' tools changed. */
export const CatalogEventSchema = z.object({
  revision: RevisionSchema,
  changed: z.array(ServerNameSchema),
});
export type CatalogEvent = z.infer<typeof CatalogEventSchema>;

/**
 * `<prefix>.events.prompts`: a server sent `notifications/prompts/list_changed`. Prompts are
 * listed live (not stored in the catalog bucket), so this is the only trace of the change.
 */
export const PromptsChangedEventSchema = z.object({
  server: ServerNameSchema,
  at: TimestampSchema,
});
export type PromptsChangedEvent = z.infer<typeof PromptsChangedEventSchema>;
