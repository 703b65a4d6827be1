import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.js";

function capture(options: { level?: "debug" | "warn" } = {}) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    service: "catalog",
    version: "1.2.3",
    ...options,
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines };
}

const strip = ({ time: _time, ...rest }: Record<string, unknown>) => rest;

afterEach(() => {
  delete process.env.LOG_LEVEL;
});

describe("createLogger", () => {
  it("stamps every line with the service and version, and children add their fields", () => {
    const { logger, lines } = capture();
    logger.child({ subject: "toolbus.catalog.get", callId: "c1" }).info("handled");
    expect(lines.map(strip)).toEqual([
      {
        level: 30,
        service: "catalog",
        version: "1.2.3",
        subject: "toolbus.catalog.get",
        callId: "c1",
        msg: "handled",
      },
    ]);
  });

  it("takes its level from LOG_LEVEL when none is given", () => {
    process.env.LOG_LEVEL = "warn";
    const { logger, lines } = capture();
    logger.info("quiet");
    logger.warn("loud");
    expect(lines.map((line) => line.msg)).toEqual(["loud"]);
  });

  it("prefers an explicit level over LOG_LEVEL", () => {
    process.env.LOG_LEVEL = "warn";
    const { logger, lines } = capture({ level: "debug" });
    logger.debug("detail");
    expect(lines.map((line) => line.msg)).toEqual(["detail"]);
  });

  it("says so and falls back to info when LOG_LEVEL is not a level", () => {
    process.env.LOG_LEVEL = "chatty";
    const { logger, lines } = capture();
    logger.debug("hidden");
    logger.info("shown");
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [
        40,
        "LOG_LEVEL=chatty is not a level; using info. Use one of fatal, error, warn, info, debug, trace, silent",
      ],
      [30, "shown"],
    ]);
  });
});
