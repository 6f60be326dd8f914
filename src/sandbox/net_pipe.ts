/**
 * Byte pumping between two connections, for the sandbox's network proxy (`net_proxy.ts`) and
 * the bridge inside the run (`net_bridge.ts`), and the two sides' one shared word: the denial
 * feed's request line and record (here so that the runtime's bridge loads none of the proxy).
 *
 * Owns `splice`: copies both ways until both directions end; when one side stops sending, the
 * other is told (`closeWrite`) so a half-closed HTTP exchange still completes; a failed read or
 * write (a reset) closes both at once; both are closed at the end; nothing throws.
 */

/** A connection with a write half that can be closed (TCP and Unix stream connections). */
export type Duplex = Deno.Conn;

const BUF = 64 * 1024;

/** Copies `from` to `to` until `from` ends (then half-closes `to`) or either fails (then closes both). */
export async function pump(from: Duplex, to: Duplex): Promise<void> {
  const buf = new Uint8Array(BUF);
  try {
    while (true) {
      const n = await from.read(buf);
      if (n === null) break;
      let off = 0;
      while (off < n) off += await to.write(buf.subarray(off, n));
    }
  } catch {
    // a reset or a closed peer: the pair is over, both ways
    closeQuietly(from);
    closeQuietly(to);
    return;
  }
  try {
    await to.closeWrite();
  } catch {
    // already closed
  }
}

export function closeQuietly(c: Duplex): void {
  try {
    c.close();
  } catch {
    // closed already
  }
}

/** Writes all of `bytes` to `conn`. */
export async function writeAll(conn: Duplex, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

/** Copies both ways between `a` and `b` until both directions end, then closes both. */
export async function splice(a: Duplex, b: Duplex): Promise<void> {
  await Promise.all([pump(a, b), pump(b, a)]);
  closeQuietly(a);
  closeQuietly(b);
}

/** One refused connection. */
export interface Denial {
  host: string;
  port: number;
  reason: string;
}

/** The request line of the denial feed. */
export const DENIAL_FEED = "AGENT-BLOCK-DENIALS";
