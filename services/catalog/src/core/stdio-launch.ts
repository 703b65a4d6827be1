/**
 * Where, as whom and through what a stdio MCP server is started: the rule that keeps a server
 * away from toolbus's checkout and secrets. A server without `cwd` works in a directory of its
 * own, `<servers root>/<name>`, never toolbus's working directory (a checkout full of secrets
 * and state). The root is `[catalog] servers_dir` when set; else `<state dir>/servers`, private
 * to toolbus's user, for a server run as that user; else, for one run as another user
 * (`run_as`), a directory under the system's temporary directory that user can reach, since the
 * state directory usually sits in a home it cannot enter. `sandbox` (the server's, else
 * `[catalog]`'s; `[]` = none) is a command prefix the server is started through, `{cwd}` in it
 * standing for the server's working directory.
 */
import type { CatalogConfig, StdioServerConfig } from "@toolbus/config";

/** In a wrapper's arguments, the server's working directory (e.g. `--bind {cwd} {cwd}` for bwrap). */
export const SANDBOX_CWD = "{cwd}";

export type WorkDir =
  /** `cwd` from the config: used as it is. */
  | { kind: "configured"; path: string }
  /**
   * The server's own, which toolbus creates in `root`. `managedRoot`: toolbus chose the root
   * and sets its mode (0700 for toolbus's user alone, 0711 when another user must pass through).
   */
  | { kind: "own"; path: string; root: string; managedRoot: boolean };

export interface StdioPlan {
  command: string;
  args: string[];
  workDir: WorkDir;
  /** `run_as`, as configured. */
  runAs?: string;
}

/** The default roots of servers' own directories (adapters/stdio/prepare-launch.ts `serverRoots`). */
export interface ServerRoots {
  /** `<state dir>/servers`: for servers run as toolbus's user. */
  private: string;
  /** Under the system's temporary directory, one per project: for servers run as another user. */
  shared: string;
}

export function stdioPlan(
  server: Pick<StdioServerConfig, "name" | "command" | "args" | "cwd" | "runAs" | "sandbox">,
  defaults: Pick<CatalogConfig, "serversDir" | "runAs" | "sandbox">,
  roots: ServerRoots,
): StdioPlan {
  const runAs = server.runAs ?? defaults.runAs;
  const workDir = server.cwd !== undefined ? { kind: "configured" as const, path: server.cwd } : ownDir();
  const [wrapper, ...wrapperArgs] = server.sandbox ?? defaults.sandbox ?? [];
  return {
    ...(wrapper === undefined
      ? { command: server.command, args: [...server.args] }
      : {
          command: wrapper,
          args: [
            ...wrapperArgs.map((arg) => arg.replaceAll(SANDBOX_CWD, workDir.path)),
            server.command,
            ...server.args,
          ],
        }),
    workDir,
    ...(runAs === undefined ? {} : { runAs }),
  };

  function ownDir(): WorkDir {
    const root = defaults.serversDir ?? (runAs === undefined ? roots.private : roots.shared);
    // Server names match SERVER_NAME_PATTERN (checked before any server starts): one plain path segment.
    const path = `${root.replace(/\/+$/, "")}/${server.name}`;
    return { kind: "own", path, root, managedRoot: defaults.serversDir === undefined };
  }
}
