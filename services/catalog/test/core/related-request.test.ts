import { describe, expect, it } from "vitest";
import { markRelated, RELATED_REQUEST_KEY, takeRelated } from "../../src/core/related-request.js";

const elicit = { jsonrpc: "2.0", id: 4, method: "elicitation/create", params: { message: "hi" } };

describe("related-request marks", () => {
  it("marks requests and notifications, and leaves responses and non-JSON data as they were", () => {
    const marked = JSON.parse(markRelated(JSON.stringify(elicit), 12, "n1"));
    expect(marked.params._meta).toEqual({ [RELATED_REQUEST_KEY]: { nonce: "n1", requestId: 12 } });
    const response = JSON.stringify({ jsonrpc: "2.0", id: 12, result: {} });
    expect(markRelated(response, 12, "n1")).toBe(response);
    expect(markRelated("not json", 12, "n1")).toBe("not json");
  });

  it("takes its own mark off and reads it, keeping the server's own _meta", () => {
    const withMeta = { ...elicit, params: { message: "hi", _meta: { progressToken: "t" } } };
    const message = JSON.parse(markRelated(JSON.stringify(withMeta), "r-1", "n1"));
    expect(takeRelated(message, "n1")).toBe("r-1");
    expect(message).toEqual(withMeta);
  });

  it("ignores, and takes off, a mark the server wrote itself", () => {
    const forged = {
      ...elicit,
      params: { message: "hi", _meta: { [RELATED_REQUEST_KEY]: { nonce: "guess", requestId: 1 } } },
    };
    expect(takeRelated(forged, "n1")).toBeUndefined();
    expect(forged).toEqual(elicit);
  });
});
