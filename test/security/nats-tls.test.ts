/**
 * TLS to NATS: a service given the CA (NATS_TLS_CA_FILE) connects to a server that requires TLS;
 * one without it is not fooled into talking in clear or trusting an unknown certificate.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectBus, createLogger, natsAccessFromEnv, writeNatsIdentities } from "@toolbus/bus";
import { type NatsServerProcess, startNatsServer } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const logger = createLogger({ service: "tls", version: "0.0.0", level: "silent" });
let dir: string;
let server: NatsServerProcess;
let nkeyFile: string;

/** A throwaway CA and a server certificate for 127.0.0.1, made with openssl. */
function makeCertificates(into: string): { ca: string; cert: string; key: string } {
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: into, stdio: "ignore" });
  run(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=toolbus test CA",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
  );
  run(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=127.0.0.1",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
  );
  const ext = join(into, "ext.cnf");
  execFileSync("sh", ["-c", `printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > ${ext}`]);
  run(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    ext,
    "-out",
    "server.pem",
  );
  return { ca: join(into, "ca.pem"), cert: join(into, "server.pem"), key: join(into, "server.key") };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "toolbus-tls-"));
  const certs = makeCertificates(dir);
  const ids = writeNatsIdentities({ dir: join(dir, "ids"), prefix: "toolbus", servers: [] });
  nkeyFile = ids.seedFile("dispatcher");
  server = await startNatsServer({
    config: [
      `tls { cert_file: ${JSON.stringify(certs.cert)}, key_file: ${JSON.stringify(certs.key)} }`,
      readFileSync(ids.authConf, "utf8"),
    ].join("\n"),
  });
});

afterAll(async () => {
  await server?.stop();
});

describe("NATS over TLS", () => {
  it("connects with the CA from NATS_TLS_CA_FILE and an NKey", async () => {
    const access = natsAccessFromEnv(
      {
        NATS_URL: `tls://127.0.0.1:${server.port}`,
        NATS_TLS_CA_FILE: join(dir, "ca.pem"),
        NATS_NKEY_FILE: nkeyFile,
      },
      { prefix: "toolbus", role: "dispatcher" },
    );
    const bus = await connectBus({ access, service: { name: "dispatcher", version: "0.0.1" }, logger });
    try {
      expect(bus.nc.info?.tls_required).toBe(true);
      await bus.nc.flush();
    } finally {
      await bus.close();
    }
  });

  it("refuses a server whose certificate it cannot verify, with a clear error", async () => {
    const access = natsAccessFromEnv(
      { NATS_URL: `tls://127.0.0.1:${server.port}`, NATS_NKEY_FILE: nkeyFile },
      { prefix: "toolbus", role: "dispatcher" },
    );
    const attempt = connectBus({ access, service: { name: "dispatcher", version: "0.0.1" }, logger });
    await expect(attempt).rejects.toThrow(
      new RegExp(
        `^cannot connect to NATS at tls://127\\.0\\.0\\.1:${server.port}: .*(certificate|self.signed)`,
        "i",
      ),
    );
  });
});
