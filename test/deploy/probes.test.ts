/**
 * deploy/probes/nats-connected.mjs: which NATS ports it looks for, and how it reads /proc/net/tcp;
 * deploy/probes/http-ok.mjs: which token it sends.
 */
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { hasEstablishedConnection, natsPorts } from "../../deploy/probes/nats-connected.mjs";

const HEADER =
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";

/** A /proc/net/tcp table with one row per [remote address, state]. */
function table(rows: [remote: string, state: string][]): string {
  const lines = rows.map(
    ([remote, state], index) =>
      `   ${index}: 0200000A:C350 ${remote} ${state} 00000000:00000000 00:00000000 00000000 10001        0 4242 1`,
  );
  return [HEADER, ...lines].join("\n");
}

describe("natsPorts", () => {
  it.each([
    { natsUrl: undefined, ports: [4222] },
    { natsUrl: "", ports: [4222] },
    { natsUrl: "nats://nats:4222", ports: [4222] },
    { natsUrl: "nats://nats.nats.svc.cluster.local", ports: [4222] },
    { natsUrl: "tls://user:secret@nats:7422", ports: [7422] },
    { natsUrl: "nats-0:4223, nats-1:4224,nats-2:4223", ports: [4223, 4224] },
  ])("reads the ports of NATS_URL=$natsUrl", ({ natsUrl, ports }) => {
    expect(natsPorts(natsUrl)).toEqual(ports);
  });
});

describe("hasEstablishedConnection", () => {
  it.each([
    { case: "an established connection to 4222", rows: [["0300000A:107E", "01"]], healthy: true },
    {
      case: "an established IPv6 connection to 4222",
      rows: [["0000000000000000FFFF00000300000A:107E", "01"]],
      healthy: true,
    },
    { case: "a connection still opening (SYN_SENT)", rows: [["0300000A:107E", "02"]], healthy: false },
    { case: "a closing connection (TIME_WAIT)", rows: [["0300000A:107E", "06"]], healthy: false },
    { case: "an established connection to another port", rows: [["0300000A:1F90", "01"]], healthy: false },
    { case: "no connection at all", rows: [], healthy: false },
  ] as { case: string; rows: [string, string][]; healthy: boolean }[])(
    "answers $healthy for $case",
    ({ rows, healthy }) => {
      expect(hasEstablishedConnection(table(rows), [4222])).toBe(healthy);
    },
  );

  it("does not take a server listening on the NATS port for a client connected to it", () => {
    const listening = `${HEADER}\n   0: 00000000:107E 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1`;
    expect(hasEstablishedConnection(listening, [4222])).toBe(false);
  });
});

describe("http-ok.mjs --token-env", () => {
  it("sends the token of the first entry, whether it is name:role:token or a bare token", async () => {
    const seen: Array<string | undefined> = [];
    const server = createServer((request, response) => {
      seen.push(request.headers.authorization);
      response.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const probe = (tokens: string) =>
      new Promise<number>((resolve) => {
        execFile(
          process.execPath,
          ["deploy/probes/http-ok.mjs", `http://127.0.0.1:${port}/readyz`, "--token-env", "TOKENS"],
          { env: { ...process.env, TOKENS: tokens }, timeout: 10_000 },
          (error) => resolve(error === null ? 0 : ((error as { code?: number }).code ?? 1)),
        );
      });
    try {
      const codes = [await probe("ops:caller:s3:cr3t, other:admin:x"), await probe("bare-token other")];
      expect({ codes, seen }).toEqual({ codes: [0, 0], seen: ["Bearer s3:cr3t", "Bearer bare-token"] });
    } finally {
      server.close();
    }
  });
});
