/** Running HTTP hooks against a real local server: statuses, bodies, timeouts, refused connections. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { HookPayload } from "@toolbus/policy";
import { afterEach, describe, expect, it } from "vitest";
import { runHttpHook } from "../../../src/adapters/hooks/http-hook.js";

const payload: HookPayload = { hook_event_name: "PostToolUse", tool_name: "mcp__a__b", tool_input: {} };
const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function serve(
  answer: (body: string, res: import("node:http").ServerResponse) => void,
): Promise<string> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => answer(body, res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe("HTTP hooks", () => {
  it("read a 2xx answer like exit code 0 with the body as stdout", async () => {
    const url = await serve((body, res) => res.end(`echo ${body}`));
    await expect(runHttpHook({ type: "http", url }, payload)).resolves.toEqual({
      hookLabel: url,
      exitCode: 0,
      stdout: `echo ${JSON.stringify(payload)}`,
      stderr: "",
      timedOut: false,
      crashed: false,
      timeoutMs: 600_000,
    });
  });

  it("read another status as that (non-blocking) exit code", async () => {
    const url = await serve((_body, res) => {
      res.statusCode = 500;
      res.end("boom");
    });
    await expect(runHttpHook({ type: "http", url }, payload)).resolves.toMatchObject({
      exitCode: 500,
      stdout: "",
      stderr: "boom",
      crashed: false,
    });
  });

  it("time out (fail closed) when the server is too slow", async () => {
    const url = await serve(() => {});
    await expect(runHttpHook({ type: "http", url, timeout: 0.2 }, payload)).resolves.toEqual({
      hookLabel: url,
      exitCode: null,
      stdout: "",
      stderr: "",
      timedOut: true,
      crashed: false,
      timeoutMs: 200,
    });
  });

  it("report a refused connection as crashed, with the reason", async () => {
    const url = await serve(() => {});
    for (const server of servers.splice(0)) server.close();
    await expect(runHttpHook({ type: "http", url }, payload)).resolves.toMatchObject({
      exitCode: null,
      crashed: true,
      error: expect.stringContaining("ECONNREFUSED"),
    });
  });

  it("fill in only the environment variables a hook is allowed to read", async () => {
    const seen: Array<string | string[] | undefined> = [];
    const server = createServer((req, res) => {
      seen.push(req.headers["x-a"], req.headers["x-b"]);
      res.end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    await runHttpHook(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the hook's own ${VAR} syntax, filled in by the runner
      { type: "http", url, headers: { "x-a": "${ALLOWED}", "x-b": "$SECRET" }, allowedEnvVars: ["ALLOWED"] },
      payload,
      { env: { ALLOWED: "yes", SECRET: "no" } },
    );
    expect(seen).toEqual(["yes", "$SECRET"]);
  });
});
