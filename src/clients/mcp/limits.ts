/**
 * How much one message from an MCP server may weigh, and the HTTP side of holding a server to it.
 *
 * Owns `DEFAULT_MAX_MESSAGE_BYTES` (64 MiB: a tool result, a resource, any JSON-RPC message; a
 * connection's `maxMessageBytes` changes it) and `boundedBody`, which wraps the body of an HTTP
 * response the SDK is about to read so that it errors as soon as one message goes past the limit:
 * a JSON body past the limit in total, an event stream when one event (the bytes between two
 * blank lines) does. Over stdio the line splitter bounds each line (`stdio_transport.ts`).
 *
 * Why at the body: the SDK reads a response whole (`response.json()`) or an event stream event
 * by event, with no limit of its own, so a hostile server could make it buffer hundreds of MB
 * before anything looks at them. Counting the bytes as they stream stops it a chunk past the
 * limit; the error cancels the response, which closes the connection to the server.
 *
 * Invariant: a body within the limit passes unchanged, byte for byte and chunk for chunk.
 */

/** Largest message accepted from a server unless a connection says otherwise: 64 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** A server's message went past the connection's limit (the error the body's reader sees). */
export class MessageTooLarge extends Error {
  /**
   * @param server the server's name
   * @param limit the limit, in bytes
   */
  constructor(readonly server: string, readonly limit: number) {
    super(`server '${server}' sent a message larger than ${limit} bytes (max_message_bytes)`);
    this.name = "MessageTooLarge";
  }
}

const LF = 10;
const CR = 13;

/**
 * `res` with a body that errors with `MessageTooLarge` once a message in it passes `limit`
 * bytes: the whole body for JSON (and anything else), each event for `text/event-stream`.
 * `onCut` hears of it first (the transport words the failure of the request it belonged to).
 */
export function boundedBody(
  res: Response,
  server: string,
  limit: number,
  onCut?: (e: MessageTooLarge) => void,
): Response {
  if (!res.body || limit === Infinity) return res;
  const type = res.headers.get("content-type") ?? "";
  const sse = /^\s*text\/event-stream/i.test(type);
  let size = 0;
  // Event streams: bytes since the last blank line, and whether the current line is empty so far.
  let lineEmpty = true;
  let afterCr = false;
  /** True once `chunk` takes the message past the limit. */
  const over = (chunk: Uint8Array): boolean => {
    if (!sse) return (size += chunk.length) > limit;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === LF && afterCr) {
        afterCr = false;
        continue;
      }
      afterCr = b === CR;
      if (b === LF || b === CR) {
        if (lineEmpty) size = 0; // a blank line: the event is over
        lineEmpty = true;
      } else {
        lineEmpty = false;
        if (++size > limit) return true;
      }
    }
    return false;
  };
  // A pull-through stream rather than `pipeThrough`: a third of the cost per response.
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      const r = await reader.read();
      if (r.done) return c.close();
      if (over(r.value)) {
        const e = new MessageTooLarge(server, limit);
        onCut?.(e);
        await reader.cancel(e).catch(() => undefined);
        return c.error(e);
      }
      c.enqueue(r.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
