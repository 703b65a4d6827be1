import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as schemas from "../src/schemas/index.js";
import {
  CATALOG_KEY_PREFIX,
  catalogKey,
  createSubjects,
  DEFAULT_PREFIX,
  kvKeyToken,
  prefixFromEnv,
  QueueGroup,
  SUBJECTS,
  type Subjects,
  serverFromCatalogKey,
  subjectToken,
} from "../src/subjects.js";

/** Every subject a `Subjects` produces, with `github` and `call_1` for the placeholders. */
function producedSubjects(s: Subjects): string[] {
  return [
    s.catalogGet,
    s.catalogRefresh,
    s.catalogResourcesList,
    s.catalogResourceTemplatesList,
    s.catalogResourcesRead,
    s.catalogSearch,
    s.catalogPromptsList,
    s.catalogPromptsGet,
    s.catalogCompletionComplete,
    s.serverStatus("github"),
    s.startupComplete,
    s.catalogEvent,
    s.promptsEvent,
    s.dispatchCall,
    s.dispatchHistory,
    s.callBegin,
    s.callEnd,
    s.approvalsDecide,
    s.approvalsPostToolUse,
    s.approvalsPending,
    s.approvalsList,
    s.approvalsResolve,
    s.approvalsResolved,
    s.approvalsCancel,
    s.approvalsForgetThreads,
    s.memoryMessage,
    s.memoryStrip,
    s.memoryUsage,
    s.connectorCall("github"),
    s.connectorCancel("github"),
    s.callCancel("call_1"),
    s.callRelay("call_1", "github", "progress"),
    s.callRelay("call_1", "github", "logging"),
    s.callRelay("call_1", "github", "elicitation"),
    s.callRelay("call_1", "github", "sampling"),
    s.callRelay("call_1", "github", "input"),
  ];
}

const fill = (template: string) => template.replace("<server>", "github").replace("<callId>", "call_1");

describe("the default prefix", () => {
  it("gives exactly the subject and JetStream names of docs/contract.md", () => {
    const s = createSubjects();
    expect({
      prefix: s.prefix,
      catalogGet: s.catalogGet,
      catalogRefresh: s.catalogRefresh,
      catalogResourcesList: s.catalogResourcesList,
      catalogResourceTemplatesList: s.catalogResourceTemplatesList,
      catalogResourcesRead: s.catalogResourcesRead,
      serverStatus: s.serverStatus("github"),
      startupComplete: s.startupComplete,
      catalogEvent: s.catalogEvent,
      dispatchCall: s.dispatchCall,
      callBegin: s.callBegin,
      callEnd: s.callEnd,
      approvalsDecide: s.approvalsDecide,
      approvalsPostToolUse: s.approvalsPostToolUse,
      approvalsPending: s.approvalsPending,
      approvalsList: s.approvalsList,
      approvalsResolve: s.approvalsResolve,
      approvalsResolved: s.approvalsResolved,
      memoryMessage: s.memoryMessage,
      memoryStrip: s.memoryStrip,
      memoryUsage: s.memoryUsage,
      connectorCall: s.connectorCall("github"),
      kv: s.kv.catalog,
      eventsStream: s.streams.events.name,
      memoryStream: s.streams.memory.name,
    }).toStrictEqual({
      prefix: "toolbus",
      catalogGet: "toolbus.catalog.get",
      catalogRefresh: "toolbus.catalog.refresh",
      catalogResourcesList: "toolbus.catalog.resources.list",
      catalogResourceTemplatesList: "toolbus.catalog.resource_templates.list",
      catalogResourcesRead: "toolbus.catalog.resources.read",
      serverStatus: "toolbus.events.server.github",
      startupComplete: "toolbus.events.startup_complete",
      catalogEvent: "toolbus.events.catalog",
      dispatchCall: "toolbus.dispatch.call",
      callBegin: "toolbus.events.call.begin",
      callEnd: "toolbus.events.call.end",
      approvalsDecide: "toolbus.approvals.decide",
      approvalsPostToolUse: "toolbus.approvals.post_tool_use",
      approvalsPending: "toolbus.approvals.pending",
      approvalsList: "toolbus.approvals.list",
      approvalsResolve: "toolbus.approvals.resolve",
      approvalsResolved: "toolbus.approvals.resolved",
      memoryMessage: "toolbus.memory.message",
      memoryStrip: "toolbus.memory.strip",
      memoryUsage: "toolbus.memory.usage",
      connectorCall: "toolbus.connector.github.call",
      kv: "toolbus_catalog",
      eventsStream: "TOOLBUS_EVENTS",
      memoryStream: "TOOLBUS_MEMORY",
    });
  });

  it("puts every events subject in the events stream, the memory subject in the memory stream, large replies in their own", () => {
    const s = createSubjects();
    expect(s.streams).toStrictEqual({
      events: { name: "TOOLBUS_EVENTS", subjects: ["toolbus.events.>"] },
      memory: { name: "TOOLBUS_MEMORY", subjects: ["toolbus.memory.message"] },
      large: { name: "TOOLBUS_LARGE", subjects: ["toolbus.large.>"] },
    });
    expect(s.kv).toStrictEqual({
      catalog: "toolbus_catalog",
      approvalGrants: "toolbus_approval_grants",
      callHistory: "toolbus_call_history",
    });
  });
});

