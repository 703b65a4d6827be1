/** Reading one secret file (`NAME_FILE`): bounded, and only a regular file, so a wrong path cannot hang or exhaust toolbus. */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** A secret is one value (a token list at most): a file larger than this is the wrong file. */
export const MAX_SECRET_FILE_BYTES = 1024 * 1024;

export type SecretFileRead = { ok: true; text: string } | { ok: false; reason: string };

export function readSecretFile(path: string): SecretFileRead {
  let fd: number;
  try {
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { ok: false, reason: `cannot read it (${describeError(error)})` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, reason: "is not a regular file" };
    if (stat.size > MAX_SECRET_FILE_BYTES) {
      return {
        ok: false,
        reason: `holds ${stat.size} bytes, more than a secret (at most ${MAX_SECRET_FILE_BYTES})`,
      };
    }
    const buffer = Buffer.alloc(stat.size);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return { ok: true, text: buffer.subarray(0, read).toString("utf8") };
  } catch (error) {
    return { ok: false, reason: `cannot read it (${describeError(error)})` };
  } finally {
    closeSync(fd);
  }
}

function describeError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "no such file";
  if (code === "EACCES") return "permission denied";
  if (code === "EISDIR") return "it is a directory";
  return code ?? String(error);
}
