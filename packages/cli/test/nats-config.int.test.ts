/**
 * `toolbus nats-config`: the identities an operator hands to each service and the nats-server
 * config that limits them, written offline; keys are kept across runs unless rotated, and the
 * server's config never holds a seed.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROLES } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";

// Nothing listens here: nats-config must not need a bus.
const offline = { natsUrl: "nats://127.0.0.1:1", prefix: "tenant_a" };

const seeds = (dir: string) =>
  Object.fromEntries(ROLES.map((role) => [role, readFileSync(join(dir, `${role}.nk`), "utf8").trim()]));

describe("toolbus nats-config", () => {
  it("writes one private seed per identity and an accounts block with public keys only", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "toolbus-natscfg-")), "ids");
    const result = await runCli(["nats-config", "--out", dir, "--json"], offline);
    expect(result.code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(["auth.conf", ...ROLES.map((role) => `${role}.nk`)].sort());
    for (const file of readdirSync(dir)) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
    const conf = readFileSync(join(dir, "auth.conf"), "utf8");
    const report = JSON.parse(result.stdout) as {
      prefix: string;
      identities: Array<{ role: string; publicKey: string; publish: string[]; subscribe: string[] }>;
    };
    expect(report.prefix).toBe("tenant_a");
    for (const identity of report.identities) expect(conf).toContain(`nkey: "${identity.publicKey}"`);
    for (const seed of Object.values(seeds(dir))) expect(conf).not.toContain(seed);
    // The permissions follow TOOLBUS_PREFIX.
    const dispatcher = report.identities.find((identity) => identity.role === "dispatcher")!;
    expect(dispatcher.publish).toContain("tenant_a.connector.*.call");
    expect(dispatcher.subscribe).toContain("_INBOX_tenant_a_dispatcher.>");
  });

  it("keeps the keys it wrote before, and makes new ones with --rotate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolbus-natscfg-"));
    expect((await runCli(["nats-config", "--out", dir], offline)).code).toBe(0);
    const first = seeds(dir);
    expect((await runCli(["nats-config", "--out", dir], offline)).code).toBe(0);
    expect(seeds(dir)).toEqual(first);
    expect((await runCli(["nats-config", "--out", dir, "--rotate"], offline)).code).toBe(0);
    const rotated = seeds(dir);
    for (const role of ROLES) expect(rotated[role]).not.toBe(first[role]);
  });

  it("says what it needs when --out is missing", async () => {
    const result = await runCli(["nats-config"], offline);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "toolbus nats-config needs --out <dir>: the folder to write the identities and auth.conf into",
    );
  });
});
