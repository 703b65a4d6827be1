import { describe, expect, it } from "vitest";
import { stdioPlan } from "../../src/core/stdio-launch.js";

const roots = { private: "/home/dev/.local/state/toolbus/p-1/servers", shared: "/tmp/toolbus-servers-1" };
const server = { name: "files", command: "node", args: ["server.js", "--root", "/srv"] };

describe("stdioPlan", () => {
  it("gives a server without cwd a directory of its own in the private root, run as toolbus's user", () => {
    expect(stdioPlan(server, {}, roots)).toEqual({
      command: "node",
      args: ["server.js", "--root", "/srv"],
      workDir: { kind: "own", path: `${roots.private}/files`, root: roots.private, managedRoot: true },
    });
  });

  it("puts a server run as another user under the shared root, which that user can reach", () => {
    expect(stdioPlan({ ...server, runAs: "nobody" }, {}, roots)).toMatchObject({
      runAs: "nobody",
      workDir: { kind: "own", path: `${roots.shared}/files`, root: roots.shared, managedRoot: true },
    });
  });

  it("uses [catalog] servers_dir for either, as given (not managed)", () => {
    const defaults = { serversDir: "/var/lib/toolbus/servers/" };
    for (const runAs of [undefined, "nobody"]) {
      expect(stdioPlan({ ...server, ...(runAs ? { runAs } : {}) }, defaults, roots).workDir).toEqual({
        kind: "own",
        path: "/var/lib/toolbus/servers/files",
        root: "/var/lib/toolbus/servers/",
        managedRoot: false,
      });
    }
  });

  it("keeps a configured cwd as it is", () => {
    expect(stdioPlan({ ...server, cwd: "/srv" }, { serversDir: "/x" }, roots).workDir).toEqual({
      kind: "configured",
      path: "/srv",
    });
  });

  it("takes [catalog] run_as and sandbox as defaults, the server's own winning, [] turning the sandbox off", () => {
    const defaults = { runAs: "nobody", sandbox: ["wrap", "--"] };
    expect(stdioPlan(server, defaults, roots)).toMatchObject({ runAs: "nobody", command: "wrap" });
    expect(stdioPlan({ ...server, runAs: "0:0", sandbox: [] }, defaults, roots)).toMatchObject({
      runAs: "0:0",
      command: "node",
      args: server.args,
    });
  });

  it("starts the server through the sandbox, {cwd} in the wrapper's arguments standing for its directory", () => {
    const sandbox = ["bwrap", "--bind", "{cwd}", "{cwd}", "--chdir", "{cwd}", "--"];
    expect(stdioPlan({ ...server, cwd: "/srv/{cwd}", sandbox }, {}, roots)).toEqual({
      command: "bwrap",
      // The server's own arguments are its own: only the wrapper's are filled in.
      args: ["--bind", "/srv/{cwd}", "/srv/{cwd}", "--chdir", "/srv/{cwd}", "--", "node", ...server.args],
      workDir: { kind: "configured", path: "/srv/{cwd}" },
    });
    const own = stdioPlan({ ...server, args: ["{cwd}"], sandbox }, {}, roots);
    expect(own.args).toEqual([
      "--bind",
      `${roots.private}/files`,
      `${roots.private}/files`,
      "--chdir",
      `${roots.private}/files`,
      "--",
      "node",
      "{cwd}",
    ]);
  });
});
