/**
 * The permission matrix as text: what each identity serves, asks, publishes, hears and may do
 * with JetStream, derived from the access tables (`identityUse`). docs/contract.md holds it, and a
 * test keeps the two the same.
 */
import { busIdentities, identityName, identityUse } from "./access.js";
import type { Subjects } from "./subjects.js";

/** A stand-in server name, shown as `<server>` (a connector's own server). */
const SERVER = "SERVER";

export function renderAccessMatrix(subjects: Subjects): string {
  const lines: string[] = [];
  const shown = (subject: string) => subject.replaceAll(SERVER, "<server>");
  for (const identity of busIdentities([SERVER])) {
    if (identity.role === "provisioner") continue;
    const use = identityUse(identity, subjects);
    const list = (label: string, items: readonly string[]) => {
      if (items.length === 0) return;
      lines.push(`  ${label}`);
      for (const item of items) lines.push(`    ${shown(item)}`);
    };
    lines.push(shown(identityName(identity)));
    list("serves", use.serves);
    list("asks", use.requests);
    list(
      "publishes",
      use.publishes.map((p) => `${p.subject}${p.stored ? "  (stored)" : ""}`),
    );
    list("hears", use.subscribes);
    list("writes KV", use.kvWrites);
    list("JetStream API", use.jetStreamApi);
    list("acks, flow control", use.jetStreamReplies);
    list(
      "pings",
      use.pings.map((p) => p.subject),
    );
    lines.push("");
  }
  lines.push("provisioner");
  lines.push("  JetStream API: STREAM.CREATE, STREAM.UPDATE and STREAM.INFO of every asset above;");
  lines.push("  CONSUMER.CREATE and CONSUMER.INFO of the memory stream's durable `memory`; nothing else");
  return `${lines.join("\n")}\n`;
}
