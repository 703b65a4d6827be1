/**
 * How pending approval requests look in a terminal: the list table's rows and the prompt
 * `approvals --watch` shows for one request (header, question, arguments, expiry, choices).
 */
import type { ApprovalChoice, ApprovalRequest } from "@toolbus/protocol";
import type { Paint } from "./ansi.js";
import { CHOICE_KEYS } from "./approval-choice.js";
import { formatExpiry } from "./duration.js";
import type { Column } from "./table.js";
import { oneLine, truncateToWidth } from "./text.js";

export const APPROVAL_COLUMNS: readonly Column[] = [
  { header: "requestId" },
  { header: "server" },
  { header: "tool" },
  { header: "arguments", flex: true },
  { header: "expires" },
];

export function approvalRows(requests: readonly ApprovalRequest[], now: Date): string[][] {
  return requests.map((r) => [
    r.requestId,
    r.server,
    r.tool,
    JSON.stringify(r.arguments) ?? "null",
    formatExpiry(r.expiresAt, now),
  ]);
}

const ARGUMENTS_MAX = 2000;

export function renderApprovalPrompt(
  request: ApprovalRequest,
  offered: readonly ApprovalChoice[],
  now: Date,
  paint: Paint,
): string[] {
  const args = truncateToWidth(JSON.stringify(request.arguments) ?? "null", ARGUMENTS_MAX);
  return [
    paint.bold(oneLine(request.header)),
    oneLine(request.question),
    `  arguments: ${oneLine(args)}`,
    `  request:   ${request.requestId}  (expires ${formatExpiry(request.expiresAt, now)})`,
    `  ${choiceMenu(request, offered, paint)}`,
  ];
}

/** `[a] Allow  [s] Allow for this session  [d] Decline  [c] Cancel` with the request's labels. */
export function choiceMenu(
  request: Pick<ApprovalRequest, "options">,
  offered: readonly ApprovalChoice[],
  paint: Paint,
): string {
  return CHOICE_KEYS.filter((k) => offered.includes(k.choice))
    .map((k) => {
      const label = request.options.find((o) => o.id === k.choice)?.label ?? k.label;
      return `${paint.cyan(`[${k.key}]`)} ${oneLine(label)}`;
    })
    .join("  ");
}
