/** What `toolbus approvals ...` asks for: the list, the watch loop, or one answer. */
import type { ApprovalChoice } from "@toolbus/protocol";
import { ALL_CHOICES, parseApprovalChoice, toRequestId } from "./approval-choice.js";
import type { Checked } from "./commands.js";

export type ApprovalsAction =
  | { kind: "list" }
  | { kind: "watch" }
  | { kind: "answer"; requestId: string; choice: ApprovalChoice };

export function approvalsAction(positionals: readonly string[], watch: boolean): Checked<ApprovalsAction> {
  const [verb, id, choice, ...extra] = positionals;
  if (verb === undefined) return { ok: true, value: watch ? { kind: "watch" } : { kind: "list" } };
  if (verb !== "answer") {
    return {
      ok: false,
      message: `unknown approvals action ${JSON.stringify(verb)}; use \`toolbus approvals answer <requestId> <choice>\``,
    };
  }
  if (watch) return { ok: false, message: "--watch cannot be combined with answer" };
  if (id === undefined || choice === undefined || id.trim() === "") {
    return {
      ok: false,
      message: `toolbus approvals answer needs <requestId> <choice> (${ALL_CHOICES.join(", ")})`,
    };
  }
  if (extra.length > 0) {
    return {
      ok: false,
      message: `toolbus approvals answer takes two arguments; unexpected ${JSON.stringify(extra[0])}`,
    };
  }
  const parsed = parseApprovalChoice(choice, ALL_CHOICES);
  if (!parsed.ok) return parsed;
  return { ok: true, value: { kind: "answer", requestId: toRequestId(id.trim()), choice: parsed.value } };
}
