import { WireError } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/config.js";
import { failureOf } from "../src/core/failure.js";
import { answerWithin, NoAnswerYet } from "../src/held-call.js";
import { chooseLogFormat } from "../src/log-format.js";

describe("chooseLogFormat", () => {
  it("is pretty on a terminal and JSON otherwise, when nothing says which", () => {
    expect([chooseLogFormat({ isTty: true }), chooseLogFormat({ isTty: false })]).toEqual(["pretty", "json"]);
  });

  it("takes --log-format over LOG_FORMAT over the terminal, in any case", () => {
    expect(chooseLogFormat({ flag: "json", env: "pretty", isTty: true })).toBe("json");
    expect(chooseLogFormat({ env: "PRETTY", isTty: false })).toBe("pretty");
    expect(chooseLogFormat({ flag: " ", env: "json", isTty: true })).toBe("json");
  });

  it("refuses another value, naming where it came from and the values there are", () => {
    expect(() => chooseLogFormat({ flag: "yaml", isTty: true })).toThrow(ConfigError);
    expect(() => chooseLogFormat({ env: "text", isTty: true })).toThrow(
      /LOG_FORMAT=text is not a log format; use pretty or json/,
    );
  });
});

describe("a held request's 'no answer yet'", () => {
  it("goes on the wire as a retryable timeout and in the log at debug, not as a warning every hold", async () => {
    const held = await answerWithin(new Promise(() => undefined), 5, "call c has no reply yet").catch(
      (error: unknown) => error,
    );
    expect(held).toBeInstanceOf(NoAnswerYet);
    const failure = failureOf(held, { service: "dispatcher", endpoint: "call", errorId: "e" });
    expect({ envelope: failure.envelope, level: failure.level }).toEqual({
      envelope: {
        ok: false,
        error: { code: "timeout", message: "call c has no reply yet", retryable: true },
      },
      level: "debug",
    });
    // A timeout that is a failure (a dependency that did not answer) stays a warning.
    expect(
      failureOf(new WireError("timeout", "no answer"), { service: "s", endpoint: "e", errorId: "e" }).level,
    ).toBe("warn");
  });
});
