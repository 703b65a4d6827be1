/**
 * The acceptance checklist of docs/reference-behavior.md §12, as data: the spine of toolbus's tests.
 * A covered item has a test whose title starts with `[N]` and asserts the item's text; `partial`
 * says which part no test asserts and why; `differs` says where toolbus departs from the item's
 * text on purpose (docs/contract.md wins over the reference, or the reference contradicts itself),
 * and its tests are titled `[N differs]`. An item not covered says why. `checklist.test.ts`
 * holds the tests to this and prints the report of every caveat (checklist-report.ts).
 */
interface Item {
  id: number;
  /** The item as §12 words it. */
  text: string;
}

export type Requirement =
  | (Item & { covered: true; partial?: string; differs?: string })
  | (Item & { covered: false; reason: string });

export const CHECKLIST: readonly Requirement[] = [
  {
    id: 1,
    text: "No `command`/`url` → `invalid transport`; `url` together with `command` → `url is not supported for stdio`; `args` on HTTP → `args is not supported for streamable_http`.",
    covered: true,
  },
  {
    id: 2,
    text: "Defaults: enabled=true, required=false, environment_id=`local`, auth=`oauth`, startup 30 s, tools/call 300 s; `startup_timeout_ms=5000` → 5 s (`_sec` wins).",
    covered: true,
  },
  {
    id: 3,
    text: "Server `bad name` fails startup with `Invalid MCP server name 'bad name': must match pattern ^[a-zA-Z0-9_-]+$`.",
    covered: true,
  },
  {
    id: 4,
    text: "`enabled_tools=[a]` + `disabled_tools=[a]` → no tools; no lists → all tools; both use raw names.",
    covered: true,
  },
  {
    id: 5,
    text: "A disabled server is never spawned, emits no startup events, and has status `disabled`.",
    covered: true,
  },
  {
    id: 6,
    text: "Each started server emits `starting` then `ready`/`failed`/`cancelled`, followed by one `mcp_startup_complete`; `failed[].error` there is the raw error.",
    covered: true,
  },
  {
    id: 7,
    text: "A startup timeout displays `…timed out after 30 seconds. Add or adjust `startup_timeout_sec`…`; other failures display `MCP client for `<s>` failed to start: …`.",
    covered: true,
  },
  {
    id: 8,
    text: 'Local auth failure → `The <s> MCP server is not logged in. Run `codex mcp login <s>`.`; with stored OAuth → `requires OAuth reauthentication` and `reason:"reauthentication_required"`.',
    covered: true,
  },
  { id: 9, text: "The GitHub Copilot URL without a token → the PAT guidance text.", covered: true },
  {
    id: 10,
    text: "A failing required server → thread start fails with `required MCP servers failed to initialize: <s>: <err>` (multiple joined by `; `, in sorted order).",
    covered: true,
    partial:
      "toolbus has no thread to start: the same message stops the catalog process and `toolbus start` (exit 1) instead, which the tests assert.",
  },
  {
    id: 11,
    text: "An empty bearer env var → `Environment variable X for MCP server 's' is empty`.",
    covered: true,
  },
  {
    id: 12,
    text: "The stdio child sees only allowlisted variables plus env/env_vars; `env` overrides inherited ones.",
    covered: true,
  },
  {
    id: 13,
    text: "More than 100 pages, more than 2,048 items, a repeated cursor, or a cursor over 65,536 bytes → the matching pagination error; with no timeout, 30 s overall.",
    covered: true,
    partial:
      '"with no timeout, 30 s overall": every toolbus listing passes its own timeout (the start-up timeout, 30 s by default, or the tool timeout), so the overall bound is asserted with a timeout given, never the 30 s default of a caller without one.',
  },
  {
    id: 14,
    text: 'Legacy protocol: `tools/list` makes exactly one request even if `nextCursor` is set; resource lists follow cursors, including `""`.',
    covered: true,
  },
  {
    id: 15,
    text: "Tool `foo` on `srv` → namespace `mcp__srv`, name `foo`; opted-out server → `srv`; an existing `mcp__` prefix is not doubled.",
    covered: true,
  },
  {
    id: 16,
    text: "`server.one`/`tool.two-three` → `mcp__server_one`/`tool_two_three`; the wire call still uses `tool.two-three`.",
    covered: true,
  },
  {
    id: 17,
    text: "Duplicate identities collapse to one; `basic-server` vs `basic_server` → distinct namespaces with a `_`+12-hex SHA-1 suffix; `tool-name` vs `tool_name` → distinct suffixed names.",
    covered: true,
  },
  {
    id: 18,
    text: "ns + `__` + name ≤ 128; exactly 128 is unchanged; 129 → hashed to exactly 128; output is sorted by raw identity regardless of input order.",
    covered: true,
    differs:
      "docs/contract.md: the flat-name limit defaults to 64 bytes; 128 (Codex's) is `[catalog] name_limit = 128`. The rule's tests run at both 64 and 128; the catalog's end-to-end test hashes at the default 64.",
  },
  {
    id: 19,
    text: '`_meta.ui.visibility=["app"]` → not exposed, and a model call gets "not available to the model"; no visibility metadata → exposed.',
    covered: true,
  },
  {
    id: 20,
    text: 'Namespace description = trimmed instructions, capped at 512 KiB on a char boundary; else the connector fallback; else `""`.',
    covered: true,
    partial:
      'the connector fallback (`Tools for working with <connector>.`) is for [apps] connectors, which toolbus does not have (the contract lets [apps] go); trimming, the 512 KiB cap and `""` are asserted.',
  },
  {
    id: 21,
    text: "Missing or null `properties` → `{}`; `strict:false`; a null-typed root schema → the tool is skipped.",
    covered: true,
    partial:
      "`strict:false` belongs to the OpenAI function spec Codex builds; toolbus serves MCP tools (inputSchema), which have no strict flag. `properties` defaulting and skipping a null-rooted schema are asserted.",
  },
  {
    id: 22,
    text: "Hook names: (`memory`,`create_entities`) → `mcp__memory__create_entities`; (`mcp__foo`,`exec_command`) → `mcp__foo__exec_command`.",
    covered: true,
  },
  { id: 23, text: "Parallel calls iff readOnlyHint==true or the server opts in.", covered: true },
  {
    id: 24,
    text: 'Search available → deferred; otherwise direct; `omit_tools_from=["deferred"]` with search → the tool is not model-visible.',
    covered: true,
    differs:
      'the item says a tool with `omit_tools_from=["deferred"]` is not model-visible under search, but the reference\'s own §3.6 table gives Direct for it ({direct, code_mode} remain, and deferred is not there to keep); toolbus follows §3.6, so the tool is listed directly and stays visible.',
  },
  { id: 25, text: "Invalid JSON args → result `err: …` (isError) and no item events.", covered: true },
  {
    id: 26,
    text: "Blank args → no arguments sent; the item's `arguments` is `null`. Args `[1]` → `MCP tool arguments must be a JSON object, got [1]`.",
    covered: true,
  },
  {
    id: 27,
    text: "Tool absent from the binding → `MCP tool `s/t` is not available to the model`, with a started item and a failed completed item.",
    covered: true,
  },
  {
    id: 28,
    text: "Request `_meta` has `callId` and `threadId` (a stale one is overwritten), plus `x-codex-turn-metadata` when available; sandbox meta only for servers with `codex/sandbox-state-meta`.",
    covered: true,
    partial:
      "`x-codex-turn-metadata` and the `codex/sandbox-state-meta` meta are not sent: a ToolCallRequest (docs/contract.md) carries no model or turn metadata beyond turnId, and toolbus runs no sandbox. callId, and threadId overwriting a stale one, are asserted.",
  },
  {
    id: 29,
    text: "A revision bump after prepare → `tool call rejected because the catalog changed after `s/t` was prepared`, and the server is not called.",
    covered: true,
  },
  {
    id: 30,
    text: "A slow tool → an error result containing `tool call error:` and `timed out awaiting tools/call`.",
    covered: true,
  },
  {
    id: 31,
    text: "`approve` never prompts; `prompt` always prompts; `writes` prompts unless readOnly.",
    covered: true,
  },
  {
    id: 32,
    text: "`auto`: no annotations → prompt; readOnly only → none; destructive=true → prompt even with readOnly; readOnly=false + openWorld absent → prompt.",
    covered: true,
  },
  { id: 33, text: "Mode resolution: tool override > server default > `auto`.", covered: true },
  {
    id: 34,
    text: "Policy `never` + disabled sandbox → no prompt in any mode; `never` + restricted + required → `MCP tool call requires approval, but approval policy is never`.",
    covered: true,
  },
  {
    id: 35,
    text: 'Header `Approve app tool call?`; question `Allow the <s> MCP server to run tool "<t>"?`.',
    covered: true,
  },
  {
    id: 36,
    text: "Options in order: Allow, Allow for this session, Allow and don't ask me again, Cancel. The middle two appear only in `auto` mode; always-allow also needs elicitation on and a non-selected-plugin server.",
    covered: true,
    partial:
      "always-allow's extra conditions have no toolbus counterpart: approvals are not behind an elicitation feature flag, and there are no plugins, so the always option is offered on every call in mode auto (each has a persistent key). The order and the auto-only rule are asserted.",
  },
  {
    id: 37,
    text: 'Elicitation id `mcp_tool_call_approval_<call_id>`; `_meta.codex_approval_kind="mcp_tool_call"`; `persist` matches the options; `tool_params_display` is sorted by name.',
    covered: true,
  },
  {
    id: 38,
    text: "Decline → item failed with `user rejected MCP tool call`, and the server is not called; cancel or no response → `user cancelled MCP tool call`.",
    covered: true,
    differs:
      "an approval nobody answers times out (docs/contract.md: decision `timed_out`, error `approval_timed_out`) and the call is skipped with the reviewer-timeout text of §4 step 5, not `user cancelled MCP tool call`; decline and cancel are as the item says.",
  },
  {
    id: 39,
    text: '`persist:"session"` → the next identical (server, connector, tool) call has no prompt and no hooks.',
    covered: true,
  },
  {
    id: 40,
    text: '`persist:"always"` → writes `approval_mode="approve"` to `[mcp_servers.<s>.tools.<t>]` (in the project config if the server is defined there) and remembers for the session.',
    covered: true,
    differs:
      'docs/contract.md keeps "allow always" grants in Postgres, bound to the tool\'s fingerprint, not as `approval_mode="approve"` in config.toml; the grant is also remembered for the session, as the item says.',
  },
  { id: 41, text: "In prompt/writes modes, session/always act as a one-time Allow.", covered: true },
  {
    id: 42,
    text: "A PermissionRequest hook Allow skips the user; Deny → skip with the hook's message; a remembered approval bypasses hooks.",
    covered: true,
  },
  {
    id: 43,
    text: "Items: started `inProgress`; completed `completed` with result and duration; `isError:true` → `failed` with the result; a transport error → `failed` with `error.message` and no result.",
    covered: true,
  },
  {
    id: 44,
    text: 'Legacy end `result` is `{"Ok":…}` or `{"Err":"…"}`; app id fields appear only for codex_apps.',
    covered: true,
    differs:
      'docs/contract.md\'s end event is camelCase: `result:{ok:…}|{err:"…"}`, not `{"Ok"}`/`{"Err"}`. The app identity fields are never set: toolbus has no codex_apps server.',
  },
  {
    id: 45,
    text: "A result over 1 MiB → the event stores one truncated text block (no structuredContent/_meta); the model output is independent.",
    covered: true,
  },
  {
    id: 46,
    text: "Model output starts with `Wall time: X.XXXX seconds\\nOutput:\\n`; the wall time includes the approval wait.",
    covered: true,
  },
  {
    id: 47,
    text: "structuredContent present → the model sees only its JSON; text-only content → the JSON array of blocks.",
    covered: true,
  },
  {
    id: 48,
    text: "An image block → content items `[header, image data:<mime>;base64,<data>]`; a model without images gets the placeholder text.",
    covered: true,
  },
  {
    id: 49,
    text: "Over policy×1.2 → middle truncation with a `…N chars truncated…` or `…N tokens truncated…` marker; `success` is false iff `isError==true`.",
    covered: true,
  },
  {
    id: 50,
    text: "The code-mode view omits `_meta`.",
    covered: false,
    reason:
      "toolbus runs no code-mode scripts: a ToolCallReply's `result` is the raw result, `_meta` included, for the client that made the call (the unused code-mode projection was removed).",
  },
  {
    id: 51,
    text: "`list_mcp_resources {}` → all servers, sorted by name, each item with `server`, and no nextCursor; `{cursor}` without a server → `cursor can only be used when a server is specified`.",
    covered: true,
  },
  {
    id: 52,
    text: '`{server:"s"}` → `{server, resources, nextCursor}` (one page); `read_mcp_resource {server:" ",uri:"x"}` → `server must be provided`.',
    covered: true,
  },
  {
    id: 53,
    text: "A failed read → `resources/read failed: …` and a failed item for tool `read_mcp_resource`; success → item `isError:false`; the payload is truncated to policy×1.2.",
    covered: true,
  },
  {
    id: 54,
    text: "`hello<oai-mem-citation>…</oai-mem-citation> world` → `hello world`, also when split across chunks (`<oai-mem-`|`citation>`).",
    covered: true,
  },
  {
    id: 55,
    text: "An unterminated citation at end of stream is hidden and parsed; a trailing `hello <oai-mem-` stays visible; nesting → `az</oai-mem-citation>b`.",
    covered: true,
  },
  {
    id: 56,
    text: "`MEMORY.md:1-2|note=[x]` → {`MEMORY.md`,1,2,`x`}; malformed lines are skipped; no entries and no ids → none.",
    covered: true,
  },
  {
    id: 57,
    text: "Rollout ids are de-duplicated in first-seen order; the `<thread_ids>` fallback is accepted; non-UUIDs are ignored for usage.",
    covered: true,
  },
  {
    id: 58,
    text: "Usage: usage_count NULL→1 (+1 after that) and last_usage = now in seconds; unknown ids are ignored; [a,a,b] adds 2 to a.",
    covered: true,
  },
  {
    id: 59,
    text: "A citation-only reply → no last_agent_message, but the turn is still flagged as cited.",
    covered: true,
    partial:
      "toolbus has no agent turn, so no last_agent_message: memory.strip answers a citation-only reply with an empty visibleText (the caller's cue that there is no message) and its citation, which memory.message still counts.",
  },
  {
    id: 60,
    text: "The outbound `tools/list` has exactly `codex` and `codex-reply` with the documented schemas; `codex` with `profile` → `unknown field `profile``.",
    covered: false,
    reason:
      "toolbus does not ship Codex's own `codex mcp-server` (codex/codex-reply tools); its outbound MCP server is the gateway, tested against the MCP conformance suite instead.",
  },
  {
    id: 61,
    text: "`codex-reply` with an unknown thread → `Session not found for thread_id: <id>`, isError, structuredContent `{threadId, content}`; notifications use `codex/event` with `_meta.requestId/threadId`.",
    covered: false,
    reason:
      "as 60: the `codex-reply` tool and `codex/event` notifications belong to Codex's outbound server, not to toolbus's gateway.",
  },
  {
    id: 62,
    text: "Inbound elicitation: an empty form under never + full access → accept `{}`; never + restricted → decline; `tool_suggestion` → always decline.",
    covered: true,
  },
];
