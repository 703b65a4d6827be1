/** A problem with this machine or its settings (NATS, Postgres, a port): one line that says what to do. */
export class SetupError extends Error {
  override readonly name = "SetupError";
}
