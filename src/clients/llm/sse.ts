/**
 * Server-sent events: bytes in, `{event, data}` records out, per the WHATWG EventSource rules
 * both providers follow (`event:` / `data:` lines, a blank line ends a record, `:` starts a
 * comment, LF, CRLF and CR all end lines, multi-line `data` joined with `\n`).
 *
 * Owns nothing about what the events mean; `anthropic_stream.ts` and `openai_stream.ts` do.
 * Owns the size of a stream: past `maxBytes` in all, the read ends with `ResponseTooLarge`,
 * a chunk past the limit. Lines are split in time linear in the bytes (`util/lines.ts`), so a
 * hostile server's endless line costs no more than its size.
 *
 * Invariant: a record is only yielded once its terminating blank line arrived, so a stream cut
 * in the middle of a record never yields half of it.
 */
import { LineSplitter } from "../../util/lines.ts";
import { ResponseTooLarge } from "./body.ts";

/** One event. `event` is `"message"` when the record named none. */
export interface SseEvent {
  event: string;
  data: string;
}

/** Reads SSE records from a byte stream, at most `maxBytes` of it (default: no limit). */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  maxBytes = Infinity,
): AsyncGenerator<SseEvent> {
  const lines = new LineSplitter({ cr: true });
  let size = 0;
  let event = "";
  let data: string[] = [];
  let hasData = false;
  const reader = body.getReader();
  let ended = false;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      size += value.length;
      if (size > maxBytes) throw new ResponseTooLarge(maxBytes);
      for (const line of lines.push(value)) {
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
    }
  } finally {
    // Left early (too large, or the consumer stopped): the rest is not wanted, the connection goes.
    if (!ended) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
