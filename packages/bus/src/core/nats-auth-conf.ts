/**
 * The nats-server `accounts` block of a toolbus bus: each identity's account with its NKey user,
 * allow lists, imports and exports (`busLayout` in the protocol), and the JetStream account
 * with the provisioner. NATS-AUTH facts: JetStream subjects must be quoted, the account holding
 * streams needs `jetstream: enabled`, an allow list denies everything it does not name. Pure text.
 */
import type { AccountSpec, BusLayout, Identity } from "@toolbus/protocol";
import { identityName } from "@toolbus/protocol";

const quote = (text: string) => JSON.stringify(text);

function list(items: readonly string[], indent: string): string {
  return `[\n${items.map((s) => `${indent}  ${quote(s)}`).join("\n")}\n${indent}]`;
}

function account(spec: AccountSpec, publicKey: (identity: Identity) => string): string {
  const lines = [`  ${quote(spec.name)}: {`];
  if (spec.jetstream) lines.push("    jetstream: enabled");
  lines.push("    users: [");
  for (const user of spec.users) {
    const p = user.permissions;
    lines.push(
      `      # ${identityName(user.identity)}`,
      "      {",
      `        nkey: ${quote(publicKey(user.identity))}`,
      "        permissions: {",
      `          publish: { allow: ${list(p.publish, "          ")} }`,
      `          subscribe: { allow: ${list(p.subscribe, "          ")} }`,
      ...(p.allowResponses ? ["          allow_responses: true"] : []),
      "        }",
      "      }",
    );
  }
  lines.push("    ]");
  if (spec.exports.length > 0) {
    lines.push("    exports: [");
    for (const e of spec.exports) {
      const type = e.responseType ? `, response_type: ${e.responseType}` : "";
      lines.push(
        `      { ${e.kind}: ${quote(e.subject)}, accounts: [${e.accounts.map(quote).join(", ")}]${type} }`,
      );
    }
    lines.push("    ]");
  }
  if (spec.imports.length > 0) {
    lines.push("    imports: [");
    for (const i of spec.imports) {
      const to = i.to === undefined ? "" : `, to: ${quote(i.to)}`;
      lines.push(`      { ${i.kind}: { account: ${quote(i.account)}, subject: ${quote(i.subject)} }${to} }`);
    }
    lines.push("    ]");
  }
  lines.push("  }");
  return lines.join("\n");
}

/** The `accounts { … }` block for nats.conf (include it, or paste it). */
export function renderAuthConf(layout: BusLayout, publicKey: (identity: Identity) => string): string {
  return [
    `# Written by \`toolbus nats-config\` for the subject prefix ${quote(layout.prefix)}.`,
    "# One account per toolbus identity, each reaching only what its role needs through the",
    "# imports below, and one (TOOLBUS) holding every stream and bucket. Do not edit: run",
    "# `toolbus nats-config` again (it keeps existing keys) when the configured servers change.",
    "accounts {",
    layout.accounts.map((spec) => account(spec, publicKey)).join("\n"),
    "}",
    "",
  ].join("\n");
}
