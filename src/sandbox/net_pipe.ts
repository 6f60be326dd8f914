/**
 * Byte pumping between two connections, for the sandbox's network proxy (`net_proxy.ts`) and
 * the bridge inside the run (`net_bridge.ts`), and the two sides' one shared word: the denial
 * feed's request line and record (here so that the runtime's bridge loads none of the proxy).
 *
 * Owns `splice`: copies both ways until both directions end; when one side stops sending, the
 * other is told (`closeWrite`) so a half-closed HTTP exchange still completes; a failed read or
 * write (a reset) closes both at once; both are closed at the end; nothing throws.
 *
 * And `connectProxy`, the first connection to a proxy that may still be starting: the launcher
 * does not wait for the proxy before it starts the run (the two starts overlap), so the run's
 * bridge waits for the proxy's socket instead, within a bound.
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

/** How long the run's bridge waits for the proxy's socket to answer (`connectProxy`). */
export const PROXY_WAIT_MS = 30_000;

/**
 * Connects to the proxy's Unix socket at `path`, waiting while it is not there yet or not yet
 * listening (the proxy starts beside the run), until `waitMs` has passed.
 * @throws Error saying the proxy did not answer (its own message, if it failed, is on stderr)
 */
export async function connectProxy(path: string, waitMs = PROXY_WAIT_MS): Promise<Deno.UnixConn> {
  const deadline = performance.now() + waitMs;
  for (let pause = 1;; pause = Math.min(pause * 2, 50)) {
    try {
      return await Deno.connect({ transport: "unix", path });
    } catch (e) {
      const starting = e instanceof Deno.errors.NotFound || e instanceof Deno.errors.ConnectionRefused;
      if (!starting || performance.now() >= deadline) {
        throw new Error(
          `--sandbox-net allow-list: the proxy did not answer at ${path} within ${waitMs / 1000} s ` +
            `(${(e as Error).message}); if it failed to start, its message is above`,
        );
      }
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}

/** One refused connection. */
export interface Denial {
  host: string;
  port: number;
  reason: string;
}

/** The request line of the denial feed. */
export const DENIAL_FEED = "AGENT-BLOCK-DENIALS";
