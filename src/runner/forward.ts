/**
 * Forwarding a child's output: line by line, each line prefixed, into a sink, keeping the tail.
 *
 * Owns the line splitting and the bounds: a line longer than `LINE_MAX` is emitted in pieces (a
 * block printing without newlines must not grow a buffer without bound), and the kept text is
 * cut back to its last `KEEP` characters once it has doubled. Decoding is UTF-8, lossy: this is
 * for logs and error reports, never for a value.
 *
 * Invariant: `done` settles once the stream has ended, broken or been cancelled — it never
 * rejects — and by then every byte read has been emitted.
 */

const enc = new TextEncoder();
const KEEP = 64 * 1024;
const LINE_MAX = 16 * 1024;

/** A stream being forwarded: `done` settles at its end; `cancel` stops reading early. */
export interface Forwarding {
  done: Promise<void>;
  cancel(): void;
}

/** Text kept from a forwarded stream (its last 64..128 KiB). */
export interface Kept {
  text: string;
}

/** Forwards `stream` to `sink` line by line with `prefix`; appends what it reads to `keep`. */
export function forwardLines(
  stream: ReadableStream<Uint8Array>,
  prefix: string,
  sink: (bytes: Uint8Array) => void,
  keep?: Kept,
): Forwarding {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let pending = "";
  const emit = (line: string) => sink(enc.encode(prefix + line + "\n"));
  const take = (text: string) => {
    if (keep) {
      keep.text += text;
      if (keep.text.length > KEEP * 2) keep.text = keep.text.slice(-KEEP);
    }
    pending += text;
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      emit(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
    if (pending.length > LINE_MAX) {
      emit(pending);
      pending = "";
    }
  };
  const done = (async () => {
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        take(dec.decode(value, { stream: true }));
      }
    } catch { /* cancelled, or the pipe broke: what arrived has been taken */ }
    take(dec.decode());
    if (pending.length) emit(pending);
  })();
  return { done, cancel: () => void reader.cancel().catch(() => undefined) };
}

/** The last `lines` non-empty lines of `text`. */
export function tailLines(text: string, lines = 20): string {
  return text.split(/\r?\n/).filter((l) => l.length).slice(-lines).join("\n");
}
