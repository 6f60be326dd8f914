/**
 * `resources/subscribe` of one connection: a subscribed resource's client is sent
 * `notifications/resources/updated { uri }` when the resource's content changes.
 *
 * What "changes" means for a block-backed resource: its content is what its block returns, so it
 * changes when the block's own file changes, or when one of the paths its header names with
 * `---@watch PATH` (a file, or anything under a directory; a template's variables filled in from
 * the subscribed URI) is created, written, removed or renamed. `agent-block://blocks/<name>` (a
 * block's source) changes with the block's file. A URI that names neither is acknowledged and
 * never notified.
 *
 * Owns, per subscribed URI, the watchers (`Deno.watchFs`) of the directories holding those paths
 * and the debounce of their events: a burst of events (an editor's save is several) is one
 * notification, sent `debounceMs` after the last of them. A file is watched through its
 * directory (not itself), so a save that replaces the file (write to a temporary file, then
 * rename) is still seen; a path that does not exist yet is watched through its nearest existing
 * ancestor, recursively, so its creation is seen. After each notification the paths are resolved
 * again (the block's header may now name others).
 *
 * `SharedSubscriptions` is the same for the 2026-07-28 era, where the subscriptions are the
 * `resourceSubscriptions` of open `subscriptions/listen` streams (over HTTP `http.ts` reads them
 * from the request, over stdio `stdio.ts` from the SDK entry's acknowledgement of the stream): a
 * URI is watched while a stream holds it.
 *
 * Invariants: one set of watchers per URI (subscribing again replaces it); `unsubscribe(uri)`
 * and `close()` (the connection closed) close them and cancel a pending notification, and nothing
 * is sent after; a watcher that fails (a watched directory removed) is logged and closed, never
 * thrown into the server; watches are read-only.
 */
import { dirname, join, resolve, sep } from "node:path";
import type { Logger } from "../obs/log.ts";

/** Debounce of a burst of file events, ms. */
export const UPDATE_DEBOUNCE_MS = 100;

/** What a subscription needs from the server. */
export interface SubscriptionHost {
  /** The absolute paths `uri`'s content comes from; undefined: a URI no block backs. */
  pathsOf: (uri: string) => string[] | undefined;
  /** Sends `notifications/resources/updated` for `uri`. */
  notify: (uri: string) => Promise<void>;
  log: Logger;
  debounceMs?: number;
}

interface Watched {
  watchers: Deno.FsWatcher[];
  /** The paths watched (real directories, as events name them). */
  paths: string[];
  /** The paths as `pathsOf` gave them (resolved): compared after a notification. */
  given: string;
  timer?: ReturnType<typeof setTimeout>;
}

/** The directory to watch for `path`, and whether recursively. */
function watchPoint(path: string): { dir: string; recursive: boolean; target: string } {
  let info: Deno.FileInfo | undefined;
  try {
    info = Deno.statSync(path);
  } catch { /* not there (yet) */ }
  if (info?.isDirectory) {
    const real = Deno.realPathSync(path);
    return { dir: real, recursive: true, target: real };
  }
  // A file (or a missing path): the nearest existing directory above it.
  let dir = dirname(path);
  const rest: string[] = [path.slice(dir.length + 1)];
  for (;;) {
    try {
      if (Deno.statSync(dir).isDirectory) break;
    } catch { /* keep climbing */ }
    const up = dirname(dir);
    if (up === dir) break;
    rest.unshift(dir.slice(up.length + 1));
    dir = up;
  }
  const real = Deno.realPathSync(dir);
  return { dir: real, recursive: rest.length > 1, target: join(real, ...rest) };
}

function givenKey(paths: string[]): string {
  return [...new Set(paths.map((p) => resolve(p)))].sort().join("\n");
}

/** The subscriptions of one connection. */
export class ResourceSubscriptions {
  readonly #subs = new Map<string, Watched>();
  #closed = false;

  constructor(private readonly host: SubscriptionHost) {}

