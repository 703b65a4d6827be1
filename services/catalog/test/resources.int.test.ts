// Resources through real servers (docs/reference-behavior.md §8, checklist 51–53): every server's
// listing sorted by name with failing ones left out, one page of one server, templates, reads
// and their errors, and reads checked against the call that produced the URI.
import { Kvm } from "@nats-io/kv";
import { internalSubjects } from "@toolbus/protocol";
import { serverEverythingCommand, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogHarness, type RunningService, toolbusToml } from "./support/harness.js";
import { rawServer } from "./support/raw-server.js";

const failure = (code: string, message: string, retryable: boolean) => ({
  ok: false,
  error: { code, message, retryable },
});

describe("resources", () => {
  let harness: CatalogHarness;
  let running: RunningService;

  beforeAll(async () => {
    harness = await CatalogHarness.create("resources");
    const docs = await startTestServer({
      transport: "stdio",
      script: {
        resources: [
          { uri: "test://a", name: "a", mimeType: "text/plain", text: "alpha" },
          { uri: "test://b", name: "b", blob: "AAEC" },
          { uri: "test://c", name: "c", description: "the third" },
        ],
        resourceTemplates: [
          { uriTemplate: "test://t/{x}", name: "t1" },
          { uriTemplate: "test://u/{y}", name: "t2", mimeType: "text/plain" },
          { uriTemplate: "test://v/{z}", name: "t3" },
        ],
        resourcesPageSize: 2,
      },
    });
    const notes = await rawServer({ resourcePages: [{ resources: [{ uri: "note://1", name: "n1" }] }] });
    const broken = await rawServer({
      resourcePages: [{ resources: [{ uri: "bad://1", name: "x" }], nextCursor: "nowhere" }],
    });
    const plain = await rawServer({ toolPages: [{ tools: [] }] });
    for (const server of [docs, notes, broken, plain]) harness.defer(() => server.dispose());
    running = await harness.start(
      toolbusToml({
        servers: Object.fromEntries(
          Object.entries({ notes, docs, broken, plain }).map(([name, s]) => [
            name,
            { command: s.command, args: s.args },
          ]),
        ),
      }),
    );
    expect(await running.service.startup).toEqual({
      ready: ["broken", "docs", "notes", "plain"],
      failed: [],
      cancelled: [],
    });
  }, 60_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("[51] lists every server's resources, all pages, sorted by server, leaving out and logging one that fails", async () => {
    expect(await harness.request(harness.subjects.catalogResourcesList, {})).toEqual({
      ok: true,
      result: {
        resources: [
          { server: "docs", uri: "test://a", name: "a", mimeType: "text/plain" },
          { server: "docs", uri: "test://b", name: "b" },
          { server: "docs", uri: "test://c", name: "c", description: "the third" },
          { server: "notes", uri: "note://1", name: "n1" },
        ],
      },
    });
    expect(
      running.logs.find(
        (line) => line.server === "broken" && line.msg === "resources/list failed; the server is left out",
      ),
    ).toBeDefined();
  });

  it("[51] refuses a cursor without a server", async () => {
    expect(await harness.request(harness.subjects.catalogResourcesList, { cursor: "2" })).toEqual(
      failure("bad_request", "cursor can only be used when a server is specified", false),
    );
    expect(await harness.request(harness.subjects.catalogResourceTemplatesList, { cursor: "2" })).toEqual(
      failure("bad_request", "cursor can only be used when a server is specified", false),
    );
  });

  it("[52] lists one page of one server's resources, with the cursor to the next", async () => {
    expect(await harness.ok(harness.subjects.catalogResourcesList, { server: "docs" })).toEqual({
      resources: [
        { server: "docs", uri: "test://a", name: "a", mimeType: "text/plain" },
        { server: "docs", uri: "test://b", name: "b" },
      ],
      nextCursor: "2",
    });
    expect(await harness.ok(harness.subjects.catalogResourcesList, { server: "docs", cursor: "2" })).toEqual({
      resources: [{ server: "docs", uri: "test://c", name: "c", description: "the third" }],
    });
  });

  it("lists resource templates the same way", async () => {
    expect(await harness.ok(harness.subjects.catalogResourceTemplatesList, { server: "docs" })).toEqual({
      resourceTemplates: [
        { server: "docs", uriTemplate: "test://t/{x}", name: "t1" },
        { server: "docs", uriTemplate: "test://u/{y}", name: "t2", mimeType: "text/plain" },
      ],
      nextCursor: "2",
    });
    expect(await harness.ok(harness.subjects.catalogResourceTemplatesList, {})).toEqual({
      resourceTemplates: [
        { server: "docs", uriTemplate: "test://t/{x}", name: "t1" },
        { server: "docs", uriTemplate: "test://u/{y}", name: "t2", mimeType: "text/plain" },
        { server: "docs", uriTemplate: "test://v/{z}", name: "t3" },
      ],
    });
  });

  it("reads a resource, and says which read failed and why", async () => {
    expect(
      await harness.ok(harness.subjects.catalogResourcesRead, { server: "docs", uri: "test://a" }),
    ).toEqual({
      server: "docs",
      uri: "test://a",
      contents: [{ uri: "test://a", mimeType: "text/plain", text: "alpha" }],
    });
    expect(
      await harness.request(harness.subjects.catalogResourcesRead, { server: "docs", uri: "test://zzz" }),
    ).toEqual(
      failure(
        "transport_error",
        "resources/read failed: resources/read failed for `docs` (test://zzz): MCP error -32002: Resource not found: test://zzz",
        true,
      ),
    );
    expect(
      await harness.request(harness.subjects.catalogResourcesRead, { server: "nope", uri: "test://a" }),
    ).toEqual(failure("bad_request", "unknown MCP server 'nope'", false));
    const blank = await harness.request(harness.subjects.catalogResourcesRead, {
      server: " ",
      uri: "test://a",
    });
    expect(blank).toEqual(failure("bad_request", expect.stringContaining("server"), false));
  });
});

describe("resource reads tied to a call", () => {
  let harness: CatalogHarness;

  beforeAll(async () => {
    harness = await CatalogHarness.create("origins");
    const docs = await startTestServer({
      transport: "stdio",
      script: { resources: [{ uri: "demo://resource/dynamic/text/2", name: "lookalike", text: "not it" }] },
    });
    harness.defer(() => docs.dispose());
    const { service } = await harness.start(
      toolbusToml({
        servers: { everything: serverEverythingCommand(), docs: { command: docs.command, args: docs.args } },
      }),
    );
    expect(await service.startup).toEqual({ ready: ["docs", "everything"], failed: [], cancelled: [] });
  }, 60_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("reads a URI a call returned when the read names that call, and refuses any other", async () => {
    const revision = (await harness.entry("everything"))!.revision;
    const links = await harness.ok<{ result: { content: Array<{ type: string; uri?: string }> } }>(
      harness.subjects.connectorCall("everything"),
      {
        callId: "call-links",
        tool: "get-resource-links",
        arguments: { count: 2 },
        preparedRevision: revision,
      },
    );
    const uris = links.result.content
      .filter((block) => block.type === "resource_link")
      .map((block) => block.uri);
    expect(uris).toEqual(["demo://resource/dynamic/blob/1", "demo://resource/dynamic/text/2"]);

    const read = await harness.ok<{ server: string; uri: string; originCallId: string; contents: unknown[] }>(
      harness.subjects.catalogResourcesRead,
      { server: "everything", uri: "demo://resource/dynamic/text/2", originCallId: "call-links" },
    );
    expect(read).toEqual({
      server: "everything",
      uri: "demo://resource/dynamic/text/2",
      originCallId: "call-links",
      contents: [expect.objectContaining({ uri: "demo://resource/dynamic/text/2", mimeType: "text/plain" })],
    });

    const refused = (server: string, uri: string, callId: string) =>
      failure(
        "unauthorized",
        `resource \`${uri}\` did not come from call \`${callId}\` on MCP server '${server}'; read it without originCallId or from the server that produced it`,
        false,
      );
    const cases = [
      { server: "everything", uri: "demo://resource/dynamic/text/4", originCallId: "call-links" },
      { server: "docs", uri: "demo://resource/dynamic/text/2", originCallId: "call-links" },
      { server: "everything", uri: "demo://resource/dynamic/text/2", originCallId: "call-unknown" },
    ];
    for (const request of cases) {
      expect(await harness.request(harness.subjects.catalogResourcesRead, request)).toEqual(
        refused(request.server, request.uri, request.originCallId),
      );
    }
    // Without originCallId the read is an ordinary one.
    expect(
      await harness.ok(harness.subjects.catalogResourcesRead, {
        server: "docs",
        uri: "demo://resource/dynamic/text/2",
      }),
    ).toEqual({
      server: "docs",
      uri: "demo://resource/dynamic/text/2",
      contents: [{ uri: "demo://resource/dynamic/text/2", text: "not it" }],
    });
    // The origins are kept under the server that answered, the only keys its connector may write.
    const origins = await new Kvm(harness.nc).open(internalSubjects(harness.prefix).kv.resourceOrigins);
    const keys: string[] = [];
    for await (const key of await origins.keys()) keys.push(key);
    expect(keys).toEqual([`everything.call.${Buffer.from("call-links", "utf8").toString("hex")}`]);
  });
});
