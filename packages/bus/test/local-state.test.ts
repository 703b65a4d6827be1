// A project's private state directory: where it is, and that it stays private.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ensurePrivateDir, projectStateDir, writePrivateFile } from "../src/local-state.js";

const dir = mkdtempSync(join(tmpdir(), "toolbus-local-state-"));

describe("projectStateDir", () => {
  const project = join(dir, "my project");
  mkdirSync(project);

  it("is under $XDG_STATE_HOME/toolbus, named by the folder and a hash of its path", () => {
    expect(projectStateDir(project, { XDG_STATE_HOME: "/state" })).toMatch(
      /^\/state\/toolbus\/my_project-[0-9a-f]{16}$/,
    );
  });

  it("falls back to ~/.local/state, as XDG says, also for a relative XDG_STATE_HOME", () => {
    const expected = projectStateDir(project, { XDG_STATE_HOME: "/home/dev/.local/state" });
    expect(projectStateDir(project, { HOME: "/home/dev" })).toBe(expected);
    expect(projectStateDir(project, { HOME: "/home/dev", XDG_STATE_HOME: "state" })).toBe(expected);
  });

  it("is the same for the project reached through a link, and another for another project", () => {
    const link = join(dir, "link");
    symlinkSync(project, link);
    const other = join(dir, "other");
    mkdirSync(other);
    const env = { XDG_STATE_HOME: "/state" };
    expect(projectStateDir(link, env)).toBe(projectStateDir(project, env));
    expect(projectStateDir(other, env)).not.toBe(projectStateDir(project, env));
  });
});

describe("ensurePrivateDir", () => {
  it("creates the directory and its parents, 0700", () => {
    const path = join(dir, "a", "b");
    ensurePrivateDir(path);
    expect(statSync(path).mode & 0o777).toBe(0o700);
  });

  it("closes an existing directory others could read", () => {
    const path = join(dir, "open");
    mkdirSync(path);
    chmodSync(path, 0o755);
    ensurePrivateDir(path);
    expect(statSync(path).mode & 0o777).toBe(0o700);
  });

  it("refuses a file, or a link, where the directory should be", () => {
    writeFileSync(join(dir, "file"), "");
    expect(() => ensurePrivateDir(join(dir, "file"))).toThrow(/is not a directory: remove it/);
    symlinkSync(join(dir, "open"), join(dir, "to-open"));
    expect(() => ensurePrivateDir(join(dir, "to-open"))).toThrow(/is not a directory: remove it/);
  });

  it("refuses a directory another user owns", () => {
    // Only root can give a directory away; elsewhere the case cannot arise by toolbus's hand.
    if (process.getuid?.() !== 0) throw new Error("run as root: the test gives a directory to nobody");
    const path = join(dir, "theirs");
    mkdirSync(path, { mode: 0o700 });
    chownSync(path, 65534, 65534);
    expect(() => ensurePrivateDir(path)).toThrow(
      `${path} should be a private directory of toolbus's, but it belongs to uid 65534, not toolbus's user (uid 0): remove it, or set XDG_STATE_HOME to a directory of your own`,
    );
  });
});

describe("writePrivateFile", () => {
  it("writes 0600, also over a file that was wider", () => {
    const file = join(dir, "seed");
    writeFileSync(file, "old", { mode: 0o644 });
    writePrivateFile(file, "new\n");
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
