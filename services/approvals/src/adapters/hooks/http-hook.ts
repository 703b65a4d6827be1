/**
 * Running one `type: "http"` hook: POST the same JSON payload a command hook reads on stdin, with
 * the hook's timeout as an abort signal. A 2xx answer reads like exit code 0 with the body as
 * stdout; any other status is that status as a non-blocking exit code; a request that could not be
 * made is `crashed`. Header values may name environment variables (`$VAR`, `${VAR}`), but only
 * those listed in `allowedEnvVars`, as in Claude Code.
 */
import { maskUrl } from "@toolbus/bus";
import type { HookPayload, HttpHook } from "@toolbus/policy";
import { hookTimeoutMs } from "@toolbus/policy";
import type { HookRun } from "../../core/index.js";
import { BoundedText } from "./bounded-text.js";

export interface HttpHookOptions {
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

export async function runHttpHook(
  handler: HttpHook,
  payload: HookPayload,
  options: HttpHookOptions = {},
): Promise<HookRun> {
  const timeoutMs = hookTimeoutMs(handler);
  // The label reaches logs and deny reasons: a token in the URL must not.
  const base = { hookLabel: maskUrl(handler.url), timeoutMs, stderr: "" };
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  try {
    const response = await fetch(handler.url, {
      method: "POST",
      headers: {
        ...interpolatedHeaders(handler, options.env ?? process.env),
        "content-type": "application/json",
      },
      body: JSON.stringify(payload),
      signal,
    });
    const body = await boundedBody(response);
    return {
      ...base,
      exitCode: response.ok ? 0 : response.status,
      stdout: response.ok ? body : "",
      stderr: response.ok ? "" : body,
      timedOut: false,
      crashed: false,
    };
  } catch (error) {
    if (timeout.aborted) return { ...base, exitCode: null, stdout: "", timedOut: true, crashed: false };
    const reason = options.signal?.aborted
      ? "the approvals service stopped before the hook answered"
      : describe(error);
    return { ...base, exitCode: null, stdout: "", timedOut: false, crashed: true, error: reason };
  }
}

function interpolatedHeaders(handler: HttpHook, env: NodeJS.ProcessEnv): Record<string, string> {
  const allowed = new Set(handler.allowedEnvVars ?? []);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(handler.headers ?? {})) {
    headers[name] = value.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
      (match, a, b) => {
        const variable = (a ?? b) as string;
        return allowed.has(variable) ? (env[variable] ?? "") : match;
      },
    );
  }
  return headers;
}

async function boundedBody(response: Response): Promise<string> {
  const text = new BoundedText();
  if (response.body === null) return "";
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text.push(value);
    if (text.full) {
      await reader.cancel();
      break;
    }
  }
  return text.text();
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}
