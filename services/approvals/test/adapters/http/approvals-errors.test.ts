/**
 * How the approvals routes answer a wire error: the HTTP status of its code in the protocol's
 * table (HTTP_STATUS_BY_CODE, the one the gateway's REST routes answer with too: the two share a
 * port when the gateway mounts these routes) and `{error:{code,message,retryable}}`. The bus is
 * faked at its seam (the deps throw what the bus client would); the app is driven with `inject`.
 */
import {
  ERROR_CODES,
  HTTP_STATUS_BY_CODE,
  HttpRefusal,
  RETRYABLE_BY_DEFAULT,
  WireError,
} from "@toolbus/protocol";
import fastify from "fastify";
import { describe, expect, it } from "vitest";
import { buildApprovalsHttp } from "../../../src/adapters/http/approvals-http.js";

async function appFailingWith(error: Error) {
  const app = fastify();
  await app.register(
    buildApprovalsHttp({
      list: async () => Promise.reject(error),
      resolve: async () => Promise.reject(error),
      subscribe: () => () => undefined,
    }),
  );
  return app;
}

describe("wire errors on the approvals routes", () => {
  it.each(ERROR_CODES.map((code) => [code, HTTP_STATUS_BY_CODE[code]] as const))(
    "answers %s with HTTP %i and the error body",
    async (code, status) => {
      const app = await appFailingWith(new WireError(code, `the bus said ${code}`));
      const responses = await Promise.all([
        app.inject({ method: "GET", url: "/v1/approvals" }),
        app.inject({
          method: "POST",
          url: "/v1/approvals/mcp_tool_call_approval_x",
          payload: { choice: "allow" },
        }),
      ]);
      const expected = {
        status,
        body: { error: { code, message: `the bus said ${code}`, retryable: RETRYABLE_BY_DEFAULT[code] } },
      };
      expect(responses.map((response) => ({ status: response.statusCode, body: response.json() }))).toEqual([
        expected,
        expected,
      ]);
      await app.close();
    },
  );

  it("answers a body that is not JSON with the protocol's refusal for it, as the gateway does", async () => {
    const app = await appFailingWith(new Error("never reached"));
    const response = await app.inject({
      method: "POST",
      url: "/v1/approvals/mcp_tool_call_approval_x",
      headers: { "content-type": "application/xml" },
      payload: "<choice>allow</choice>",
    });
    expect({ status: response.statusCode, code: response.json().error.code }).toEqual(
      HttpRefusal.unsupportedMediaType,
    );
    await app.close();
  });
});
