/**
 * The command table: every command with its arguments and options, as data. Argument parsing
 * (`parse-argv.ts`) and the help text (`help.ts`) both read it, so they cannot disagree.
 */
import { APPROVAL_MODE_ALIASES, APPROVAL_MODE_MEANINGS, APPROVAL_MODES } from "@toolbus/config";

export interface OptionSpec {
  /** The long name, without `--`. */
  readonly name: string;
  readonly type: "boolean" | "string";
  readonly short?: string;
  /** The value's placeholder in help, for string options: `--timeout <sec>`. */
  readonly valueName?: string;
  readonly description: string;
}

export interface PositionalSpec {
  readonly name: string;
  /** `rest` takes every remaining word. */
  readonly arity: "required" | "optional" | "rest";
  readonly description: string;
}

export const CommandName = {
  start: "start",
  servers: "servers",
  tools: "tools",
  call: "call",
  approvals: "approvals",
  tail: "tail",
  natsConfig: "nats-config",
  provision: "provision",
} as const;
export type CommandName = (typeof CommandName)[keyof typeof CommandName];

export interface CommandSpec {
  readonly name: CommandName;
  readonly summary: string;
  /** Usage forms, after `toolbus `. */
  readonly usage: readonly string[];
  readonly positionals: readonly PositionalSpec[];
  readonly options: readonly OptionSpec[];
  /** More help paragraphs: behaviour, output, examples. */
  readonly details: readonly string[];
}

/** Seconds → the request timeout when `--timeout` is not given. */
export const DEFAULT_TIMEOUT_SEC = 10;
/** A 10-minute approval wait plus the 5-minute default tool timeout, and a minute to spare. */
export const DEFAULT_CALL_TIMEOUT_SEC = 960;

export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { name: "json", type: "boolean", description: "Print machine-readable JSON on stdout and nothing else" },
  {
    name: "timeout",
    type: "string",
    valueName: "sec",
    description: `Wait at most <sec> seconds for toolbus to answer (default ${DEFAULT_TIMEOUT_SEC}; call: ${DEFAULT_CALL_TIMEOUT_SEC})`,
  },
  { name: "help", short: "h", type: "boolean", description: "Show help" },
];

/** Only before a command: `toolbus --version`. */
export const VERSION_OPTION: OptionSpec = {
  name: "version",
  type: "boolean",
  description: "Print the CLI's version",
};

