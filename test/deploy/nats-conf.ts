/**
 * A small reading of the committed nats-server configs (deploy/nats/*.conf) for the tests: the few
 * settings they check, found line by line with comments dropped. nats-server itself checks that
 * the files parse (nats.test.ts runs it).
 */
import { readRepoFile } from "./repo.js";

export interface NatsConf {
  /** `include` directives, in order. */
  includes: string[];
  /** `jetstream { store_dir }`. */
  storeDir: string | undefined;
  /** The port of `http:` (monitoring). */
  monitorPort: number | undefined;
  /** The port of `cluster { listen }`. */
  clusterPort: number | undefined;
  /** `cluster { authorization { password } }`, as written (a `$VARIABLE` stays one). */
  routePassword: string | undefined;
}

const portOf = (value: string | undefined) =>
  value === undefined ? undefined : Number(value.split(":").at(-1));

export function natsConf(path: string): NatsConf {
  const lines = readRepoFile(path)
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter((line) => line !== "");
  const blocks: string[] = [];
  const conf: NatsConf = {
    includes: [],
    storeDir: undefined,
    monitorPort: undefined,
    clusterPort: undefined,
    routePassword: undefined,
  };
  for (const line of lines) {
    const open = /^(\w+)\s*:?\s*\{$/.exec(line);
    if (open !== null) {
      blocks.push(open[1]!);
      continue;
    }
    if (line === "}") {
      blocks.pop();
      continue;
    }
    const include = /^include\s+(\S+?);?$/.exec(line);
    if (include !== null) {
      conf.includes.push(include[1]!.replace(/^["']|["']$/g, ""));
      continue;
    }
    const setting = /^(\w+)\s*[:=]\s*(.+?);?$/.exec(line);
    if (setting === null) continue;
    const [, key, raw] = setting;
    const value = raw!.replace(/^["']|["']$/g, "");
    const where = [...blocks, key].join(".");
    if (where === "jetstream.store_dir") conf.storeDir = value;
    if (where === "http") conf.monitorPort = portOf(value);
    if (where === "cluster.listen") conf.clusterPort = portOf(value);
    if (where === "cluster.authorization.password") conf.routePassword = value;
  }
  return conf;
}
