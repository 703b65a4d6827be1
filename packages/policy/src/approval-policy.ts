/**
 * The deployment's approval policy and permission profile (`TOOLBUS_APPROVAL_POLICY`,
 * `TOOLBUS_PERMISSION_PROFILE`), read by the approvals service for tool calls and by the catalog
 * for server elicitations (docs/reference-behavior.md §5.2 step 1, §5.7 steps 4–5).
 */
import { z } from "zod";

/**
 * toolbus has no sandbox, so only the two policy words that matter for MCP remain: `on-request`
 * (ask a human when needed) and `never` (no human is ever asked). Default `on-request`.
 */
export const APPROVAL_POLICIES = ["on-request", "never"] as const;
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number];
export const ApprovalPolicySchema = z.enum(APPROVAL_POLICIES).default("on-request");

/**
 * What the agent may touch, in the reference's terms: `restricted` (a sandbox) or `full-access`
 * (no sandbox, or an external one). It matters only with policy `never`. Default `restricted`.
 */
export const PERMISSION_PROFILES = ["restricted", "full-access"] as const;
export type PermissionProfile = (typeof PERMISSION_PROFILES)[number];
export const PermissionProfileSchema = z.enum(PERMISSION_PROFILES).default("restricted");

export interface PolicySettings {
  policy: ApprovalPolicy;
  permissionProfile: PermissionProfile;
}

/** The reference's "auto-approved": policy `never` with full access. */
export function policyAutoApproves(settings: Partial<PolicySettings>): boolean {
  return settings.policy === "never" && settings.permissionProfile === "full-access";
}

/** Both settings from the environment; throws naming the variable when one is not a known value. */
export function policySettingsFromEnv(env: Readonly<Record<string, string | undefined>>): PolicySettings {
  const read = <T>(name: string, schema: z.ZodType<T>): T => {
    const raw = env[name];
    const parsed = schema.safeParse(raw === undefined || raw.trim() === "" ? undefined : raw);
    if (!parsed.success) throw new Error(`${name}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    return parsed.data;
  };
  return {
    policy: read("TOOLBUS_APPROVAL_POLICY", ApprovalPolicySchema),
    permissionProfile: read("TOOLBUS_PERMISSION_PROFILE", PermissionProfileSchema),
  };
}
