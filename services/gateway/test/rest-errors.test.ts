/**
 * How the REST routes answer a wire error from the bus: the HTTP status of its code in the
 * protocol's table (HTTP_STATUS_BY_CODE) and `{error:{code,message,retryable}}`. The bus is
 * faked at its seam (`request` and the dispatch port throw what the runtime would); the app is
 * driven with `inject`, never listening.
 */
import { createLogger } from "@toolbus/bus";
import {
  createSubjects,
  ERROR_CODES,
  HTTP_STATUS_BY_CODE,
  HttpRefusal,
  RETRYABLE_BY_DEFAULT,
  WireError,
} from "@toolbus/protocol";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { restApi } from "../src/adapters/http/rest-api.js";
import { callsClient } from "../src/adapters/nats/calls-client.js";

async function appFailingWith(error: Error) {
  const app = Fastify({ logger: false });
  await app.register(
    restApi({
      bus: { request: async () => Promise.reject(error) },
      subjects: createSubjects("rest_errors"),
      dispatch: { call: async () => Promise.reject(error) },
      calls: callsClient({ publish: () => undefined }, createSubjects("rest_errors")),
      // Its calls name no thread.
      threads: { isSession: async () => false, claim: async () => "claimed" },
      logger: createLogger({ service: "gateway", version: "test", level: "silent" }),
      exposedNames: async () => undefined,
      bodyLimitBytes: 1024,
    }),
  );
  return app;
}

describe("wire errors on the REST routes", () => {
  it.each(ERROR_CODES.map((code) => [code, HTTP_STATUS_BY_CODE[code]] as const))(
    "answers %s with HTTP %i and the error body",
    async (code, status) => {
      const app = await appFailingWith(new WireError(code, `the bus said ${code}`));
      const responses = await Promise.all([
        app.inject({ method: "GET", url: "/v1/catalog" }),
        app.inject({ method: "GET", url: "/v1/servers" }),
        app.inject({
          method: "POST",
          url: "/v1/calls",
          payload: { callId: "c1", tool: "mcp__a__b", arguments: "" },
        }),
      ]);
      const expected = {
        status,
        body: { error: { code, message: `the bus said ${code}`, retryable: RETRYABLE_BY_DEFAULT[code] } },
      };
      expect(responses.map((response) => ({ status: response.statusCode, body: response.json() }))).toEqual([
        expected,
        expected,
        expected,
      ]);
    },
  );

  it("answers an unexpected failure with 500 internal and no detail of it", async () => {
    const app = await appFailingWith(new Error("socket exploded at 0x1234"));
    const response = await app.inject({ method: "GET", url: "/v1/servers" });
    expect({ status: response.statusCode, body: response.json() }).toEqual({
      status: 500,
      body: {
        error: {
          code: "internal",
          message: "the gateway failed on this request; see its log",
          retryable: true,
        },
      },
    });
  });

  it("answers a body that is not JSON with the protocol's refusal for it", async () => {
    const app = await appFailingWith(new Error("never reached"));
    const response = await app.inject({
      method: "POST",
      url: "/v1/calls",
      headers: { "content-type": "application/xml" },
      payload: "<ping/>",
    });
    expect({ status: response.statusCode, code: response.json().error.code }).toEqual(
      HttpRefusal.unsupportedMediaType,
    );
  });
});
