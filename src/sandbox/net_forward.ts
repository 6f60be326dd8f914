/**
 * Plain HTTP forwarding for the sandbox's proxy (`net_proxy.ts`): requests in absolute form
 * (`GET http://host:port/path HTTP/1.1`) sent on in origin form, the connection kept alive.
 *
 * Owns the request framing the proxy reads so that it sees every request head a client sends on
 * one connection: a body is `Content-Length` bytes or chunked (copied chunk by chunk, trailers
 * included), and no body otherwise. Each head is checked: the first binds the client connection
 * to one upstream (host and port, after the proxy's allow-list check, connected to the address it
 * resolved); a later head naming another host or port ends the connection unforwarded (HTTP
 * clients open a new one; curl retries on it), so nothing is ever sent upstream that was not
 * checked for that upstream. Responses are copied back unparsed. `Proxy-*` headers are dropped;
 * everything else goes as it came. A request asking to switch protocols (`Connection: upgrade`
 * with `Upgrade`: a `ws://` WebSocket, the mesh relay's) ends the framing: after it the
 * connection carries raw bytes both ways to the same upstream until either side ends — still
 * only to the host and port its first head was checked for.
 *
 * Why keep-alive at all: a model loop makes one request per turn, and a new connection per
 * request (client → bridge → proxy → upstream) cost the proxied loop ~1.5 ms of CPU a turn
 * (bench/sandbox_bench.ts).
 */
import { closeQuietly, type Duplex, pump, writeAll } from "./net_pipe.ts";

const MAX_HEAD = 64 * 1024;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** A connection read through a buffer, for heads, lines and counted copies. */
export class BufConn {
  #buf: Uint8Array;
  #start = 0;
  #end = 0;

  constructor(readonly conn: Duplex, pending: Uint8Array = new Uint8Array()) {
    this.#buf = new Uint8Array(Math.max(64 * 1024, pending.length));
    this.#buf.set(pending);
    this.#end = pending.length;
  }

