/** Turning whatever pg throws into a StoreError that says whether retrying can help. */
import pg from "pg";
import { classifyDbFailure, type DbFailureFacts, dbFailureHint } from "../../core/db-failure.js";
import { StoreError } from "../../ports.js";

export function toStoreError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const facts: DbFailureFacts = { message: describe(err) };
  if (err instanceof pg.DatabaseError && err.code !== undefined) facts.sqlState = err.code;
  else if (systemErrorCode(err) !== undefined) facts.errno = systemErrorCode(err);
  const hint = dbFailureHint(facts.sqlState);
  const message =
    facts.sqlState === undefined
      ? facts.message
      : `${facts.message} (SQLSTATE ${facts.sqlState})${hint === undefined ? "" : `; ${hint}`}`;
  return new StoreError(classifyDbFailure(facts), message, { cause: err });
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // A refused connection to a host with several addresses is an AggregateError without a message.
  if (err.message !== "") return err.message;
  return systemErrorCode(err) ?? err.name;
}

/** `ECONNREFUSED` and friends: Node system errors carry an upper-case `code`. */
function systemErrorCode(err: unknown): string | undefined {
  if (!(err instanceof Error) || err instanceof pg.DatabaseError) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && /^E[A-Z0-9_]+$/.test(code) ? code : undefined;
}
