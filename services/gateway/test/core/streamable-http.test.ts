import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import {
  headerRefusal,
  isAnswer,
  type JsonRpcMessage,
  PostAnswers,
  protocolVersionRefusal,
  SESSION_PROTOCOL_VERSIONS,
} from "../../src/core/streamable-http.js";

const BOTH = "application/json, text/event-stream";
const answer = (id: number) => ({ jsonrpc: "2.0" as const, id, result: {} });
const progress = (n: number): JsonRpcMessage => ({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: "t", progress: n },
});

describe("session protocol revisions", () => {
  it("are the 2025-era revisions the v2 SDK supports, newest first", () => {
    expect(SESSION_PROTOCOL_VERSIONS).toEqual(SUPPORTED_PROTOCOL_VERSIONS);
  });
});

describe("header checks", () => {
  it.each([
    ["POST", { accept: BOTH, contentType: "application/json" }, undefined],
    ["POST", { accept: BOTH, contentType: "application/json; charset=utf-8" }, undefined],
    ["POST", { accept: "application/json", contentType: "application/json" }, 406],
    ["POST", { accept: "text/event-stream", contentType: "application/json" }, 406],
    ["POST", { contentType: "application/json" }, 406],
    ["POST", { accept: BOTH }, 415],
    ["POST", { accept: BOTH, contentType: "text/plain; a=application/json" }, 415],
    ["POST", { accept: BOTH, contentType: "application/json", protocolVersion: "2025-11-25" }, undefined],
    ["POST", { accept: BOTH, contentType: "application/json", protocolVersion: "1999-01-01" }, 400],
    ["GET", { accept: "text/event-stream" }, undefined],
    ["GET", { accept: "application/json" }, 406],
    ["GET", {}, 406],
    ["GET", { accept: "text/event-stream", protocolVersion: "1999-01-01" }, 400],
    ["DELETE", {}, undefined],
    ["DELETE", { protocolVersion: "2025-06-18" }, undefined],
    ["DELETE", { protocolVersion: "1999-01-01" }, 400],
  ] as const)("%s %j → %s", (method, headers, status) => {
    expect(headerRefusal(method, headers)?.status).toBe(status);
  });

  it("does not hold initialize to the version header (its body names the version)", () => {
    const headers = { accept: BOTH, contentType: "application/json", protocolVersion: "1999-01-01" };
    expect(headerRefusal("POST", headers, true)).toBeUndefined();
  });

  it("names the unsupported version and the supported ones", () => {
    expect(protocolVersionRefusal("1999-01-01")).toEqual({
      status: 400,
      code: -32000,
      message: expect.stringMatching(
        /^Bad Request: Unsupported protocol version: 1999-01-01 \(supported versions: .*2025-11-25.*\)$/,
      ),
    });
  });

  it("refuses with the JSON-RPC codes the spec's clients expect", () => {
    expect(headerRefusal("POST", { contentType: "application/json" })).toMatchObject({
      code: -32000,
      message: expect.stringContaining("Not Acceptable"),
    });
    expect(headerRefusal("POST", { accept: BOTH, contentType: "text/plain" })).toMatchObject({
      code: -32000,
      message: expect.stringContaining("Content-Type: application/json"),
    });
  });
});

describe("isAnswer", () => {
  it.each([
    [answer(1), true],
    [{ jsonrpc: "2.0", id: 1, error: { code: -1, message: "no" } }, true],
    [{ jsonrpc: "2.0", id: 1, method: "ping" }, false],
    [progress(1), false],
  ] as const)("%j: %s", (message, expected) => {
    expect(isAnswer(message as JsonRpcMessage)).toBe(expected);
  });
});

describe("the form of a POST's answers", () => {
  it("answers one request that sent nothing else with its answer as one JSON body", () => {
    const answers = new PostAnswers([1], false);
    expect(answers.answer(answer(1))).toEqual({ json: answer(1), open: false, events: [], end: true });
    expect(answers.over).toBe(true);
  });

  it("answers a batch as a JSON array in the batch's order, once every request is answered", () => {
    const answers = new PostAnswers([1, 2, 3], true);
    expect(answers.answer(answer(3))).toEqual({ open: false, events: [], end: false });
    expect(answers.answer(answer(1))).toEqual({ open: false, events: [], end: false });
    expect(answers.answer(answer(2))).toEqual({
      json: [answer(1), answer(2), answer(3)],
      open: false,
      events: [],
      end: true,
    });
  });

  it("answers a batch of one request as an array of one", () => {
    expect(new PostAnswers([1], true).answer(answer(1)).json).toEqual([answer(1)]);
  });

  it("streams once the server sends something before the answer, the answer last", () => {
    const answers = new PostAnswers([1], false);
    expect(answers.event(progress(1))).toEqual({ open: true, events: [progress(1)], end: false });
    expect(answers.event(progress(2))).toEqual({ open: false, events: [progress(2)], end: false });
    expect(answers.answer(answer(1))).toEqual({ open: false, events: [answer(1)], end: true });
    expect(answers.streaming).toBe(true);
    expect(answers.over).toBe(true);
  });

  it("streams a batch with the answers held so far first, and ends with the last answer", () => {
    const answers = new PostAnswers([1, 2], true);
    answers.answer(answer(2));
    expect(answers.event(progress(1))).toEqual({ open: true, events: [answer(2), progress(1)], end: false });
    expect(answers.answer(answer(1))).toEqual({ open: false, events: [answer(1)], end: true });
  });

  it("opens the stream when the answers take too long, and writes nothing twice", () => {
    const answers = new PostAnswers([1, 2], true);
    answers.answer(answer(1));
    expect(answers.commit()).toEqual({ open: true, events: [answer(1)], end: false });
    expect(answers.commit()).toEqual({ open: false, events: [], end: false });
    expect(answers.answer(answer(1))).toEqual({ open: false, events: [], end: false });
    expect(answers.answer(answer(2))).toEqual({ open: false, events: [answer(2)], end: true });
  });

  it("ignores an answer to a request the POST did not send, and everything once over", () => {
    const answers = new PostAnswers([1], false);
    expect(answers.answer(answer(9))).toEqual({ open: false, events: [], end: false });
    answers.answer(answer(1));
    expect(answers.event(progress(1))).toEqual({ open: false, events: [], end: false });
    expect(answers.commit()).toEqual({ open: false, events: [], end: false });
  });

  it("takes string and number ids as different requests", () => {
    const answers = new PostAnswers([1, "1"], true);
    expect(answers.answer(answer(1)).end).toBe(false);
    expect(answers.answer({ jsonrpc: "2.0", id: "1", result: {} }).end).toBe(true);
  });

  it("ends a batch that repeats an id with that id's first answer", () => {
    const answers = new PostAnswers([1, 1, 2], true);
    answers.answer(answer(1));
    expect(answers.answer(answer(2))).toMatchObject({ json: [answer(1), answer(2)], end: true });
  });

  it("needs at least one request", () => {
    expect(() => new PostAnswers([], false)).toThrow();
  });
});
