/**
 * A call its configuration settles — mode `approve`, annotations, policy `never` — is decided
 * without touching Postgres: such decides answer even while the database does not, and a call
 * that needs stored state waits for it. (Postgres sits behind a relay that can hold its traffic.)
 */
import { describe, expect, it } from "vitest";
import { pgGate } from "./pg-gate.js";
import { decide, decideRequest, sleep, testEnv } from "./support.js";

describe("decisions the configuration settles", () => {
  it("are answered while Postgres does not answer; a call needing stored grants waits for it", async () => {
    const env = await testEnv("settled without postgres");
    const gate = await pgGate(env.databaseUrl);
    const service = await env.start({
      databaseUrl: gate.url,
      policy: "never",
      servers: {
        ops: { defaultToolsApprovalMode: "approve" },
        shell: { defaultToolsApprovalMode: "prompt" },
      },
    });
    try {
      gate.hold();
      const remembered = decide(env.client, service.subjects, decideRequest(), 10_000);
      const settled = await Promise.all([
        decide(env.client, service.subjects, decideRequest({ annotations: { readOnlyHint: true } }), 5_000),
        decide(
          env.client,
          service.subjects,
          decideRequest({ server: "ops", tool: "deploy", hookName: "mcp__ops__deploy" }),
          5_000,
        ),
        decide(
          env.client,
          service.subjects,
          decideRequest({ server: "shell", tool: "run", hookName: "mcp__shell__run" }),
          5_000,
        ),
      ]);
      expect(settled).toEqual([
        { decision: "approved", source: "annotations" },
        { decision: "approved", source: "mode" },
        {
          decision: "denied",
          source: "policy",
          message: "MCP tool call requires approval, but approval policy is never",
        },
      ]);
      // The hold is real: a call in mode auto without annotations looks its grants up, and waits.
      const early = await Promise.race([remembered.then(() => "answered"), sleep(500).then(() => "waiting")]);
      expect(early).toBe("waiting");
      gate.release();
      await expect(remembered).resolves.toEqual({
        decision: "denied",
        source: "policy",
        message: "MCP tool call requires approval, but approval policy is never",
      });
    } finally {
      gate.release();
      await service.stop();
      await gate.close();
    }
  });
});
