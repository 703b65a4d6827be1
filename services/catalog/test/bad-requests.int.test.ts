// Malformed requests on every subject the catalog serves get `bad_request` naming what is wrong,
// never a timeout or a crash, and the service keeps answering.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogHarness, toolbusToml } from "./support/harness.js";
import { rawServer } from "./support/raw-server.js";

let harness: CatalogHarness;

beforeAll(async () => {
  harness = await CatalogHarness.create("badreq");
  const srv = await rawServer({
    toolPages: [{ tools: [{ name: "echo", inputSchema: { type: "object" } }] }],
    resourcePages: [{ resources: [] }],
  });
  harness.defer(() => srv.dispose());
  const { service } = await harness.start(
    toolbusToml({ servers: { srv: { command: srv.command, args: srv.args } } }),
  );
  expect(await service.startup).toEqual({ ready: ["srv"], failed: [], cancelled: [] });
});
afterAll(async () => {
  await harness?.close();
});

describe("malformed requests", () => {
  const connector = (suffix: string) => () => `${harness.prefix}.connector.srv.${suffix}`;
  const cases: Array<{ subject: () => string; body: unknown; names: string }> = [
    { subject: () => harness.subjects.catalogGet, body: { exposure: "everything" }, names: "exposure" },
    { subject: () => harness.subjects.catalogRefresh, body: { server: "bad name" }, names: "server" },
    { subject: () => harness.subjects.catalogSearch, body: {}, names: "query" },
    { subject: () => harness.subjects.catalogSearch, body: { query: "x", limit: 0 }, names: "limit" },
    { subject: () => harness.subjects.catalogResourcesList, body: { cursor: 5 }, names: "cursor" },
    { subject: () => harness.subjects.catalogResourceTemplatesList, body: { server: 7 }, names: "server" },
    { subject: () => harness.subjects.catalogResourcesRead, body: { uri: "test://a" }, names: "server" },
    {
      subject: () => harness.subjects.catalogResourcesRead,
      body: { server: " ", uri: "test://a" },
      names: "server",
    },
    { subject: () => harness.subjects.catalogPromptsList, body: { server: 7 }, names: "server" },
    { subject: () => harness.subjects.catalogPromptsGet, body: { server: "srv" }, names: "name" },
    {
      subject: () => harness.subjects.catalogPromptsGet,
      body: { server: "srv", name: "p", arguments: { n: 1 } },
      names: "arguments.n",
    },
    {
      subject: () => harness.subjects.catalogCompletionComplete,
      body: { server: "srv", ref: { type: "ref/tool", name: "t" }, argument: { name: "a", value: "" } },
      names: "ref.type",
    },
    {
      subject: () => harness.subjects.catalogCompletionComplete,
      body: { server: "srv", ref: { type: "ref/prompt", name: "p" } },
      names: "argument",
    },
    { subject: connector("call"), body: { tool: "echo", preparedRevision: 1 }, names: "callId" },
    { subject: connector("call"), body: { callId: "c", tool: "echo" }, names: "preparedRevision" },
    {
      subject: connector("call"),
      body: { callId: "c", tool: "echo", preparedRevision: 1, arguments: [1] },
      names: "arguments",
    },
    { subject: connector("resources.list"), body: { kind: "files" }, names: "kind" },
    { subject: connector("resources.read"), body: {}, names: "uri" },
    { subject: connector("prompts.list"), body: { cursor: 2 }, names: "cursor" },
    { subject: connector("prompts.get"), body: {}, names: "name" },
    {
      subject: connector("completion.complete"),
      body: { ref: { type: "ref/prompt", name: "p" } },
      names: "argument",
    },
    { subject: connector("refresh"), body: [], names: "object" },
  ];

  it.each(cases)("answers bad_request naming $names on a bad body", async ({ subject, body, names }) => {
    expect(await harness.request(subject(), body)).toEqual({
      ok: false,
      error: { code: "bad_request", message: expect.stringContaining(names), retryable: false },
    });
  });

  it("answers bad_request to a body that is not JSON, on every subject", async () => {
    const subjects = [...new Set(cases.map((c) => c.subject()))];
    for (const subject of subjects) {
      expect({ subject, reply: await harness.request(subject, "{not json") }).toEqual({
        subject,
        reply: {
          ok: false,
          error: {
            code: "bad_request",
            message: expect.stringContaining("not valid JSON"),
            retryable: false,
          },
        },
      });
    }
    expect(subjects).toHaveLength(16);
    expect((await harness.catalog()).tools.map((t) => t.rawName)).toEqual(["echo"]);
  });
});
