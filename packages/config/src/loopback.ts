/** Whether a host name or address is this machine's loopback: what may go without TLS or tokens. */

/** `localhost`, `127.0.0.0/8`, `::1` (bracketed or not), and IPv4-mapped loopback. */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  if (bare === "localhost" || bare === "::1" || bare === "0:0:0:0:0:0:0:1") return true;
  const v4 = bare.startsWith("::ffff:") ? bare.slice("::ffff:".length) : bare;
  return /^127(\.\d{1,3}){3}$/.test(v4);
}
