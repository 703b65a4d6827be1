/** A store failure as request/reply callers see it: unreachable database → `server_unavailable`. */
import { WireError } from "@toolbus/protocol";
import { StoreError } from "../ports.js";

/** The wire error for a transient store failure; anything else comes back as it is (answered `internal`). */
export function storeFailureForCaller(err: unknown, what: string): unknown {
  if (err instanceof StoreError && err.kind === "transient") {
    return new WireError(
      "server_unavailable",
      `the memory database is unreachable (${err.message}); ${what} are unavailable until it is back, so retry later`,
      { cause: err },
    );
  }
  return err;
}
