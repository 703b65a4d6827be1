/**
 * `prompts/list`, `prompts/get` and `completion/complete`. Upstream prompts are not in the
 * catalog yet, so the list is empty, a get names that gap, and completions are empty.
 */
import { JsonRpcCode } from "../core/jsonrpc-errors.js";
import { RequestFailure } from "../ports.js";

export function listPrompts(): { prompts: never[] } {
  return { prompts: [] };
}

export function getPrompt(name: string): never {
  throw new RequestFailure(
    JsonRpcCode.invalidParams,
    `Unknown prompt: ${name}. toolbus does not relay prompts yet (upstream prompts are not in the catalog); prompts/list shows what it serves`,
  );
}

export function complete(): { completion: { values: string[]; hasMore: false } } {
  return { completion: { values: [], hasMore: false } };
}