describe("largeReply", () => {
  it("names a stored reply under its recipient, and refuses a token that would be a wildcard or several", () => {
    const s = createSubjects("tenant-a");
    expect(s.largeReply("gateway", "AbC123")).toBe("tenant-a.large.gateway.AbC123");
    expect(s.largeReply("_", "AbC123")).toBe("tenant-a.large._.AbC123");
    for (const bad of ["*", ">", "a.b", ""]) {
      expect(() => s.largeReply(bad, "id")).toThrow(/^Invalid large-reply subject token/);
    }
  });
});

describe("SUBJECTS", () => {
  it("lists exactly the subjects createSubjects produces, both ways", () => {
    expect(new Set(SUBJECTS.map((row) => fill(row.subject)))).toStrictEqual(
      new Set(producedSubjects(createSubjects())),
    );
    expect(SUBJECTS).toHaveLength(producedSubjects(createSubjects()).length);
  });

  it("names request and reply schemas the package exports", () => {
    const names = SUBJECTS.flatMap((row) => (row.reply === null ? [row.request] : [row.request, row.reply]));
    expect(names.filter((name) => !(`${name}Schema` in schemas))).toStrictEqual([]);
  });

  it("gives a reply schema to every req/reply subject and to no event", () => {
    const mismatched = SUBJECTS.filter((row) => (row.kind === "req/reply") !== (row.reply !== null));
    expect(mismatched).toStrictEqual([]);
  });

  it("marks as stream exactly the subjects the JetStream streams capture", () => {
    const s = createSubjects();
    const captured = (subject: string) =>
      subject.startsWith(`${s.prefix}.events.`) || s.streams.memory.subjects.includes(subject);
    const wrong = SUBJECTS.filter((row) => (row.kind === "stream") !== captured(fill(row.subject)));
    expect(wrong).toStrictEqual([]);
  });
});

describe("another prefix", () => {
  it("gives names of its own, with no subject, bucket or stream shared with the default", () => {
    const tenant = createSubjects("tenant-a");
    const all = [
      ...producedSubjects(tenant),
      tenant.kv.catalog,
      tenant.kv.approvalGrants,
      tenant.kv.callHistory,
      tenant.streams.events.name,
      tenant.streams.memory.name,
      tenant.streams.large.name,
    ];
    expect(all.filter((name) => name.toLowerCase().startsWith("toolbus"))).toStrictEqual([]);
    expect({ call: tenant.dispatchCall, kv: tenant.kv, streams: tenant.streams }).toStrictEqual({
      call: "tenant-a.dispatch.call",
      kv: {
        catalog: "tenant-a_catalog",
        approvalGrants: "tenant-a_approval_grants",
        callHistory: "tenant-a_call_history",
      },
      streams: {
        events: { name: "TENANT_A_EVENTS", subjects: ["tenant-a.events.>"] },
        memory: { name: "TENANT_A_MEMORY", subjects: ["tenant-a.memory.message"] },
        large: { name: "TENANT_A_LARGE", subjects: ["tenant-a.large.>"] },
      },
    });
  });

  it.each([
    ["empty", ""],
    ["with a dot", "tool.bus"],
    ["with a wildcard", "tool*"],
    ["with a full wildcard", "tool>"],
    ["with a space", "tool bus"],
    ["with a tab", "tool\tbus"],
    ["with a dollar sign", "$SYS"],
    ["65 characters long", "p".repeat(65)],
  ])("is refused when %s, saying what a prefix may hold", (_why, prefix) => {
    expect(() => createSubjects(prefix)).toThrow(
      `Invalid toolbus subject prefix ${JSON.stringify(prefix)}: use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-' (no dots, wildcards or spaces), e.g. TOOLBUS_PREFIX=tenant_a`,
    );
  });

  it("may be 64 characters long", () => {
    expect(createSubjects("p".repeat(64)).dispatchCall).toBe(`${"p".repeat(64)}.dispatch.call`);
  });
});

