import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ApprovalPolicy } from "../src/approval-policy.js";
import { callDigestOf } from "../src/call-binding.js";
import {
  type ApprovalState,
  type DecideInput,
  type DecideStep,
  decide,
  type HookVerdicts,
} from "../src/decide.js";
import type { Grant } from "../src/grant-keys.js";
import { type HooksConfig, NO_HOOKS, parseHooksFile } from "../src/hooks-file.js";
import type { ApprovalMode, DecideRequest, JsonValue, ToolAnnotations } from "../src/types.js";

const NOW = Date.parse("2026-03-01T12:00:00.000Z");
const SESSION_KEY = "t-1.docs.=.search";
const PERSISTENT_KEY = "docs.=.search";
const guard = { type: "command", command: "./guard.sh" } as const;

const base: DecideRequest = {
  callId: "call-1",
  threadId: "t-1",
  server: "docs",
  tool: "search",
  hookName: "mcp__docs__search",
  arguments: { q: "x" },
  fingerprint: "f1",
  catalogRevision: 3,
};

function hooks(value: unknown): HooksConfig {
  const parsed = parseHooksFile(value);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.value;
}
const preHooks = hooks({ PreToolUse: [{ matcher: "mcp__docs__.*", hooks: [guard] }] });
const permissionHooks = hooks({ PermissionRequest: [{ matcher: "mcp__docs__search", hooks: [guard] }] });
const bothHooks: HooksConfig = { ...preHooks, PermissionRequest: permissionHooks.PermissionRequest };

const grants = (entries: Array<[string, string]>) =>
  new Map<string, Grant>(entries.map(([key, fingerprint]) => [key, { fingerprint }]));

function state(overrides: Partial<ApprovalState> = {}): ApprovalState {
  return {
    policy: "on-request",
    hooks: NO_HOOKS,
    timeoutMs: 60_000,
    sessionGrants: grants([]),
    persistentGrants: grants([]),
    ...overrides,
  };
}

const options = {
  allow: { id: "allow", label: "Allow", description: "Run the tool and continue." },
  allow_session: {
    id: "allow_session",
    label: "Allow for this session",
    description: "Run the tool and remember this choice for this session.",
  },
  allow_always: {
    id: "allow_always",
    label: "Allow and don't ask me again",
    description: "Run the tool and remember this choice for future tool calls.",
  },
  cancel: { id: "cancel", label: "Cancel", description: "Cancel this tool call." },
} as const;

/** The request a human sees for `base`, with the given option ids and arguments. */
function human(
  ids: Array<keyof typeof options>,
  extra: { arguments?: JsonValue; annotations?: ToolAnnotations; updatedArguments?: JsonValue } = {},
): DecideStep {
  const request = {
    requestId: "mcp_tool_call_approval_call-1",
    callId: "call-1",
    threadId: "t-1",
    server: "docs",
    tool: "search",
    hookName: "mcp__docs__search",
    header: "Approve app tool call?",
    question: 'Allow the docs MCP server to run tool "search"?',
    options: ids.map((id) => options[id]),
    arguments: extra.arguments ?? { q: "x" },
    ...(extra.annotations === undefined ? {} : { annotations: extra.annotations }),
    // Bound to the call as the caller sent it, whatever a hook rewrote.
    callDigest: callDigestOf(base),
    createdAt: "2026-03-01T12:00:00.000Z",
    expiresAt: "2026-03-01T12:01:00.000Z",
  };
  return extra.updatedArguments === undefined
    ? { kind: "needs_human", request }
    : { kind: "needs_human", request, updatedArguments: extra.updatedArguments };
}
const allFour = ["allow", "allow_session", "allow_always", "cancel"] as const;

interface Row {
  name: string;
  mode: ApprovalMode;
  request?: Partial<DecideRequest>;
  state?: Partial<ApprovalState>;
  verdicts?: HookVerdicts;
  step: DecideStep;
}

function run(row: Row): DecideStep {
  const input: DecideInput = { request: { ...base, ...row.request }, mode: row.mode, now: NOW };
  return decide(input, state(row.state), row.verdicts);
}

