import { describe, expect, it } from "vitest";
import {
  busReplyTooLarge,
  busRequestTooLarge,
  callOutcomeTooLarge,
  catalogEntryTooLarge,
  formatBytes,
  largeRepliesBudgetExceeded,
  mcpReplyTooLarge,
  requestBodyTooLarge,
} from "../src/size-refusals.js";

const READ_CAP =
  "the most toolbus reads in one message from an MCP server (the larger of [bus] max_reply_bytes and NATS max_payload)";

describe("an MCP server's reply over the read cap", () => {
  it.each([
    {
      method: "tools/call",
      text: `the tool's result of 2000 bytes is larger than 1000 bytes, ${READ_CAP}; ask the tool for less output, or raise [bus] max_reply_bytes`,
    },
    {
      method: "tools/list",
      text: `the server's tools/list page of 2000 bytes is larger than 1000 bytes, ${READ_CAP}; have the server offer fewer tools or list them in smaller pages, or raise max_payload in the NATS server's configuration (a server's tools are kept in one NATS message)`,
    },
    {
      method: "resources/templates/list",
      text: `the server's resources/templates/list page of 2000 bytes is larger than 1000 bytes, ${READ_CAP}; have the server list fewer resource templates per page, or raise max_payload in the NATS server's configuration (a page travels in one NATS message)`,
    },
    {
      method: "resources/read",
      text: `the server's resources/read reply of 2000 bytes is larger than 1000 bytes, ${READ_CAP}; ask for less, or raise max_payload in the NATS server's configuration (the reply travels in one NATS message)`,
    },
  ])("is worded for $method", ({ method, text }) => {
    expect(mcpReplyTooLarge({ method, limit: 1000, bytes: 2000 })).toBe(text);
  });

  it("leaves out the size it does not know, and the request it was not told", () => {
    expect(mcpReplyTooLarge({ limit: 1000 })).toBe(
      `the server's reply is larger than 1000 bytes, ${READ_CAP}; ask for less, or raise [bus] max_reply_bytes`,
    );
  });
});

describe("the other size refusals", () => {
  it("name what was too large, the limit and the setting to change", () => {
    expect({
      entry: catalogEntryTooLarge({ server: "docs", tools: 3, bytes: 2000, limit: 1000 }),
      request: busRequestTooLarge({ subject: "p.dispatch.call", bytes: 2000, limit: 1000 }),
      requestUnknownLimit: busRequestTooLarge({ subject: "p.dispatch.call", bytes: 2000 }),
      reply: busReplyTooLarge({ endpoint: "catalog-search", bytes: 2000, limit: 1000 }),
      stored: busReplyTooLarge({
        endpoint: "catalog-get",
        bytes: 2000,
        limit: 1000,
        stored: {
          stream: "P_LARGE",
          subject: "p.large.gateway.r1",
          ttlSec: 600,
          header: "Toolbus-Large-Reply",
        },
      }),
      storeFailed: busReplyTooLarge({
        endpoint: "catalog-get",
        bytes: 2000,
        limit: 1000,
        stored: { stream: "P_LARGE", failure: "no space" },
      }),
      budget: largeRepliesBudgetExceeded({ bytes: 2000, budget: 1024 }),
      budgetWaited: largeRepliesBudgetExceeded({ bytes: 2000, budget: 4096, waitedMs: 30_000 }),
      outcome: callOutcomeTooLarge({ bytes: 2000, limit: 1000 }),
      body: requestBodyTooLarge(4 * 1024 * 1024),
    }).toEqual({
      entry:
        "the catalog entry of docs (3 tools) is 2000 bytes, more than one NATS message holds (max_payload: 1000 bytes); expose fewer of its tools (enabled_tools or disabled_tools in [mcp_servers.docs]), or raise max_payload in the NATS server's configuration",
      request:
        "the request on p.dispatch.call is 2000 bytes, more than one NATS message holds (max_payload: 1000 bytes); send less, or raise max_payload in the NATS server's configuration",
      requestUnknownLimit:
        "the request on p.dispatch.call is 2000 bytes, more than one NATS message holds (NATS max_payload); send less, or raise max_payload in the NATS server's configuration",
      reply:
        "the reply of catalog-search is 2000 bytes, over the bus limit of 1000 bytes (NATS max_payload); ask for less (a narrower request or a page), or raise max_payload in the NATS server's configuration",
      stored:
        "the reply of catalog-get is 2000 bytes, over the bus limit of 1000 bytes (NATS max_payload): it is stored in the JetStream stream P_LARGE as p.large.gateway.r1.<chunk> for 600 s; read it there (the Toolbus-Large-Reply header names it)",
      storeFailed:
        "the reply of catalog-get is 2000 bytes, over the bus limit of 1000 bytes (NATS max_payload), and it could not be stored in the stream P_LARGE: no space",
      budget:
        "2000 bytes is larger than this process's budget for large replies in flight ([bus] large_replies_in_flight_bytes = 1024, 1 KiB); raise [bus] large_replies_in_flight_bytes, retry later, or ask for less",
      budgetWaited:
        "2000 bytes did not fit in this process's budget for large replies in flight ([bus] large_replies_in_flight_bytes = 4096, 4 KiB) within 30 s, other large replies holding it; raise [bus] large_replies_in_flight_bytes, retry later, or ask for less",
      outcome:
        "this call's outcome (2000 bytes) is more than the call ledger keeps in one record (NATS max_payload: 1000 bytes) and its reply was not stored, so only its first answer carried it; call again with a new callId to run it again",
      body: "the request body is over the limit of 4 MiB for one request; send a smaller request",
    });
  });
});

describe("sizes in messages", () => {
  it.each<[number, string]>([
    [4 * 1024 * 1024, "4 MiB"],
    [512 * 1024, "512 KiB"],
    [1000, "1000 bytes"],
  ])("%d → %s", (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });
});
