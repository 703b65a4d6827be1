/**
 * `toolbus nats-config`: the identities an operator hands to each service (one per role, one per
 * configured MCP server's connector) and the nats-server config that limits them, one account per
 * identity, written offline; keys are kept across runs unless rotated, and the server's config
 * never holds a seed.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { busIdentities, identityName } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";

// Nothing listens here: nats-config must not need a bus.
const offline = { natsUrl: "nats://127.0.0.1:1", prefix: "tenant_a" };

/** Without --config, the demo config's one server, `everything`. */
const NAMES = busIdentities(["everything"]).map(identityName);

const seeds = (dir: string, names: readonly string[] = NAMES) =>
  Object.fromEntries(names.map((name) => [name, readFileSync(join(dir, `${name}.nk`), "utf8").trim()]));

describe("toolbus nats-config", () => {
  it("writes one private seed per identity and an accounts block with public keys only", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "toolbus-natscfg-")), "ids");
    const result = await runCli(["nats-config", "--out", dir, "--json"], offline);
    expect(result.code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(["auth.conf", ...NAMES.map((name) => `${name}.nk`)].sort());
    for (const file of readdirSync(dir)) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
    const conf = readFileSync(join(dir, "auth.conf"), "utf8");
    const report = JSON.parse(result.stdout) as {
      prefix: string;
      servers: string[];
      identities: Array<{ identity: string; publicKey: string; publish: string[]; subscribe: string[] }>;
    };
    expect({ prefix: report.prefix, servers: report.servers }).toEqual({
      prefix: "tenant_a",
      servers: ["everything"],
    });
    expect(report.identities.map((identity) => identity.identity)).toEqual(NAMES);
    for (const identity of report.identities) expect(conf).toContain(`nkey: "${identity.publicKey}"`);
    for (const seed of Object.values(seeds(dir))) expect(conf).not.toContain(seed);
    // The permissions follow TOOLBUS_PREFIX, in each identity's own account.
    const dispatcher = report.identities.find((identity) => identity.identity === "dispatcher")!;
    expect(dispatcher.publish).toContain("tenant_a.connector.*.call");
    expect(dispatcher.subscribe).toContain("_INBOX_tenant_a_dispatcher.>");
    expect(conf).toContain('"tenant_a.dispatcher": {');
  });

  it("writes a connector identity and account for each server of --config", async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolbus-natscfg-"));
    const config = join(dir, "toolbus.toml");
    writeFileSync(
      config,
      [
        "[mcp_servers.github]",
        'command = "gh-mcp"',
        "",
        "[mcp_servers.linear]",
        'url = "http://127.0.0.1:9/mcp"',
        "",
      ].join("\n"),
    );
    const out = join(dir, "ids");
    const result = await runCli(["nats-config", "--out", out, "--config", config], offline);
    expect(result.code).toBe(0);
    expect(
      readdirSync(out)
        .filter((file) => file.startsWith("connector-"))
        .sort(),
    ).toEqual(["connector-github.nk", "connector-linear.nk"]);
    const conf = readFileSync(join(out, "auth.conf"), "utf8");
    expect(conf).toContain('"tenant_a.connector-github": {');
    expect(conf).toContain('"tenant_a.connector-linear": {');
    expect(result.stdout).toContain("connector-github  ");
    expect(result.stdout).toContain("`toolbus provision` with NATS_NKEY_FILE=provisioner.nk");
  });

  it("keeps the keys it wrote before, and makes new ones with --rotate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolbus-natscfg-"));
    expect((await runCli(["nats-config", "--out", dir], offline)).code).toBe(0);
    const first = seeds(dir);
    expect((await runCli(["nats-config", "--out", dir], offline)).code).toBe(0);
    expect(seeds(dir)).toEqual(first);
    expect((await runCli(["nats-config", "--out", dir, "--rotate"], offline)).code).toBe(0);
    const rotated = seeds(dir);
    for (const name of NAMES) expect(rotated[name]).not.toBe(first[name]);
  });

  it("says what it needs when --out is missing", async () => {
    const result = await runCli(["nats-config"], offline);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "toolbus nats-config needs --out <dir>: the folder to write the identities and auth.conf into",
    );
  });
});
