/**
 * The nats-server `accounts` block that gives each toolbus identity its NKey and its allow
 * lists (NATS-AUTH facts: JetStream subjects must be quoted, a named account needs
 * `jetstream: enabled`, an allow list denies everything it does not name). Pure text.
 */
import type { Permissions, Role } from "@toolbus/protocol";

export interface AuthUser {
  role: Role;
  /** The NKey user's public key (`U…`); the seed never appears in the server's config. */
  publicKey: string;
  permissions: Permissions;
}

/** The account every toolbus identity belongs to. */
export const TOOLBUS_ACCOUNT = "TOOLBUS";

const quote = (subject: string) => JSON.stringify(subject);

function list(subjects: readonly string[], indent: string): string {
  return `[\n${subjects.map((s) => `${indent}  ${quote(s)}`).join("\n")}\n${indent}]`;
}

/** The `accounts { … }` block for nats.conf (include it, or paste it). */
export function renderAuthConf(options: { prefix: string; users: readonly AuthUser[] }): string {
  const users = options.users.map((user) => {
    const p = user.permissions;
    const lines = [
      `      # ${user.role}`,
      "      {",
      `        nkey: ${quote(user.publicKey)}`,
      "        permissions: {",
      `          publish: { allow: ${list(p.publish, "          ")} }`,
      `          subscribe: { allow: ${list(p.subscribe, "          ")} }`,
      ...(p.allowResponses ? ["          allow_responses: true"] : []),
      "        }",
      "      }",
    ];
    return lines.join("\n");
  });
  return [
    `# Written by \`toolbus nats-config\` for the subject prefix ${quote(options.prefix)}.`,
    "# Each toolbus identity connects with its own NKey and may publish and subscribe only what",
    "# its role needs. Do not edit: run `toolbus nats-config` again (it keeps existing keys).",
    "accounts {",
    `  ${TOOLBUS_ACCOUNT}: {`,
    "    jetstream: enabled",
    "    users: [",
    users.join("\n"),
    "    ]",
    "  }",
    "}",
    "",
  ].join("\n");
}
