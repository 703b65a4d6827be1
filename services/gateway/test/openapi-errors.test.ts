/**
 * The OpenAPI document's error responses against the protocol's tables: every wire code is
 * documented under the status the routes answer it with (HTTP_STATUS_BY_CODE), and every route
 * that relays the bus's answer lists each of those statuses. The document is built, not served.
 */
import { ERROR_CODES, HTTP_STATUS_BY_CODE, HttpRefusal } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../src/adapters/http/openapi.js";

type Operation = { responses: Record<string, unknown> };
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, { description: string }> };
};

const doc = openApiDocument({ version: "test", auth: true, approvals: true }) as unknown as Document;

describe("the OpenAPI error responses", () => {
  it("document each wire code under its status, and no status without one", () => {
    const documented = Object.fromEntries(
      ERROR_CODES.map((code) => [
        code,
        doc.components.responses[`E${HTTP_STATUS_BY_CODE[code]}`]?.description.includes(code) ?? false,
      ]),
    );
    expect(documented).toEqual(Object.fromEntries(ERROR_CODES.map((code) => [code, true])));
    const statuses = new Set<number>([
      ...Object.values(HTTP_STATUS_BY_CODE),
      ...Object.values(HttpRefusal).map((refusal) => refusal.status),
    ]);
    expect(Object.keys(doc.components.responses).sort()).toEqual(
      [...statuses].map((status) => `E${status}`).sort(),
    );
  });

  it("list every wire code's status on the routes that relay the bus's answer", () => {
    const relaying = [
      ["/v1/catalog", "get"],
      ["/v1/servers", "get"],
      ["/v1/calls", "post"],
      ["/v1/approvals", "get"],
      ["/v1/approvals/{requestId}", "post"],
    ] as const;
    const missing = relaying.flatMap(([path, method]) => {
      const listed = Object.keys(doc.paths[path]?.[method]?.responses ?? {});
      return ERROR_CODES.filter((code) => !listed.includes(String(HTTP_STATUS_BY_CODE[code]))).map(
        (code) => `${method.toUpperCase()} ${path}: ${code}`,
      );
    });
    expect(missing).toEqual([]);
  });

  it("list the refusal of a body that is not JSON on the routes that take one", () => {
    const status = String(HttpRefusal.unsupportedMediaType.status);
    expect([
      Object.keys(doc.paths["/v1/calls"]?.post?.responses ?? {}).includes(status),
      Object.keys(doc.paths["/v1/approvals/{requestId}"]?.post?.responses ?? {}).includes(status),
    ]).toEqual([true, true]);
  });
});
