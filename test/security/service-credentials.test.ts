/**
 * A service started with missing, wrong or someone else's credentials: it exits with one line
 * that names what is wrong and what to do — no stack trace, no hang, no service running deaf.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type NatsIdentities, writeNatsIdentities } from "@toolbus/bus";
import { type NatsServerProcess, startNatsServer } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exited, ROOT } from "../e2e/support/pnpm-start.js";

const TSX = pathToFileURL(createRequire(join(ROOT, "package.json")).resolve("tsx")).href;
const SERVICES = ["catalog", "dispatcher", "approvals", "memory", "gateway"] as const;

let server: NatsServerProcess;
let identities: NatsIdentities;
let config: string;

/** Runs `services/<name>/src/main.ts` until it exits (at most 60 s); its exit code and stderr. */
async function runService(
  name: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    [
      "--conditions=@toolbus/source",
      "--import",
      TSX,
      join(ROOT, `services/${name}/src/main.ts`),
      "--config",
      config,
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NATS_NKEY_FILE: undefined,
        NATS_USER: undefined,
        TOOLBUS_PREFIX: "toolbus",
        TOOLBUS_HTTP_PORT: "0",
        LOG_LEVEL: "silent",
        NATS_URL: server.url,
        ...env,
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const code = await exited(child);
  clearTimeout(timer);
  return { code, stderr };
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "toolbus-creds-"));
  identities = writeNatsIdentities({ dir: join(dir, "ids"), prefix: "toolbus", servers: [] });
  server = await startNatsServer({ config: readFileSync(identities.authConf, "utf8") });
  config = join(dir, "toolbus.toml");
  // No servers to start: the catalog must fail on NATS, not on a server.
  writeFileSync(config, "[gateway]\nport = 0\n");
});

afterAll(async () => {
  await server?.stop();
});

describe("a service on a bus that wants credentials", () => {
  it.each(SERVICES)("%s without any exits with one line saying to set NATS_NKEY_FILE", async (name) => {
    const { code, stderr } = await runService(name, { DATABASE_URL: process.env.DATABASE_URL });
    expect({ code, lines: stderr.trim().split("\n") }).toEqual({
      code: 1,
      lines: [
        `${name}: NATS at ${server.url} refused this identity (no credentials): Authorization Violation. ` +
          "The server requires credentials: set NATS_NKEY_FILE to this service's seed file from `toolbus nats-config`.",
      ],
    });
  });

  it("exits with one line naming a seed file that does not exist", async () => {
    const { code, stderr } = await runService("dispatcher", { NATS_NKEY_FILE: "/nonexistent/dispatcher.nk" });
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toEqual([
      "dispatcher: invalid configuration (1 problem); fix each and start again:   - NATS_NKEY_FILE=/nonexistent/dispatcher.nk: " +
        "cannot read it (no such file); write the identities with `toolbus nats-config --out <dir>` and point NATS_NKEY_FILE at <dir>/<role>.nk",
    ]);
  });

  it("exits with one line when given another service's key, instead of running without its subjects", async () => {
    const { code, stderr } = await runService("dispatcher", {
      NATS_NKEY_FILE: identities.seedFile("memory"),
    });
    expect(code).toBe(1);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    // The first thing the memory key may not do as the dispatcher: read replies on the dispatcher's inbox.
    expect(lines[0]).toMatch(
      /^dispatcher: Permissions Violation for Subscription to "_INBOX_toolbus_dispatcher\./,
    );
    expect(lines[0]).toContain("Is NATS_NKEY_FILE the dispatcher service's own key");
  });
});