describe("the order of approval checks", () => {
  const destructive = { destructiveHint: true };
  const readOnly = { readOnlyHint: true };
  it.each<Row>([
    {
      name: "approve never prompts, even for a destructive tool",
      mode: "approve",
      request: { annotations: destructive },
      step: { kind: "decided", result: { decision: "approved", source: "mode" } },
    },
    {
      name: "prompt asks even for a read-only tool, without remembering options",
      mode: "prompt",
      request: { annotations: readOnly },
      step: human(["allow", "cancel"], { annotations: readOnly }),
    },
    {
      name: "writes lets a read-only tool run on its annotations",
      mode: "writes",
      request: { annotations: readOnly },
      step: { kind: "decided", result: { decision: "approved", source: "annotations" } },
    },
    {
      name: "writes asks for a tool that may write",
      mode: "writes",
      request: { annotations: { readOnlyHint: false } },
      step: human(["allow", "cancel"], { annotations: { readOnlyHint: false } }),
    },
    {
      name: "auto lets a read-only tool run on its annotations",
      mode: "auto",
      request: { annotations: readOnly },
      step: { kind: "decided", result: { decision: "approved", source: "annotations" } },
    },
    {
      name: "auto asks for a tool without annotations, offering all four options",
      mode: "auto",
      step: human([...allFour]),
    },
    {
      name: "auto outside a thread offers no session option",
      mode: "auto",
      request: { threadId: undefined },
      step: (() => {
        const step = human(["allow", "allow_always", "cancel"]);
        if (step.kind !== "needs_human") throw new Error("unreachable");
        const { threadId: _, ...request } = step.request;
        return { kind: "needs_human", request };
      })(),
    },
    {
      name: "a session grant for this tool definition approves for the session",
      mode: "auto",
      state: { sessionGrants: grants([[SESSION_KEY, "f1"]]) },
      step: { kind: "decided", result: { decision: "approved_for_session", source: "session" } },
    },
    {
      name: "a session grant for an older tool definition no longer applies",
      mode: "auto",
      state: { sessionGrants: grants([[SESSION_KEY, "f0"]]) },
      step: human([...allFour]),
    },
    {
      name: "a session grant of another thread does not apply",
      mode: "auto",
      state: { sessionGrants: grants([["t-2.docs.=.search", "f1"]]) },
      step: human([...allFour]),
    },
    {
      name: "a persistent grant for this tool definition approves always",
      mode: "auto",
      state: { persistentGrants: grants([[PERSISTENT_KEY, "f1"]]) },
      step: { kind: "decided", result: { decision: "approved_always", source: "persistent" } },
    },
    {
      name: "a persistent grant for an older tool definition no longer applies",
      mode: "auto",
      state: { persistentGrants: grants([[PERSISTENT_KEY, "f0"]]) },
      step: human([...allFour]),
    },
    {
      name: "the session grant is preferred over the persistent one",
      mode: "auto",
      state: {
        sessionGrants: grants([[SESSION_KEY, "f1"]]),
        persistentGrants: grants([[PERSISTENT_KEY, "f1"]]),
      },
      step: { kind: "decided", result: { decision: "approved_for_session", source: "session" } },
    },
    {
      name: "grants are not consulted outside mode auto",
      mode: "prompt",
      state: {
        sessionGrants: grants([[SESSION_KEY, "f1"]]),
        persistentGrants: grants([[PERSISTENT_KEY, "f1"]]),
      },
      step: human(["allow", "cancel"]),
    },
    {
      name: "strict review bypasses mode approve",
      mode: "approve",
      request: { strictAutoReview: true },
      step: human(["allow", "cancel"]),
    },
    {
      name: "strict review bypasses annotations",
      mode: "auto",
      request: { strictAutoReview: true, annotations: readOnly },
      step: human([...allFour], { annotations: readOnly }),
    },
    {
      name: "strict review bypasses remembered grants",
      mode: "auto",
      request: { strictAutoReview: true },
      state: {
        sessionGrants: grants([[SESSION_KEY, "f1"]]),
        persistentGrants: grants([[PERSISTENT_KEY, "f1"]]),
      },
      step: human([...allFour]),
    },
    {
      name: "policy never denies a call that needs a human",
      mode: "auto",
      state: { policy: "never" },
      step: {
        kind: "decided",
        result: {
          decision: "denied",
          source: "policy",
          message: "MCP tool call requires approval, but approval policy is never",
        },
      },
    },
    {
      name: "[34] policy never with full access runs a call that would need a human, asking nobody",
      mode: "prompt",
      request: { annotations: { destructiveHint: true } },
      state: { policy: "never", permissionProfile: "full-access", hooks: permissionHooks },
      step: { kind: "decided", result: { decision: "approved", source: "policy" } },
    },
    {
      name: "full access alone changes nothing under on-request: the human is still asked",
      mode: "prompt",
      state: { policy: "on-request", permissionProfile: "full-access" },
      step: human(["allow", "cancel"]),
    },
    {
      name: "[34] policy never with a restricted profile still denies",
      mode: "prompt",
      state: { policy: "never", permissionProfile: "restricted" },
      step: {
        kind: "decided",
        result: {
          decision: "denied",
          source: "policy",
          message: "MCP tool call requires approval, but approval policy is never",
        },
      },
    },
    {
      name: "policy never still runs an approve-mode tool",
      mode: "approve",
      state: { policy: "never" },
      step: { kind: "decided", result: { decision: "approved", source: "mode" } },
    },
    {
      name: "policy never still honours a session grant",
      mode: "auto",
      state: { policy: "never", sessionGrants: grants([[SESSION_KEY, "f1"]]) },
      step: { kind: "decided", result: { decision: "approved_for_session", source: "session" } },
    },
  ])("$name", (row) => {
    expect(run(row)).toStrictEqual(row.step);
  });
});

