/**
 * Replies too large for the bus are refused in words that fit them, naming the size, the limit
 * and what to change. On a nats-server of this file's own with a 64 KiB max_payload and the
 * smallest `[bus] max_reply_bytes` (1 MiB): a server whose tools/list page is over what toolbus
 * reads in one message, and one whose tools do not fit one catalog entry, fail to start with a
 * message about their listing (never the advice meant for a tool's result); a resource over it
 * is refused as a resource.
 */
import { startThrowawayNats, type ThrowawayNats } from "@toolbus/testkit";
import {
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningService } from "./support/harness.js";
import { CatalogHarness, toolbusToml } from "./support/harness.js";

const MAX_PAYLOAD = 64 * 1024;
const MAX_REPLY_BYTES = 1024 * 1024;
const DESCRIPTION = "d".repeat(1000);

let nats: ThrowawayNats;
let harness: CatalogHarness;
let running: RunningService;

/** A stdio server listing `count` tools of about 1 KB each, in one tools/list page. */
async function serverOf(
  count: number,
  script: Omit<TestServerScript, "tools"> = {},
): Promise<StdioTestServer> {
  const server = await startTestServer({
    transport: "stdio",
    script: {
      tools: Array.from({ length: count }, (_, i) => ({ name: `t${i}`, description: DESCRIPTION })),
      ...script,
    },
  });
  harness.defer(() => server.dispose());
  return server;
}

beforeAll(async () => {
  nats = await startThrowawayNats({ maxPayload: MAX_PAYLOAD });
  harness = await CatalogHarness.create("listing_size", { natsUrl: nats.url });
  // About 1.2 MB in its one page, and about 200 KB.
  const [huge, wide] = [await serverOf(1_200), await serverOf(200)];
  const small = await serverOf(2, {
    resources: [{ uri: "test://big", name: "big", text: "r".repeat(MAX_REPLY_BYTES + 1024) }],
  });
  running = await harness.start(
    `${toolbusToml({
      servers: {
        huge: { command: huge.command, args: huge.args },
        small: { command: small.command, args: small.args },
        wide: { command: wide.command, args: wide.args },
      },
    })}\n[bus]\nmax_reply_bytes = ${MAX_REPLY_BYTES}\n`,
  );
}, 120_000);

afterAll(async () => {
  await harness?.close();
  await nats?.destroy();
});

const failureOf = async (server: string) =>
  (await running.service.startup).failed.find((failed) => failed.server === server)?.error ?? "";

describe("replies too large for the bus", () => {
  it("fails a server whose tools/list page is over the read cap, saying so of its listing", async () => {
    const error = await failureOf("huge");
    const size = Number(/^the server's tools\/list page of (\d+) bytes/.exec(error)?.[1]);
    expect({ over: size > MAX_REPLY_BYTES, error }).toEqual({
      over: true,
      error:
        `the server's tools/list page of ${size} bytes is larger than ${MAX_REPLY_BYTES} bytes, ` +
        "the most toolbus reads in one message from an MCP server (the larger of [bus] max_reply_bytes and NATS max_payload); " +
        "have the server offer fewer tools or list them in smaller pages, " +
        "or raise max_payload in the NATS server's configuration (a server's tools are kept in one NATS message)",
    });
  });

  it("fails a server whose tools do not fit one catalog entry, naming the entry and the setting", async () => {
    const error = await failureOf("wide");
    const size = Number(/^the catalog entry of wide \(200 tools\) is (\d+) bytes/.exec(error)?.[1]);
    expect({ over: size > MAX_PAYLOAD, error }).toEqual({
      over: true,
      error:
        `the catalog entry of wide (200 tools) is ${size} bytes, more than one NATS message holds ` +
        `(max_payload: ${MAX_PAYLOAD} bytes); expose fewer of its tools (enabled_tools or disabled_tools ` +
        "in [mcp_servers.wide]), or raise max_payload in the NATS server's configuration",
    });
  });

  it("shows the failure in the server's catalog entry, and starts the servers that fit", async () => {
    const catalog = await harness.catalog();
    expect({
      ready: (await running.service.startup).ready,
      wide: catalog.servers.find((server) => server.name === "wide"),
    }).toEqual({
      ready: ["small"],
      wide: {
        name: "wide",
        status: "failed",
        required: false,
        revision: expect.any(Number),
        error: `MCP client for \`wide\` failed to start: ${await failureOf("wide")}`,
      },
    });
  });

  it("refuses a resource over the read cap as payload_too_large, worded for resources/read", async () => {
    const envelope = await harness.request(harness.subjects.catalogResourcesRead, {
      server: "small",
      uri: "test://big",
    });
    const message = envelope.ok ? "" : envelope.error.message;
    const size = Number(/resources\/read reply of (\d+) bytes/.exec(message)?.[1]);
    expect({ over: size > MAX_REPLY_BYTES, envelope }).toEqual({
      over: true,
      envelope: {
        ok: false,
        error: {
          code: "payload_too_large",
          message:
            "resources/read failed: resources/read failed for `small` (test://big): " +
            `the server's resources/read reply of ${size} bytes is larger than ${MAX_REPLY_BYTES} bytes, ` +
            "the most toolbus reads in one message from an MCP server (the larger of [bus] max_reply_bytes and NATS max_payload); " +
            "ask for less, or raise max_payload in the NATS server's configuration (the reply travels in one NATS message)",
          retryable: false,
        },
      },
    });
  });
});
