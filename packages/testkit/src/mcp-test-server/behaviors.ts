/**
 * Runs one scripted tool behaviour for a tools/call and produces the raw result, or throws the
 * JSON-RPC error the script asked for. Results are built by hand: the test server must be able
 * to answer what a well-behaved server never would.
 */
import { randomUUID } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ToolBehavior } from "./script.js";

/**
 * What a behaviour needs from the tools/call it runs in: its cancellation signal and `_meta`, and
 * (over 2025) a way to send the client a request or a notification in the context of the call.
 * A failed request rejects with an Error whose message is worded as the v1 SDK worded it
 * (`MCP error <code>: <message>`), which behaviours pass on in error results.
 */
export interface CallExtra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number; [key: string]: unknown } | undefined;
  sendRequest(request: {
    method: string;
    params?: Record<string, unknown>;
  }): Promise<Record<string, unknown>>;
  sendNotification(notification: { method: string; params?: Record<string, unknown> }): Promise<void>;
}

const TINY_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const SILENT_WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

/** An Error the SDK sends as-is: `{code, message}` with no "MCP error" decoration. */
export function wireError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

export async function runBehavior(
  behavior: ToolBehavior,
  args: Record<string, unknown>,
  extra: CallExtra,
): Promise<CallToolResult> {
  const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });
  switch (behavior.kind) {
    case "echo":
      return text(JSON.stringify(args));
    case "text":
      return text(behavior.text);
    case "structured":
      return {
        content: [{ type: "text", text: behavior.text ?? JSON.stringify(behavior.value) }],
        structuredContent: behavior.value,
      };
    case "error_result":
      return { content: [{ type: "text", text: behavior.text }], isError: true };
    case "throw":
      throw wireError(behavior.code ?? -32603, behavior.message);
    case "hang":
      await sleep(Number.POSITIVE_INFINITY, extra.signal);
      throw wireError(-32800, "cancelled");
    case "delay":
      await sleep(behavior.ms, extra.signal);
      return text(JSON.stringify(args));
    case "image":
      return {
        content: [
          { type: "image", data: behavior.data ?? TINY_PNG, mimeType: behavior.mimeType ?? "image/png" },
        ],
      };
    case "audio":
      return {
        content: [
          { type: "audio", data: behavior.data ?? SILENT_WAV, mimeType: behavior.mimeType ?? "audio/wav" },
        ],
      };
    case "huge":
      return text("x".repeat(behavior.bytes));
    case "progress":
      return progress(behavior.count, behavior.intervalMs ?? 10, extra);
    case "elicit": {
      const meta = { ...behavior._meta, ...(behavior.echoProgressToken ? progressTokenOf(extra) : {}) };
      const request = {
        method: "elicitation/create",
        params: {
          ...(behavior.url !== undefined
            ? { mode: "url", message: behavior.message, url: behavior.url, elicitationId: randomUUID() }
            : {
                mode: "form",
                message: behavior.message,
                requestedSchema: behavior.requestedSchema ?? { type: "object", properties: {} },
              }),
          ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
        },
      };
      try {
        const answer = await extra.sendRequest(request);
        return text(JSON.stringify({ action: answer.action, content: answer.content }));
      } catch (error) {
        return { content: [{ type: "text", text: (error as Error).message }], isError: true };
      }
    }
    case "sample": {
      const ask = () =>
        extra.sendRequest({
          method: "sampling/createMessage",
          params: {
            messages: [{ role: "user", content: { type: "text", text: behavior.prompt } }],
            maxTokens: behavior.maxTokens ?? 100,
            ...(behavior.tools !== undefined ? { tools: behavior.tools } : {}),
          },
        }) as Promise<{ content: { type: string; text?: string } }>;
      if (behavior.afterMs !== undefined) {
        setTimeout(() => {
          ask().then(
            (answer) => process.stderr.write(`sampling outcome: answered ${JSON.stringify(answer)}\n`),
            (error: unknown) => process.stderr.write(`sampling outcome: ${(error as Error).message}\n`),
          );
        }, behavior.afterMs);
        return text("scheduled");
      }
      try {
        const answer = await ask();
        return text(
          answer.content.type === "text" ? (answer.content.text ?? "") : JSON.stringify(answer.content),
        );
      } catch (error) {
        return { content: [{ type: "text", text: (error as Error).message }], isError: true };
      }
    }
    case "crash":
      process.stderr.write(`mcp-test-server: crashing on purpose (exit ${behavior.exitCode ?? 1})\n`);
      process.exit(behavior.exitCode ?? 1);
      break;
    case "log":
      await extra.sendNotification({
        method: "notifications/message",
        params: {
          level: behavior.level ?? "info",
          logger: "mcp-test-server",
          data: behavior.data ?? null,
          ...(behavior.echoProgressToken ? { _meta: progressTokenOf(extra) } : {}),
        },
      });
      if (behavior.holdMs !== undefined) await sleep(behavior.holdMs, extra.signal);
      return text(behavior.text ?? "logged");
    case "round":
      throw wireError(-32601, "the round behaviour asks through input_required: serve it over 2026-07-28");
  }
  throw wireError(-32603, `unknown behaviour ${JSON.stringify(behavior)}`);
}

function progressTokenOf(extra: CallExtra): Record<string, string | number> {
  const token = extra._meta?.progressToken;
  return token === undefined ? {} : { progressToken: token };
}

async function progress(count: number, intervalMs: number, extra: CallExtra): Promise<CallToolResult> {
  const progressToken = extra._meta?.progressToken;
  for (let i = 1; i <= count; i++) {
    await sleep(intervalMs, extra.signal);
    if (progressToken !== undefined)
      await extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken, progress: i, total: count, message: `step ${i} of ${count}` },
      });
  }
  return { content: [{ type: "text", text: "done" }] };
}

/** Resolves after `ms` (never, for Infinity); rejects when the client cancels the request. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(wireError(-32800, "cancelled"));
    const timer = Number.isFinite(ms) ? setTimeout(resolve, ms) : undefined;
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(wireError(-32800, "cancelled"));
      },
      { once: true },
    );
  });
}
