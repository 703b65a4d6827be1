/** The reply envelope every request/reply subject answers with (docs/contract.md "Conventions"). */
import { z } from "zod";
import { ERROR_CODES, type ErrorCode, RETRYABLE_BY_DEFAULT } from "./errors.js";

export const WireErrorBodySchema = z.object({
  code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]),
  message: z.string(),
  retryable: z.boolean(),
});
export type WireErrorBody = z.infer<typeof WireErrorBodySchema>;

export type Envelope<T> = { ok: true; result: T } | { ok: false; error: WireErrorBody };

/** The envelope schema for a reply whose result has the given schema. */
export function envelopeSchema<T extends z.ZodType>(result: T) {
  return z.discriminatedUnion("ok", [
    z.object({ ok: z.literal(true), result }),
    z.object({ ok: z.literal(false), error: WireErrorBodySchema }),
  ]);
}

export function okEnvelope<T>(result: T): Envelope<T> {
  return { ok: true, result };
}

export function errorEnvelope(code: ErrorCode, message: string, retryable?: boolean): Envelope<never> {
  return { ok: false, error: { code, message, retryable: retryable ?? RETRYABLE_BY_DEFAULT[code] } };
}
