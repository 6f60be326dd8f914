/**
 * A NATS server's TLS under the sandbox's proxy, done by the loopback forwarder that stands for
 * the server (`src/net/http_tunnel.ts`) rather than by the NATS client.
 *
 * Why: a NATS server says in its first line (`INFO {...}`: `tls_required`, `tls_available`)
 * whether it speaks TLS, and the client upgrades in place, checking the certificate for the host
 * it dialled. Through the proxy that host is a forwarder on 127.0.0.1, one per server, and the
 * client takes one TLS name for all of them; so the forwarder, which knows its server's name,
 * does the upgrade itself and checks the certificate for that name (SNI too). Each server of a
 * cluster is checked for its own name, and a server that asks for TLS when the URL did not
 * (a `nats://` URL) gets it as the client would give it unconfined.
 *
 * Owns `natsTlsStep`, the forwarder's `upstream` step for one server: its first line read through
 * the tunnel (within the connect timeout) and parsed; TLS done when the server demands or offers it
 * (the client's own rule: `tls_required`, or `tls_available`), or refused when the URL or a CA asks
 * for TLS and the server has none (the client's own words: "tls is not available on this server");
 * and the first line handed on to the client with `tls_required` and `tls_available` false, so
 * the client speaks plain NATS to the forwarder over the forwarder's TLS. Trust is the client's:
 * the CA given is the only one trusted, the system's roots otherwise (`src/net/tls_stream.ts`).
 * Invariants: nothing of the client's crosses before the step has finished; a step that fails
 * says why (the proxy's refusal, the certificate's fault), and the transport adds that to its
 * connect error; a first line that is not an `INFO` is refused, never carried blind.
 */
import type { Tunnel, Upstream } from "../../net/http_tunnel.ts";
import { startTlsStream } from "../../net/tls_stream.ts";
import { concatBytes } from "../../util/bytes.ts";

/** The longest first line read from a server (an INFO lists the cluster's URLs: it can be long). */
const MAX_INFO = 256 * 1024;

const enc = new TextEncoder();
const dec = new TextDecoder();

/** What the step needs to know of the client's TLS. */
export interface NatsTlsOptions {
  /** The name (or address) the server's certificate must be for: the server's host in the URL. */
  host: string;
  /** TLS is required whatever the server says (a `tls://` URL, or a CA given). */
  required: boolean;
  /** PEM text of the only CA to trust (the system's roots when undefined). */
  ca?: string;
  /** The longest the first line and the handshake may take, ms. */
  timeoutMs: number;
}

/** The forwarder's `upstream` step for one server (see the module doc). */
export function natsTlsStep(opts: NatsTlsOptions): (tunnel: Tunnel) => Promise<Upstream> {
  return async (tunnel) => {
    const { line, rest } = await firstLine(tunnel, opts.timeoutMs);
    const info = parseInfo(line);
    const offered = info.tls_required === true || info.tls_available === true;
    if (!offered) {
      if (opts.required) throw new Error(`tls is not available on this server (${opts.host})`);
      const head = enc.encode(line + "\r\n");
      return { stream: tunnel.conn, early: concatBytes([head, rest], head.length + rest.length) };
    }
    if (rest.length > 0) throw new Error(`the server ${opts.host} sent more than its INFO before TLS`);
    const stream = await startTlsStream(tunnel.conn, {
      host: opts.host,
      ca: opts.ca,
      timeoutMs: opts.timeoutMs,
    })
      .catch((e: Error) => {
        throw new Error(`TLS with ${opts.host}: ${e.message}`);
      });
    const plain = { ...info, tls_required: false, tls_available: false };
    return { stream, early: enc.encode(`INFO ${JSON.stringify(plain)}\r\n`) };
  };
}

/** The server's first line (without its CRLF) and what came after it, read within `timeoutMs`. */
async function firstLine(tunnel: Tunnel, timeoutMs: number): Promise<{ line: string; rest: Uint8Array }> {
  let got = tunnel.early;
  const timer = setTimeout(() => {
    try {
      tunnel.conn.close(); // ends the read below
    } catch {
      // closed already
    }
  }, timeoutMs);
  try {
    const buf = new Uint8Array(16 * 1024);
    while (true) {
      const end = crlf(got);
      if (end >= 0) return { line: dec.decode(got.subarray(0, end)), rest: got.slice(end + 2) };
      if (got.length > MAX_INFO) throw new Error(`the server's first line is over ${MAX_INFO} bytes`);
      let n: number | null;
      try {
        n = await tunnel.conn.read(buf);
      } catch {
        n = null;
      }
      if (n === null) throw new Error(`the server said nothing within ${timeoutMs} ms, or went away`);
      got = concatBytes([got, buf.subarray(0, n)], got.length + n);
    }
  } finally {
    clearTimeout(timer);
  }
}

/** The JSON of an `INFO` line; throws when the line is not one. */
function parseInfo(line: string): Record<string, unknown> {
  if (!line.startsWith("INFO ")) throw new Error(`the server's first line is not a NATS INFO`);
  let info: unknown;
  try {
    info = JSON.parse(line.slice(5));
  } catch {
    throw new Error(`the server's INFO is not JSON`);
  }
  if (typeof info !== "object" || info === null || Array.isArray(info)) {
    throw new Error(`the server's INFO is not a JSON object`);
  }
  return info as Record<string, unknown>;
}

function crlf(b: Uint8Array): number {
  for (let i = 0; i + 1 < b.length; i++) if (b[i] === 13 && b[i + 1] === 10) return i;
  return -1;
}
