/**
 * `CONNECT` tunnels through an HTTP proxy, for the connections whose client library speaks no
 * proxy: the NATS mesh transport under the sandbox's network allow-list (`--sandbox-net
 * allow-list`), where the only way out of the run's network namespace is the proxy's loopback
 * bridge (`src/sandbox/net_bridge.ts`; the proxy itself checks every host, `net_proxy.ts`).
 *
 * Owns:
 * - `openTunnel`: one TCP connection to the proxy, `CONNECT host:port`, its answer read to the
 *   end of its head. A `2xx` gives the connection and the bytes the server sent behind the
 *   answer (a NATS server speaks first); anything else is a `TunnelError` carrying the status
 *   line and the proxy's reason (the sandbox's proxy says why in its `403`'s body);
 * - `tunnelForwarder`: a listener on 127.0.0.1 (a free port) whose every connection is carried
 *   through its own tunnel to one `host:port`, for a client that can only dial `host:port`
 *   itself. What the client speaks goes end to end as bytes, unless the caller's `upstream` step
 *   takes the open tunnel over first: the NATS transport's step reads the server's first line and does
 *   the server's TLS there, checked for the server's own name (`nats_tunnel_tls.ts`), since a
 *   client dialling 127.0.0.1 would check the certificate for that.
 *
 * Invariants: nothing the client sends crosses before the proxy has answered `2xx` and the
 * `upstream` step has finished (the forwarder reads its client only then); a refused tunnel, or a
 * failed step, closes the client's connection at once, so it sees its server go away and its own
 * reconnect policy applies; the forwarder listens on loopback only and ends every connection it
 * carries when it is closed.
 */
import { type ByteStream, closeQuietly, writeAll } from "./byte_stream.ts";

/** The proxy refused (or failed) a tunnel. */
export class TunnelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TunnelError";
  }
}

const MAX_HEAD = 16 * 1024;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** An open tunnel: the connection, and what the server sent behind the proxy's answer. */
export interface Tunnel {
  conn: Deno.TcpConn;
  early: Uint8Array;
}

/** `host:port` as a `CONNECT` target (an IPv6 address in brackets). */
function authority(host: string, port: number): string {
  return `${host.includes(":") ? `[${host.replace(/^\[|\]$/g, "")}]` : host}:${port}`;
}

/**
 * Opens a tunnel to `host:port` through the HTTP proxy at `proxy` (`http://host:port`).
 * @throws TunnelError when the proxy cannot be reached or does not answer `2xx`
 */
