/**
 * How much one message from an MCP server may weigh, and the HTTP side of holding a server to it;
 * the same reader of an HTTP response's body ends it when its request is aborted.
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
 * The same wrapper ends the body when the request it answers is aborted (`BodyWatch.signal`):
 * it cancels the body, which closes the connection (how a 2026-07-28 client cancels a request
 * over Streamable HTTP: the server sees the exchange close), and errors it with the abort's
 * reason for the SDK still reading it. Deno's fetch (2.9) cannot be left to do it: it ties the
 * response body to the abort through an internal signal that follows the request's signal
 * (`new Request` makes one), and a source signal holds the signals following it only by a weak
 * reference, the internal abort steps fetch registers not keeping it alive. Once fetch has
 * resolved nothing else holds that signal, so a garbage collection between the response's
 * headers and the abort (a long-lived process, a long call) drops it: the abort never reaches the
 * body, the connection stays open, and the server's tool runs on. An event listener on the
 * request's signal, as here, is kept alive by the signals it follows, and it is removed once the
 * body ended, was cut or cancelled.
 *
 * Invariant: a body within the limit passes unchanged, byte for byte and chunk for chunk, until
 * its request is aborted.
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

/** What else the body of a response is held to besides the size limit. */
export interface BodyWatch {
  /** Hears of a cut first (the transport words the failure of the request it belonged to). */
  onCut?: (e: MessageTooLarge) => void;
  /**
   * The signal of the request the response answers: its abort cancels the body, which closes the
   * connection, and errors the body with the abort's reason (see the module doc for why Deno's
   * own fetch cannot be left to do it).
   */
  signal?: AbortSignal | null;
}

/**
 * `res` with a body that errors with `MessageTooLarge` once a message in it passes `limit`
 * bytes: the whole body for JSON (and anything else), each event for `text/event-stream`; and
 * that is cancelled (the connection closed) and errored when `watch.signal` aborts.
 */
export function boundedBody(
  res: Response,
  server: string,
  limit: number,
  watch: BodyWatch = {},
): Response {
  const { onCut, signal } = watch;
  if (!res.body || (limit === Infinity && !signal)) return res;
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
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  // Set once the body ended, was cut, cancelled or aborted: nothing more to do for it.
  let settled = false;
  const settle = () => {
    settled = true;
    signal?.removeEventListener("abort", onAbort);
  };
  function onAbort(): void {
    if (settled) return;
    settle();
    const reason = signal!.reason;
    // Cancelling Deno's body closes its resource, and so the connection: the server sees the
    // request end. The reader still waiting on this body hears the abort, as from Deno's fetch.
    reader.cancel(reason).catch(() => undefined);
    controller.error(reason);
  }
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async pull(c) {
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await reader.read();
      } catch (e) {
        if (settled) return;
        settle();
        throw e;
      }
      if (settled) return; // aborted while the read was pending
      if (r.done) {
        settle();
        return c.close();
      }
      if (over(r.value)) {
        settle();
        const e = new MessageTooLarge(server, limit);
        onCut?.(e);
        await reader.cancel(e).catch(() => undefined);
        return c.error(e);
      }
      c.enqueue(r.value);
    },
    cancel(reason) {
      settle();
      return reader.cancel(reason);
    },
  });
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort);
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
