/**
 * A small reading of deploy/k8s's kustomizations for the tests: resources gathered through bases,
 * replicas applied, generators merged or replaced by overlays. It reports every reference to a
 * missing file rather than failing on the first, and it reads only files.
 */
import { basename, dirname, join, normalize } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { existsInRepo, isDirectoryInRepo, readRepoFile } from "./repo.js";

export interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
export interface Volume {
  name: string;
  configMap?: { name: string };
  secret?: { secretName: string; defaultMode?: number };
  /** Several sources in one folder: the connector seeds of a catalog group. */
  projected?: {
    defaultMode?: number;
    sources: { secret?: { name: string; items?: { key: string; path: string }[] } }[];
  };
  emptyDir?: object;
}
export interface Probe {
  httpGet?: { path: string; port: number | string };
  exec?: { command: string[] };
  tcpSocket?: { port: number | string };
}
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: {
    replicas?: number;
    /** A Job's retries, and how long it is kept once finished. */
    backoffLimit?: number;
    ttlSecondsAfterFinished?: number;
    selector?: { matchLabels?: Record<string, string> } & Record<string, unknown>;
    ports?: { name?: string; port: number; targetPort?: number | string }[];
    template?: {
      metadata?: { labels?: Record<string, string> };
      spec: {
        restartPolicy?: string;
        securityContext?: {
          runAsNonRoot?: boolean;
          runAsUser?: number;
          runAsGroup?: number;
          fsGroup?: number;
        };
        containers: Container[];
        volumes?: Volume[];
      };
    };
  };
}

interface Generator {
  name: string;
  behavior?: "create" | "merge" | "replace";
  files?: string[];
  literals?: string[];
  envs?: string[];
}
interface Kustomization {
  namespace?: string;
  resources?: string[];
  patches?: { path?: string; target?: { kind?: string; name?: string } }[];
  replicas?: { name: string; count: number }[];
  images?: { name: string; newName?: string; newTag?: string }[];
  configMapGenerator?: Generator[];
  secretGenerator?: Generator[];
}

export interface GeneratedData {
  /** Literal and env-file keys → values; files → their repository path. */
  values: Map<string, string>;
  files: Map<string, string>;
}

/** True when the .gitignore beside a kustomization lists `relative` or its top folder (`nats-auth/`). */
function ignoredByGit(dir: string, relative: string): boolean {
  const ignore = join(dir, ".gitignore");
  if (!existsInRepo(ignore)) return false;
  const lines = readRepoFile(ignore).split("\n");
  const top = relative.split("/")[0];
  return lines.includes(relative) || (relative.includes("/") && lines.includes(`${top}/`));
}

export interface Build {
  dir: string;
  kustomization: Kustomization;
  objects: K8sObject[];
  configMaps: Map<string, GeneratedData>;
  secrets: Map<string, GeneratedData>;
  /** Files the kustomizations name that do not exist, and generator or patch targets that are missing. */
  problems: string[];
}

const KUSTOMIZATION = "kustomization.yaml";

/**
 * An env file of a generator. A secrets file that is kept out of git is read from the `<file>.example`
 * committed beside it, when that exists and the folder's .gitignore lists the file.
 */
function readEnvFile(path: string): { text: string } | { problem: string } {
  if (existsInRepo(path)) return { text: readRepoFile(path) };
  const ignore = join(dirname(path), ".gitignore");
  const ignored = existsInRepo(ignore) && readRepoFile(ignore).split("\n").includes(basename(path));
  if (ignored && existsInRepo(`${path}.example`)) return { text: readRepoFile(`${path}.example`) };
  return { problem: `${path} does not exist (nor a git-ignored file with a .example beside it)` };
}

function parseEnv(text: string): [string, string][] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const at = line.indexOf("=");
      return [line.slice(0, at), line.slice(at + 1)];
    });
}