  /** The URIs subscribed to (tests, logs). */
  get uris(): string[] {
    return [...this.#subs.keys()];
  }

  /** Starts notifying `uri`'s changes (replacing an earlier subscription to it). */
  subscribe(uri: string): void {
    if (this.#closed) return;
    this.#drop(uri);
    const paths = this.host.pathsOf(uri);
    if (!paths || paths.length === 0) return;
    const w: Watched = { watchers: [], paths: [], given: givenKey(paths) };
    this.#subs.set(uri, w);
    const byDir = new Map<string, { recursive: boolean; targets: string[] }>();
    for (const p of paths) {
      let point;
      try {
        point = watchPoint(resolve(p));
      } catch (e) {
        this.host.log.warn(`resources/subscribe ${uri}: cannot watch ${p}: ${(e as Error).message}`);
        continue;
      }
      const at = byDir.get(point.dir) ?? { recursive: false, targets: [] };
      at.recursive ||= point.recursive;
      at.targets.push(point.target);
      byDir.set(point.dir, at);
      w.paths.push(point.target);
    }
    for (const [dir, at] of byDir) {
      let watcher: Deno.FsWatcher;
      try {
        watcher = Deno.watchFs(dir, { recursive: at.recursive });
      } catch (e) {
        this.host.log.warn(`resources/subscribe ${uri}: cannot watch ${dir}: ${(e as Error).message}`);
        continue;
      }
      w.watchers.push(watcher);
      void this.#follow(uri, w, watcher, at.targets);
    }
    this.host.log.debug(`resources/subscribe ${uri}: watching ${w.paths.join(", ")}`);
  }

  /** Stops notifying `uri`. */
  unsubscribe(uri: string): void {
    this.#drop(uri);
  }

  /** The connection closed: every subscription ends. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const n = this.#subs.size;
    for (const uri of [...this.#subs.keys()]) this.#drop(uri);
    if (n) this.host.log.debug(`resources/subscribe: connection closed: ${n} subscription(s) ended`);
  }

  #drop(uri: string): void {
    const w = this.#subs.get(uri);
    if (!w) return;
    this.#subs.delete(uri);
    clearTimeout(w.timer);
    for (const watcher of w.watchers) {
      try {
        watcher.close();
      } catch { /* already closed */ }
    }
  }

  async #follow(uri: string, w: Watched, watcher: Deno.FsWatcher, targets: string[]): Promise<void> {
    const hits = (p: string) => targets.some((t) => p === t || p.startsWith(t + sep));
    try {
      for await (const ev of watcher) {
        if (this.#subs.get(uri) !== w) return;
        if (ev.kind === "access" || !ev.paths.some(hits)) continue;
        clearTimeout(w.timer);
        w.timer = setTimeout(() => this.#fire(uri, w), this.host.debounceMs ?? UPDATE_DEBOUNCE_MS);
      }
    } catch (e) {
      if (this.#subs.get(uri) === w) {
        this.host.log.warn(`resources/subscribe ${uri}: watching stopped: ${(e as Error).message}`);
      }
    }
  }

  #fire(uri: string, w: Watched): void {
    if (this.#closed || this.#subs.get(uri) !== w) return;
    this.host.notify(uri).catch((e) => {
      this.host.log.debug(`resources/updated ${uri} not sent: ${(e as Error).message}`);
    });
    // The block may now name other paths: watch what it names now.
    const now = this.host.pathsOf(uri);
    if (now && now.length && givenKey(now) !== w.given) this.subscribe(uri);
  }
}

/**
 * Subscriptions several holders share — the 2026-07-28 era's `subscriptions/listen` streams (of
 * every HTTP client, or of one stdio connection), whose `resourceSubscriptions` the server tells
 * through one notifier for all of them (the SDK sends each update to the streams naming it): a URI is
 * watched once while at least one open stream holds it, and released with the last.
 */
export class SharedSubscriptions {
  readonly #count = new Map<string, number>();
  readonly #subs: ResourceSubscriptions;

  constructor(private readonly host: SubscriptionHost) {
    this.#subs = new ResourceSubscriptions(host);
  }

  /** Holds `uris` (watched from now); the function returned releases them (once). */
  hold(uris: readonly string[]): () => void {
    const mine = [...new Set(uris)];
    for (const uri of mine) {
      const n = (this.#count.get(uri) ?? 0) + 1;
      this.#count.set(uri, n);
      if (n === 1) this.#subs.subscribe(uri);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const uri of mine) {
        const n = (this.#count.get(uri) ?? 1) - 1;
        if (n > 0) {
          this.#count.set(uri, n);
          continue;
        }
        this.#count.delete(uri);
        this.#subs.unsubscribe(uri);
        this.host.log.debug(`subscriptions/listen: ${uri} released (no open stream holds it)`);
      }
    };
  }

  /** The server is stopping: every watch ends. */
  close(): void {
    this.#count.clear();
    this.#subs.close();
  }
}
