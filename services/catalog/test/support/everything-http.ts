/**
 * server-everything over streamable HTTP on a port the test chooses, so it can be stopped and
 * started again at the same URL (the testkit's launcher picks a fresh port each time).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { serverEverythingCommand } from "@toolbus/testkit/mcp-test-server";

export interface EverythingHttp {
  url: string;
  stop(): Promise<void>;
}

export async function startEverythingHttp(port: number): Promise<EverythingHttp> {
  const { command, args } = serverEverythingCommand();
  const child = spawn(command, [...args.slice(0, -1), "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server-everything did not listen on ${port}: ${output}`)),
      15_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (/listening on port \d+/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}: ${output}`));
    });
  });
  child.removeAllListeners("exit");
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => stopChild(child) };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), 3_000);
  await exited;
  clearTimeout(killer);
}
