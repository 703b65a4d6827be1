import { describe, expect, it } from "vitest";
import { maskUrl } from "../../src/core/mask-url.js";

describe("maskUrl", () => {
  it.each([
    [
      "a password, keeping the user name",
      "nats://svc:hunter2@nats.internal:4222",
      "nats://svc:***@nats.internal:4222",
    ],
    [
      "a Postgres URL's password",
      "postgres://app:s3cr%40t@db:5432/toolbus?sslmode=require",
      "postgres://app:***@db:5432/toolbus?sslmode=require",
    ],
    [
      "a user name that is the secret",
      "https://ghp_abc123@github.com/org/repo",
      "https://***@github.com/org/repo",
    ],
    [
      "secret query parameters, and only those",
      "https://mcp.example.com/mcp?api_key=k1&region=eu&access_token=t2&Sig=s3&X-Amz-Signature=s4",
      "https://mcp.example.com/mcp?api_key=***&region=eu&access_token=***&Sig=***&X-Amz-Signature=***",
    ],
    [
      "a URL with nothing secret, as written",
      "http://127.0.0.1:8080/mcp?page=2",
      "http://127.0.0.1:8080/mcp?page=2",
    ],
    [
      "each server of a NATS list",
      "nats://a:p1@h1:4222,nats://h2:4222,tls://b:p2@h3:4222",
      "nats://a:***@h1:4222,nats://h2:4222,tls://b:***@h3:4222",
    ],
    [
      "URLs quoted inside an error message",
      "Request cannot be constructed from a URL that includes credentials: http://u:pw@127.0.0.1:9/mcp?token=abc",
      "Request cannot be constructed from a URL that includes credentials: http://u:***@127.0.0.1:9/mcp?token=***",
    ],
    ["a URL the parser refuses", "http://u:pw@[bad/x?secret=1", "http://u:***@[bad/x?secret=***"],
    [
      "a libpq keyword password",
      "host=db user=app password=hunter2 dbname=t",
      "host=db user=app password=*** dbname=t",
    ],
    ["text without URLs", "no url here", "no url here"],
  ])("masks %s", (_what, input, expected) => {
    expect(maskUrl(input)).toBe(expected);
  });
});
