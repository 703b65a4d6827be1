/**
 * A project's private state directory: what toolbus keeps for one project that must stay out of
 * the checkout, which is copied, committed, mounted into containers, and read by the tools
 * working in it. `pnpm start` keeps the CLI's NATS seed and its nats-server's config there, the
 * embedded Postgres listens on a socket there, and stdio MCP servers get their own working
 * directories under it. `$XDG_STATE_HOME/toolbus/<folder>-<hash>` (default `~/.local/state`),
 * 0700: one per project path, so the CLI run in the same folder finds it.
 */
import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, isAbsolute, join, resolve } from "node:path";

export function projectStateDir(project: string, env: Readonly<Record<string, string | undefined>>): string {
  // The XDG spec: a relative XDG_STATE_HOME is invalid and ignored.
  const xdg = env.XDG_STATE_HOME;
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), ".local", "state");
  let path = resolve(project);
  try {
    path = realpathSync(path);
  } catch {
    // A project folder that does not exist yet is named by its path as given.
  }
  const hash = createHash("sha256").update(path).digest("hex").slice(0, 16);
  // The folder's name is for a person browsing the directory; the hash is what tells projects apart.
  const folder =
    basename(path)
      .replace(/[^A-Za-z0-9._-]/g, "_")
      .slice(0, 32) || "root";
  return join(base, "toolbus", `${folder}-${hash}`);
}

/**
 * Creates `dir` (and its parents) 0700, or checks an existing one: a directory, not a link,
 * owned by this process's user, and then made 0700. Throws an Error saying what to do otherwise.
 */
export function ensurePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    // Something else is there: said below.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) {
    throw new Error(
      `${dir} should be a private directory of toolbus's, but it is not a directory: remove it`,
    );
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new Error(
      `${dir} should be a private directory of toolbus's, but it belongs to uid ${stat.uid}, not toolbus's user (uid ${uid}): remove it, or set XDG_STATE_HOME to a directory of your own`,
    );
  }
  if ((stat.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** Written 0600 beside, then renamed: a reader never sees half a file, nor a moment of wider access. */
export function writePrivateFile(file: string, text: string): void {
  const temporary = `${file}.tmp-${process.pid}`;
  writeFileSync(temporary, text, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}
