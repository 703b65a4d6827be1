/**
 * The process's terminal as the commands see it: stdout and stderr (whether each is a TTY and
 * how wide), stdin as lines, and the environment. Tests of the commands run the real process.
 */
import { createInterface } from "node:readline";

export interface OutputStream {
  write(text: string): void;
  readonly isTTY: boolean;
  readonly columns: number | undefined;
}

export interface Terminal {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Calls `onLine` for each line typed or piped in, then `onEnd` once stdin closes. */
  readLines(onLine: (line: string) => void, onEnd: () => void): { close(): void };
  /** Resolves once everything written so far has been handed to the OS. */
  flush(): Promise<void>;
}

function outputStream(stream: NodeJS.WriteStream): OutputStream {
  return {
    write: (text) => {
      stream.write(text);
    },
    get isTTY() {
      return stream.isTTY === true;
    },
    get columns() {
      return stream.isTTY ? stream.columns : undefined;
    },
  };
}

export function processTerminal(): Terminal {
  return {
    stdout: outputStream(process.stdout),
    stderr: outputStream(process.stderr),
    env: process.env,
    readLines(onLine, onEnd) {
      const lines = createInterface({ input: process.stdin, terminal: false });
      lines.on("line", onLine);
      lines.on("close", onEnd);
      return { close: () => lines.close() };
    },
    flush: () =>
      Promise.all(
        [process.stdout, process.stderr].map(
          (stream) => new Promise<void>((resolve) => stream.write("", () => resolve())),
        ),
      ).then(() => undefined),
  };
}
