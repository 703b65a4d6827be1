import { describe, expect, it } from "vitest";
import type { HookRun } from "../../src/core/hook-run.js";
import {
  combinePostToolUseOutcomes,
  interpretPostToolUseOutcome,
  type PostToolUseOutcome,
} from "../../src/core/post-tool-use-outcome.js";

const run = (overrides: Partial<HookRun>): HookRun => ({
  hookLabel: "https://audit.example/hook",
  exitCode: 0,
  stdout: "",
  stderr: "",
  timedOut: false,
  crashed: false,
  timeoutMs: 30_000,
  ...overrides,
});

describe("reading a PostToolUse hook", () => {
  it.each<{ name: string; run: HookRun; outcome: PostToolUseOutcome }>([
    {
      name: "decision block with its reason",
      run: run({ stdout: '{"decision":"block","reason":"contains a secret"}' }),
      outcome: { block: true, reason: "contains a secret" },
    },
    {
      name: "decision block without a reason names the hook",
      run: run({ stdout: '{"decision":"block"}' }),
      outcome: { block: true, reason: 'hook "https://audit.example/hook" blocked the tool result' },
    },
    {
      name: "continue false blocks with its stopReason",
      run: run({ stdout: '{"continue":false,"stopReason":"stop now"}' }),
      outcome: { block: true, reason: "stop now" },
    },
    {
      name: "no decision lets the result through",
      run: run({ stdout: '{"reason":"fyi"}' }),
      outcome: { block: false },
    },
    { name: "plain text lets the result through", run: run({ stdout: "logged" }), outcome: { block: false } },
    {
      name: "exit 2 blocks with stderr",
      run: run({ exitCode: 2, stderr: "redact first" }),
      outcome: { block: true, reason: "redact first" },
    },
    { name: "another non-zero exit does not block", run: run({ exitCode: 500 }), outcome: { block: false } },
    {
      name: "a timeout blocks (fail closed)",
      run: run({ timedOut: true, exitCode: null }),
      outcome: { block: true, reason: 'hook "https://audit.example/hook" timed out after 30 s' },
    },
    {
      name: "a hook that cannot be reached blocks (fail closed)",
      run: run({ crashed: true, exitCode: null, error: "connect ECONNREFUSED 127.0.0.1:9" }),
      outcome: {
        block: true,
        reason: 'hook "https://audit.example/hook" failed to run: connect ECONNREFUSED 127.0.0.1:9',
      },
    },
  ])("$name", ({ run, outcome }) => {
    expect(interpretPostToolUseOutcome(run)).toStrictEqual(outcome);
  });

  it("blocks when any hook blocks, with the first block's reason", () => {
    expect(
      combinePostToolUseOutcomes([
        { block: false },
        { block: true, reason: "a" },
        { block: true, reason: "b" },
      ]),
    ).toStrictEqual({ block: true, reason: "a" });
    expect(combinePostToolUseOutcomes([{ block: false }])).toStrictEqual({ block: false });
  });
});
