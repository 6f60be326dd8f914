/**
 * `agent-block mcp` over stdio: the block server on the process's stdin/stdout, for both eras.
 *
 * Owns the stdio lifetime: `serveStdio` (SDK v2) picks the era from the client's opening message
 * and pins one instance from the factory for the connection; the connection ends when stdin
 * reaches end-of-file (the client went away; requests in flight are aborted unanswered, as the
 * SDK does) or when `stop` aborts (then `drain` is awaited first, so calls in flight get their
 * answer), at which point the returned promise resolves.
 *
 * Resource updates in both eras (with `resourcePaths`, i.e. `--expose blocks`):
 * - 2025 era: `resources/subscribe` reaches the pinned instance, which watches the resource itself
 *   (`server.ts`, `subscriptions.ts`).
 * - 2026-07-28 era: the SDK's entry answers `subscriptions/listen` itself and never shows it to
 *   the instance; it only routes the instance's `notifications/resources/updated` onto the
 *   listen streams whose `resourceSubscriptions` name the URI. So the wire is tapped
 *   (`ListenTap`): when the entry acknowledges a listen stream, the resources it honoured are held
 *   in a `SharedSubscriptions` (watched once however many streams hold them) until the stream
 *   ends — the client cancels it (`notifications/cancelled`), the entry closes it (its final
 *   result), or the connection closes. A change is sent through the pinned instance, and the
 *   entry stamps it onto each stream holding the URI.
 *
 * Invariant: stdout carries protocol messages only. Logs and everything the blocks print go to
 * stderr (see `src/runner/child.ts`); `StdioServerTransport` is created without arguments, which is
 * the form that works under Deno. The tap only reads messages; it never changes, drops or adds one.
 */
import process from "node:process";
import {
  type JSONRPCMessage,
  type RequestId,
  type Server,
  SUBSCRIPTION_ID_META_KEY,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import type { Logger } from "../obs/log.ts";
import { SharedSubscriptions } from "./subscriptions.ts";

/**
 * The stdio wire, read on the way through: the resources each acknowledged 2026-07-28 listen
 * stream honours are held in `subs` while the stream is open.
 */
export class ListenTap implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  /** The open listen streams holding resources, by their request id: each one's release. */
  readonly #held = new Map<RequestId, () => void>();

  constructor(private readonly wire: Transport, private readonly subs: SharedSubscriptions) {}

  /** The listen streams holding resources now (tests, logs). */
  get streams(): number {
    return this.#held.size;
  }

  start(): Promise<void> {
    this.wire.onmessage = (message, extra) => {
      this.inbound(message);
      this.onmessage?.(message, extra);
    };
    this.wire.onerror = (e) => this.onerror?.(e);
    this.wire.onclose = () => {
      this.releaseAll();
      this.onclose?.();
    };
    return this.wire.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.outbound(message);
    return this.wire.send(message, options);
  }

  close(): Promise<void> {
    this.releaseAll();
    return this.wire.close();
  }

  setProtocolVersion = (version: string): void => this.wire.setProtocolVersion?.(version);

  /** A client's message: a cancelled listen stream releases what it held. */
  inbound(message: JSONRPCMessage): void {
    if (!("method" in message) || "id" in message || message.method !== "notifications/cancelled") return;
    const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
    if (id !== undefined) this.#release(id);
  }

  /** A message to the client: an acknowledged stream holds its resources; its final answer releases them. */
  outbound(message: JSONRPCMessage): void {
    if ("method" in message) {
      if ("id" in message || message.method !== "notifications/subscriptions/acknowledged") return;
      const params = message.params as {
        notifications?: { resourceSubscriptions?: unknown };
        _meta?: Record<string, unknown>;
      } | undefined;
      const id = params?._meta?.[SUBSCRIPTION_ID_META_KEY] as RequestId | undefined;
      const uris = params?.notifications?.resourceSubscriptions;
      if (id === undefined || !Array.isArray(uris)) return;
      const mine = uris.filter((u): u is string => typeof u === "string");
      if (!mine.length) return;
      this.#release(id);
      this.#held.set(id, this.subs.hold(mine));
      return;
    }
    // A result or an error with a held stream's id: the stream is over.
    if ("id" in message && message.id !== undefined) this.#release(message.id);
  }

  /** The connection is over: every stream's resources are released. */
  releaseAll(): void {
    for (const id of [...this.#held.keys()]) this.#release(id);
  }

  #release(id: RequestId): void {
    const release = this.#held.get(id);
    if (!release) return;
    this.#held.delete(id);
    release();
  }
}

/** Serves `factory` over stdio; resolves when the client closes stdin or `stop` aborts. */
export function serveStdioUntilClosed(
  factory: () => Server,
  opts: {
    log: Logger;
    stop?: AbortSignal;
    drain?: () => Promise<unknown>;
    /**
     * The files a resource's content comes from (`resourcePaths`; `--expose blocks`): with it, the
     * resources of a 2026-07-28 client's `subscriptions/listen` streams are watched while the
     * streams are open, and their changes sent to them.
     */
    resourcePaths?: (uri: string) => string[] | undefined;
  },
): Promise<void> {
  return new Promise((resolve) => {
    // The instance the entry pinned: the last one the factory made (a discarded era probe is
    // replaced by the instance made after it).
    let pinned: Server | undefined;
    const listened = opts.resourcePaths
      ? new SharedSubscriptions({
        pathsOf: opts.resourcePaths,
        notify: (uri) => pinned ? pinned.sendResourceUpdated({ uri }) : Promise.resolve(),
        log: opts.log,
      })
      : undefined;
    const handle = serveStdio(() => (pinned = factory()), {
      onerror: (e) => opts.log.warn(`stdio: ${e.message}`),
      ...(listened ? { transport: new ListenTap(new StdioServerTransport(), listened) } : {}),
    });
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      process.stdin.off("end", finish);
      process.stdin.off("close", finish);
      opts.stop?.removeEventListener("abort", stopped);
      listened?.close();
      handle.close().catch(() => undefined).finally(() => resolve());
    };
    // Stopped from outside: answer what is in flight (the runs are being ended) before closing.
    const stopped = () => {
      (opts.drain?.() ?? Promise.resolve())
        .then(() => new Promise((r) => setTimeout(r, 0)))
        .finally(finish);
    };
    process.stdin.on("end", finish);
    process.stdin.on("close", finish);
    if (opts.stop?.aborted) stopped();
    else opts.stop?.addEventListener("abort", stopped, { once: true });
  });
}
