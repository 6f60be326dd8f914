/**
 * Reading a model server's answer within a size: the `max_response_bytes` of a request.
 *
 * Owns `ResponseTooLarge` (what the readers throw once an answer passes the limit; the transport
 * words it as an `LlmError`), `readBody` (a JSON answer, whole) and `readHead` (the start of an
 * error answer, for its message). Server-sent events are counted by `sse.ts` as they stream.
 *
 * Why: `Response.text()` buffers whatever the server sends, so a hostile or broken server could
 * fill the memory before anything looked at the answer. A body with a `Content-Length` past the
 * limit is refused before any of it is read; one without (chunked, or compressed: the length is
 * then the compressed size) is counted as it streams and cut a chunk past the limit, the rest of
 * it unread (the connection is closed).
 *
 * Invariant: a body within the limit is read as `Response.text()` would read it (UTF-8, a BOM
 * dropped); one that declares its length the fast way (`text()` itself).
 */
import { concatBytes, readAtMost } from "../../util/bytes.ts";

/** Default `max_response_bytes`: 64 MiB, beyond any answer a model gives (a 128k-token stream is ~30 MB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** An answer went past the request's limit. */
export class ResponseTooLarge extends Error {
  /** @param limit the limit, in bytes */
  constructor(readonly limit: number) {
    super(`response is larger than ${limit} bytes (max_response_bytes)`);
    this.name = "ResponseTooLarge";
  }
}

/** The declared length of `res`'s body when it is the length of what `text()` reads, else undefined. */
function declaredLength(res: Response): number | undefined {
  const len = res.headers.get("content-length");
  const coding = res.headers.get("content-encoding");
  if (len === null || !/^\s*\d+\s*$/.test(len)) return undefined;
  if (coding !== null && coding.trim().toLowerCase() !== "identity") return undefined;
  return Number(len);
}

/** The body of `res` as text; throws `ResponseTooLarge` once it passes `max` bytes. */
export async function readBody(res: Response, max: number): Promise<string> {
  const declared = declaredLength(res);
  if (declared !== undefined) {
    if (declared > max) {
      await res.body?.cancel().catch(() => undefined);
      throw new ResponseTooLarge(max);
    }
    return await res.text();
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  let bytes: Uint8Array | undefined;
  try {
    bytes = await readAtMost(reader, max);
  } finally {
    reader.releaseLock();
  }
  if (bytes === undefined) throw new ResponseTooLarge(max);
  return new TextDecoder().decode(bytes);
}

/** At most `max` bytes of the start of `res`'s body as text; the rest is not read. */
export async function readHead(res: Response, max: number): Promise<string> {
  if (!res.body) return "";
  const parts: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  try {
    while (size < max) {
      const { value, done } = await reader.read();
      if (done) break;
      const part = value.length > max - size ? value.subarray(0, max - size) : value;
      parts.push(part);
      size += part.length;
    }
    await reader.cancel().catch(() => undefined);
  } finally {
    reader.releaseLock();
  }
  return new TextDecoder().decode(concatBytes(parts, size));
}
