import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadToolbusConfig } from "../src/load.js";
import { ConfigFileError } from "../src/problems.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "toolbus-config-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const everything = () => ({ command: "node", args: ["everything.js", "stdio"] });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the load to fail");
}

describe("loadToolbusConfig", () => {
  it("loads ./toolbus.toml from the working directory", async () => {
    await writeFile(
      join(dir, "toolbus.toml"),
      '[mcp_servers.s]\ncommand = "srv"\n[approvals]\nhooks = "hooks.json"',
    );
    const config = await loadToolbusConfig({ env: {}, cwd: dir });
    expect([config.source, Object.keys(config.mcpServers), config.approvals.hooksPath]).toEqual([
      { kind: "file", path: join(dir, "toolbus.toml"), format: "toml" },
      ["s"],
      join(dir, "hooks.json"),
    ]);
  });

  it("prefers --config over TOOLBUS_CONFIG, and reads .json as the mcpServers format", async () => {
    await writeFile(join(dir, "a.json"), JSON.stringify({ mcpServers: { fromJson: { command: "srv" } } }));
    await writeFile(join(dir, "b.toml"), '[mcp_servers.fromToml]\ncommand = "srv"');
    const config = await loadToolbusConfig({ path: "a.json", env: { TOOLBUS_CONFIG: "b.toml" }, cwd: dir });
    expect([config.source, Object.keys(config.mcpServers)]).toEqual([
      { kind: "file", path: join(dir, "a.json"), format: "mcp_json" },
      ["fromJson"],
    ]);
  });

  it("applies TOOLBUS_HTTP_PORT over the file", async () => {
    await writeFile(join(dir, "toolbus.toml"), "[gateway]\nport = 8000");
    const config = await loadToolbusConfig({ env: { TOOLBUS_HTTP_PORT: "8999" }, cwd: dir });
    expect(config.gateway.port).toBe(8999);
  });

  it("falls back to the demo config when there is no file", async () => {
    const config = await loadToolbusConfig({ env: {}, cwd: dir, demoServer: everything });
    expect([config.source, config.mcpServers.everything?.transport]).toEqual([{ kind: "demo" }, "stdio"]);
  });

  it("says how to give a config when there is no file and no demo server", async () => {
    const error = await rejection(loadToolbusConfig({ env: {}, cwd: dir }));
    expect(error).toEqual(
      new Error(
        "No toolbus config found: pass --config <path>, set TOOLBUS_CONFIG, or create ./toolbus.toml",
      ),
    );
  });

  it("fails, naming the file and who named it, when the named file is missing", async () => {
    const error = await rejection(
      loadToolbusConfig({ env: { TOOLBUS_CONFIG: "nope.toml" }, cwd: dir, demoServer: everything }),
    );
    expect(error).toBeInstanceOf(ConfigFileError);
    expect([(error as ConfigFileError).path, (error as ConfigFileError).problems]).toEqual([
      join(dir, "nope.toml"),
      [{ at: "", message: "cannot read the config file (named by TOOLBUS_CONFIG): no such file" }],
    ]);
  });

  it("stops with every problem of a file that has three bad servers", async () => {
    await writeFile(
      join(dir, "toolbus.toml"),
      '[mcp_servers.a]\nenabled = true\n[mcp_servers.b]\nurl = "https://x.example"\nargs = []\n[mcp_servers.c]\ncommand = 5',
    );
    const error = await rejection(loadToolbusConfig({ env: {}, cwd: dir }));
    expect((error as ConfigFileError).problems).toEqual([
      { at: "mcp_servers.a", message: "invalid transport" },
      { at: "mcp_servers.b", message: "args is not supported for streamable_http" },
      { at: "mcp_servers.c.command", message: "expected a string, got 5" },
    ]);
  });
});

describe("the README's examples", () => {
  const readme = readFile(new URL("../README.md", import.meta.url), "utf8");
  const block = async (language: string) => {
    const match = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(await readme);
    if (match?.[1] === undefined) throw new Error(`README has no ${language} block`);
    return match[1];
  };

  it("documents a toolbus.toml that loads", async () => {
    await writeFile(join(dir, "toolbus.toml"), await block("toml"));
    const config = await loadToolbusConfig({ env: {}, cwd: dir });
    expect(Object.keys(config.mcpServers)).toEqual(["files", "github"]);
  });

  it("documents a bubblewrap sandbox that loads, {cwd} kept for the catalog to fill in", async () => {
    const blocks = [...(await readme).matchAll(/ *```toml\n([\s\S]*?) *```/g)].map((match) => match[1]!);
    const sandbox = blocks.find((text) => text.includes('"bwrap", "--ro-bind"'));
    if (sandbox === undefined) throw new Error("README has no bubblewrap example");
    await writeFile(join(dir, "toolbus.toml"), sandbox);
    const config = await loadToolbusConfig({ env: {}, cwd: dir });
    expect(config.catalog.sandbox).toEqual(expect.arrayContaining(["bwrap", "{cwd}", "--"]));
  });

  it("documents a .mcp.json that loads", async () => {
    await writeFile(join(dir, ".mcp.json"), await block("json"));
    const config = await loadToolbusConfig({ path: ".mcp.json", env: {}, cwd: dir });
    expect(Object.keys(config.mcpServers)).toEqual(["files", "github"]);
  });
});
