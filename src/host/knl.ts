/**
 * The kernel's syscall surface: what `require("knl")` reaches in the host, and nothing more.
 *
 * Owns the host half of sessions — opening stores (the project's default database, with the
 * `.gitignore` of `src/knl/local_state.ts` beside it in `.agent-block/`, `{ sqlite = path }`, or
 * `"mem"`: one in-memory log per run), session trees opened and closed
 * in one transaction, appends, the two fixed reads and the read-only query — and the stamping of
 * every session's seed event `meta` with the run's labels (`--label`) and its correlation ids
 * (`run.correlation`: `trace_id`, `run_id`, `agent_id`, `agent_name`) when set, and of its `data` with the run's
 * script (`script`: `RunContext.script`, so `knl sessions` can say which block opened it). Every setting comes from the run
 * (`run.stores`, `run.settings`: the store path, the commit window, the busy timeout;
 * `run.correlation`),
 * never from the process.
 *
 * The functions live in the internal table and are handed to Lua as the module `knl.host`
 * (`package.loaded`), which only the sealed `knl` requires. They are synchronous: node:sqlite is,
 * and an append is far cheaper than a task switch. They are also `pure` host functions (they act
 * on the log itself), and the module owns the commit of the run's deferred events (a beat's, a
 * session's opening; see `writer.ts` and the kernel's durability note): the run has one
 * `EventWriter` per store it opened — its own queue, commit window and failures over the
 * process's shared connection — and an append with `defer` signals the engine, whose effect hook
 * commits THIS run's deferred events (each writer's in one transaction) before the run's next
 * host call that may act on the world (a model request is not one: the writer's commit window
 * commits them while it is in flight); the run's end commits what is left. Another run of the
 * process never commits, drops or fails this run's events, and a row of this run that the
 * database refuses fails this run only (at the next call through the store, when the commit that
 * met it had no caller). A watched run (`run.observe`) gives each of its writers the observer, so
 * every commit reaches it as the rows a reader will see (`src/obs/run_events.ts`). A traced run
 * (`run.trace`) is handed every row as the kernel hands it over, before it commits: the spans of
 * sessions, turns, model and tool calls are made from them (`src/obs/otel/tracer.ts`).
 *
 * Invariants:
 * - The data and meta of every event a run writes pass through the run's secrets
 *   (`run.secrets.maskJson`): a key a server echoed into an error, or that a block put in an
 *   event, is stored as `[redacted]`, so neither the database nor `knl export` holds it.
 * - A session this run opened and did not close is closed when the run ends with status
 *   `exit` (os.exit / job.defer: no Lua runs past them, so the host records the close) or
 *   `interrupted` (SIGINT/SIGTERM): the bracket closes either way.
 *   Only a process killed outright (SIGKILL) leaves a session visibly open.
 * - The busy timeout (`AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS`) is the run's for its own commits and
 *   reads; a file's connection opens with the first opener's (see `store.ts`).
 * - `meta` and `data` are JSON objects; integral floats keep their floatness.
 * - Host traffic the run reports (`run.recordTraffic`: `mesh_send`, `mesh_request`, `mesh_reply`,
 *   `mesh_received`, and the sandbox proxy's refusals, `net_denied`) is appended, deferred, to the session this run opened last and still has
 *   open; with no session open it is not recorded.
 */
import type { LuaEngine } from "../lua/engine.ts";
import type { RunContext } from "./context.ts";
import { Args } from "../lua/args.ts";
import { stringifyJson } from "../json/codec.ts";
import { LuaMulti, NullsAsNil } from "../json/values.ts";
import { type EventRow, type EventStore, type NewEvent, openStore } from "../knl/store.ts";
import { EventWriter } from "../knl/writer.ts";
import { DEFAULT_COMMIT_WINDOW_MS } from "../knl/commit_window.ts";
import { DEFAULT_BUSY_TIMEOUT_MS } from "../knl/busy_timeout.ts";
import { orderedIds, type RunCorrelationIds } from "../correlation.ts";
import { LUA_TNIL, LUA_TTABLE, LUA_TYPE_NAMES } from "../lua/capi.ts";
import { defaultStorePath, MEMORY, storePathFrom } from "../knl/paths.ts";
import { ignoreLocalState } from "../knl/local_state.ts";
import { dirname, join } from "node:path";
import { PUBLISHED_COLUMNS } from "../knl/schema.ts";
import setupSource from "./knl.lua" with { type: "text" };

