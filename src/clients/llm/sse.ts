/**
 * Server-sent events: bytes in, `{event, data}` records out, per the WHATWG EventSource rules
 * both providers follow (`event:` / `data:` lines, a blank line ends a record, `:` starts a
 * comment, LF, CRLF and CR all end lines, multi-line `data` joined with `\n`).
 *
 * Owns nothing about what the events mean; `anthropic_stream.ts` and `openai_stream.ts` do.
 * Invariant: a record is only yielded once its terminating blank line arrived, so a stream cut
 * in the middle of a record never yields half of it.
 */

/** One event. `event` is `"message"` when the record named none. */
export interface SseEvent {
  event: string;
  data: string;
}

/** Reads SSE records from a byte stream. Aborting `signal` ends the read with its reason. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buf = "";
  let event = "";
  let data: string[] = [];
  let hasData = false;
  const reader = body.getReader();
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let start = 0;
      while (true) {
        let nl = -1;
        for (let i = start; i < buf.length; i++) {
          const c = buf.charCodeAt(i);
          if (c === 10 || c === 13) {
            nl = i;
            break;
          }
        }
        if (nl < 0) break;
        // A CR at the very end may be the first half of a CRLF: wait for more bytes.
        if (buf.charCodeAt(nl) === 13 && nl === buf.length - 1) break;
        const line = buf.slice(start, nl);
        start = nl + (buf.charCodeAt(nl) === 13 && buf.charCodeAt(nl + 1) === 10 ? 2 : 1);
        if (line === "") {
          if (hasData) yield { event: event || "message", data: data.join("\n") };
          event = "";
          data = [];
          hasData = false;
          continue;
        }
        if (line.charCodeAt(0) === 58 /* : */) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? "" : line.slice(colon + 1);
        if (val.charCodeAt(0) === 32) val = val.slice(1);
        if (field === "event") event = val;
        else if (field === "data") {
          data.push(val);
          hasData = true;
        }
      }
      buf = buf.slice(start);
    }
  } finally {
    reader.releaseLock();
  }
}
