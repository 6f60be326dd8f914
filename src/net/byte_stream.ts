/**
 * The byte connection the network helpers write to and close: `ByteStream`, the parts of
 * `Deno.Conn` they use (a TCP or Unix connection is one; so is the TLS stream of `tls_stream.ts`),
 * with `writeAll` (a write returns how much it took: the rest is written again until none is
 * left) and `closeQuietly` (a close that may come after the other side's). One copy for the
 * tunnel forwarder (`http_tunnel.ts`), the TLS stream and the mesh's seen-id client
 * (`src/clients/mesh/seen_remote.ts`). The sandbox's proxy keeps its own (`src/sandbox/net_pipe.ts`):
 * the sandbox may import only `src/proc` and a few loose files (`tests/arch/layering_test.ts`).
 */

/** What a forwarder carries bytes over: the parts of `Deno.Conn` it uses (a TCP connection is one). */
export interface ByteStream {
  read(buf: Uint8Array): Promise<number | null>;
  write(bytes: Uint8Array): Promise<number>;
  closeWrite(): Promise<void>;
  close(): void;
}

/** Writes all of `bytes` to `conn`. */
export async function writeAll(conn: Pick<ByteStream, "write">, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

/** Closes `c`, which may be closed already. */
export function closeQuietly(c: Pick<ByteStream, "close">): void {
  try {
    c.close();
  } catch {
    // closed already
  }
}
