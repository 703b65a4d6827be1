/**
 * A person's answer to an approval request, typed as a key or a word (`a`, `allow`,
 * `allow_session`, `d`, …), checked against the choices the request offers. Decline and
 * cancel are always possible; the allow variants only when the request lists them.
 */
import {
  APPROVAL_REQUEST_ID_PREFIX,
  type ApprovalChoice,
  type ApprovalRequest,
  approvalRequestId,
} from "@toolbus/protocol";
import type { Checked } from "./commands.js";

export interface ChoiceKey {
  readonly choice: ApprovalChoice;
  readonly key: string;
  /** Words that also mean this choice (the choice id itself always does). */
  readonly words: readonly string[];
  /** The label when the request does not give one. */
  readonly label: string;
}

/** In the order they are offered. */
export const CHOICE_KEYS: readonly ChoiceKey[] = [
  { choice: "allow", key: "a", words: ["allow", "yes", "y"], label: "Allow" },
  { choice: "allow_session", key: "s", words: ["session"], label: "Allow for this session" },
  { choice: "allow_always", key: "p", words: ["always", "persist"], label: "Allow and don't ask me again" },
  { choice: "decline", key: "d", words: ["deny", "no", "n"], label: "Decline" },
  { choice: "cancel", key: "c", words: [], label: "Cancel" },
];

const ALWAYS_OFFERED: readonly ApprovalChoice[] = ["decline", "cancel"];

/** The choices a request allows, in `CHOICE_KEYS` order. */
export function offeredChoices(request: Pick<ApprovalRequest, "options">): ApprovalChoice[] {
  const listed = new Set<ApprovalChoice>(request.options.map((o) => o.id));
  return CHOICE_KEYS.map((k) => k.choice).filter((c) => listed.has(c) || ALWAYS_OFFERED.includes(c));
}

/** Every choice, for `approvals answer` (the service checks what the request allows). */
export const ALL_CHOICES: readonly ApprovalChoice[] = CHOICE_KEYS.map((k) => k.choice);

export function parseApprovalChoice(
  input: string,
  offered: readonly ApprovalChoice[],
): Checked<ApprovalChoice> {
  const text = input.trim().toLowerCase().replaceAll("-", "_");
  const match = CHOICE_KEYS.find((k) => text === k.key || text === k.choice || k.words.includes(text));
  const options = CHOICE_KEYS.filter((k) => offered.includes(k.choice))
    .map((k) => `${k.key} (${k.choice})`)
    .join(", ");
  if (!match) {
    return {
      ok: false,
      message: `${JSON.stringify(input.trim())} is not a choice; answer one of ${options}`,
    };
  }
  if (!offered.includes(match.choice)) {
    return {
      ok: false,
      message: `${match.choice} is not offered for this request; answer one of ${options}`,
    };
  }
  return { ok: true, value: match.choice };
}

/** A request named by its requestId, or by its callId (the requestId is derived from it). */
export function toRequestId(idOrCallId: string): string {
  return idOrCallId.startsWith(APPROVAL_REQUEST_ID_PREFIX) ? idOrCallId : approvalRequestId(idOrCallId);
}
