/**
 * TLS as a client over a connection that is already open (a proxy's `CONNECT` tunnel, after the
 * protocol's plain first line), with Node's rules for whom to trust: `node:tls` over the Deno
 * connection, handed back as a `ByteStream` (`byte_stream.ts`) the tunnel forwarder can pump (`http_tunnel.ts`).
 *
 * Why `node:tls` and not `Deno.startTls`: a CA given (`ca`) must be the only one trusted, as it is
 * for the NATS client's own TLS unconfined (Node's `ca` replaces the system's roots); Deno's
 * `caCerts` adds to them, so a run confined under the sandbox's allow-list would trust more than
 * the same run unconfined.
 *
 * Owns `startTlsStream`: the handshake (bounded by `timeoutMs`), the certificate checked for
 * `host` (as SNI too, unless it is an address), and a `ByteStream` over the result. Invariants: a
 * certificate that does not verify, for any reason, rejects (`rejectUnauthorized`), with Node's
 * message (which names the certificate or the altnames); once the stream is closed, so is the
 * connection beneath it; reads are bounded by a high-water mark (the socket is paused past it).
 */
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import { isIP } from "node:net";
import { Duplex } from "node:stream";
import { type ByteStream, closeQuietly, writeAll } from "./byte_stream.ts";

/** Options of `startTlsStream`. */
export interface TlsStreamOptions {
  /** The name (or address) the certificate must be for. */
  host: string;
  /** PEM text of the only CA to trust; the system's roots when undefined. */
  ca?: string;
  /** The longest the handshake may take, ms. */
  timeoutMs: number;
}

/** Buffered and unread past this many bytes, the TLS socket is paused. */
const HIGH_WATER = 1024 * 1024;

/**
 * Runs a TLS client handshake over `conn` and returns the encrypted stream.
 * @throws Error with Node's reason when the handshake fails or the certificate does not verify
 */
export function startTlsStream(conn: Deno.Conn, opts: TlsStreamOptions): Promise<ByteStream> {
  const socket = tlsConnect({
    socket: duplexOf(conn),
    ...(isIP(opts.host) === 0 ? { servername: opts.host } : {}),
    host: opts.host,
    ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
    rejectUnauthorized: true,
  });
  const stream = new TlsByteStream(socket);
  return new Promise<ByteStream>((resolve, reject) => {
    const fail = (e: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(e);
    };
    const timer = setTimeout(
      () => fail(new Error(`the TLS handshake with ${opts.host} took over ${opts.timeoutMs} ms`)),
      opts.timeoutMs,
    );
    socket.once("error", fail);
    socket.once("secureConnect", () => {
      clearTimeout(timer);
      socket.off("error", fail);
      if (!socket.authorized) {
        socket.destroy();
        reject(new Error(`${socket.authorizationError ?? "the certificate did not verify"}`));
        return;
      }
      resolve(stream);
    });
  });
}

/** A Node duplex over a Deno connection (what `node:tls` runs over). */
function duplexOf(conn: Deno.Conn): Duplex {
  const buf = new Uint8Array(64 * 1024);
  return new Duplex({
    read() {
      conn.read(buf).then(
        (n) => this.push(n === null ? null : buf.slice(0, n)),
        (e) => this.destroy(e as Error),
      );
    },
    write(chunk: Uint8Array, _encoding, done) {
      writeAll(conn, chunk).then(() => done(), (e) => done(e as Error));
    },
    final(done) {
      conn.closeWrite().then(() => done(), () => done());
    },
    destroy(err, done) {
      closeQuietly(conn);
      done(err);
    },
  });
}

/** A `ByteStream` over a connected TLS socket. */
class TlsByteStream implements ByteStream {
  #socket: TLSSocket;
  #chunks: Uint8Array[] = [];
  #buffered = 0;
  #ended = false;
  #error: Error | undefined;
  #wake: (() => void) | undefined;

  constructor(socket: TLSSocket) {
    this.#socket = socket;
    const wake = () => {
      const w = this.#wake;
      this.#wake = undefined;
      w?.();
    };
    socket.on("data", (chunk: Uint8Array) => {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
      if (this.#buffered > HIGH_WATER) socket.pause();
      wake();
    });
    socket.on("end", () => {
      this.#ended = true;
      wake();
    });
    socket.on("close", () => {
      this.#ended = true;
      wake();
    });
    socket.on("error", (e: Error) => {
      this.#error ??= e;
      wake();
    });
  }

  async read(buf: Uint8Array): Promise<number | null> {
    while (this.#chunks.length === 0) {
      if (this.#error) throw this.#error;
      if (this.#ended) return null;
      await new Promise<void>((r) => this.#wake = r);
    }
    const head = this.#chunks[0];
    const n = Math.min(buf.length, head.length);
    buf.set(head.subarray(0, n));
    if (n === head.length) this.#chunks.shift();
    else this.#chunks[0] = head.subarray(n);
    this.#buffered -= n;
    if (this.#buffered <= HIGH_WATER && this.#socket.isPaused()) this.#socket.resume();
    return n;
  }

  write(bytes: Uint8Array): Promise<number> {
    if (this.#error) return Promise.reject(this.#error);
    const copy = bytes.slice(); // the caller reuses its buffer once this resolves
    return new Promise((resolve, reject) => {
      this.#socket.write(copy, (e?: Error | null) => e ? reject(e) : resolve(copy.length));
    });
  }

  closeWrite(): Promise<void> {
    return new Promise((resolve) => this.#socket.end(() => resolve()));
  }

  close(): void {
    this.#socket.destroy();
  }
}
