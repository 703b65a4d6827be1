/**
 * `toolbus provision`: makes every stream, bucket and the memory consumer of a prefix, sized by
 * the config's tables, and says of each whether it was created, updated or left as it was; run
 * again it changes nothing. On the suite's NATS (no credentials), a prefix of each test's own.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { createSubjects } from "@toolbus/protocol";
import { cleanupJetStream, isolation } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";

const prefixes: string[] = [];
afterEach(async () => {
  for (const prefix of prefixes.splice(0)) await cleanupJetStream(provided().natsUrl, prefix);
});

function freshPrefix(): string {
  const { prefix } = isolation("cli_provision");
  prefixes.push(prefix);
  return prefix;
}

/** Every stream and consumer a prefix's provisioning names. */
function assets(prefix: string): string[] {
  const subjects = createSubjects(prefix);
  const buckets = [
    "catalog",
    "approval_grants",
    "resource_origins",
    "gateway_sessions",
    "call_history",
    "calls",
    "approval_policy",
    "executions",
  ].map((name) => `KV_${prefix}_${name}`);
  const streams = Object.values(subjects.streams).map((names) => names.name);
  return [...buckets, ...streams, `${subjects.streams.memory.name}/memory`].sort();
}

const linesOf = (stdout: string, word: string) =>
  stdout
    .split("\n")
    .filter((line) => line.startsWith(word))
    .map((line) => line.slice(word.length).trim())
    .sort();

describe("toolbus provision", () => {
  it("creates every asset, then reports each unchanged when run again", async () => {
    const prefix = freshPrefix();
    const env = { natsUrl: provided().natsUrl, prefix };
    const first = await runCli(["provision"], env);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: "" });
    expect(linesOf(first.stdout, "created")).toEqual(assets(prefix));
    const again = await runCli(["provision", "--json"], env);
    expect(again.code).toBe(0);
    const report = JSON.parse(again.stdout) as { created: string[]; updated: string[]; unchanged: string[] };
    expect({ ...report, unchanged: [...report.unchanged].sort() }).toEqual({
      created: [],
      updated: [],
      unchanged: assets(prefix),
    });
  });

  it("sizes the assets by the config's [bus] table, and brings them in line when it changes", async () => {
    const prefix = freshPrefix();
    const env = { natsUrl: provided().natsUrl, prefix };
    const config = join(mkdtempSync(join(tmpdir(), "toolbus-provision-")), "toolbus.toml");
    const write = (maxAgeSec: number) =>
      writeFileSync(
        config,
        `[bus]\nevents_max_age_sec = ${maxAgeSec}\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n`,
      );
    write(3_600);
    expect((await runCli(["provision", "--config", config], env)).code).toBe(0);
    write(7_200);
    const changed = await runCli(["provision", "--config", config], env);
    expect(changed.code).toBe(0);
    // The call-history index lives as long as the events it points at.
    expect(linesOf(changed.stdout, "updated")).toEqual(
      [createSubjects(prefix).streams.events.name, `KV_${prefix}_call_history`].sort(),
    );
    const nc = await connect({ servers: provided().natsUrl });
    try {
      const jsm = await jetstreamManager(nc);
      const events = await jsm.streams.info(createSubjects(prefix).streams.events.name);
      expect(events.config.max_age).toBe(7_200 * 1_000_000_000);
    } finally {
      await nc.close();
    }
  });

  it("exits 3 saying what to do when NATS does not answer", async () => {
    const result = await runCli(["provision"], { natsUrl: "nats://127.0.0.1:1", prefix: freshPrefix() });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("cannot reach NATS at nats://127.0.0.1:1 (connection refused)");
  });

  it("refuses a config with problems, naming them, before it touches the bus", async () => {
    const config = join(mkdtempSync(join(tmpdir(), "toolbus-provision-")), "toolbus.toml");
    writeFileSync(config, "[bus]\nevents_max_age_sec = -1\n");
    const result = await runCli(["provision", "--config", config], {
      natsUrl: "nats://127.0.0.1:1",
      prefix: freshPrefix(),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("events_max_age_sec");
  });
});