describe("[42] PermissionRequest hooks", () => {
  it.each<Row>([
    {
      name: "run before the human, with the hook name and arguments",
      mode: "auto",
      state: { hooks: permissionHooks },
      step: {
        kind: "needs_hooks",
        event: "PermissionRequest",
        hooks: [guard],
        payload: {
          session_id: "t-1",
          hook_event_name: "PermissionRequest",
          tool_name: "mcp__docs__search",
          tool_input: { q: "x" },
          tool_use_id: "call-1",
        },
      },
    },
    {
      name: "an allow skips the human",
      mode: "auto",
      state: { hooks: permissionHooks },
      verdicts: { PermissionRequest: { kind: "allow" } },
      step: { kind: "decided", result: { decision: "approved", source: "hook" } },
    },
    {
      name: "an allow with a rewrite passes the rewrite on",
      mode: "prompt",
      state: { hooks: permissionHooks },
      verdicts: { PermissionRequest: { kind: "allow", updatedInput: { q: "y" } } },
      step: {
        kind: "decided",
        result: { decision: "approved", source: "hook", updatedArguments: { q: "y" } },
      },
    },
    {
      name: "a deny skips the call with the hook's message",
      mode: "auto",
      state: { hooks: permissionHooks },
      verdicts: { PermissionRequest: { kind: "deny", reason: "not on Fridays" } },
      step: { kind: "decided", result: { decision: "denied", source: "hook", message: "not on Fridays" } },
    },
    {
      name: "no verdict leaves it to the human",
      mode: "auto",
      state: { hooks: permissionHooks },
      verdicts: { PermissionRequest: { kind: "none" } },
      step: human([...allFour]),
    },
    {
      name: "a remembered approval bypasses them",
      mode: "auto",
      state: { hooks: permissionHooks, sessionGrants: grants([[SESSION_KEY, "f1"]]) },
      step: { kind: "decided", result: { decision: "approved_for_session", source: "session" } },
    },
    {
      name: "a call that needs no approval does not run them",
      mode: "auto",
      request: { annotations: { readOnlyHint: true } },
      state: { hooks: permissionHooks },
      step: { kind: "decided", result: { decision: "approved", source: "annotations" } },
    },
    {
      name: "they still decide under policy never",
      mode: "auto",
      state: { hooks: permissionHooks, policy: "never" },
      verdicts: { PermissionRequest: { kind: "allow" } },
      step: { kind: "decided", result: { decision: "approved", source: "hook" } },
    },
    {
      name: "they run under strict review too",
      mode: "approve",
      request: { strictAutoReview: true },
      state: { hooks: permissionHooks },
      verdicts: { PermissionRequest: { kind: "deny", reason: "strict says no" } },
      step: { kind: "decided", result: { decision: "denied", source: "hook", message: "strict says no" } },
    },
  ])("$name", (row) => {
    expect(run(row)).toStrictEqual(row.step);
  });
});

