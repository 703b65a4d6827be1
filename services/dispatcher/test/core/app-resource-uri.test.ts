import { describe, expect, it } from "vitest";
import { mcpAppResourceUri } from "../../src/core/app-resource-uri.js";

describe("mcpAppResourceUri (§11 test 1)", () => {
  it.each([
    {
      name: "ui.resourceUri comes first",
      meta: { ui: { resourceUri: "ui://a" }, "ui/resourceUri": "ui://b", "openai/outputTemplate": "ui://c" },
      uri: "ui://a",
    },
    {
      name: "then ui/resourceUri",
      meta: { "ui/resourceUri": "ui://b", "openai/outputTemplate": "ui://c" },
      uri: "ui://b",
    },
    { name: "then openai/outputTemplate", meta: { "openai/outputTemplate": "ui://c" }, uri: "ui://c" },
    {
      name: "a non-string value falls through to the next key",
      meta: { ui: { resourceUri: 7 }, "openai/outputTemplate": "ui://c" },
      uri: "ui://c",
    },
    {
      name: "a non-object ui falls through",
      meta: { ui: "ui://x", "ui/resourceUri": "ui://b" },
      uri: "ui://b",
    },
    { name: "none of the keys gives none", meta: { other: "x" }, uri: undefined },
    { name: "no meta gives none", meta: undefined, uri: undefined },
    { name: "a non-object meta gives none", meta: ["ui://a"], uri: undefined },
  ])("$name", ({ meta, uri }) => {
    expect(mcpAppResourceUri(meta)).toBe(uri);
  });
});