  /** Reads more into the buffer; false at the end of the stream. */
  async #fill(): Promise<boolean> {
    if (this.#start > 0) {
      this.#buf.copyWithin(0, this.#start, this.#end);
      this.#end -= this.#start;
      this.#start = 0;
    }
    if (this.#end === this.#buf.length) {
      const bigger = new Uint8Array(this.#buf.length * 2);
      bigger.set(this.#buf.subarray(0, this.#end));
      this.#buf = bigger;
    }
    const n = await this.conn.read(this.#buf.subarray(this.#end));
    if (n === null) return false;
    this.#end += n;
    return true;
  }

  /** What is buffered and not yet consumed (handed on when the rest is copied raw). */
  take(): Uint8Array {
    const out = this.#buf.slice(this.#start, this.#end);
    this.#start = this.#end = 0;
    return out;
  }

  /**
   * Up to `\r\n\r\n` (excluded, consumed), or undefined at a clean end of stream; throws on a
   * head longer than 64 KiB or a stream ending inside one.
   */
  async head(): Promise<string | undefined> {
    let from = this.#start;
    while (true) {
      for (let i = from; i + 3 < this.#end; i++) {
        if (
          this.#buf[i] === 13 && this.#buf[i + 1] === 10 && this.#buf[i + 2] === 13 && this.#buf[i + 3] === 10
        ) {
          const text = dec.decode(this.#buf.subarray(this.#start, i));
          this.#start = i + 4;
          return text;
        }
      }
      if (this.#end - this.#start > MAX_HEAD) throw new Error("request head over 64 KiB");
      from = Math.max(this.#start, this.#end - 3);
      const before = this.#start;
      if (!await this.#fill()) {
        if (this.#end === this.#start) return undefined;
        throw new Error("the stream ended inside a request head");
      }
      from -= before - this.#start; // the buffer may have moved down
    }
  }

  /** One line (without its CRLF), consumed. */
  async line(): Promise<string> {
    while (true) {
      for (let i = this.#start; i + 1 < this.#end; i++) {
        if (this.#buf[i] === 13 && this.#buf[i + 1] === 10) {
          const text = dec.decode(this.#buf.subarray(this.#start, i));
          this.#start = i + 2;
          return text;
        }
      }
      if (this.#end - this.#start > 8192) throw new Error("a chunk line over 8 KiB");
      if (!await this.#fill()) throw new Error("the stream ended inside a chunked body");
    }
  }

  /** Up to `n` bytes of what is buffered already (no read), consumed; a view, valid until the next read. */
  buffered(n: number): Uint8Array {
    const k = Math.min(n, this.#end - this.#start);
    const out = this.#buf.subarray(this.#start, this.#start + k);
    this.#start += k;
    return out;
  }

  /** Copies exactly `n` bytes to `to`. */
  async copy(n: number, to: Duplex): Promise<void> {
    let left = n;
    while (left > 0) {
      if (this.#end === this.#start && !await this.#fill()) throw new Error("the stream ended inside a body");
      const k = Math.min(left, this.#end - this.#start);
      await writeAll(to, this.#buf.subarray(this.#start, this.#start + k));
      this.#start += k;
      left -= k;
    }
  }
}

/** A request head, parsed as far as forwarding needs. */
export interface ForwardHead {
  host: string;
  port: number;
  /** The request target up to its path, as the client wrote it (`http://host:port`). */
  origin: string;
  /** The head in origin form, `Proxy-*` headers dropped, ending in `\r\n\r\n`. */
  text: string;
  /** `Content-Length`, or -1 for chunked, or 0. */
  body: number;
  /** The request asks to switch protocols (`Connection: upgrade`, `Upgrade: ...`: a WebSocket). */
  upgrade: boolean;
}

/**
 * `head` (request line and headers), or why it cannot be forwarded. With `bound` (the connection's
 * first head), a target written with the same origin text is taken as that host and port without
 * parsing the URL again (a model loop sends one request a turn on one connection); any other is
 * parsed in full, and `forwardHttp` ends the connection if it names another upstream.
 */
export function parseForwardHead(head: string, bound?: ForwardHead): ForwardHead | { error: string } {
  const lines = head.split("\r\n");
  const [method, target = "", version] = lines[0].split(" ");
  let host: string, port: number, origin: string, path: string;
  if (bound && target.startsWith(bound.origin) && target[bound.origin.length] === "/") {
    ({ host, port, origin } = bound);
    path = target.slice(origin.length);
  } else {
    let u: URL;
    try {
      u = new URL(target);
    } catch {
      return { error: "a proxy request names an absolute http:// URL" };
    }
    if (u.protocol !== "http:") return { error: "only http:// is forwarded; use CONNECT for others" };
    host = u.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    port = u.port !== "" ? Number(u.port) : 80;
    path = `${u.pathname}${u.search}`;
    // the text before the path: "http://" and the authority, up to the first "/", "?" or "#"
    const rest = target.slice("http://".length);
    const end = rest.search(/[/?#]/);
    origin = target.slice(0, "http://".length + (end < 0 ? rest.length : end));
    if (!/^http:\/\//i.test(origin)) origin = "\0"; // matches no later target
  }
  let body = 0;
  let upgradeHeader = false, connectionUpgrade = false;
  const headers: string[] = [];
  for (const l of lines.slice(1)) {
    const name = l.slice(0, l.indexOf(":")).trim().toLowerCase();
    const value = l.slice(l.indexOf(":") + 1).trim();
    if (name.startsWith("proxy-")) continue;
    if (name === "transfer-encoding" && /chunked/i.test(value)) body = -1;
    if (name === "upgrade" && value !== "") upgradeHeader = true;
    if (name === "connection" && value.split(",").some((t) => t.trim().toLowerCase() === "upgrade")) {
      connectionUpgrade = true;
    }
    if (name === "content-length" && body !== -1) {
      if (!/^\d+$/.test(value)) return { error: "a Content-Length that is not a number" };
      body = Number(value);
    }
    headers.push(l);
  }
  return {
    host,
    port,
    origin,
    text: [`${method} ${path} ${version ?? "HTTP/1.1"}`, ...headers].join("\r\n") + "\r\n\r\n",
    body,
    upgrade: upgradeHeader && connectionUpgrade,
  };
}

/** Copies one request body of `framing` (`ForwardHead.body`) from `from` to `to`. */
async function copyBody(from: BufConn, to: Duplex, framing: number): Promise<void> {
  if (framing > 0) return await from.copy(framing, to);
  if (framing === 0) return;
  while (true) {
    const sizeLine = await from.line();
    await writeAll(to, enc.encode(sizeLine + "\r\n"));
    const size = parseInt(sizeLine.split(";")[0].trim(), 16);
    if (!Number.isFinite(size) || size < 0) throw new Error("a bad chunk size");
    if (size === 0) {
      // trailers, up to the empty line
      while (true) {
        const t = await from.line();
        await writeAll(to, enc.encode(t + "\r\n"));
        if (t === "") return;
      }
    }
    await from.copy(size + 2, to); // the data and its CRLF
  }
}

/**
 * Sends `head` and its body upstream: with the part of a counted body the client has sent already
 * in the same write (one system call a request, where a head and its body apart were two), then
 * the rest as it comes.
 */
async function sendHead(client: BufConn, up: Duplex, head: ForwardHead): Promise<void> {
  const text = enc.encode(head.text);
  if (head.body <= 0) {
    await writeAll(up, text);
    return await copyBody(client, up, head.body);
  }
  const have = client.buffered(head.body);
  const out = new Uint8Array(text.length + have.length);
  out.set(text);
  out.set(have, text.length);
  await writeAll(up, out);
  if (have.length < head.body) await client.copy(head.body - have.length, up);
}

/**
 * Forwards the requests of `client` (whose first head is `first`) to the upstream `open` gives for
 * the first one, until either side ends or a head names another upstream.
 * @param open checks and connects the first request's host and port; undefined when refused
 *   (it answered the client itself)
 */
export async function forwardHttp(
  client: BufConn,
  first: ForwardHead,
  open: (host: string, port: number) => Promise<Duplex | undefined>,
): Promise<void> {
  const up = await open(first.host, first.port);
  if (!up) return;
  const responses = pump(up, client.conn);
  let head: ForwardHead | { error: string } = first;
  try {
    while (true) {
      if ("error" in head || head.host !== first.host || head.port !== first.port) break;
      await sendHead(client, up, head);
      if (head.upgrade) {
        // a WebSocket (`ws://` through the proxy): from here on the bytes are the new protocol's,
        // both ways, to the upstream this connection was checked for
        const early = client.take();
        if (early.length) await writeAll(up, early);
        await pump(client.conn, up);
        await responses;
        break;
      }
      const next = await client.head();
      if (next === undefined) {
        await up.closeWrite().catch(() => undefined);
        await responses;
        return;
      }
      head = parseForwardHead(next, first);
    }
  } catch {
    // a broken request or a closed side: the pair ends
  }
  closeQuietly(up);
  closeQuietly(client.conn);
  await responses;
}
