// Server elicitations the deployment's approval policy answers itself (docs/reference-behavior.md
// §5.7, checklist 62): under `never` with full access an empty form is accepted with `{}`; under
// `never` with a restricted profile it is declined. Whoever answers the call is never asked.
import {
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { afterEach, expect, it } from "vitest";
import { CatalogHarness, type Envelope, toolbusToml } from "./support/harness.js";

let harness: CatalogHarness;
afterEach(async () => {
  await harness?.close();
});

const script: TestServerScript = {
  tools: [
    { name: "confirm", behavior: { kind: "elicit", message: "Go ahead?" } },
    {
      name: "pick",
      behavior: {
        kind: "elicit",
        message: "Pick a colour",
        requestedSchema: { type: "object", properties: { colour: { type: "string" } } },
      },
    },
  ],
};

/** Starts the catalog with this policy; each call's elicitations would be accepted by a listener. */
async function withPolicy(env: Record<string, string>) {
  harness = await CatalogHarness.create("elicit-policy");
  const srv: StdioTestServer = await startTestServer({ transport: "stdio", script });
  harness.defer(() => srv.dispose());
  const running = await harness.start(
    toolbusToml({ servers: { srv: { command: srv.command, args: srv.args } } }),
    { env: { ...process.env, ...env } },
  );
  expect(await running.service.startup).toEqual({ ready: ["srv"], failed: [], cancelled: [] });
  const asked: string[] = [];
  const call = async (callId: string, tool: string): Promise<Envelope> => {
    const answerer = harness.nc.subscribe(harness.subjects.callRelayAnyServer(callId, "elicitation"), {
      callback: (_error, msg) => {
        asked.push(callId);
        msg.respond(JSON.stringify({ ok: true, result: { action: "accept", content: { colour: "red" } } }));
      },
    });
    await harness.nc.flush();
    try {
      const revision = (await harness.entry("srv"))!.revision;
      return await harness.request(harness.subjects.connectorCall("srv"), {
        callId,
        tool,
        arguments: {},
        preparedRevision: revision,
      });
    } finally {
      answerer.unsubscribe();
    }
  };
  return { call, asked };
}

const answered = (answer: string) => ({
  ok: true,
  result: { result: { content: [{ type: "text", text: answer }] } },
});

it("[62] never with full access accepts an empty form with {}, and declines a form that asks for something", async () => {
  const { call, asked } = await withPolicy({
    TOOLBUS_APPROVAL_POLICY: "never",
    TOOLBUS_PERMISSION_PROFILE: "full-access",
  });
  expect(await call("call-confirm", "confirm")).toEqual(answered('{"action":"accept","content":{}}'));
  expect(await call("call-pick", "pick")).toEqual(answered('{"action":"decline"}'));
  expect(asked).toEqual([]);
});

it("[62] never with a restricted profile declines even an empty form", async () => {
  const { call, asked } = await withPolicy({ TOOLBUS_APPROVAL_POLICY: "never" });
  expect(await call("call-confirm", "confirm")).toEqual(answered('{"action":"decline"}'));
  expect(asked).toEqual([]);
});

it("on-request leaves every elicitation to whoever answers the call", async () => {
  const { call, asked } = await withPolicy({ TOOLBUS_APPROVAL_POLICY: "on-request" });
  expect(await call("call-confirm", "confirm")).toEqual(
    answered('{"action":"accept","content":{"colour":"red"}}'),
  );
  expect(asked).toEqual(["call-confirm"]);
});
