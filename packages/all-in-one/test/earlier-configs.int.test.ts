/**
 * One folder, one configuration after another, as a user tries a few: what `toolbus servers`,
 * the console and MCP clients see is the configuration in use, never a server of an earlier one
 * (nothing runs it: its tools would be listed, and a call to one would wait for no answer).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createLogger } from "@toolbus/bus";
import { toolbusToml, withPgSchema } from "@toolbus/testkit";
import { serverEverythingCommand } from "@toolbus/testkit/mcp-test-server";
import { afterAll, describe, expect, it } from "vitest";
import { startAllInOne } from "../src/run.js";

const everything = serverEverythingCommand();

describe("starting with another configuration in the same folder", () => {
  const folder = mkdtempSync(join(tmpdir(), "toolbus-configs-"));
  const cleanups: Array<() => Promise<void>> = [];

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    rmSync(folder, { recursive: true, force: true });
  });

  /** `pnpm start --config <file>` in the folder, on a nats-server of its own (the store in `.toolbus/nats`). */
  async function startWith(name: string, servers: string[]) {
    const config = join(folder, `${name}.toml`);
    const server = { command: everything.command, args: everything.args };
    writeFileSync(
      config,
      toolbusToml({
        gateway: { port: 0 },
        servers: Object.fromEntries(servers.map((each) => [each, server])),
      }),
    );
    const schema = await withPgSchema(process.env.DATABASE_URL!, `configs_${name}`);
    cleanups.push(() => schema.drop());
    const { NATS_URL: _, ...env } = process.env;
    const toolbus = await startAllInOne({
      configPath: config,
      env: { ...env, DATABASE_URL: schema.url, XDG_STATE_HOME: join(folder, "state") },
      cwd: folder,
      logger: createLogger({ service: "test", version: "0", level: "warn" }),
      announce: () => {},
    });
    cleanups.push(() => toolbus.stop());
    return toolbus;
  }

  it("shows only the servers of the configuration in use", async () => {
    const first = await startWith("a", ["alpha", "beta"]);
    await first.stop();
    const second = await startWith("b", ["gamma"]);

    const base = second.mcpUrl.replace(/\/mcp$/, "");
    const servers = (await fetch(`${base}/v1/servers`).then((r) => r.json())) as {
      servers: Array<{ name: string }>;
    };
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(second.mcpUrl)));
    // A server's tools are `<server>__<tool>` (toolbus's own resource tools have no server).
    const prefixes = new Set(
      (await client.listTools()).tools.filter((t) => t.name.includes("__")).map((t) => t.name.split("__")[0]),
    );
    await client.close();
    expect({ servers: servers.servers.map((s) => s.name), toolsOf: [...prefixes] }).toEqual({
      servers: ["gamma"],
      toolsOf: ["gamma"],
    });
  });
});
