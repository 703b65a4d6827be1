/**
 * Tasks under a fault (MCP 2026-07-28's tasks extension): a 2026-07-28 client that takes tasks
 * starts `count` calls of a tool that runs longer than `[gateway] task_after_sec`, each becoming
 * a task on the first gateway; that gateway is killed (-9) while they run; then every task is
 * polled on the other gateway until it completes. None may be lost, none run twice, and each
 * that ran has its begin and end events.
 */
import { createSubjects } from "@toolbus/protocol";
import type { ToolbusCluster } from "@toolbus/testkit/cluster";
import { type CallEventCounts, callEvents, type ScenarioRow } from "./load.js";

const MODERN = "2026-07-28";
export const TASK_SCENARIO = "kill -9 the gateway holding tasks mid-run";

/** How long the test server's `long` tool takes: past the 2 s after which a call becomes a task. */
export const LONG_MS = 5_000;

interface Answer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** One 2026-07-28 request, from a client that takes tasks. */
async function post(gateway: string, method: string, params: Record<string, unknown>): Promise<Answer> {
  const name = method === "tools/call" ? params.name : params.taskId;
  const response = await fetch(`${gateway}/mcp`, {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "chaos-tasks", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {
            extensions: { "io.modelcontextprotocol/tasks": {} },
          },
        },
      },
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  const data = response.headers.get("content-type")?.includes("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .at(-1)
        ?.slice("data: ".length)
    : text;
  return JSON.parse(data ?? "{}") as Answer;
}

export async function runTaskScenario(
  cluster: ToolbusCluster,
  settings: { pendingApprovals: number },
): Promise<ScenarioRow> {
  const count = settings.pendingApprovals;
  const [holder, other] = cluster.services.gateway.map((g) => g.url as string) as [string, string];
  const listed = (await post(holder, "tools/list", {})).result?.tools as Array<{ name: string }> | undefined;
  const tool = listed?.find((candidate) => candidate.name.endsWith("long"))?.name;
  if (tool === undefined) throw new Error("the test server's long tool is not listed");
  const started = await Promise.all(
    Array.from({ length: count }, (_, n) => post(holder, "tools/call", { name: tool, arguments: { n } })),
  );
  const taskIds = started.flatMap((answer) =>
    answer.result?.resultType === "task" && typeof answer.result.taskId === "string"
      ? [answer.result.taskId]
      : [],
  );
  await cluster.services.gateway[0]!.kill();
  const outcomes = new Map<string, string>();
  const deadline = Date.now() + LONG_MS + 60_000;
  while (outcomes.size < taskIds.length && Date.now() < deadline) {
    for (const taskId of taskIds) {
      if (outcomes.has(taskId)) continue;
      const got = await post(other, "tasks/get", { taskId }).catch(() => ({}) as Answer);
      const status = got.result?.status;
      if (status === "completed" || status === "failed" || status === "cancelled") {
        outcomes.set(taskId, String(status));
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await cluster.services.gateway[0]!.restart();
  const runs = new Map<string, number>();
  for (const line of await cluster.executions()) {
    const callId = (line._meta as { callId?: string } | undefined)?.callId;
    if (line.tool === "long" && callId !== undefined) runs.set(callId, (runs.get(callId) ?? 0) + 1);
  }
  const subjects = createSubjects(cluster.prefix);
  const admin = await cluster.adminConnection();
  let events = await callEvents(admin, subjects.streams.events.name, cluster.prefix);
  for (let wait = 0; wait < 30 && ![...runs.keys()].every((callId) => oneEach(events.get(callId))); wait++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    events = await callEvents(admin, subjects.streams.events.name, cluster.prefix);
  }
  const completed = [...outcomes.values()].filter((status) => status === "completed").length;
  const errors = started.length - taskIds.length + outcomes.size - completed;
  return {
    scenario: TASK_SCENARIO,
    sent: count,
    answered: completed,
    errors,
    executed: runs.size,
    lost: count - completed - errors,
    "executed twice": [...runs.values()].filter((n) => n > 1).length,
    "events missing": [...runs.keys()].filter((callId) => !oneEach(events.get(callId))).length,
    "recovery s": "—",
    note: `${taskIds.length} tasks handed out by the gateway killed, polled to their end on the other`,
  };
}

function oneEach(seen: CallEventCounts | undefined): boolean {
  return seen?.begin === 1 && seen.end === 1;
}
