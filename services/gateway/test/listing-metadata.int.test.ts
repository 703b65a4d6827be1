/**
 * MCP Apps and metadata intact through the edge: the `title`, `icons` and `_meta` a server gives
 * its resources, resource templates and prompts reach an MCP client through the gateway's
 * listings as the server wrote them, and an app's `ui://` resource is readable through it.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { mcpClient, Stack, tomlFor } from "./support/stack.js";

const ICONS = [{ src: "https://apps.example.com/board.svg", mimeType: "image/svg+xml", sizes: ["any"] }];
const META = { "example.com/owner": { team: "notes" } };

let stack: Stack;
let app: StdioTestServer;
let gateway: GatewayService;
let client: Client;

beforeAll(async () => {
  app = await startTestServer({
    transport: "stdio",
    script: {
      tools: [{ name: "board", _meta: { ui: { resourceUri: "ui://board/view.html" } } }],
      resources: [
        {
          uri: "ui://board/view.html",
          name: "board-view",
          title: "Board view",
          mimeType: "text/html;profile=mcp-app",
          text: "<!doctype html><title>board</title>",
          icons: ICONS,
          _meta: { ...META, ui: { prefersBorder: true } },
        },
      ],
      resourceTemplates: [
        { uriTemplate: "board://cards/{id}", name: "card", title: "A card", icons: ICONS, _meta: META },
      ],
      prompts: [{ name: "plan", title: "Plan the week", icons: ICONS, _meta: META, text: "plan it" }],
    },
  });
  stack = await Stack.start(
    "gw_listing_meta",
    tomlFor([{ name: "app", command: app.command, args: app.args }]),
  );
  stack.defer(() => app.dispose());
  gateway = await stack.gateway({});
  client = await mcpClient(gateway);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await stack?.close();
});

it("passes the title, icons and _meta of resources, templates and prompts through, and reads the app's ui:// resource", async () => {
  const [resource] = (await client.listResources()).resources;
  const [template] = (await client.listResourceTemplates()).resourceTemplates;
  const [prompt] = (await client.listPrompts()).prompts;
  const read = await client.readResource({ uri: "ui://board/view.html" });
  expect({
    resource: [resource?.title, resource?.icons, resource?._meta],
    template: [template?.title, template?.icons, template?._meta],
    prompt: [prompt?.title, prompt?.icons, prompt?._meta],
    read: read.contents.map((content) => [
      content.uri,
      content.mimeType,
      "text" in content ? content.text : "",
    ]),
  }).toEqual({
    resource: ["Board view", ICONS, { ...META, ui: { prefersBorder: true } }],
    template: ["A card", ICONS, META],
    prompt: ["Plan the week", ICONS, META],
    read: [["ui://board/view.html", "text/html;profile=mcp-app", "<!doctype html><title>board</title>"]],
  });
});
