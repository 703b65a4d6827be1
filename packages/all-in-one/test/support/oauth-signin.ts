/**
 * The identity provider's side of the sign-in tests: the gateway's `[gateway.oauth]` for the
 * testkit's oidc-provider (members of `reviewers` approve), and a person's sign-in on the
 * provider's own login and consent pages, from the inbox's link.
 */
import type { OAuthConfig } from "@toolbus/config";
import type { Page } from "playwright-core";

/** `[gateway.oauth]` for `issuer`: `reviewers` approve; `adminGroups` administer. */
export function reviewersOAuthConfig(issuer: string, adminGroups: string[] = []): OAuthConfig {
  return {
    issuer,
    scopesSupported: ["mcp:tools"],
    principalClaim: "sub",
    nameClaim: "name",
    groupsClaim: "groups",
    adminGroups,
    approverGroups: ["reviewers"],
    adminScopes: [],
    approverScopes: [],
    algorithms: ["RS256"],
  };
}

/** Signs `login` in on the identity provider's login and consent pages, from the inbox at `base`. */
export async function signInOnInbox(page: Page, base: string, login: string): Promise<void> {
  await page.locator("#signin-offer").waitFor({ state: "visible", timeout: 15_000 });
  await page.locator("#signin-link").click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.locator('button[type="submit"]').click();
  // The consent page.
  await page.locator('button[type="submit"]').click();
  await page.waitForURL(`${base}/approvals`, { timeout: 15_000 });
}
