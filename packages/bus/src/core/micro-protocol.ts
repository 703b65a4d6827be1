/**
 * The NATS micro-service protocol (ADR-32) as data: valid names, the `$SRV` control subjects,
 * per-endpoint stats, and the PING / INFO / STATS response bodies. No I/O here.
 */

export const SERVICE_API_PREFIX = "$SRV";
export const VERBS = ["PING", "INFO", "STATS"] as const;
export type Verb = (typeof VERBS)[number];

const NAME = /^[A-Za-z0-9_-]+$/;
// Semver 2.0.0, as ADR-32 requires of a service version.
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

/** A problem with a service's or endpoint's identity, or undefined when it is valid. */
export function identityProblem(
  kind: "service" | "endpoint",
  name: string,
  version?: string,
): string | undefined {
  if (!NAME.test(name)) {
    return `${kind} name "${name}" is not valid: use letters, digits, "-" and "_" only`;
  }
  if (version !== undefined && !SEMVER.test(version)) {
    return `service version "${version}" is not valid: use semver, e.g. 1.2.3`;
  }
  return undefined;
}

/** `$SRV.<VERB>`, `$SRV.<VERB>.<name>` and `$SRV.<VERB>.<name>.<id>` for every verb. */
export function controlSubjects(name: string, id: string): Array<{ verb: Verb; subject: string }> {
  return VERBS.flatMap((verb) => [
    { verb, subject: `${SERVICE_API_PREFIX}.${verb}` },
    { verb, subject: `${SERVICE_API_PREFIX}.${verb}.${name}` },
    { verb, subject: `${SERVICE_API_PREFIX}.${verb}.${name}.${id}` },
  ]);
}

export interface ServiceDescriptor {
  name: string;
  id: string;
  version: string;
  description: string;
  metadata: Record<string, string>;
  started: string;
}

export interface EndpointDescriptor {
  name: string;
  subject: string;
  queue_group: string;
  metadata: Record<string, string>;
}

export interface EndpointStats {
  num_requests: number;
  num_errors: number;
  last_error: string;
  /** Nanoseconds, summed over finished requests. */
  processing_time: number;
}

export function emptyStats(): EndpointStats {
  return { num_requests: 0, num_errors: 0, last_error: "", processing_time: 0 };
}

/** Records one finished request; `error` is set when it was answered with an error. */
export function recordRequest(stats: EndpointStats, durationNanos: number, error?: string): void {
  stats.num_requests += 1;
  stats.processing_time += Math.round(durationNanos);
  if (error !== undefined) {
    stats.num_errors += 1;
    stats.last_error = error;
  }
}

export function pingResponse(service: ServiceDescriptor) {
  return {
    type: "io.nats.micro.v1.ping_response",
    name: service.name,
    id: service.id,
    version: service.version,
    metadata: service.metadata,
  };
}

export function infoResponse(service: ServiceDescriptor, endpoints: readonly EndpointDescriptor[]) {
  return {
    type: "io.nats.micro.v1.info_response",
    name: service.name,
    id: service.id,
    version: service.version,
    description: service.description,
    metadata: service.metadata,
    endpoints: endpoints.map((e) => ({ ...e })),
  };
}

export function statsResponse(
  service: ServiceDescriptor,
  endpoints: ReadonlyArray<{ endpoint: EndpointDescriptor; stats: EndpointStats }>,
) {
  return {
    type: "io.nats.micro.v1.stats_response",
    name: service.name,
    id: service.id,
    version: service.version,
    started: service.started,
    metadata: service.metadata,
    endpoints: endpoints.map(({ endpoint, stats }) => ({
      name: endpoint.name,
      subject: endpoint.subject,
      queue_group: endpoint.queue_group,
      ...stats,
      average_processing_time:
        stats.num_requests === 0 ? 0 : Math.round(stats.processing_time / stats.num_requests),
    })),
  };
}