describe("PreToolUse hooks", () => {
  it.each<Row>([
    {
      name: "run first, even in mode approve",
      mode: "approve",
      request: { arguments: null, threadId: undefined },
      state: { hooks: preHooks },
      step: {
        kind: "needs_hooks",
        event: "PreToolUse",
        hooks: [guard],
        payload: {
          hook_event_name: "PreToolUse",
          tool_name: "mcp__docs__search",
          tool_input: {},
          tool_use_id: "call-1",
        },
      },
    },
    {
      name: "a deny blocks even a session-approved call",
      mode: "auto",
      state: { hooks: preHooks, sessionGrants: grants([[SESSION_KEY, "f1"]]) },
      verdicts: { PreToolUse: { kind: "deny", reason: "blocked by policy" } },
      step: { kind: "decided", result: { decision: "denied", source: "hook", message: "blocked by policy" } },
    },
    {
      name: "an allow approves a call that would need a human",
      mode: "prompt",
      state: { hooks: preHooks },
      verdicts: { PreToolUse: { kind: "allow" } },
      step: { kind: "decided", result: { decision: "approved", source: "hook" } },
    },
    {
      name: "an allow with a rewrite approves the rewritten arguments",
      mode: "prompt",
      state: { hooks: preHooks },
      verdicts: { PreToolUse: { kind: "allow", updatedInput: { q: "safe" } } },
      step: {
        kind: "decided",
        result: { decision: "approved", source: "hook", updatedArguments: { q: "safe" } },
      },
    },
    {
      name: "an allow does not bypass strict review",
      mode: "auto",
      request: { strictAutoReview: true },
      state: { hooks: preHooks },
      verdicts: { PreToolUse: { kind: "allow" } },
      step: human([...allFour]),
    },
    {
      name: "an ask forces the human even in mode approve",
      mode: "approve",
      state: { hooks: preHooks },
      verdicts: { PreToolUse: { kind: "ask", reason: "double-check" } },
      step: human(["allow", "cancel"]),
    },
    {
      name: "an ask forces the human past a session grant",
      mode: "auto",
      state: { hooks: preHooks, sessionGrants: grants([[SESSION_KEY, "f1"]]) },
      verdicts: { PreToolUse: { kind: "ask" } },
      step: human([...allFour]),
    },
    {
      name: "a rewrite is what the human is shown, and rides along",
      mode: "auto",
      state: { hooks: preHooks },
      verdicts: { PreToolUse: { kind: "ask", updatedInput: { q: "shown" } } },
      step: human([...allFour], { arguments: { q: "shown" }, updatedArguments: { q: "shown" } }),
    },
    {
      name: "a rewrite carries through an approval from the annotations",
      mode: "auto",
      request: { annotations: { readOnlyHint: true } },
      state: { hooks: preHooks },
      verdicts: { PreToolUse: { kind: "ask", updatedInput: { q: "r" } } },
      step: human([...allFour], {
        arguments: { q: "r" },
        annotations: { readOnlyHint: true },
        updatedArguments: { q: "r" },
      }),
    },
    {
      name: "no verdict continues with the usual order",
      mode: "auto",
      request: { annotations: { readOnlyHint: true } },
      state: { hooks: preHooks },
      verdicts: { PreToolUse: { kind: "none" } },
      step: { kind: "decided", result: { decision: "approved", source: "annotations" } },
    },
    {
      name: "PermissionRequest hooks see the rewritten input",
      mode: "auto",
      state: { hooks: bothHooks },
      verdicts: { PreToolUse: { kind: "ask", updatedInput: { q: "new" } } },
      step: {
        kind: "needs_hooks",
        event: "PermissionRequest",
        hooks: [guard],
        payload: {
          session_id: "t-1",
          hook_event_name: "PermissionRequest",
          tool_name: "mcp__docs__search",
          tool_input: { q: "new" },
          tool_use_id: "call-1",
        },
      },
    },
    {
      name: "a deny after a rewrite carries no arguments",
      mode: "auto",
      state: { hooks: bothHooks },
      verdicts: {
        PreToolUse: { kind: "ask", updatedInput: { q: "new" } },
        PermissionRequest: { kind: "deny", reason: "no" },
      },
      step: { kind: "decided", result: { decision: "denied", source: "hook", message: "no" } },
    },
  ])("$name", (row) => {
    expect(run(row)).toStrictEqual(row.step);
  });
});