export async function openTunnel(proxy: string, host: string, port: number): Promise<Tunnel> {
  const p = new URL(proxy);
  let conn: Deno.TcpConn;
  try {
    conn = await Deno.connect({
      hostname: p.hostname.replace(/^\[|\]$/g, ""),
      port: p.port !== "" ? Number(p.port) : 80,
    });
  } catch (e) {
    throw new TunnelError(`cannot reach the proxy ${p.host}: ${(e as Error).message}`);
  }
  try {
    conn.setNoDelay(true);
    const target = authority(host, port);
    await writeAll(conn, enc.encode(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    let buf = new Uint8Array(0);
    const chunk = new Uint8Array(4096);
    let end = -1;
    while ((end = headEnd(buf)) < 0) {
      if (buf.length > MAX_HEAD) throw new TunnelError(`the proxy's answer to CONNECT ${target} is too long`);
      const n = await conn.read(chunk);
      if (n === null) {
        throw new TunnelError(`the proxy closed the connection before answering CONNECT ${target}`);
      }
      const more = new Uint8Array(buf.length + n);
      more.set(buf);
      more.set(chunk.subarray(0, n), buf.length);
      buf = more;
    }
    const head = dec.decode(buf.subarray(0, end));
    const status = head.split("\r\n")[0];
    if (!/^HTTP\/1\.[01] 2\d\d/.test(status)) {
      // the sandbox's proxy says why in a short body: read what came with the head
      const why = dec.decode(buf.subarray(end + 4)).trim().split("\n")[0];
      throw new TunnelError(
        `the proxy refused CONNECT ${target}: ${status.replace(/^HTTP\/1\.[01] /, "")}${
          why ? ` (${why})` : ""
        }`,
      );
    }
    return { conn, early: buf.slice(end + 4) };
  } catch (e) {
    closeQuietly(conn);
    if (e instanceof TunnelError) throw e;
    throw new TunnelError(`CONNECT ${authority(host, port)} through ${p.host}: ${(e as Error).message}`);
  }
}

/** Where `\r\n\r\n` starts in `buf`, or -1. */
function headEnd(buf: Uint8Array): number {
  for (let i = 0; i + 3 < buf.length; i++) {
    if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i;
  }
  return -1;
}

/** The upstream side of a forwarded connection, once its tunnel is open. */
export interface Upstream {
  stream: ByteStream;
  /** Sent to the client before anything is carried (what the server has said so far). */
  early: Uint8Array;
}

/** Options of `tunnelForwarder`. */
export interface ForwarderOptions {
  /** Told why each refused tunnel (or failed `upstream` step) failed. */
  onRefused?: (why: string) => void;
  /**
   * Takes each open tunnel over before the client's bytes are carried (a protocol's own first
   * step, such as TLS to the server); throws to refuse the connection, its message going to
   * `onRefused`. Without it, the tunnel itself, with what the server sent behind the proxy's answer.
   */
  upstream?: (tunnel: Tunnel) => Promise<Upstream>;
}

/** A loopback listener whose connections are tunnels to one host and port. */
export interface TunnelForwarder {
  /** The port it listens on, on 127.0.0.1. */
  port: number;
  /** Stops listening and ends the connections it carries (idempotent). */
  close(): void;
}

/**
 * Listens on 127.0.0.1 (a free port) and carries every connection through its own tunnel to
 * `host:port` via `proxy` (taken over first by `options.upstream`, when given).
 */
export function tunnelForwarder(
  proxy: string,
  host: string,
  port: number,
  options: ForwarderOptions = {},
): TunnelForwarder {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<ByteStream>();
  let closed = false;
  const carry = async (client: Deno.TcpConn) => {
    client.setNoDelay(true);
    let t: Tunnel | undefined;
    let up: Upstream;
    try {
      t = await openTunnel(proxy, host, port);
      open.add(t.conn); // closing the forwarder ends the step below too
      if (closed) throw new TunnelError("the forwarder was closed");
      up = options.upstream ? await options.upstream(t) : { stream: t.conn, early: t.early };
    } catch (e) {
      if (!closed) options.onRefused?.((e as Error).message);
      if (t) {
        open.delete(t.conn);
        closeQuietly(t.conn);
      }
      closeQuietly(client);
      return;
    }
    open.delete(t.conn);
    open.add(up.stream);
    try {
      if (closed) return;
      if (up.early.length) await writeAll(client, up.early);
      await Promise.all([pump(client, up.stream), pump(up.stream, client)]);
    } catch {
      // a side went away: the pair ends
    } finally {
      open.delete(up.stream);
      closeQuietly(up.stream);
      closeQuietly(t.conn);
      closeQuietly(client);
    }
  };
  void (async () => {
    try {
      for await (const client of listener) {
        open.add(client);
        void carry(client).finally(() => open.delete(client));
      }
    } catch {
      // closed
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    close: () => {
      if (closed) return;
      closed = true;
      try {
        listener.close();
      } catch {
        // closed already
      }
      for (const c of open) closeQuietly(c);
      open.clear();
    },
  };
}

/** Copies `from` to `to` until `from` ends (then half-closes `to`); a failure closes both. */
async function pump(from: ByteStream, to: ByteStream): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  try {
    while (true) {
      const n = await from.read(buf);
      if (n === null) break;
      await writeAll(to, buf.subarray(0, n));
    }
  } catch {
    closeQuietly(from);
    closeQuietly(to);
    return;
  }
  await to.closeWrite().catch(() => undefined);
}
