import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { secretFromEnv } from "../src/secret-env.js";
import { MAX_SECRET_FILE_BYTES } from "../src/secret-file.js";

const dir = mkdtempSync(join(tmpdir(), "toolbus-secret-env-"));
function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

describe("a secret from NAME or NAME_FILE", () => {
  it("is unset when neither is set", () => {
    expect(secretFromEnv({}, "DATABASE_URL")).toEqual({ state: "unset" });
  });

  it("comes from the variable when only it is set", () => {
    expect(secretFromEnv({ DATABASE_URL: "postgres://h/db" }, "DATABASE_URL")).toEqual({
      state: "set",
      value: "postgres://h/db",
      variable: "DATABASE_URL",
      source: "DATABASE_URL",
    });
  });

  it("comes from the file, its trailing line breaks (LF or CRLF) dropped and nothing else", () => {
    const path = file("url", "postgres://u: p@h/db \r\n\n");
    expect(secretFromEnv({ DATABASE_URL_FILE: path }, "DATABASE_URL")).toEqual({
      state: "set",
      value: "postgres://u: p@h/db ",
      variable: "DATABASE_URL_FILE",
      source: `DATABASE_URL_FILE=${path}`,
    });
  });

  it("takes the file when the variable is set but empty (a placeholder)", () => {
    const path = file("pw", "pw\n");
    expect(secretFromEnv({ NATS_PASSWORD: "", NATS_PASSWORD_FILE: path }, "NATS_PASSWORD")).toMatchObject({
      state: "set",
      value: "pw",
    });
  });

  it("refuses both set, rather than guess", () => {
    expect(
      secretFromEnv({ NATS_PASSWORD: "a", NATS_PASSWORD_FILE: file("b", "b") }, "NATS_PASSWORD"),
    ).toEqual({
      state: "invalid",
      message:
        "NATS_PASSWORD and NATS_PASSWORD_FILE are both set; keep one (NATS_PASSWORD_FILE, the file, keeps the secret out of the environment)",
    });
  });

  it.each([
    ["a missing file", () => join(dir, "nope"), "cannot read it (no such file)"],
    [
      "a directory",
      () => {
        mkdirSync(join(dir, "folder"), { recursive: true });
        return join(dir, "folder");
      },
      "is not a regular file",
    ],
    [
      "a FIFO (which would block a plain read forever)",
      () => {
        execFileSync("mkfifo", [join(dir, "fifo")]);
        return join(dir, "fifo");
      },
      "is not a regular file",
    ],
    [
      "a file larger than a secret",
      () => file("huge", Buffer.alloc(MAX_SECRET_FILE_BYTES + 1, 0x61)),
      `holds ${MAX_SECRET_FILE_BYTES + 1} bytes, more than a secret (at most ${MAX_SECRET_FILE_BYTES})`,
    ],
  ])("refuses %s, naming the variable and the path", (_, path, reason) => {
    const at = path();
    expect(secretFromEnv({ DATABASE_URL_FILE: at }, "DATABASE_URL")).toEqual({
      state: "invalid",
      message: `DATABASE_URL_FILE=${at}: ${reason}; point it at a file holding DATABASE_URL's value`,
    });
  });
});
