/**
 * Splitting a byte stream into lines, in time linear in its size, with a bound on the longest
 * line (bottom layer: imports nothing of ours).
 *
 * Owns `LineSplitter`: chunks of bytes in (split anywhere, even inside a UTF-8 sequence or
 * between the CR and the LF of a CRLF), complete lines out as strings. Line ends: LF, a CR just
 * before it dropped (the newline-delimited JSON-RPC of MCP over stdio), or with `cr` also a CR
 * alone, CRLF counting as one end (server-sent events). A byte-order mark at the very start of
 * the stream is dropped, as a streaming `TextDecoder` would.
 *
 * Why: the obvious loop — append the chunk to a string, search the string from its start — scans
 * a long line again with every chunk and copies it again with every append: a 50 MB line in 64 KB
 * chunks costs hundreds of times its size. Here each byte is searched once per line-end byte, and
 * a line that spans chunks is kept as its pieces and joined once, when its end arrives.
 *
 * Invariants: a line is decoded only once it is complete, so a character split across chunks
 * stays whole; `work` counts the bytes searched, copied and decoded, at most five times the bytes
 * pushed (what the tests hold it to); a line past `maxLineBytes` throws `LineTooLong` as soon as
 * the part of it seen so far is past the limit, before that part is kept — after which the
 * splitter is not used again. The caller may reuse a chunk's buffer once `push` returned (the
 * pieces kept are copies).
 */

/** A line went past the splitter's `maxLineBytes`. */
export class LineTooLong extends Error {
  /** @param limit the `maxLineBytes` it went past */
  constructor(readonly limit: number) {
    super(`a line is longer than ${limit} bytes`);
    this.name = "LineTooLong";
  }
}

/** How a `LineSplitter` splits. */
export interface LineSplitterOptions {
  /** A CR alone ends a line too, and CRLF is one end (server-sent events). Default: LF only. */
  cr?: boolean;
  /** Longest line accepted, in bytes without its end. Default: no limit. */
  maxLineBytes?: number;
}

const LF = 10;
const CR = 13;

/** Bytes in, lines out; see the module doc. */
export class LineSplitter {
  /** Bytes searched, copied and decoded so far (the tests' measure of the work done). */
  work = 0;
  readonly #cr: boolean;
  readonly #max: number;
  readonly #dec = new TextDecoder("utf-8", { ignoreBOM: true });
  /** Copies of the pieces of the line not yet ended, oldest first. */
  #pieces: Uint8Array[] = [];
  #pending = 0;
  /** `cr` mode: the last chunk ended with a CR, so an LF opening the next one belongs to it. */
  #afterCr = false;
  #first = true;

  constructor(opts: LineSplitterOptions = {}) {
    this.#cr = opts.cr === true;
    this.#max = opts.maxLineBytes ?? Infinity;
  }

  /** Bytes of the line not yet ended. */
  get pendingBytes(): number {
    return this.#pending;
  }

  /** Consumes `chunk`; returns the lines it completed, in order. Throws `LineTooLong`. */
  push(chunk: Uint8Array): string[] {
    const out: string[] = [];
    const n = chunk.length;
    let start = 0;
    if (n === 0) return out;
    if (this.#afterCr) {
      this.#afterCr = false;
      if (chunk[0] === LF) start = 1;
    }
    // The next LF / CR at or after `start`, searched for again only once passed (-1: none left).
    let lf = -2;
    let cr = this.#cr ? -2 : -1;
    while (start < n) {
      if (lf !== -1 && lf < start) lf = this.#find(chunk, LF, start);
      if (cr !== -1 && cr < start) cr = this.#find(chunk, CR, start);
      const end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      if (end < 0) break;
      let stop = end;
      let next = end + 1;
      if (chunk[end] === CR) {
        if (end + 1 < n) {
          if (chunk[end + 1] === LF) next = end + 2;
        } else this.#afterCr = true;
      } else if (!this.#cr) {
        // LF mode: a CR just before the LF is part of the line end (in this chunk or the last piece).
        if (end > start && chunk[end - 1] === CR) stop = end - 1;
        else if (end === start && this.#endsWithCr()) this.#dropLastByte();
      }
      out.push(this.#line(chunk, start, stop));
      start = next;
    }
    if (start < n) this.#keep(chunk, start);
    return out;
  }

  /** The rest of the stream, not ended by a line end (`undefined` when there is none). */
  finish(): string | undefined {
    if (this.#pieces.length === 0) return undefined;
    return this.#line(new Uint8Array(), 0, 0);
  }

  #find(chunk: Uint8Array, byte: number, from: number): number {
    const at = chunk.indexOf(byte, from);
    this.work += (at < 0 ? chunk.length : at + 1) - from;
    return at;
  }

  #check(bytes: number): void {
    if (bytes > this.#max) throw new LineTooLong(this.#max);
  }

  #keep(chunk: Uint8Array, from: number): void {
    this.#check(this.#pending + chunk.length - from);
    this.#pieces.push(chunk.slice(from));
    this.#pending += chunk.length - from;
    this.work += chunk.length - from;
  }

  #endsWithCr(): boolean {
    const last = this.#pieces[this.#pieces.length - 1];
    return last !== undefined && last[last.length - 1] === CR;
  }

  #dropLastByte(): void {
    const i = this.#pieces.length - 1;
    const last = this.#pieces[i];
    if (last.length === 1) this.#pieces.pop();
    else this.#pieces[i] = last.subarray(0, last.length - 1);
    this.#pending--;
  }

  /** The line made of the pieces kept and `chunk[from, to)`, decoded; the pieces are dropped. */
  #line(chunk: Uint8Array, from: number, to: number): string {
    const size = this.#pending + to - from;
    this.#check(size);
    let bytes: Uint8Array;
    if (this.#pieces.length === 0) bytes = chunk.subarray(from, to);
    else {
      bytes = new Uint8Array(size);
      let o = 0;
      for (const p of this.#pieces) {
        bytes.set(p, o);
        o += p.length;
      }
      bytes.set(chunk.subarray(from, to), o);
      this.work += size;
      this.#pieces = [];
      this.#pending = 0;
    }
    this.work += size;
    let line = this.#dec.decode(bytes);
    if (this.#first) {
      this.#first = false;
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    }
    return line;
  }
}
