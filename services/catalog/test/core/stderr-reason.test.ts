import { describe, expect, it } from "vitest";
import { StderrTail, withStderrReason } from "../../src/core/stderr-reason.js";

const tailOf = (lines: string[]) => {
  const tail = new StderrTail();
  for (const line of lines) tail.push(line);
  return tail;
};

describe("a failed server's reason from its stderr", () => {
  it("takes the last line that reads as an error, past stack frames and npm's log pointer", () => {
    expect(
      tailOf([
        "Error: Cannot find module 'x'",
        "    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)",
        "npm error A complete log of this run can be found in: /tmp/x.log",
      ]).reason(),
    ).toBe("Error: Cannot find module 'x'");
  });

  it("takes the last line when none reads as an error, and nothing from a silent server", () => {
    expect([tailOf(["starting", "listening on stdio", ""]).reason(), tailOf([]).reason()]).toEqual([
      "listening on stdio",
      undefined,
    ]);
  });

  it("keeps a bounded tail of bounded lines", () => {
    const tail = tailOf([...Array.from({ length: 100 }, (_, i) => `error ${i}`), "x".repeat(1_000)]);
    expect(tail.reason()).toBe("error 99");
    expect(tailOf(["error: " + "y".repeat(1_000)]).reason()).toHaveLength(300);
  });

  it("joins the start-up error only when there is a reason", () => {
    expect([
      withStderrReason("Connection closed", "boom"),
      withStderrReason("Connection closed", undefined),
    ]).toEqual(["Connection closed (the server's stderr: boom)", "Connection closed"]);
  });
});
