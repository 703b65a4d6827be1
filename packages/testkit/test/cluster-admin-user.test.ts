// The cluster harness's admin user goes into the generated accounts block, and nowhere else.
import { describe, expect, it } from "vitest";
import { withAdminUser } from "../src/cluster/nats-cluster.js";

const generated = [
  "accounts {",
  "  TOOLBUS: {",
  "    jetstream: enabled",
  "    users: [",
  "      # gateway",
  '      { nkey: "UABC" }',
  "    ]",
  "  }",
  "}",
  "",
].join("\n");

describe("withAdminUser", () => {
  it("adds the admin to the TOOLBUS account's users, before the generated ones", () => {
    expect(withAdminUser(generated, { user: "admin", password: "p@ss" })).toBe(
      [
        "accounts {",
        "  TOOLBUS: {",
        "    jetstream: enabled",
        "    users: [",
        '      { user: "admin", password: "p@ss" }',
        "      # gateway",
        '      { nkey: "UABC" }',
        "    ]",
        "  }",
        "}",
        "",
      ].join("\n"),
    );
  });

  it("refuses a block it cannot find the users list in, instead of starting nodes without the admin", () => {
    expect(() => withAdminUser("accounts {}\n", { user: "admin", password: "x" })).toThrow(
      "auth.conf from toolbus nats-config has no `users: [` line to add the admin user to",
    );
  });
});
