/**
 * Server elicitations answered before anyone is asked (docs/reference-behavior.md §5.7): a
 * `tool_suggestion` is always declined (step 2); under an auto-approving policy (`never` with full
 * access) an empty form is accepted with `{}` (step 4); under policy `never` the rest are declined
 * (step 5). Anything else goes to whoever answers the call.
 */
import { type PolicySettings, policyAutoApproves } from "@toolbus/policy";

export const TOOL_SUGGESTION_KIND = "tool_suggestion";

export type AutoAnswer = { action: "decline" } | { action: "accept"; content: Record<string, never> };

/** The answer the server gets at once, or undefined when the elicitation is relayed. */
export function autoAnswer(params: unknown, policy: Partial<PolicySettings>): AutoAnswer | undefined {
  const fields = isRecord(params) ? params : {};
  const meta = isRecord(fields._meta) ? fields._meta : {};
  if (meta.codex_approval_kind === TOOL_SUGGESTION_KIND) return { action: "decline" };
  if (policyAutoApproves(policy) && isEmptyForm(fields)) return { action: "accept", content: {} };
  if (policy.policy === "never") return { action: "decline" };
  return undefined;
}

/** A form (the default mode) whose requested schema asks for no property. */
function isEmptyForm(fields: Record<string, unknown>): boolean {
  if (fields.mode !== undefined && fields.mode !== "form") return false;
  const schema = isRecord(fields.requestedSchema) ? fields.requestedSchema : {};
  const properties = schema.properties;
  return properties === undefined || (isRecord(properties) && Object.keys(properties).length === 0);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
