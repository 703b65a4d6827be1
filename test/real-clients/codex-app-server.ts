/**
 * `codex app-server` (what Codex's IDE extension and TUI drive) over its stdio JSON-RPC, played
 * as its user: one thread, a turn per prompt, and every MCP elicitation Codex forwards answered
 * as the user's choice. What went each way is kept, condensed, for the transcript.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface AppServerRun {
  /** `client → codex` and `codex → client` lines, condensed. */
  lines: string[];
  /** The `params` of each `mcpServer/elicitation/request` Codex sent. */
  elicitations: Array<Record<string, unknown>>;
  /** Final status of each turn, in order. */
  turns: string[];
  stderr: string;
}

interface Message {
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message?: string };
}

/** Notifications that only stream progress; counted, not written. */
const QUIET =
  /delta|tokenUsage|status\/changed|startupStatus|account\/|remoteControl|rateLimits|configWarning|^warning$/;

export async function runAppServer(options: {
  codex: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  prompts: string[];
  /** The user's answer to an MCP elicitation. */
  answer: (params: Record<string, unknown>) => Record<string, unknown>;
  timeoutMs: number;
}): Promise<AppServerRun> {
  const child = spawn(options.codex, ["app-server"], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const run: AppServerRun = { lines: [], elicitations: [], turns: [], stderr: "" };
  child.stderr.on("data", (chunk: Buffer) => (run.stderr += chunk.toString()));
  let quiet = 0;
  const flushQuiet = () => {
    if (quiet > 0) run.lines.push(`codex → client  (${quiet} progress notification(s))`);
    quiet = 0;
  };
  const send = (message: Message) => {
    flushQuiet();
    run.lines.push(`client → codex  ${JSON.stringify(message)}`);
    child.stdin.write(`${JSON.stringify(message)}\n`);
  };
  let nextId = 0;
  const waiting = new Map<number | string, (message: Message) => void>();
  const request = (method: string, params: Record<string, unknown>) =>
    new Promise<Message>((resolve) => {
      nextId += 1;
      waiting.set(nextId, resolve);
      send({ id: nextId, method, params });
    });
  let turnEnded: (status: string) => void = () => {};

  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line) as Message;
    if (message.method === undefined && message.id !== undefined) {
      flushQuiet();
      run.lines.push(`codex → client  ${condenseResponse(message)}`);
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
      return;
    }
    const method = message.method ?? "";
    if (QUIET.test(method)) {
      quiet += 1;
      return;
    }
    flushQuiet();
    run.lines.push(`codex → client  ${condenseNotification(message)}`);
    if (method === "mcpServer/elicitation/request" && message.id !== undefined) {
      run.elicitations.push(message.params ?? {});
      send({ id: message.id, result: options.answer(message.params ?? {}) });
    } else if (message.id !== undefined) {
      send({ id: message.id, error: { message: `this client does not answer ${method}` } });
    }
    if (method === "turn/completed") {
      const turn = message.params?.turn as { status?: string } | undefined;
      turnEnded(turn?.status ?? "unknown");
    }
  });

  const deadline = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
  try {
    await request("initialize", {
      clientInfo: { name: "toolbus_transcript", title: "toolbus transcript", version: "0.1.0" },
      capabilities: null,
    });
    send({ method: "initialized" });
    const started = await request("thread/start", {
      cwd: options.cwd,
      approvalPolicy: "on-request",
      sandbox: "read-only",
    });
    const thread = (started.result?.thread as { id?: string } | undefined)?.id;
    if (thread === undefined)
      throw new Error(`thread/start failed: ${started.error?.message ?? "no thread"}`);
    for (const text of options.prompts) {
      const ended = new Promise<string>((resolve) => (turnEnded = resolve));
      await request("turn/start", { threadId: thread, input: [{ type: "text", text, text_elements: [] }] });
      run.turns.push(await ended);
    }
  } finally {
    clearTimeout(deadline);
    flushQuiet();
    child.stdin.end();
    child.kill("SIGTERM");
    if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
  }
  return run;
}

function condenseResponse(message: Message): string {
  if (message.error) return JSON.stringify({ id: message.id, error: message.error });
  const thread = message.result?.thread as { id?: string; modelProvider?: string } | undefined;
  if (thread)
    return JSON.stringify({
      id: message.id,
      result: { thread: { id: thread.id, modelProvider: thread.modelProvider } },
    });
  const turn = message.result?.turn as { id?: string; status?: string } | undefined;
  if (turn) return JSON.stringify({ id: message.id, result: { turn: { id: turn.id, status: turn.status } } });
  return JSON.stringify(message).slice(0, 300);
}

/** The fields of an item or turn that say what happened; the rest is bookkeeping. */
function condenseNotification(message: Message): string {
  const params = message.params ?? {};
  const item = params.item as Record<string, unknown> | undefined;
  if (item) {
    const { type, id, server, tool, status, arguments: args, result, error, text, durationMs } = item;
    const kept = { type, id, server, tool, status, arguments: args, result, error, text, durationMs };
    const defined = Object.fromEntries(
      Object.entries(kept).filter(([, value]) => value !== undefined && value !== null),
    );
    return JSON.stringify({ method: message.method, params: { item: defined } });
  }
  const turn = params.turn as { id?: string; status?: string; error?: unknown } | undefined;
  if (turn)
    return JSON.stringify({
      method: message.method,
      params: { turn: { id: turn.id, status: turn.status, error: turn.error } },
    });
  return JSON.stringify(message);
}
