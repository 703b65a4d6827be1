/**
 * A secret toolbus reads from its environment, given either as the variable itself (`NAME`) or
 * as the path of a file holding it (`NAME_FILE`), the convention of Docker and Kubernetes
 * secrets. Prefer the file: a process's environment is readable by every process of the same
 * user (`/proc/<pid>/environ`), and a stdio MCP server runs as that user unless `run_as` says
 * otherwise; a path in the environment gives nothing away.
 */
import type { Env } from "./http-headers.js";
import { readSecretFile, type SecretFileRead } from "./secret-file.js";

export type SecretValue =
  | { state: "unset" }
  /**
   * `variable` is the one that held it (`NAME` or `NAME_FILE`); `source` says where it came from
   * for messages (`NAME`, or `NAME_FILE=<path>`), never the value.
   */
  | { state: "set"; value: string; variable: string; source: string }
  | { state: "invalid"; message: string };

export type SecretFileReader = (path: string) => SecretFileRead;

/** The variable holding the path of the file that holds `name`'s value. */
export function fileVariableOf(name: string): string {
  return `${name}_FILE`;
}

/**
 * `NAME` when set, else the content of the file `NAME_FILE` names (trailing line breaks
 * dropped). Both set is a mistake, reported rather than guessed; an empty `NAME` counts as
 * unset there, so a placeholder `NAME=` beside `NAME_FILE` works.
 */
export function secretFromEnv(env: Env, name: string, read: SecretFileReader = readSecretFile): SecretValue {
  const fileVariable = fileVariableOf(name);
  const path = env[fileVariable];
  const value = env[name];
  if (path === undefined || path === "") {
    return value === undefined ? { state: "unset" } : { state: "set", value, variable: name, source: name };
  }
  if (value !== undefined && value !== "") {
    return {
      state: "invalid",
      message: `${name} and ${fileVariable} are both set; keep one (${fileVariable}, the file, keeps the secret out of the environment)`,
    };
  }
  const file = read(path);
  if (!file.ok) {
    return {
      state: "invalid",
      message: `${fileVariable}=${path}: ${file.reason}; point it at a file holding ${name}'s value`,
    };
  }
  return {
    state: "set",
    value: file.text.replace(/[\r\n]+$/, ""),
    variable: fileVariable,
    source: `${fileVariable}=${path}`,
  };
}