function generate(dir: string, generator: Generator, problems: string[]): GeneratedData {
  const values = new Map<string, string>();
  const files = new Map<string, string>();
  for (const literal of generator.literals ?? []) {
    const at = literal.indexOf("=");
    values.set(literal.slice(0, at), literal.slice(at + 1));
  }
  for (const env of generator.envs ?? []) {
    const read = readEnvFile(join(dir, env));
    if ("problem" in read) problems.push(read.problem);
    else for (const [key, value] of parseEnv(read.text)) values.set(key, value);
  }
  for (const file of generator.files ?? []) {
    const [key, path] = file.includes("=") ? file.split("=", 2) : [basename(file), file];
    const full = join(dir, path!);
    // A file the operator writes before building (the NATS seeds) is kept out of git, like secrets.env.
    if (!existsInRepo(full) && !ignoredByGit(dir, path!)) {
      problems.push(`${full} does not exist (nor is it a git-ignored file the operator writes)`);
    }
    files.set(key!, full);
  }
  return { values, files };
}

function applyGenerators(
  dir: string,
  generators: readonly Generator[],
  into: Map<string, GeneratedData>,
  problems: string[],
): void {
  for (const generator of generators) {
    const data = generate(dir, generator, problems);
    const existing = into.get(generator.name);
    const behavior = generator.behavior ?? "create";
    if (behavior === "create") {
      if (existing !== undefined) problems.push(`${dir}: ${generator.name} is generated twice`);
      into.set(generator.name, data);
    } else if (existing === undefined) {
      problems.push(`${dir}: ${generator.name} has behavior ${behavior} but no base generates it`);
    } else if (behavior === "replace") {
      into.set(generator.name, data);
    } else {
      into.set(generator.name, {
        values: new Map([...existing.values, ...data.values]),
        files: new Map([...existing.files, ...data.files]),
      });
    }
  }
}

/** Reads `dir` (relative to the repository) and its bases. */
export function build(dir: string): Build {
  const path = join(dir, KUSTOMIZATION);
  const kustomization = parse(readRepoFile(path)) as Kustomization;
  const result: Build = {
    dir,
    kustomization,
    objects: [],
    configMaps: new Map(),
    secrets: new Map(),
    problems: [],
  };
  for (const resource of kustomization.resources ?? []) {
    const full = normalize(join(dir, resource));
    if (isDirectoryInRepo(full) && existsInRepo(join(full, KUSTOMIZATION))) {
      const base = build(full);
      result.objects.push(...base.objects);
      for (const [name, data] of base.configMaps) result.configMaps.set(name, data);
      for (const [name, data] of base.secrets) result.secrets.set(name, data);
      result.problems.push(...base.problems);
    } else if (existsInRepo(full) && !isDirectoryInRepo(full)) {
      const documents = parseAllDocuments(readRepoFile(full)).map((d) => d.toJS() as K8sObject | null);
      result.objects.push(...documents.filter((d): d is K8sObject => d !== null));
    } else {
      result.problems.push(`${path} lists ${resource}, which is neither a file nor a kustomization`);
    }
  }
  applyGenerators(dir, kustomization.configMapGenerator ?? [], result.configMaps, result.problems);
  applyGenerators(dir, kustomization.secretGenerator ?? [], result.secrets, result.problems);
  for (const patch of kustomization.patches ?? []) {
    if (patch.path === undefined) continue;
    const full = join(dir, patch.path);
    if (!existsInRepo(full)) {
      result.problems.push(`${path} patches with ${patch.path}, which does not exist`);
      continue;
    }
    const target = parse(readRepoFile(full)) as K8sObject;
    if (!result.objects.some((o) => o.kind === target.kind && o.metadata.name === target.metadata.name)) {
      result.problems.push(
        `${full} patches ${target.kind}/${target.metadata.name}, which no resource defines`,
      );
    }
  }
  for (const { name, count } of kustomization.replicas ?? []) {
    const deployment = result.objects.find((o) => o.kind === "Deployment" && o.metadata.name === name);
    if (deployment?.spec === undefined) result.problems.push(`${path} sets replicas of unknown ${name}`);
    else deployment.spec.replicas = count;
  }
  return result;
}

export function deployments(built: Build): K8sObject[] {
  return built.objects.filter((o) => o.kind === "Deployment");
}

export function jobs(built: Build): K8sObject[] {
  return built.objects.filter((o) => o.kind === "Job");
}

/** Everything that runs pods of the image: the Deployments and the provision Job. */
export function workloads(built: Build): K8sObject[] {
  return [...deployments(built), ...jobs(built)];
}

export function containerOf(deployment: K8sObject): Container {
  const container = deployment.spec?.template?.spec.containers[0];
  if (container === undefined) throw new Error(`${deployment.metadata.name} has no container`);
  return container;
}
