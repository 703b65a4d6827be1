/**
 * What a 2026-07-28 server is told the caller can answer, with each call (its request `_meta`'s
 * client capabilities): what toolbus can relay, narrowed to what the caller's MCP client
 * declared, so a server asks only what will be answered (and refuses, -32021, what it needs and
 * cannot get). A server of 2025 learns capabilities once per session, so it gets toolbus's own.
 */
type Capabilities = Readonly<Record<string, unknown>>;

export function capabilitiesForServer(offered: Capabilities, caller: Capabilities): Record<string, unknown> {
  const narrowed: Record<string, unknown> = {};
  for (const [name, ours] of Object.entries(offered)) {
    const theirs = caller[name];
    if (!isRecord(theirs) || !isRecord(ours)) continue;
    narrowed[name] = name === "elicitation" ? elicitationModes(ours, theirs) : common(ours, theirs);
  }
  return narrowed;
}

/** Elicitation's modes: a client that declares `elicitation: {}` answers forms alone (the spec's rule). */
function elicitationModes(ours: Record<string, unknown>, theirs: Record<string, unknown>) {
  const declared = Object.keys(theirs).length === 0 ? { form: {} } : theirs;
  return common(ours, declared);
}

/**
 * The sub-features both sides have (`sampling.tools`, elicitation's `form`/`url`), as toolbus
 * offers them (roots' `listChanged` stays toolbus's: it relays no change of a caller's roots).
 */
function common(ours: Record<string, unknown>, theirs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(theirs)
      .filter((feature) => feature in ours)
      .map((feature) => [feature, ours[feature]]),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
