/**
 * The hook runner: the service-wide limit on command hooks running at once (a hook over it waits
 * for a slot, within its timeout), and spans that never carry a hook's command or URL.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { HookPayload } from "@toolbus/policy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookRunner, HOOK_SPAN } from "../../../src/adapters/hooks/hook-runner.js";

// Each test file runs in its own worker, so this registration stays inside this file.
const exporter = new InMemorySpanExporter();
const sdk = new NodeSDK({
  serviceName: "approvals-hook-test",
  spanProcessors: [new SimpleSpanProcessor(exporter)],
  instrumentations: [],
  resourceDetectors: [],
});
beforeAll(() => sdk.start());
afterAll(() => sdk.shutdown());

const payload: HookPayload = {
  session_id: "thread-1",
  hook_event_name: "PreToolUse",
  tool_name: "mcp__docs__search",
  tool_input: { q: "x" },
  tool_use_id: "call-runner-1",
};

describe("the hook runner", () => {
  it("starts a command hook over the limit once a running one ends, never alongside it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolbus-runner-"));
    const runner = createHookRunner({ maxConcurrentHooks: 1 });
    const first = runner.run(
      [
        {
          type: "command",
          command: `while [ ! -e ${dir}/go ]; do sleep 0.05; done; touch ${dir}/first-done`,
        },
      ],
      payload,
    );
    // Exits 1 if it starts while the first is still running.
    const second = runner.run(
      [{ type: "command", command: `test -e ${dir}/first-done`, timeout: 30 }],
      payload,
    );
    await writeFile(`${dir}/go`, "");
    expect((await Promise.all([first, second])).map((runs) => runs.map((run) => run.exitCode))).toEqual([
      [0],
      [0],
    ]);
  });

  it("puts neither a command hook's command line nor an HTTP hook's URL in its span", async () => {
    exporter.reset();
    const server = createServer((_req, res) => res.end("{}"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?token=url-sentinel-51d0`;
      const runs = await createHookRunner().run(
        [
          { type: "command", command: "SECRET=command-sentinel-8e2f; exit 0" },
          { type: "http", url },
        ],
        payload,
      );
      expect(runs.map((run) => run.exitCode)).toEqual([0, 0]);
      const spans = exporter
        .getFinishedSpans()
        .filter((span) => span.name === HOOK_SPAN)
        .sort((a, b) =>
          String(a.attributes["toolbus.hook.type"]).localeCompare(String(b.attributes["toolbus.hook.type"])),
        );
      expect(spans.map((span) => span.attributes)).toEqual([
        {
          "toolbus.hook.event": "PreToolUse",
          "toolbus.hook.type": "command",
          "mcp.call_id": "call-runner-1",
          "toolbus.hook.exit_code": 0,
          "toolbus.hook.timed_out": false,
        },
        {
          "toolbus.hook.event": "PreToolUse",
          "toolbus.hook.type": "http",
          "mcp.call_id": "call-runner-1",
          "toolbus.hook.exit_code": 0,
          "toolbus.hook.timed_out": false,
        },
      ]);
      expect(JSON.stringify(spans.map((span) => [span.attributes, span.events, span.status]))).not.toMatch(
        /sentinel/,
      );
    } finally {
      server.close();
    }
  });
});
