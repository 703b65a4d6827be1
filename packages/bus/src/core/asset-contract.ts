/**
 * What the contract fixes about each JetStream asset's stream, apart from its limits: the
 * subjects it takes, and that nothing republishes, sources, mirrors or transforms its messages,
 * and whether its messages may be deleted or purged. A stream that differs could capture or copy
 * subjects no identity may publish or read, so a service refuses to run on one (`verifyAssets`).
 * Pure: compares two configurations.
 */

/** The fields of a stream configuration the contract fixes. */
export interface StreamContract {
  readonly name: string;
  readonly subjects: readonly string[];
  readonly deny_delete: boolean;
  readonly deny_purge: boolean;
  readonly allow_direct: boolean;
}

/** The fields of a stream's actual configuration this compares (as JetStream reports it). */
export interface ActualStreamConfig {
  name: string;
  subjects?: string[];
  deny_delete?: boolean;
  deny_purge?: boolean;
  allow_direct?: boolean;
  republish?: unknown;
  sources?: unknown[];
  mirror?: unknown;
  subject_transform?: unknown;
}

/** Each way `actual` differs from the contract, as a phrase naming the field, e.g. `republish is {…} (the contract: none)`. */
export function contractDifferences(contract: StreamContract, actual: ActualStreamConfig): string[] {
  const differences: string[] = [];
  const subjects = [...(actual.subjects ?? [])].sort();
  const wanted = [...contract.subjects].sort();
  if (JSON.stringify(subjects) !== JSON.stringify(wanted)) {
    differences.push(`subjects are ${JSON.stringify(subjects)} (the contract: ${JSON.stringify(wanted)})`);
  }
  const none = (field: string, value: unknown) => {
    const present = Array.isArray(value) ? value.length > 0 : value !== undefined && value !== null;
    if (present) differences.push(`${field} is ${JSON.stringify(value)} (the contract: none)`);
  };
  none("republish", actual.republish);
  none("sources", actual.sources);
  none("mirror", actual.mirror);
  none("subject_transform", actual.subject_transform);
  for (const field of ["deny_delete", "deny_purge", "allow_direct"] as const) {
    const value = actual[field] ?? false;
    if (value !== contract[field])
      differences.push(`${field} is ${value} (the contract: ${contract[field]})`);
  }
  return differences;
}

/** The consumer fields the contract fixes for a durable the provisioner creates. */
export interface ConsumerContract {
  readonly stream: string;
  readonly durable: string;
  readonly filter: string;
}

export interface ActualConsumerConfig {
  durable_name?: string;
  filter_subject?: string;
  filter_subjects?: string[];
  deliver_subject?: string;
  ack_policy?: string;
}

export function consumerDifferences(contract: ConsumerContract, actual: ActualConsumerConfig): string[] {
  const differences: string[] = [];
  const filters = actual.filter_subjects ?? (actual.filter_subject ? [actual.filter_subject] : []);
  if (filters.length !== 1 || filters[0] !== contract.filter) {
    differences.push(`its filter is ${JSON.stringify(filters)} (the contract: ["${contract.filter}"])`);
  }
  if (actual.deliver_subject) {
    differences.push(`it delivers to ${actual.deliver_subject} (the contract: a pull consumer, none)`);
  }
  if (actual.ack_policy !== "explicit") {
    differences.push(`its ack policy is ${actual.ack_policy} (the contract: explicit)`);
  }
  return differences;
}
