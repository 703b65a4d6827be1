/**
 * Whether a database failure is transient (the database is down, restarting, overloaded, or
 * the transaction lost a race: try the same work again later) or permanent (this work will
 * fail the same way every time). Decided from what the pg driver reports, given as data.
 */

export interface DbFailureFacts {
  /** The SQLSTATE of an error the server reported (pg `DatabaseError.code`). */
  sqlState?: string;
  /** The Node system error code of a socket failure (`ECONNREFUSED`, …). */
  errno?: string;
  message: string;
}

export type DbFailureKind = "transient" | "permanent";

/** SQLSTATE classes and codes that say "not now" rather than "never". */
const TRANSIENT_SQLSTATE_CLASSES = ["08", "53", "57", "58"];
const TRANSIENT_SQLSTATES = ["40001", "40P01", "55P03", "25P03"];
// 57014 query_canceled is also in class 57: a statement timeout may pass next time.

/** What the pg driver says when the connection, not the SQL, failed. */
const CONNECTION_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /not queryable/i,
  /connection (is )?closed/i,
  /server closed the connection/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

export function classifyDbFailure(facts: DbFailureFacts): DbFailureKind {
  if (facts.sqlState !== undefined) {
    const transient =
      TRANSIENT_SQLSTATES.includes(facts.sqlState) ||
      TRANSIENT_SQLSTATE_CLASSES.includes(facts.sqlState.slice(0, 2));
    return transient ? "transient" : "permanent";
  }
  if (facts.errno !== undefined) return "transient";
  return CONNECTION_MESSAGES.some((pattern) => pattern.test(facts.message)) ? "transient" : "permanent";
}

/** What to do about a failure an operator must fix, by SQLSTATE. */
const HINTS: Readonly<Record<string, string>> = {
  "3F000":
    "create the schema DATABASE_URL's search_path names (CREATE SCHEMA <name>), or fix the options in DATABASE_URL",
  "3D000": "create the database DATABASE_URL names, or fix DATABASE_URL",
  "28000": "check the user and password in DATABASE_URL",
  "28P01": "check the user and password in DATABASE_URL",
  "42501": "grant the DATABASE_URL user the rights to create tables in its schema",
};

export function dbFailureHint(sqlState: string | undefined): string | undefined {
  return sqlState === undefined ? undefined : HINTS[sqlState];
}
