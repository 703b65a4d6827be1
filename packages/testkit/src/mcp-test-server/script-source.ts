/**
 * The control file as the running server sees it: reads the script at start, re-reads it when
 * the file changes (fs.watch on its folder, since an atomic rename replaces the file, plus a poll
 * in case watch events are lost), and records which version it applied in a per-process marker
 * file so the test side can wait for a change to take effect.
 */
import { createHash } from "node:crypto";
import { type FSWatcher, readFileSync, renameSync, rmSync, watch, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { type ParsedTestServerScript, parseScript } from "./script.js";

const POLL_MS = 100;

/** `<script>.applied.<pid>` holds the sha256 of the script text that process last applied. */
export const APPLIED_MARKER_INFIX = ".applied.";

export function appliedMarkerPath(scriptPath: string, pid: number): string {
  return `${scriptPath}${APPLIED_MARKER_INFIX}${pid}`;
}

export function scriptHash(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export class ScriptSource {
  #text: string;
  #script: ParsedTestServerScript;
  #watcher: FSWatcher | undefined;
  #poll: NodeJS.Timeout | undefined;
  readonly #marker: string;

  /** Throws when the file is missing or invalid at start: a broken test setup should fail loudly. */
  constructor(
    private readonly path: string,
    private readonly onChange: (before: ParsedTestServerScript, after: ParsedTestServerScript) => void,
  ) {
    this.#text = readFileSync(path, "utf8");
    this.#script = parseScript(this.#text);
    this.#marker = appliedMarkerPath(path, process.pid);
    this.#markApplied();
  }

  get script(): ParsedTestServerScript {
    return this.#script;
  }

  watch(): void {
    const name = basename(this.path);
    try {
      this.#watcher = watch(dirname(this.path), (_event, file) => {
        if (file === null || file === name) this.check();
      });
      this.#watcher.unref();
    } catch (error) {
      log(`fs.watch failed (${(error as Error).message}); polling only`);
    }
    this.#poll = setInterval(() => this.check(), POLL_MS);
    this.#poll.unref();
  }

  /** Re-reads the file; applies it when its text changed and it parses. */
  check(): void {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch {
      return; // mid-rename or removed by dispose(); the next check sees the new file
    }
    if (text === this.#text) return;
    this.#text = text;
    try {
      const before = this.#script;
      this.#script = parseScript(text);
      this.onChange(before, this.#script);
    } catch (error) {
      log(`${(error as Error).message}; keeping the previous script`);
    }
    this.#markApplied();
  }

  close(): void {
    this.#watcher?.close();
    clearInterval(this.#poll);
    rmSync(this.#marker, { force: true });
  }

  #markApplied(): void {
    try {
      const temp = join(dirname(this.#marker), `.${basename(this.#marker)}.tmp`);
      writeFileSync(temp, scriptHash(this.#text));
      renameSync(temp, this.#marker);
    } catch (error) {
      log(`could not write ${this.#marker}: ${(error as Error).message}`);
    }
  }
}

export function log(message: string): void {
  process.stderr.write(`mcp-test-server[${process.pid}]: ${message}\n`);
}
