/**
 * Telling connected clients that the block registry changed.
 *
 * The registry is re-scanned on every request anyway; this is for clients that cache the tool
 * list (most do). The watcher re-scans the block roots on an interval and, when the set of
 * blocks (names, tiers, paths, descriptions, what their headers declare) differs from the last
 * scan, sends `notifications/tools/list_changed`, `notifications/resources/list_changed` and
 * `notifications/prompts/list_changed`:
 * - to every tracked server instance (stdio connections and 2025-era HTTP sessions; on a
 *   2026-07-28 stdio connection the SDK routes them onto the client's `subscriptions/listen`);
 * - through every extra notifier (the HTTP handler's bus for 2026-07-28 listen streams).
 *
 * Polling rather than file-system events because a root that does not exist yet (a fresh
 * `.agent-block/blocks/`) must be seen the moment it appears, and a scan is a few directory reads.
 *
 * Invariant: an instance that can no longer send (closed, or a discarded era probe) is dropped
 * from the set at its first failed send; nothing here ever throws into the timer.
 */
import type { Server } from "@modelcontextprotocol/server";
import type { BlockEntry } from "../blocks/registry.ts";
import type { Logger } from "../obs/log.ts";

/** What identifies the registry's state: names, tiers, paths, descriptions and MCP declarations. */
export function registrySignature(blocks: BlockEntry[]): string {
  return JSON.stringify(
    blocks.map((
      b,
    ) => [b.name, b.tier, b.path, b.description, b.declaration ?? null, b.declarationError ?? null]),
  );
}

/** Watches the registry and notifies clients of changes. */
export class RegistryWatcher {
  readonly #servers = new Set<Server>();
  readonly #extra: (() => void)[] = [];
  #last: string;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly scan: () => BlockEntry[], private readonly log: Logger) {
    this.#last = registrySignature(scan());
  }

  /** Notifies `server` of later changes (returns it, for use inside a factory). */
  track(server: Server): Server {
    this.#servers.add(server);
    return server;
  }

  /** Calls `fn` on every change as well (e.g. an HTTP handler's `notify.toolsChanged`). */
  alsoNotify(fn: () => void): void {
    this.#extra.push(fn);
  }

  /** Number of tracked instances. */
  get tracked(): number {
    return this.#servers.size;
  }

  /** Re-scans now; notifies and returns true when the registry changed. */
  check(): boolean {
    let sig: string;
    try {
      sig = registrySignature(this.scan());
    } catch (e) {
      this.log.warn(`registry scan failed: ${(e as Error).message}`);
      return false;
    }
    if (sig === this.#last) return false;
    this.#last = sig;
    this.log.debug("the block registry changed: notifying clients");
    for (const server of [...this.#servers]) {
      const drop = () => this.#servers.delete(server);
      try {
        server.sendToolListChanged().catch(drop);
        server.sendResourceListChanged().catch(drop);
        if (server.getCapabilities().prompts) server.sendPromptListChanged().catch(drop);
      } catch {
        drop();
      }
    }
    for (const fn of this.#extra) {
      try {
        fn();
      } catch (e) {
        this.log.warn(`list_changed notification failed: ${(e as Error).message}`);
      }
    }
    return true;
  }

  /** Starts polling every `intervalMs`. */
  start(intervalMs = 1000): void {
    this.stop();
    this.#timer = setInterval(() => this.check(), intervalMs);
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