/** A mode's second name, the one that says what it does. */
function aliasOf(mode: (typeof APPROVAL_MODES)[number]): string {
  return Object.entries(APPROVAL_MODE_ALIASES).find(([, target]) => target === mode)?.[0] ?? mode;
}

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "start",
    summary: "Run every toolbus service in this process (the all-in-one runner)",
    usage: ["start [--config <path>] [--log-format <format>]"],
    positionals: [],
    options: [
      { name: "config", type: "string", valueName: "path", description: "The toolbus.toml to use" },
      {
        name: "log-format",
        type: "string",
        valueName: "format",
        description:
          "pretty (one line each; the default on a terminal) or json (the default otherwise; also LOG_FORMAT)",
      },
    ],
    details: [
      "Starts the all-in-one runner (NATS, the services, the console and the MCP endpoint) and runs until Ctrl-C.",
      "Approval modes (a server's default_tools_approval_mode, a tool's approval_mode), by either name:",
      ...APPROVAL_MODES.map((mode) => `  ${mode} = ${aliasOf(mode)}: ${APPROVAL_MODE_MEANINGS[mode]}`),
    ],
  },
  {
    name: "servers",
    summary: "List MCP servers with their status and errors",
    usage: ["servers"],
    positionals: [],
    options: [],
    details: ["Columns: name, status, error, required, revision. --json prints the server list."],
  },
  {
    name: "tools",
    summary: "List the tools a model sees, or search them",
    usage: ["tools [query...]"],
    positionals: [
      { name: "query", arity: "rest", description: "Search words; without them every tool is listed" },
    ],
    options: [
      { name: "all", type: "boolean", description: "Include tools hidden from the model (listing only)" },
      {
        name: "limit",
        type: "string",
        valueName: "n",
        description: "At most <n> search results (default 20)",
      },
    ],
    details: [
      "Columns: name (the one MCP clients see, and `toolbus call` takes), server, description (in the width left,",
      "cut with … on a terminal), and with --all exposure. --json prints the tool entries, input schemas included.",
    ],
  },
  {
    name: "call",
    summary: "Call a tool with JSON arguments and print what it answered",
    usage: ["call <tool> [json]"],
    positionals: [
      {
        name: "tool",
        arity: "required",
        description:
          "The tool's name as `toolbus tools` lists it; also server.tool, mcp__server__tool, or a name only one server has",
      },
      { name: "json", arity: "optional", description: "The arguments as a JSON object; omit for none" },
    ],
    options: [{ name: "raw", type: "boolean", description: "Print the raw MCP result as JSON instead" }],
    details: [
      "Prints the text the tool answered; other content as one line each (type, MIME type, size). On a terminal,",
      "stderr shows the tool's progress and the elapsed time, and where to answer a call that waits for approval.",
      "A name that matches no tool, or several, fails with the closest names. --raw prints the raw MCP result;",
      "--json the whole reply (status, the model's view, raw result, durations).",
      "Exit code: 0 completed, 1 the tool failed or the call was skipped, 4 the arguments are not valid JSON.",
      `Example: toolbus call everything__echo '{"message":"hi"}'`,
    ],
  },
  {
    name: "approvals",
    summary: "List pending approvals, answer one, or watch and answer them as they arrive",
    usage: ["approvals", "approvals answer <requestId> <choice>", "approvals --watch"],
    positionals: [
      {
        name: "answer <requestId> <choice>",
        arity: "rest",
        description: "Answer one request: allow, allow_session, allow_always, decline or cancel",
      },
    ],
    options: [
      {
        name: "watch",
        type: "boolean",
        description: "Show requests as they arrive and read each answer from stdin",
      },
    ],
    details: [
      "A request may be named by its requestId or by its callId.",
      "In --watch, answer with a key or a word: a (allow), s (session), p (always), d (decline), c (cancel).",
    ],
  },
  {
    name: "tail",
    summary: "Print call, server, catalog and approval events as they happen",
    usage: ["tail"],
    positionals: [],
    options: [{ name: "count", type: "string", valueName: "n", description: "Stop after <n> events" }],
    details: [
      "One line per event: time, kind, callId or server, status, duration. --json prints one JSON object per line.",
      "Runs until Ctrl-C (or --count events).",
    ],
  },
  {
    name: "nats-config",
    summary: "Write each identity's NATS key and the nats-server accounts that limit it to its role",
    usage: ["nats-config --out <dir> [--config <path>] [--rotate]"],
    positionals: [],
    options: [
      {
        name: "out",
        type: "string",
        valueName: "dir",
        description: "Where to write <identity>.nk (one NKey seed per identity, 0600) and auth.conf",
      },
      {
        name: "config",
        type: "string",
        valueName: "path",
        description:
          "The toolbus.toml whose servers each get a connector identity (default as toolbus start)",
      },
      {
        name: "rotate",
        type: "boolean",
        description: "Make new keys instead of keeping those already in <dir>",
      },
    ],
    details: [
      "auth.conf is the nats-server `accounts` block: include it in nats.conf (next to it: include auth.conf).",
      "One identity per role (provisioner, catalog, dispatcher, approvals, memory, gateway, cli, agent) and one",
      "per configured MCP server (connector-<server>.nk, held by the catalog process that runs that server).",
      "Each service runs with NATS_NKEY_FILE=<dir>/<role>.nk; the permissions follow TOOLBUS_PREFIX.",
      "Run it again when the configured servers change, and reload nats-server. Needs no running toolbus.",
    ],
  },
  {
    name: "provision",
    summary: "Create the JetStream streams, buckets and consumers toolbus uses, before any service starts",
    usage: ["provision [--config <path>]"],
    positionals: [],
    options: [
      {
        name: "config",
        type: "string",
        valueName: "path",
        description: "The toolbus.toml whose [bus] and [memory] tables size them (default as toolbus start)",
      },
    ],
    details: [
      "Creates what is missing and brings what exists back in line with the contract (subjects, no RePublish,",
      "sources or mirror, deny delete and purge) and the config's limits. Services create nothing and refuse",
      "to start on a stream that differs. Runs as the provisioner: NATS_NKEY_FILE=<dir>/provisioner.nk.",
      "TOOLBUS_JS_REPLICAS: the JetStream nodes that keep each (the cluster's node count).",
    ],
  },
];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((command) => command.name === name);
}

/** What a parsed option value is: `--json` true, `--timeout 5` "5", absent undefined. */
export type OptionValues = Readonly<Record<string, string | boolean | undefined>>;

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

/** Whether the positionals fit the command's arity rules. */
export function checkPositionals(command: CommandSpec, positionals: readonly string[]): Checked<string[]> {
  const required = command.positionals.filter((p) => p.arity === "required");
  const rest = command.positionals.some((p) => p.arity === "rest");
  if (positionals.length < required.length) {
    const missing = required.slice(positionals.length).map((p) => `<${p.name}>`);
    return { ok: false, message: `toolbus ${command.name} needs ${missing.join(" ")}` };
  }
  if (!rest && positionals.length > command.positionals.length) {
    const extra = positionals.slice(command.positionals.length);
    return {
      ok: false,
      message: `toolbus ${command.name} takes ${describeArity(command)}; unexpected ${extra.map((a) => JSON.stringify(a)).join(" ")}`,
    };
  }
  return { ok: true, value: [...positionals] };
}

function describeArity(command: CommandSpec): string {
  if (command.positionals.length === 0) return "no arguments";
  return command.positionals.map((p) => (p.arity === "required" ? `<${p.name}>` : `[${p.name}]`)).join(" ");
}

/** `--timeout <sec>` in milliseconds: a positive number of seconds. */
export function parseTimeoutSeconds(value: string): Checked<number> {
  const seconds = Number(value);
  if (value.trim() === "" || !Number.isFinite(seconds) || seconds <= 0) {
    return {
      ok: false,
      message: `--timeout needs a positive number of seconds, got ${JSON.stringify(value)}`,
    };
  }
  return { ok: true, value: Math.round(seconds * 1000) };
}

/** A positive whole number, for `--limit` and `--count`. */
export function parseCount(option: string, value: string, max = Number.MAX_SAFE_INTEGER): Checked<number> {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < 1 || n > max) {
    return {
      ok: false,
      message: `--${option} needs a whole number from 1 to ${max}, got ${JSON.stringify(value)}`,
    };
  }
  return { ok: true, value: n };
}
