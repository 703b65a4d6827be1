/**
 * Only the edge names who asked. A request that names a principal (a call's `requestedBy`, an
 * approval's `by`) is believed only when it comes from the gateway, the one identity that
 * authenticates people. How the owner knows who sent it: on an enforcing bus each user's account
 * imports the subject under its own tag — the gateway publishes `toolbus.dispatch.call`, the
 * dispatcher receives it as `toolbus.dispatch.call.gateway`; an agent's arrives as
 * `….agent` — and no account imports another's tag, so the tag cannot be forged. On an open bus
 * (no identities, every client equal) requests arrive untagged and are believed as they are.
 */
import type { Role } from "./subjects.js";

/** The subjects (default prefix) whose requests may name a principal, and the field that does. */
export const PRINCIPAL_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  "toolbus.dispatch.call": "requestedBy",
  "toolbus.approvals.resolve": "by",
});

/** The one identity whose requests may name a principal. */
export const PRINCIPAL_ASSERTER: Role = "gateway";

/** The subject a request by `identity` (its name, e.g. `agent`) arrives on at the owner. */
export function taggedSubject(subject: string, identity: string): string {
  return `${subject}.${identity}`;
}

/** The subjects an owner serves a principal subject on: untagged (an open bus) and tagged. */
export function principalSubjectsServed(subject: string): string[] {
  return [subject, taggedSubject(subject, "*")];
}

/**
 * Who sent a request that arrived on `arrived` for the served `subject`: the tag's identity, or
 * undefined for the untagged subject (an open bus, or the owner's own account).
 */
export function senderOf(subject: string, arrived: string): string | undefined {
  return arrived.startsWith(`${subject}.`) ? arrived.slice(subject.length + 1) : undefined;
}

/**
 * Why a request from `sender` may not carry the principal it names in `field`, or undefined
 * when it may (or names none).
 */
export function principalRefusal(
  sender: string | undefined,
  field: string,
  named: string | undefined,
): string | undefined {
  if (named === undefined || sender === undefined || sender === PRINCIPAL_ASSERTER) return undefined;
  return (
    `only the ${PRINCIPAL_ASSERTER} names who a request is from; this one came from the ${sender} ` +
    `identity and names ${field} "${named}". Send it without ${field}, or through the gateway`
  );
}
