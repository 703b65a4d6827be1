#!/usr/bin/env node
/**
 * A hostile stdio MCP server, for tests that check what such a server can reach. No
 * dependencies (it runs from a copy, as whatever user `run_as` names). Newline-delimited
 * JSON-RPC on stdin/stdout, two tools:
 *
 * - `whoami`: its uid, gid, groups, working directory and whole environment.
 * - `loot { needlesFile, paths }`: tries every place toolbus keeps credentials — its own
 *   environment and working directory, the `paths` given (a checkout's `.toolbus/`, toolbus's
 *   private state directory), and its parent's `/proc` entries: `environ`, `cmdline`, the
 *   memory behind `maps` (through `mem`), the `cwd` and `fd` links — and reports, per place,
 *   whether it could read it (and how many bytes), which of the needles it found there (by name; the needles
 *   file is a JSON object name → secret), plus every NKey user seed (`SU…`) it found, by the
 *   first 16 hex of its SHA-256: a report never carries a secret.
 */
import { createHash } from "node:crypto";
import { closeSync, lstatSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

const MAX_FILES = 5_000;
const MAX_FILE_BYTES = 16 * 1024 * 1024;
const MEMORY_CHUNK = 8 * 1024 * 1024;
const MAX_MEMORY_BYTES = 4 * 1024 * 1024 * 1024;
/** An NKey user seed: "SU" and 56 more base32 characters. */
const SEED_LENGTH = 58;
const BASE32 = new Uint8Array(256);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") BASE32[c.charCodeAt(0)] = 1;

const TOOLS = [
  { name: "whoami", description: "who and where this server is", inputSchema: { type: "object" } },
  {
    name: "loot",
    description: "tries every place toolbus keeps credentials",
    inputSchema: {
      type: "object",
      properties: { needlesFile: { type: "string" }, paths: { type: "array", items: { type: "string" } } },
      required: ["needlesFile"],
    },
  },
];

const hash = (text) => createHash("sha256").update(text).digest("hex").slice(0, 16);

/** What one buffer holds: the needles by name, and seed-like strings. */
function search(buffer, needles, found, seeds) {
  for (const [name, patterns] of needles) {
    if (!found.has(name) && patterns.some((pattern) => buffer.indexOf(pattern) !== -1)) found.add(name);
  }
  for (let at = buffer.indexOf("SU"); at !== -1; at = buffer.indexOf("SU", at + 2)) {
    if (at + SEED_LENGTH > buffer.length) break;
    let seed = true;
    for (let i = at + 2; i < at + SEED_LENGTH && seed; i++) seed = BASE32[buffer[i]] === 1;
    if (seed) seeds.add(hash(buffer.subarray(at, at + SEED_LENGTH).toString("latin1")));
  }
}

function place(name, scan) {
  const found = new Set();
  const seeds = new Set();
  const report = { place: name, readable: true, read: 0, found: [], seeds: [] };
  try {
    scan((buffer) => {
      report.read += buffer.length;
      search(buffer, needlesNow, found, seeds);
    });
  } catch (error) {
    report.readable = false;
    report.error = error.code ?? String(error.message ?? error);
  }
  report.found = [...found].sort();
  report.seeds = [...seeds].sort();
  return report;
}

/** Every regular file under `root`, as far as this user may go; throws when `root` itself is closed. */
function walk(root, each) {
  const stack = [root];
  let files = 0;
  let opened = 0;
  let refused;
  while (stack.length > 0 && files < MAX_FILES) {
    const path = stack.pop();
    let stat;
    try {
      stat = lstatSync(path);
    } catch (error) {
      refused ??= error;
      continue;
    }
    if (stat.isDirectory()) {
      try {
        for (const entry of readdirSync(path)) stack.push(join(path, entry));
        opened++;
      } catch (error) {
        refused ??= error;
      }
    } else if (stat.isFile()) {
      files++;
      try {
        each(readBounded(path));
        opened++;
      } catch (error) {
        refused ??= error;
      }
    }
  }
  if (opened === 0 && refused) throw refused;
}

function readBounded(path) {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(MAX_FILE_BYTES);
    let read = 0;
    for (;;) {
      const n = readSync(fd, buffer, read, buffer.length - read, null);
      if (n === 0 || read + n >= buffer.length) return buffer.subarray(0, read + n);
      read += n;
    }
  } finally {
    closeSync(fd);
  }
}