/** The `meta` of a run's seed events: labels, then the run's correlation ids (those set). */
export function seedMeta(labels: Record<string, string>, ids: RunCorrelationIds): Record<string, unknown> {
  return { ...labels, ...orderedIds(ids) };
}

/** A new session id: time-ordered, unique across processes. */
export function newSessionId(): string {
  const rnd = crypto.getRandomValues(new Uint8Array(6));
  return `s_${Date.now().toString(36)}_${[...rnd].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

function jsonObject(fn: string, i: number, name: string, v: unknown): string {
  if (v === undefined) return "{}";
  if (v === null || typeof v !== "object" || Array.isArray(v) || v instanceof Uint8Array) {
    throw new Error(`${fn}: argument ${i} (${name}) must be a table with string keys`);
  }
  try {
    return stringifyJson(v);
  } catch (e) {
    throw new Error(`${fn}: argument ${i} (${name}) cannot be stored: ${(e as Error).message}`);
  }
}

/** Installs the `knl.host` module. */
export function installKnl(engine: LuaEngine, run: RunContext): void {
  /** Arguments of a raw function: positions in `tagged` keep integral floats as floats. */
  const rawArgs = (L: number, fn: string, tagged: number[]): Args => {
    const top = engine.api.gettop(L);
    const values: unknown[] = [];
    for (let i = 1; i <= top; i++) {
      values.push(engine.toJs(L, i, tagged.includes(i) ? { floats: "tagged" } : {}));
    }
    return new Args(fn, values);
  };
  // The run's writers, one per store it opened; a handle is an index into `handles`.
  const handles: EventWriter[] = [];
  const writers = new Map<EventStore, EventWriter>();
  let memory: EventWriter | undefined;
  const open = new Map<string, { store: EventWriter; id: string }>();
  // Every event's data and meta, as written: the run's secrets masked (an error a server echoed a
  // key into, a body a block logs). Without secrets this is one length check.
  const clean = (json: string): string => run.secrets.maskJson(json);

  const store = (a: Args, i = 1): EventWriter => {
    const h = a.integer(i, "store");
    const s = handles[h - 1];
    if (!s) a.fail(i, "store", "an open store handle", String(h));
    if (s.closed) throw new Error(`${a.fn}: the store ${s.path} is closed`);
    return s;
  };

  // The run's settings (parsed at the edge), given to each writer when it opens a store (the busy timeout is
  // also the connection's when this run is the first in the process to open the file).
  // A watched run's writers hand every commit to its observer (`src/obs/run_events.ts`).
  const observe = run.observe;
  const onCommit = observe && ((rows: readonly EventRow[]) => observe({ type: "events", rows }));
  const settings = () => ({
    commitWindowMs: run.settings.knlCommitMs ?? DEFAULT_COMMIT_WINDOW_MS,
    busyTimeoutMs: run.settings.knlBusyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    onCommit,
  });
  const writerFor = (path: string): EventWriter => {
    if (memory && path === MEMORY) return memory;
    const opts = settings();
    const s = openStore(path, opts);
    if (path === MEMORY) return memory = new EventWriter(s, opts);
    let w = writers.get(s);
    if (!w) {
      w = new EventWriter(s, opts);
      writers.set(s, w);
    }
    return w;
  };
  let ignoring = false; // the project's .agent-block/.gitignore was seen to this run
  const openFor = (spec: unknown): EventWriter => {
    if (spec === undefined || spec === "default") {
      const typed = run.stores?.kernel;
      const path = typed !== undefined
        ? storePathFrom(run.projectRoot, typed)
        : defaultStorePath(run.projectRoot);
      const w = writerFor(path);
      const stateDir = join(run.projectRoot, ".agent-block");
      if (!ignoring && dirname(path) === stateDir) ignoreLocalState(stateDir); // `git status` stays clean
      ignoring = true;
      return w;
    }
    if (spec === "mem") return writerFor(MEMORY);
    if (
      spec !== null && typeof spec === "object" && typeof (spec as { sqlite?: unknown }).sqlite === "string"
    ) {
      return writerFor(storePathFrom(run.projectRoot, (spec as { sqlite: string }).sqlite));
    }
    throw new Error(`knl.open: 'store' must be nil, "mem" or { sqlite = <path> }, got ${describe(spec)}`);
  };

  engine.define("@knl_open", {
    pure: true,
    sync: (a) => {
      const s = openFor(a.at(1));
      let h = handles.indexOf(s) + 1;
      if (h === 0) h = handles.push(s);
      return new LuaMulti([h, s.path]);
    },
  });

  // (store, nodes, defer?) with nodes { { owner, budget, scope, parent, labels, data }, ... }
  // -> ids, in one transaction (deferred with `defer`: see store.ts)
  engine.define("@knl_session_open", {
    pure: true,
    raw: (L) => {
      const a = rawArgs(L, "knl.session", [2]);
      const defer = a.at(3) === true;
      const s = store(a);
      const nodes = a.table(2, "nodes") as unknown as Record<string, unknown>[];
      const base = seedMeta(run.labels, run.correlation);
      const ids: string[] = [];
      const events = nodes.map((n, k) => {
        const id = newSessionId();
        ids.push(id);
        const data: Record<string, unknown> = { owner: n.owner ?? null };
        if (n.budget !== undefined) data.budget = n.budget;
        if (n.scope !== undefined) data.scope = n.scope;
        const parent = typeof n.parent_index === "number" ? ids[n.parent_index - 1] : n.parent;
        if (parent !== undefined) data.parent = parent;
        data.script = run.script;
        if (n.data !== undefined) Object.assign(data, n.data);
        const meta = { ...base, ...(n.labels as Record<string, unknown> | undefined ?? {}) };
        return {
          stream: id,
          kind: "session_open",
          data: clean(jsonObject("knl.session", 1, `node ${k + 1}`, data)),
          meta: clean(stringifyJson(meta)),
        };
      });
      if (defer) {
        s.deferMany(events);
        engine.effectPending();
      } else {
        s.appendMany(events);
      }
      run.trace?.rows(events);
      for (const id of ids) {
        open.set(`${s.path}\0${id}`, { store: s, id });
        run.sessionOpened(id);
      }
      return engine.pushResult(L, ids);
    },
  });

  // (store, ids, data) -> closes every id in one transaction
  engine.define("@knl_session_close", {
    pure: true,
    raw: (L) => {
      const a = rawArgs(L, "knl.session", [3]);
      const s = store(a);
      const ids = a.table(2, "ids") as unknown as string[];
      const data = clean(jsonObject("knl.session", 3, "data", a.at(3)));
      const closes = ids.map((id) => ({ stream: id, kind: "session_close", data, meta: "{}" }));
      s.appendMany(closes);
      run.trace?.rows(closes);
      for (const id of ids) open.delete(`${s.path}\0${id}`);
      return 0;
    },
  });

  // `meta` of an event: the table given, plus `beat` when the kernel passes one as an integer
  // (cheaper than converting a one-field table on every event of a beat).
  const metaJson = (fn: string, meta: unknown, beat: unknown): string => {
    if (typeof beat !== "number") return jsonObject(fn, 1, "event.meta", meta);
    if (meta === undefined) return `{"beat":${beat}}`;
    const m = { ...(meta as Record<string, unknown>), beat };
    return jsonObject(fn, 1, "event.meta", m);
  };

  const api = engine.api;
  // `data` / `meta` of an event straight from the stack: the JSON text written without an
  // intermediate JS value when the table is a plain object; anything else takes the general
  // path (conversion, then `jsonObject`), which raises the usual errors.
  const objectAt = (L: number, idx: number, fn: string, name: string): string => {
    if (api.type(L, idx) === LUA_TTABLE) {
      const fast = engine.converter.toJson(L, idx);
      if (fast !== undefined && fast.charCodeAt(0) === 123 /* { */) return clean(fast);
    }
    return clean(jsonObject(fn, 1, name, engine.toJs(L, idx, { floats: "tagged" })));
  };
  const metaAt = (L: number, idx: number, fn: string, beat: unknown): string => {
    if (typeof beat === "number" && api.type(L, idx) !== LUA_TNIL) {
      return clean(metaJson(fn, engine.toJs(L, idx, { floats: "tagged" }), beat));
    }
    const meta = objectAt(L, idx, fn, "event.meta");
    if (typeof beat !== "number") return meta;
    return `{"beat":${beat}}`; // no meta table: the beat alone
  };
  const scalarArgs = (L: number, fn: string, n: number): Args => {
    const values: unknown[] = [];
    for (let i = 1; i <= n; i++) {
      values.push(api.type(L, i) === LUA_TTABLE ? undefined : engine.toJs(L, i));
    }
    return new Args(fn, values);
  };

  // (store, stream, kind, data, meta, beat?, defer?) -> seq, position, epoch_ms (none when
  // deferred)
  engine.define("@knl_append", {
    pure: true,
    raw: (L) => {
      const a = scalarArgs(L, "s:append", 3);
      const s = store(a);
      const stream = a.string(2, "stream");
      const kind = a.string(3, "kind");
      const beat = engine.toJs(L, 6);
      const defer = api.toboolean(L, 7);
      const ev = {
        stream,
        kind,
        data: objectAt(L, 4, "s:append", "event.data"),
        meta: metaAt(L, 5, "s:append", beat),
      };
      run.trace?.rows([ev]);
      if (defer) {
        s.defer(ev);
        engine.effectPending();
        return 0;
      }
      const r = s.append(ev);
      return engine.pushResult(L, new LuaMulti([r.seq, r.position, r.epoch_ms]));
    },
  });

  // (store, stream, { { kind, data, meta }, ... }, beat?, defer?) -> last seq (none when
  // deferred); one transaction
  engine.define("@knl_append_many", {
    pure: true,
    raw: (L) => {
      const a = scalarArgs(L, "knl.beat", 2);
      const defer = api.toboolean(L, 5);
      const s = store(a);
      const stream = a.string(2, "stream");
      if (api.type(L, 3) !== LUA_TTABLE) {
        a.fail(3, "events", "a table", LUA_TYPE_NAMES[api.type(L, 3)] ?? "no value");
      }
      const beat = engine.toJs(L, 4);
      const n = api.rawlen(L, 3);
      const events: NewEvent[] = [];
      for (let i = 1; i <= n; i++) {
        api.rawgeti(L, 3, i);
        const e = api.gettop(L);
        api.pushstring(L, "kind");
        api.rawget(L, e);
        const kind = String(engine.toJs(L, -1));
        api.pushstring(L, "data");
        api.rawget(L, e);
        const data = objectAt(L, api.gettop(L), "knl.beat", "event.data");
        api.pushstring(L, "meta");
        api.rawget(L, e);
        const meta = metaAt(L, api.gettop(L), "knl.beat", beat);
        api.settop(L, e - 1);
        events.push({ stream, kind, data, meta });
      }
      run.trace?.rows(events);
      if (defer) {
        s.deferMany(events);
        engine.effectPending();
        return 0;
      }
      const r = s.appendMany(events);
      return engine.pushResult(L, r.length ? r[r.length - 1].seq : undefined);
    },
  });

  engine.define("@knl_events", {
    pure: true,
    sync: (a) =>
      new NullsAsNil(
        store(a).read(a.string(2, "stream"), a.optInteger(3, "from") ?? 1, a.optInteger(4, "limit")),
      ),
  });
  engine.define("@knl_tail", {
    pure: true,
    sync: (a) => new NullsAsNil(store(a).tail(a.string(2, "stream"), a.integer(3, "n"))),
  });
  engine.define("@knl_has", { pure: true, sync: (a) => store(a).hasStream(a.string(2, "stream")) });
  engine.define("@knl_query", {
    pure: true,
    sync: (a) => {
      const s = store(a);
      const sql = a.string(2, "sql");
      const params = a.at(3);
      const opts = a.optTable(4, "opts") ?? {};
      if (params !== undefined && (params === null || typeof params !== "object")) {
        a.fail(3, "params", "a table");
      }
      const rows = s.query(sql, (params ?? []) as unknown[] | Record<string, unknown>, {
        raw: opts.raw === true,
        limit: typeof opts.limit === "number" ? opts.limit : undefined,
      });
      return new NullsAsNil(rows);
    },
  });
  engine.define("@knl_schema", {
    pure: true,
    sync: () => PUBLISHED_COLUMNS.map((c) => ({ name: c.name, type: c.type, doc: c.doc })),
  });
  // The run's deferred events commit before it next acts on the world (see the engine's effect
  // hooks: any asynchronous host call but a model request, any synchronous one not marked pure),
  // or by the writer's commit window; a failure is kept by the writer (the events for a retry, or
  // their loss) and raised by the run's next append or read. The kernel's own functions are
  // pure: they act on the log itself.
  engine.onBeforeEffect(() => {
    for (const w of handles) if (w.pending > 0) w.settle();
  });

  const t0 = performance.now();
  engine.define("@knl_clock", {
    pure: true,
    raw: (L) => { // several calls a beat: straight onto the stack, no argument conversion
      engine.api.pushnumber(L, performance.now() - t0);
      return 1;
    },
  });

  run.onCleanup((outcome) => {
    // os.exit / job.defer end the run without running Lua past them, so the bracket cannot
    // record its own close: it is recorded here, as the bracket would have.
    const exited = outcome?.status === "exited" || outcome?.status === "deferred";
    // the run's deferred events commit now: the run is over, nothing later would carry them
    const warned = (w: EventWriter, f: () => void) => {
      if (w.closed) return;
      try {
        f();
      } catch (e) {
        run.log.warn(`knl: committing the deferred events of ${w.path} failed: ${(e as Error).message}`);
      }
    };
    for (const w of handles) warned(w, () => w.flush());
    for (const { store: s, id } of open.values()) {
      if (s.closed) continue;
      try {
        s.append({
          stream: id,
          kind: "session_close",
          data: stringifyJson(
            exited ? { status: "exit", error: "the run ended with os.exit or job.defer" } : {
              status: "interrupted",
              error: "the run ended before the session's bracket closed",
            },
          ),
          meta: "{}",
        });
      } catch (e) {
        run.log.warn(`knl: could not close session ${id}: ${(e as Error).message}`);
      }
    }
    open.clear();
    for (const w of handles) warned(w, () => w.close());
    memory?.store.close(); // the run's private log ends with it; file connections stay the process's
  });

  // Host traffic (mesh messages: `src/host/mesh.ts`) goes to the innermost session this run has
  // open, deferred like a beat's events (committed before the run next acts on the world).
  run.recordTraffic = (kind, data) => {
    let last: { store: EventWriter; id: string } | undefined;
    for (const s of open.values()) last = s;
    if (!last || last.store.closed) return;
    last.store.defer({ stream: last.id, kind, data: clean(stringifyJson(data)), meta: "{}" });
    engine.effectPending();
  };

  engine.exec(setupSource, "=ab:knl");
}

function describe(v: unknown): string {
  if (typeof v === "string") return `"${v}"`;
  if (v === null) return "json null";
  return typeof v === "object" ? "a table" : typeof v;
}
