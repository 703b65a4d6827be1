/**
 * Turns a stdio server's plan (core/stdio-launch.ts) into what is spawned: the `run_as` user
 * looked up, the server's own directory created and given to that user, its environment read.
 * Every failure is one message naming the server's setting and what to do; the server then
 * fails to start and the others go on.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, lchownSync, lstatSync, mkdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensurePrivateDir } from "@toolbus/bus";
import { type Env, type StdioServerConfig, stdioChildEnv } from "@toolbus/config";
import type { ServerRoots, StdioPlan, WorkDir } from "../../core/stdio-launch.js";
import type { StdioLaunch } from "../mcp/bounded-transports.js";

export type LaunchPreparation = { ok: true; launch: StdioLaunch } | { ok: false; message: string };

interface User {
  uid: number;
  gid: number;
  /** For USER and LOGNAME; absent for a numeric `run_as`. */
  name?: string;
}

/**
 * `<stateDir>/servers`, and `<tmp>/toolbus-servers-<hash of stateDir>`: one per project and
 * toolbus user, as the state directory is.
 */
export function serverRoots(stateDir: string): ServerRoots {
  const hash = createHash("sha256").update(stateDir).digest("hex").slice(0, 16);
  return { private: join(stateDir, "servers"), shared: join(tmpdir(), `toolbus-servers-${hash}`) };
}

/** How long `id` may take to look a user up (NSS may ask a directory service). */
const LOOKUP_TIMEOUT_MS = 10_000;

export function prepareStdioLaunch(
  server: Pick<StdioServerConfig, "env" | "envVars">,
  plan: StdioPlan,
  parentEnv: Env,
): LaunchPreparation {
  try {
    const user = plan.runAs === undefined ? undefined : lookUpUser(plan.runAs);
    const cwd = prepareWorkDir(plan.workDir, user);
    const env = stdioChildEnv(server, parentEnv, {
      ...(user ? { identity: { home: cwd, ...(user.name ? { user: user.name } : {}) } } : {}),
    });
    if (!env.ok) return env;
    return {
      ok: true,
      launch: {
        command: plan.command,
        args: plan.args,
        env: env.env,
        cwd,
        ...(user && plan.runAs !== undefined
          ? { user: { uid: user.uid, gid: user.gid, runAs: plan.runAs } }
          : {}),
      },
    };
  } catch (error) {
    // Shown after "MCP client for `<name>` failed to start:", which names the server.
    return { ok: false, message: (error as Error).message };
  }
}

/** `uid:gid` as given; a name through `id`, so users from NSS (LDAP, systemd) count too. */
function lookUpUser(runAs: string): User {
  const numeric = /^(\d+):(\d+)$/.exec(runAs);
  if (numeric) return { uid: Number(numeric[1]), gid: Number(numeric[2]) };
  const id = (flag: string) =>
    Number(
      execFileSync("id", [flag, runAs], {
        encoding: "utf8",
        timeout: LOOKUP_TIMEOUT_MS,
        stdio: ["ignore", "pipe", "pipe"],
      }).trim(),
    );
  try {
    return { uid: id("-u"), gid: id("-g"), name: runAs };
  } catch (error) {
    const said = String((error as { stderr?: unknown }).stderr ?? "").trim() || (error as Error).message;
    throw new Error(
      `run_as = "${runAs}": no such user on this machine (id: ${said}); create the user, or give an existing one or "<uid>:<gid>"`,
    );
  }
}

function prepareWorkDir(workDir: WorkDir, user: User | undefined): string {
  if (workDir.kind === "configured") {
    let isDirectory = false;
    try {
      isDirectory = statSync(workDir.path).isDirectory();
    } catch {
      // reported below
    }
    if (!isDirectory) throw new Error(`cwd = "${workDir.path}" is not a directory; create it, or fix cwd`);
    return workDir.path;
  }
  try {
    return prepareOwnDir(workDir, user);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined) throw error;
    // A read-only or foreign place (a container's root filesystem, a home toolbus may not write).
    throw new Error(
      `cannot make ${workDir.path}, the server's own working directory (${code}): set [catalog] servers_dir (or XDG_STATE_HOME) to a directory toolbus may write, or give the server a cwd`,
    );
  }
}

function prepareOwnDir(workDir: Extract<WorkDir, { kind: "own" }>, user: User | undefined): string {
  const { path, root, managedRoot } = workDir;
  if (user === undefined) {
    // Toolbus's own user: the root and the server's directory are private to it.
    if (managedRoot) ensurePrivateDir(root);
    else ownedRoot(root);
    ensurePrivateDir(path);
    return path;
  }
  // Another user must pass through the root (0711: pass, not list) to reach its directory.
  ownedRoot(root, managedRoot ? 0o711 : undefined);
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stat = lstatSync(path);
  if (!stat.isDirectory())
    throw new Error(`${path} should be the server's directory, but it is not a directory: remove it`);
  if (stat.uid !== process.getuid?.() && stat.uid !== user.uid) {
    throw new Error(`${path} belongs to uid ${stat.uid}, neither toolbus's user nor the server's: remove it`);
  }
  try {
    // The root is toolbus's and writable by no one else: this entry cannot have been swapped for a link.
    lchownSync(path, user.uid, user.gid);
    chmodSync(path, 0o700);
  } catch (error) {
    throw new Error(
      `cannot give ${path} to uid ${user.uid} (${(error as NodeJS.ErrnoException).code}): run toolbus as root (or with CAP_CHOWN), or set cwd to a directory that user owns`,
      { cause: error },
    );
  }
  return path;
}

/**
 * A root of server directories: created when missing, then it must be toolbus's own and
 * writable by no one else, or another user could swap a server's directory for a link.
 */
function ownedRoot(root: string, mode?: number): void {
  mkdirSync(root, { recursive: true, mode: mode ?? 0o711 });
  const stat = lstatSync(root);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) {
    throw new Error(
      `${root}, where stdio servers get their directories, must be a directory of toolbus's user (uid ${uid}): remove it, or set [catalog] servers_dir`,
    );
  }
  if (mode !== undefined) chmodSync(root, mode);
  else if ((stat.mode & 0o022) !== 0) {
    throw new Error(
      `${root} ([catalog] servers_dir) is writable by other users, who could swap a server's directory for a link: chmod go-w it`,
    );
  }
}
