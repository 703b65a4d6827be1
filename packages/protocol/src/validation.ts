/** Turning a zod failure into one message that names every bad field. */
import type { z } from "zod";

/** `callId: Too big: expected string to have <=256 characters; tool: Required` */
export function formatZodIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      return path === "" ? issue.message : `${path}: ${issue.message}`;
    })
    .join("; ");
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** Parses untrusted input; on failure the message names each offending field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown): Parsed<z.infer<S>> {
  const result = schema.safeParse(value);
  return result.success
    ? { ok: true, value: result.data }
    : { ok: false, message: formatZodIssues(result.error) };
}
