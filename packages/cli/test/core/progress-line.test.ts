import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatProgressLine, progressText } from "../../src/core/progress-line.js";
import { displayWidth } from "../../src/core/text.js";

describe("formatProgressLine", () => {
  it("says where to answer a call that waits for approval, in place of its progress", () => {
    expect(
      formatProgressLine({
        tool: "everything__echo",
        elapsedMs: 3_200,
        width: 120,
        report: { progress: 1, total: 2, message: "half" },
        awaitingApproval: true,
      }),
    ).toBe(
      "⠹ everything__echo  awaiting approval: answer with `toolbus approvals` or in the inbox (/approvals)  3.2s",
    );
    // On a narrow terminal the hint is cut, where to answer first.
    expect(
      formatProgressLine({ tool: "everything__echo", elapsedMs: 3_200, width: 80, awaitingApproval: true }),
    ).toBe("⠹ everything__echo  awaiting approval: answer with `toolbus approvals` o…  3.2s");
  });

  it.each([
    [{ tool: "files__copy", elapsedMs: 0, width: 80 }, "⠋ files__copy  0ms"],
    [{ tool: "files__copy", elapsedMs: 250, width: 80 }, "⠹ files__copy  250ms"],
    [
      {
        tool: "files__copy",
        elapsedMs: 3_200,
        width: 100,
        report: { progress: 4, total: 10, message: "copying a.txt" },
      },
      "⠹ files__copy  [########------------]  40%  4/10  copying a.txt  3.2s",
    ],
    [
      {
        tool: "files__copy",
        elapsedMs: 1_000,
        width: 80,
        report: { progress: 7, message: "files\nscanned" },
      },
      "⠋ files__copy  7  files scanned  1.0s",
    ],
    [
      {
        tool: "files__copy",
        elapsedMs: 1_000,
        width: 40,
        report: { progress: 1, total: 2, message: "a long message" },
      },
      "⠋ files__copy  1.0s",
    ],
    [{ tool: "a_very_long_tool_name_indeed", elapsedMs: 1_000, width: 20 }, "⠋ a_very_lon…  1.0s"],
  ])("draws %j as %j", (input, line) => {
    expect(formatProgressLine(input)).toBe(line);
  });

  it("never takes the terminal's last column, so the line never wraps", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }),
        fc.nat(10_000_000),
        fc.integer({ min: 2, max: 200 }),
        fc.option(
          fc.record({
            progress: fc.double({ min: 0, max: 1e6, noNaN: true }),
            total: fc.option(fc.nat(1e6), { nil: undefined }),
            message: fc.option(fc.string({ maxLength: 100 }), { nil: undefined }),
          }),
          { nil: undefined },
        ),
        (tool, elapsedMs, width, report) => {
          const line = formatProgressLine({
            tool,
            elapsedMs,
            width,
            ...(report ? { report: clean(report) } : {}),
          });
          return displayWidth(line) <= width - 1;
        },
      ),
    );
  });
});

function clean(report: { progress: number; total: number | undefined; message: string | undefined }) {
  return {
    progress: report.progress,
    ...(report.total !== undefined ? { total: report.total } : {}),
    ...(report.message !== undefined ? { message: report.message } : {}),
  };
}

describe("progressText", () => {
  it.each([
    [{ progress: 0, total: 4 }, "[--------------------]   0%  0/4"],
    [{ progress: 4, total: 4 }, "[####################] 100%  4/4"],
    [{ progress: 9, total: 4 }, "[####################] 100%  9/4"],
    [{ progress: 2.5 }, "2.5"],
    [{ progress: 3, total: 0 }, "3"],
  ])("shows %j as %j", (report, text) => {
    expect(progressText(report)).toBe(text);
  });
});