describe("prefixFromEnv", () => {
  it.each([
    ["unset", {}, DEFAULT_PREFIX],
    ["empty", { TOOLBUS_PREFIX: "" }, DEFAULT_PREFIX],
    ["set", { TOOLBUS_PREFIX: "ci_run_7" }, "ci_run_7"],
  ])("reads TOOLBUS_PREFIX when it is %s", (_why, env, prefix) => {
    expect(prefixFromEnv(env)).toBe(prefix);
  });

  it("refuses an invalid TOOLBUS_PREFIX", () => {
    expect(() => prefixFromEnv({ TOOLBUS_PREFIX: "a.b" })).toThrow('Invalid toolbus subject prefix "a.b"');
  });
});

describe("subjects with a server or call in them", () => {
  it.each([
    ["a space", "bad name"],
    ["a dot", "a.b"],
    ["a wildcard", "*"],
    ["nothing", ""],
  ])("refuse a server name with %s", (_why, server) => {
    const s = createSubjects();
    const message = `Invalid MCP server name ${JSON.stringify(server)}: must match pattern ^[a-zA-Z0-9_-]+$`;
    expect(() => s.connectorCall(server)).toThrow(message);
    expect(() => s.serverStatus(server)).toThrow(message);
    expect(() => catalogKey(server)).toThrow(message);
    expect(() => s.callRelay("call_1", server, "progress")).toThrow(message);
    expect(() => s.callRelayAll("call_1", server)).toThrow(message);
  });

  it("keep a plain call id as it is", () => {
    const s = createSubjects();
    expect([
      s.callRelay("call_AbC-123", "github", "elicitation"),
      s.callRelayAll("call_AbC-123", "github"),
    ]).toStrictEqual([
      "toolbus.calls.call_AbC-123.github.elicitation",
      "toolbus.calls.call_AbC-123.github.*",
    ]);
  });

  it("turn any call id into one safe token, different for different ids", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, unit: "binary" }),
        fc.string({ minLength: 1, unit: "binary" }),
        (a, b) => {
          const token = subjectToken(a);
          expect(token).toMatch(/^[^\s.*>]+$/);
          expect(subjectToken(a) === subjectToken(b)).toBe(a === b);
        },
      ),
    );
  });

  it("turn any id into one KV key token, different for different ids", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, unit: "binary" }),
        fc.string({ minLength: 1, unit: "binary" }),
        (a, b) => {
          expect(kvKeyToken(a)).toMatch(/^[-=\w]+$/);
          expect(kvKeyToken(a) === kvKeyToken(b)).toBe(a === b);
        },
      ),
    );
  });

  it("name a call's cancellation by its call id, and a connector's by its server", () => {
    const s = createSubjects();
    expect([
      s.callCancel("call.1"),
      s.callCancelAll,
      s.connectorCancel("github"),
      s.connectorCancelAll,
    ]).toStrictEqual([
      "toolbus.calls.~Y2FsbC4x.cancel",
      "toolbus.calls.*.cancel",
      "toolbus.connector.github.cancel",
      "toolbus.connector.*.cancel",
    ]);
  });

  it("encode a call id with a dot as base64url of its bytes", () => {
    expect(createSubjects().callRelay("call.1", "github", "progress")).toBe(
      "toolbus.calls.~Y2FsbC4x.github.progress",
    );
  });

  it("name the server that relays, so a connector's identity may relay for its own server only", () => {
    const s = createSubjects("tenant_a");
    expect([
      s.callRelay("c1", "github", "elicitation"),
      s.callRelayAll("c1", "github"),
      s.callRelayAnyServer("c1", "logging"),
    ]).toStrictEqual([
      "tenant_a.calls.c1.github.elicitation",
      "tenant_a.calls.c1.github.*",
      "tenant_a.calls.c1.*.logging",
    ]);
  });

  it("refuse an unknown relay kind", () => {
    expect(() => createSubjects().callRelay("c", "github", "status" as "progress")).toThrow(
      'Unknown call relay kind "status": use one of progress, logging, elicitation, sampling, input',
    );
    expect(() => createSubjects().callRelayEvery("status" as "progress")).toThrow(
      'Unknown call relay kind "status": use one of progress, logging, elicitation, sampling, input',
    );
  });

  it("name one relay kind of every call and server with one-token wildcards", () => {
    expect(createSubjects("tenant_a").callRelayEvery("logging")).toBe("tenant_a.calls.*.*.logging");
  });
});

describe("catalog keys", () => {
  it("round-trip a server name and ignore other keys", () => {
    expect([catalogKey("github"), serverFromCatalogKey("server.github")]).toStrictEqual([
      "server.github",
      "github",
    ]);
    expect([
      serverFromCatalogKey("meta.revision"),
      serverFromCatalogKey(`${CATALOG_KEY_PREFIX}a.b`),
    ]).toStrictEqual([null, null]);
  });
});

describe("queue groups", () => {
  it("are named after the services", () => {
    expect(Object.values(QueueGroup)).toStrictEqual([
      "catalog",
      "dispatcher",
      "approvals",
      "memory",
      "gateway",
    ]);
  });
});
