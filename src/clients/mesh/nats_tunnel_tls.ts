/**
 * Under the sandbox's proxy, whether the NATS servers of a plain `nats://` URL want TLS: asked
 * through a tunnel before the client connects, so the client can be told the name to check.
 *
 * Why: a NATS server says in its first line (`INFO {...}`: `tls_required`, `tls_available`)
 * whether it speaks TLS, and the client upgrades in place when it does, checking the certificate
 * for the host it dialled. Through the sandbox's proxy that host is a loopback forwarder
 * (`src/net/http_tunnel.ts`), so an upgrade the URL did not ask for (no CA, no `tls://`) would
 * check the certificate for 127.0.0.1 and fail, where the same run unconfined succeeds. Asking
 * first lets the transport set the server's own name (`servername`) exactly when the server will
 * upgrade; a plain server keeps a plain connection (setting TLS options for it would make the
 * client refuse it).
 *
 * Owns `tunnelledTls`: the servers asked in order, one tunnel each, its first line read and
 * parsed; the first answer decides. Invariants: nothing is sent to a server (the INFO line comes
 * unasked); each tunnel is closed after its answer; a server that cannot be asked (refused by the
 * proxy, gone, silent until the deadline, not speaking NATS) is passed over, and when none can be,
 * the answer is `undefined` and the client's own connect reports why (the proxy's refusal
 * included).
 */
import { openTunnel, type Tunnel } from "../../net/http_tunnel.ts";

/** The longest first line read from a server (an INFO lists the cluster's URLs: it can be long). */
const MAX_INFO = 256 * 1024;

const dec = new TextDecoder();

/**
 * True when the first server of `servers` (`host:port`, IPv6 in brackets) to answer through
 * `proxy` offers or demands TLS, false when it speaks plain NATS only; undefined when none
 * answered within `timeoutMs`.
 */
export async function tunnelledTls(
  proxy: string,
  servers: readonly string[],
  timeoutMs: number,
): Promise<boolean | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (const server of servers) {
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    const u = new URL(`nats://${server}`);
    const info = await firstInfo(proxy, u.hostname.replace(/^\[|\]$/g, ""), Number(u.port || "4222"), left);
    if (info !== undefined) return info.tls_required === true || info.tls_available === true;
  }
  return undefined;
}

/** The server's INFO through a tunnel, or undefined when it cannot be had within `timeoutMs`. */
async function firstInfo(
  proxy: string,
  host: string,
  port: number,
  timeoutMs: number,
): Promise<Record<string, unknown> | undefined> {
  let tunnel: Tunnel | undefined;
  const timer = setTimeout(() => {
    try {
      tunnel?.conn.close(); // ends the read below
    } catch {
      // closed already
    }
  }, timeoutMs);
  try {
    tunnel = await openTunnel(proxy, host, port);
    let text = dec.decode(tunnel.early);
    const buf = new Uint8Array(16 * 1024);
    while (!text.includes("\r\n") && text.length <= MAX_INFO) {
      const n = await tunnel.conn.read(buf);
      if (n === null) return undefined;
      text += dec.decode(buf.subarray(0, n));
    }
    const line = text.slice(0, text.indexOf("\r\n"));
    if (!line.startsWith("INFO ")) return undefined;
    const info: unknown = JSON.parse(line.slice(5));
    return typeof info === "object" && info !== null ? info as Record<string, unknown> : undefined;
  } catch {
    return undefined; // refused, gone, cut at the deadline, or not NATS: the client's connect says why
  } finally {
    clearTimeout(timer);
    try {
      tunnel?.conn.close();
    } catch {
      // closed by the deadline
    }
  }
}