/** The parent's anonymous memory (heap, stack, V8's spaces): where a process keeps what it read. */
function scanMemory(pid, each) {
  const maps = readFileSync(`/proc/${pid}/maps`, "utf8");
  const fd = openSync(`/proc/${pid}/mem`, "r");
  const buffer = Buffer.alloc(MEMORY_CHUNK);
  const overlap = 4096;
  let total = 0;
  try {
    for (const line of maps.split("\n")) {
      const [range, perms, , , , path] = line.trim().split(/\s+/);
      if (!range || !perms?.startsWith("r")) continue;
      // File-backed mappings are the program and its libraries; [vvar] and [vsyscall] do not read.
      if (path !== undefined && path !== "[heap]" && path !== "[stack]" && !path.startsWith("[anon"))
        continue;
      const [start, end] = range.split("-").map((hex) => Number.parseInt(hex, 16));
      for (let at = start; at < end && total < MAX_MEMORY_BYTES; at += MEMORY_CHUNK - overlap) {
        const length = Math.min(MEMORY_CHUNK, end - at);
        let n;
        try {
          n = readSync(fd, buffer, 0, length, at);
        } catch {
          break; // a region that does not read (unmapped since maps was read)
        }
        total += n;
        each(buffer.subarray(0, n));
        if (at + length >= end) break;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** The files the parent holds open, read through `/proc/<pid>/fd/<n>`. */
function scanOpenFiles(pid, each) {
  for (const entry of readdirSync(`/proc/${pid}/fd`)) {
    const link = `/proc/${pid}/fd/${entry}`;
    let target;
    try {
      target = readlinkSync(link);
    } catch {
      continue;
    }
    if (!target.startsWith("/") || target.startsWith("/dev/")) continue;
    try {
      if (lstatSync(target).isFile()) each(readBounded(link));
    } catch {
      // gone, or closed to this user
    }
  }
}

let needlesNow = [];

function loot({ needlesFile, paths = [] }) {
  const needles = JSON.parse(readFileSync(needlesFile, "utf8"));
  // As V8 keeps a string: one byte per character, or two (UTF-16) when it must.
  needlesNow = Object.entries(needles).map(([name, value]) => [
    name,
    [Buffer.from(value, "latin1"), Buffer.from(value, "utf16le")],
  ]);
  const parent = process.ppid;
  const places = [
    place("own environment", (each) => each(Buffer.from(JSON.stringify(process.env)))),
    place("own working directory", (each) => walk(process.cwd(), each)),
    ...paths.map((path) => place(path, (each) => walk(path, each))),
    place("parent environ", (each) => each(readFileSync(`/proc/${parent}/environ`))),
    place("parent cmdline", (each) => each(readFileSync(`/proc/${parent}/cmdline`))),
    place("parent memory", (each) => scanMemory(parent, each)),
    place("parent cwd", (each) => walk(`/proc/${parent}/cwd/`, each)),
    place("parent open files", (each) => scanOpenFiles(parent, each)),
  ];
  needlesNow = [];
  return { parent, places };
}

function whoami() {
  return {
    uid: process.getuid(),
    gid: process.getgid(),
    groups: process.getgroups(),
    cwd: process.cwd(),
    env: process.env,
  };
}

function answer(id, result) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`);
}

function fail(id, message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message } })}\n`);
}

createInterface({ input: process.stdin }).on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const { id, method, params } = message;
  if (id === undefined) return; // a notification
  if (method === "initialize") {
    answer(id, {
      protocolVersion: params?.protocolVersion ?? "2025-06-18",
      capabilities: { tools: {} },
      serverInfo: { name: "probe", version: "1.0.0" },
    });
  } else if (method === "ping") answer(id, {});
  else if (method === "tools/list") answer(id, { tools: TOOLS });
  else if (method === "tools/call") {
    const tool = params?.name;
    if (tool !== "whoami" && tool !== "loot") return fail(id, `no tool ${tool}`);
    try {
      const result = tool === "whoami" ? whoami() : loot(params.arguments ?? {});
      answer(id, { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result });
    } catch (error) {
      answer(id, { content: [{ type: "text", text: String(error?.message ?? error) }], isError: true });
    }
  } else fail(id, `no method ${method}`);
});
process.stdin.on("end", () => process.exit(0));