describe("an evaluator that does not hold every grant store", () => {
  const noStores = { sessionGrants: undefined, persistentGrants: undefined };
  it.each<Row>([
    {
      name: "asks for both stores when a remembered grant could decide",
      mode: "auto",
      state: noStores,
      step: { kind: "needs_grants", keys: { session: SESSION_KEY, persistent: PERSISTENT_KEY } },
    },
    {
      name: "settles on a session grant it holds",
      mode: "auto",
      state: { sessionGrants: grants([[SESSION_KEY, "f1"]]), persistentGrants: undefined },
      step: { kind: "decided", result: { decision: "approved_for_session", source: "session" } },
    },
    {
      name: "asks only for the store it lacks",
      mode: "auto",
      state: { persistentGrants: undefined },
      step: { kind: "needs_grants", keys: { persistent: PERSISTENT_KEY } },
    },
    {
      name: "asks for nothing outside a thread but the persistent store",
      mode: "auto",
      request: { threadId: undefined },
      state: noStores,
      step: { kind: "needs_grants", keys: { persistent: PERSISTENT_KEY } },
    },
    {
      name: "settles mode approve without any store",
      mode: "approve",
      state: noStores,
      step: { kind: "decided", result: { decision: "approved", source: "mode" } },
    },
    {
      name: "needs no store where no grant can exist",
      mode: "prompt",
      state: noStores,
      step: human(["allow", "cancel"]),
    },
  ])("$name", (row) => {
    expect(run(row)).toStrictEqual(row.step);
  });
});

describe("properties of the decision", () => {
  const modeArb = fc.constantFrom<ApprovalMode>("auto", "prompt", "writes", "approve");
  const policyArb = fc.constantFrom<ApprovalPolicy>("on-request", "never");
  const annotationsArb = fc.option(
    fc.record(
      { readOnlyHint: fc.boolean(), destructiveHint: fc.boolean(), openWorldHint: fc.boolean() },
      { requiredKeys: [] },
    ),
    { nil: undefined },
  );
  const storeArb = fc.constantFrom<Array<[string, string]>>([], [[SESSION_KEY, "f1"]], [[SESSION_KEY, "f0"]]);
  const persistentArb = fc.constantFrom<Array<[string, string]>>(
    [],
    [[PERSISTENT_KEY, "f1"]],
    [[PERSISTENT_KEY, "f0"]],
  );
  const callArb = fc.record({
    mode: modeArb,
    policy: policyArb,
    annotations: annotationsArb,
    strict: fc.boolean(),
    thread: fc.boolean(),
    session: storeArb,
    persistent: persistentArb,
  });
  type Call = typeof callArb extends fc.Arbitrary<infer T> ? T : never;
  const inputOf = (call: Call): DecideInput => ({
    request: {
      ...base,
      ...(call.thread ? {} : { threadId: undefined }),
      ...(call.annotations === undefined ? {} : { annotations: call.annotations }),
      ...(call.strict ? { strictAutoReview: true } : {}),
    },
    mode: call.mode,
    now: NOW,
  });

  it("a dispatcher deciding locally never settles a call differently from the service", () => {
    fc.assert(
      fc.property(callArb, fc.boolean(), (call, holdsSession) => {
        const full = state({
          policy: call.policy,
          sessionGrants: grants(call.session),
          persistentGrants: grants(call.persistent),
        });
        // The dispatcher may watch the session grants; persistent ones live in Postgres.
        const local = {
          ...full,
          persistentGrants: undefined,
          ...(holdsSession ? {} : { sessionGrants: undefined }),
        };
        const localStep = decide(inputOf(call), local);
        if (localStep.kind === "decided") expect(decide(inputOf(call), full)).toStrictEqual(localStep);
      }),
    );
  });

  it("never asks a human under policy never", () => {
    fc.assert(
      fc.property(callArb, (call) => {
        const step = decide(inputOf(call), state({ policy: "never", sessionGrants: grants(call.session) }));
        expect(step.kind).not.toBe("needs_human");
      }),
    );
  });

  it("under strict review, settles only through a hook or a human", () => {
    fc.assert(
      fc.property(callArb, (call) => {
        const step = decide(
          inputOf({ ...call, strict: true, policy: "on-request" }),
          state({ sessionGrants: grants(call.session), persistentGrants: grants(call.persistent) }),
        );
        expect(step.kind).toBe("needs_human");
      }),
    );
  });
});
