import {
  parseJson
} from "./chunk-J4FUTWHQ.js";

// src/knl/paths.ts
import { isAbsolute, join, resolve } from "node:path";
var MEMORY = ":memory:";
function defaultStorePath(projectRoot, env) {
  const override = env("AGENT_BLOCK_KNL_PATH");
  if (override !== void 0 && override.trim() !== "") {
    return override === MEMORY ? MEMORY : resolve(projectRoot, override);
  }
  return join(projectRoot, ".agent-block", "knl.sqlite");
}
function storePathFrom(base, path) {
  if (path === MEMORY) return MEMORY;
  return isAbsolute(path) ? path : resolve(base, path);
}

// src/knl/store.ts
import { DatabaseSync } from "node:sqlite";
import { dirname } from "node:path";

// src/knl/schema.ts
var LAYOUT_VERSION = 2;
var EVENT_SCHEMA_VERSION = 2;
var PUBLISHED_COLUMNS = [
  {
    name: "position",
    type: "INTEGER",
    doc: "the log's global order across sessions, and its key"
  },
  {
    name: "stream",
    type: "TEXT",
    doc: "the session id the event belongs to"
  },
  {
    name: "seq",
    type: "INTEGER",
    doc: "1, 2, 3... within the stream; a read within one session orders by it"
  },
  {
    name: "epoch_ms",
    type: "INTEGER",
    doc: "wall-clock time of the append, milliseconds since the epoch"
  },
  {
    name: "kind",
    type: "TEXT",
    doc: "what happened: session_open, msg_user, llm_request, llm_response, ..."
  },
  {
    name: "schema_version",
    type: "INTEGER",
    doc: "shape version of data/meta when written (today: 2)"
  },
  {
    name: "meta",
    type: "TEXT",
    doc: "JSON object of labels: beat, run_id, trace_id, job, ..."
  },
  {
    name: "data",
    type: "TEXT",
    doc: "JSON object: the fact itself, shaped by kind"
  }
];
var SESSION_INDEX = "CREATE INDEX IF NOT EXISTS events_session_opens ON events (position) WHERE kind = 'session_open';";
var OLD_KIND_INDEX = "events_by_kind";
var CREATE_EVENTS = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY,
  stream TEXT NOT NULL,
  seq INTEGER NOT NULL,
  epoch_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  schema_version INTEGER NOT NULL,
  meta TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(meta)),
  data TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(data)),
  UNIQUE (stream, seq)
);
${SESSION_INDEX}
`;

// src/knl/migrate.ts
function detectLayout(db) {
  const v = Number(db.prepare("PRAGMA user_version").get().user_version);
  if (v !== 0) return v;
  const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => r.name));
  if (tables.has("knl_log")) return 1;
  if (tables.has("events")) return LAYOUT_VERSION;
  return 0;
}
function ensureLayout(db, label) {
  const before = detectLayout(db);
  if (before === LAYOUT_VERSION) {
    if (hasIndex(db, OLD_KIND_INDEX)) replaceKindIndex(db);
    return before;
  }
  if (before > LAYOUT_VERSION) {
    throw new Error(`knl: ${label} has layout ${before}, newer than this release understands (${LAYOUT_VERSION})`);
  }
  db.exec("BEGIN IMMEDIATE");
  try {
    const now = detectLayout(db);
    if (now === 0) db.exec(CREATE_EVENTS);
    else if (now === 1) migrateFrom1(db);
    if (now !== LAYOUT_VERSION) db.exec(`PRAGMA user_version = ${LAYOUT_VERSION}`);
    db.exec("COMMIT");
    return now;
  } catch (e) {
    db.exec("ROLLBACK");
    throw new Error(`knl: cannot bring ${label} to layout ${LAYOUT_VERSION}: ${e.message}`);
  }
}
function hasIndex(db, name) {
  return db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'index' AND name = ?").get(name) !== void 0;
}
function replaceKindIndex(db) {
  try {
    db.exec("BEGIN IMMEDIATE");
  } catch {
    return false;
  }
  try {
    db.exec(`DROP INDEX IF EXISTS ${OLD_KIND_INDEX}; ${SESSION_INDEX}`);
    db.exec("COMMIT");
    return true;
  } catch {
    if (db.isTransaction) db.exec("ROLLBACK");
    return false;
  }
}
var KIND_1 = {
  open: "session_open",
  close: "session_close"
};
function migrateFrom1(db) {
  db.exec(CREATE_EVENTS);
  const labels = /* @__PURE__ */ new Map();
  for (const r of db.prepare("SELECT id, labels FROM knl_sessions").all()) {
    if (r.labels) labels.set(r.id, r.labels);
  }
  const insert = db.prepare("INSERT INTO events (position, stream, seq, epoch_ms, kind, schema_version, meta, data) VALUES (?, ?, ?, ?, ?, 1, ?, ?)");
  const rows = db.prepare("SELECT id, session_id, n, at, type, body FROM knl_log ORDER BY id").all();
  for (const r of rows) {
    const ms = Date.parse(r.at);
    if (!Number.isFinite(ms)) throw new Error(`knl_log row ${r.id}: 'at' is not an ISO-8601 time: ${r.at}`);
    let body;
    try {
      body = JSON.parse(r.body);
    } catch {
      throw new Error(`knl_log row ${r.id}: 'body' is not JSON`);
    }
    const kind = KIND_1[r.type] ?? r.type;
    const meta = {};
    if (kind === "session_open" && labels.has(r.session_id)) {
      Object.assign(meta, JSON.parse(labels.get(r.session_id)));
    }
    if (body.beat !== void 0) {
      meta.beat = body.beat;
      delete body.beat;
    }
    insert.run(r.id, r.session_id, r.n, ms, kind, JSON.stringify(meta), JSON.stringify(body));
  }
  db.exec("DROP TABLE knl_log; DROP TABLE knl_sessions;");
}

// src/knl/commit_window.ts
var COMMIT_WINDOW_ENV = "AGENT_BLOCK_KNL_COMMIT_MS";
var DEFAULT_COMMIT_WINDOW_MS = 5;
var MAX_COMMIT_WINDOW_MS = 6e4;
function commitWindowMs() {
  const raw = Deno.env.get(COMMIT_WINDOW_ENV);
  if (raw === void 0 || raw.trim() === "") return DEFAULT_COMMIT_WINDOW_MS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > MAX_COMMIT_WINDOW_MS) {
    throw new RangeError(`${COMMIT_WINDOW_ENV} must be a whole number of milliseconds from 0 to ${MAX_COMMIT_WINDOW_MS}, got '${raw}'`);
  }
  return n;
}

// src/knl/upcast.ts
var num = (v) => typeof v === "number" ? v : 0;
var STEPS = {
  1: {
    msg_user: (d) => ({
      content: d.content ?? d.text ?? ""
    }),
    llm_response: (d) => {
      if (Array.isArray(d.content)) return d;
      const input = num(d.input_tokens);
      const output = num(d.output_tokens);
      return {
        content: typeof d.text === "string" && d.text !== "" ? [
          {
            type: "text",
            text: d.text
          }
        ] : [],
        model: d.model ?? null,
        stop_reason: d.stop ?? d.stop_reason ?? null,
        usage: {
          input_tokens: input,
          output_tokens: output,
          total_tokens: input + output
        }
      };
    },
    tool_call: (d) => ({
      id: d.id ?? d.tool_use_id,
      name: d.name ?? d.tool,
      input: d.input ?? d.args ?? {}
    }),
    tool_result: (d) => ({
      id: d.id ?? d.tool_use_id,
      name: d.name ?? d.tool,
      content: d.content ?? d.output ?? (typeof d.error === "string" ? d.error : ""),
      is_error: d.is_error ?? (d.error !== void 0 && d.error !== null && d.error !== false)
    }),
    session_open: (d) => {
      const out = {
        owner: d.owner ?? null
      };
      if (d.budget !== void 0) out.budget = d.budget;
      else if (d.budget_amount !== void 0) {
        out.budget = {
          amount: d.budget_amount,
          tag: d.budget_tag ?? "beats"
        };
      }
      if (d.scope !== void 0) out.scope = d.scope;
      if (d.parent !== void 0) out.parent = d.parent;
      return out;
    },
    session_close: (d) => d.status !== void 0 ? d : {
      status: d.reason === void 0 || d.reason === "done" ? "ok" : "error",
      ...d.reason !== void 0 && d.reason !== "done" ? {
        error: d.reason
      } : {}
    }
  }
};
function upcastData(kind, version, data) {
  let d = data;
  for (let v = version; v < EVENT_SCHEMA_VERSION; v++) {
    const step = STEPS[v]?.[kind];
    if (step) d = step(d);
  }
  return d;
}

// src/knl/store.ts
function busyTimeoutMs() {
  const raw = Deno.env.get("AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS");
  const n = raw ? Number(raw) : NaN;
  return Number.isInteger(n) && n >= 0 ? n : 3e4;
}
var COLUMNS = "position, stream, seq, epoch_ms, kind, schema_version, meta, data";
var MAX_ROWS_PER_INSERT = 32;
var EventStore = class {
  path;
  /** The underlying connection (one per file per process). */
  db;
  /** Layout found on open (0 = new file, 1 = migrated from the earlier layout, 2 = current). */
  openedLayout;
  #append;
  /** Multi-row INSERTs of deferred rows, by row count. */
  #appendN;
  #lastSeq;
  #read;
  #readLimit;
  #tail;
  #exists;
  #begin;
  #commit;
  #rollback;
  #closed;
  /** Deferred events, in append order, each with the time it was appended. */
  #pending;
  #flushQueued;
  /** The commit window's timer while deferred events wait (window above 0). */
  #flushTimer;
  /** ms a deferred event may wait when nothing commits it first (see `commit_window.ts`). */
  commitWindowMs;
  /** Opens `path` (`:memory:` for a private in-memory log). Prefer `openStore`, which caches. */
  constructor(path) {
    this.path = path;
    this.#appendN = [];
    this.#closed = false;
    this.#pending = [];
    this.#flushQueued = false;
    this.commitWindowMs = commitWindowMs();
    if (path !== MEMORY) Deno.mkdirSync(dirname(path), {
      recursive: true
    });
    try {
      this.db = new DatabaseSync(path);
    } catch (e) {
      throw new Error(`knl: cannot open ${path}: ${e.message}`);
    }
    try {
      this.db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs()}`);
      if (path !== MEMORY) {
        this.db.exec("PRAGMA journal_mode = WAL");
        this.db.exec("PRAGMA synchronous = NORMAL");
        this.db.exec("PRAGMA wal_autocheckpoint = 8000");
      }
      this.openedLayout = ensureLayout(this.db, path);
    } catch (e) {
      this.db.close();
      throw e;
    }
    this.#append = this.db.prepare(`INSERT INTO events (stream, seq, epoch_ms, kind, schema_version, meta, data)
       VALUES (?, ?, ?, ?, ${EVENT_SCHEMA_VERSION}, ?, ?)`);
    this.#lastSeq = this.db.prepare("SELECT MAX(seq) AS m FROM events WHERE stream = ?");
    this.#read = this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND seq >= ? ORDER BY seq`);
    this.#readLimit = this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND seq >= ? ORDER BY seq LIMIT ?`);
    this.#tail = this.db.prepare(`SELECT * FROM (SELECT ${COLUMNS} FROM events WHERE stream = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`);
    this.#exists = this.db.prepare("SELECT 1 AS x FROM events WHERE stream = ? LIMIT 1");
    this.#begin = this.db.prepare("BEGIN IMMEDIATE");
    this.#commit = this.db.prepare("COMMIT");
    this.#rollback = this.db.prepare("ROLLBACK");
  }
  /** True once the store was closed. */
  get closed() {
    return this.#closed;
  }
  /** Appends one event in its own IMMEDIATE transaction (with any deferred events before it). */
  append(ev) {
    return this.appendMany([
      ev
    ])[0];
  }
  /**
   * Appends events in ONE transaction, in order, after the deferred events (which commit in the
   * same transaction). With `defer`, the events are held instead and committed at the next of
   * the points the module doc lists; nothing is returned for them.
   */
  appendMany(events, opts) {
    if (opts?.defer) {
      const ms = Date.now();
      for (const ev of events) this.#pending.push(ev.epoch_ms === void 0 ? {
        ...ev,
        epoch_ms: ms
      } : ev);
      if (!this.#flushQueued && this.#pending.length > 0) this.#scheduleFlush();
      return [];
    }
    return this.#write(events);
  }
  /** Arms the latest commit of the deferred events: the window's timer, or a microtask. */
  #scheduleFlush() {
    this.#flushQueued = true;
    const due = () => {
      this.#flushQueued = false;
      this.#flushTimer = void 0;
      try {
        this.flush();
      } catch {
      }
    };
    if (this.commitWindowMs === 0) queueMicrotask(due);
    else this.#flushTimer = setTimeout(due, this.commitWindowMs);
  }
  /** Commits the deferred events now (nothing to do when there are none). */
  flush() {
    if (this.#pending.length > 0 && !this.#closed) this.#write([]);
  }
  /** Number of deferred events not committed yet. */
  get pending() {
    return this.#pending.length;
  }
  #write(events) {
    const db = this.db;
    const pending = this.#pending;
    const out = [];
    let inPending = false;
    const next = /* @__PURE__ */ new Map();
    this.#begin.run();
    try {
      inPending = true;
      this.#insertPending(pending, next);
      inPending = false;
      const ms = Date.now();
      for (const ev of events) out.push(this.#insert(ev, ev.epoch_ms ?? ms, next));
      this.#commit.run();
    } catch (e) {
      if (db.isTransaction) this.#rollback.run();
      if (inPending) {
        this.#pending = [];
        this.#clearFlushTimer();
        throw new Error(`knl: ${pending.length} deferred event(s) could not be written: ${e.message}`);
      }
      throw e;
    }
    if (pending.length > 0) {
      this.#pending = [];
      this.#clearFlushTimer();
    }
    return out;
  }
  #clearFlushTimer() {
    if (this.#flushTimer === void 0) return;
    clearTimeout(this.#flushTimer);
    this.#flushTimer = void 0;
    this.#flushQueued = false;
  }
  /**
   * The deferred rows, inside the write transaction, several per statement (their positions are
   * not reported, so one multi-row INSERT serves: a run's beats leave a few rows each).
   */
  #insertPending(rows, next) {
    for (let from = 0; from < rows.length; from += MAX_ROWS_PER_INSERT) {
      const n = Math.min(MAX_ROWS_PER_INSERT, rows.length - from);
      if (n === 1) {
        this.#insert(rows[from], rows[from].epoch_ms, next);
        continue;
      }
      const params = new Array(n * 6);
      for (let i = 0; i < n; i++) {
        const ev = rows[from + i];
        const seq = this.#nextSeq(ev.stream, next);
        const at = i * 6;
        params[at] = ev.stream;
        params[at + 1] = seq;
        params[at + 2] = ev.epoch_ms;
        params[at + 3] = ev.kind;
        params[at + 4] = ev.meta;
        params[at + 5] = ev.data;
      }
      this.#appendRows(n).run(...params);
    }
  }
  /** The prepared INSERT of `n` rows (2 ≤ n ≤ MAX_ROWS_PER_INSERT), made on first use. */
  #appendRows(n) {
    let st = this.#appendN[n];
    if (!st) {
      const row = `(?, ?, ?, ?, ${EVENT_SCHEMA_VERSION}, ?, ?)`;
      st = this.db.prepare(`INSERT INTO events (stream, seq, epoch_ms, kind, schema_version, meta, data) VALUES ${new Array(n).fill(row).join(", ")}`);
      this.#appendN[n] = st;
    }
    return st;
  }
  /** The next `seq` of `stream` in this transaction (its last one read once per transaction). */
  #nextSeq(stream, next) {
    let seq = next.get(stream);
    if (seq === void 0) {
      const m = this.#lastSeq.get(stream).m;
      seq = m === null ? 1 : Number(m) + 1;
    }
    next.set(stream, seq + 1);
    return seq;
  }
  /** One row, inside the write transaction (whose lock makes the stream's last seq stable). */
  #insert(ev, ms, next) {
    const seq = this.#nextSeq(ev.stream, next);
    const r = this.#append.run(ev.stream, seq, ms, ev.kind, ev.meta, ev.data);
    return {
      position: Number(r.lastInsertRowid),
      seq,
      epoch_ms: ms
    };
  }
  /** Events of `stream` from `fromSeq` on, in `seq` order (at most `limit` when given). */
  read(stream, fromSeq = 1, limit) {
    this.flush();
    const rows = limit === void 0 ? this.#read.all(stream, fromSeq) : this.#readLimit.all(stream, fromSeq, limit);
    return rows.map(decodeRow);
  }
  /** The last `n` events of `stream`, in `seq` order. */
  tail(stream, n) {
    this.flush();
    return this.#tail.all(stream, n).map(decodeRow);
  }
  /** True when `stream` has at least one event. */
  hasStream(stream) {
    this.flush();
    return this.#exists.get(stream) !== void 0;
  }
  /**
   * Commits the deferred events and closes the connection (memory stores at run end; file
   * stores stay open for the process).
   */
  close() {
    if (this.#closed) return;
    try {
      this.flush();
    } finally {
      this.#clearFlushTimer();
      this.#closed = true;
      this.db.close();
    }
  }
};
function decodeRow(r) {
  const version = Number(r.schema_version);
  const meta = parseObject(r.meta);
  const data = upcastData(r.kind, version, parseObject(r.data));
  return {
    position: Number(r.position),
    stream: r.stream,
    seq: Number(r.seq),
    epoch_ms: Number(r.epoch_ms),
    kind: r.kind,
    schema_version: Math.max(version, EVENT_SCHEMA_VERSION),
    meta,
    data
  };
}
function parseObject(text) {
  const v = parseJson(text);
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v : {
    value: v
  };
}
var cache = /* @__PURE__ */ new Map();
function openStore(path) {
  if (path === MEMORY) return new EventStore(MEMORY);
  const known = cache.get(path);
  if (known && !known.closed) return known;
  let key = path;
  try {
    key = Deno.realPathSync(path);
  } catch {
  }
  let s = cache.get(key);
  if (!s || s.closed) {
    s = new EventStore(path);
    try {
      key = Deno.realPathSync(path);
    } catch {
    }
    cache.set(key, s);
    cache.set(path, s);
  }
  return s;
}
function openExistingStore(path) {
  if (path === MEMORY) {
    throw new Error("the kernel database is in memory (:memory:): nothing outlives the run that wrote it");
  }
  try {
    if (!Deno.statSync(path).isFile) throw new Error(`${path} is not a file`);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new Error(`no kernel database at ${path}`);
    throw e;
  }
  return openStore(path);
}

// src/knl/query.ts
var READABLE = /* @__PURE__ */ new Set([
  "events",
  "json_each",
  "json_tree"
]);
var SQLITE_OK = 0;
var SQLITE_DENY = 1;
var SQLITE_READ = 20;
var SQLITE_SELECT = 21;
var SQLITE_FUNCTION = 31;
var SQLITE_RECURSIVE = 33;
function setAuthorizer(db, fn) {
  const set = db.setAuthorizer;
  if (typeof set !== "function") throw new Error("knl: this runtime's node:sqlite has no setAuthorizer");
  set.call(db, fn);
}
function assertSingleStatement(sql) {
  let i = 0;
  const n = sql.length;
  let seenEnd = false;
  while (i < n) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === "`" || c === "[") {
      const close = c === "[" ? "]" : c;
      i++;
      while (i < n && !(sql[i] === close && sql[i + 1] !== close)) i += sql[i] === close ? 2 : 1;
      i++;
      if (seenEnd) throw new Error("only one statement may be given");
      continue;
    }
    if (c === "-" && sql[i + 1] === "-") {
      while (i < n && sql[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
      continue;
    }
    if (c === ";") seenEnd = true;
    else if (!/\s/.test(c) && seenEnd) throw new Error("only one statement may be given");
    i++;
  }
}
function readOnlyQuery(store, sql, params = [], opts = {}) {
  assertSingleStatement(sql);
  if (!/^\s*(--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*(select|with|values)\b/i.test(sql)) {
    throw new Error("only a SELECT over the events table may be run");
  }
  store.flush();
  const db = store.db;
  let denied;
  setAuthorizer(db, (code, a1, a2) => {
    switch (code) {
      case SQLITE_SELECT:
      case SQLITE_FUNCTION:
      case SQLITE_RECURSIVE:
        return SQLITE_OK;
      case SQLITE_READ:
        if (a1 !== null && READABLE.has(a1)) return SQLITE_OK;
        denied ??= `reading ${a1}${a2 ? "." + a2 : ""} (only the events table is published)`;
        return SQLITE_DENY;
      default:
        denied ??= "a statement that is not a SELECT over the events table";
        return SQLITE_DENY;
    }
  });
  let stmt;
  try {
    stmt = db.prepare(sql);
  } catch (e) {
    throw new Error(denied ? `refused: ${denied}` : e.message);
  } finally {
    setAuthorizer(db, null);
  }
  const bound = Array.isArray(params) ? params.map(toSql) : [
    Object.fromEntries(Object.entries(params).map(([k, v]) => [
      k,
      toSql(v)
    ]))
  ];
  const out = [];
  const limit = opts.limit ?? Infinity;
  for (const row of stmt.iterate(...bound)) {
    if (out.length >= limit) break;
    const r = {
      ...row
    };
    if (!opts.raw) {
      for (const k of [
        "meta",
        "data"
      ]) {
        const v = r[k];
        if (typeof v === "string" && (v.startsWith("{") || v.startsWith("["))) {
          try {
            r[k] = parseJson(v);
          } catch {
          }
        }
      }
    }
    out.push(r);
  }
  return out;
}
function toSql(v) {
  if (v === void 0 || v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "string") return v;
  if (v instanceof Uint8Array) return v;
  if (typeof v === "object" && "value" in v) return Number(v.value);
  throw new Error(`a parameter must be a string, number, boolean or nil, got ${typeof v}`);
}

export {
  PUBLISHED_COLUMNS,
  MEMORY,
  defaultStorePath,
  storePathFrom,
  commitWindowMs,
  decodeRow,
  openStore,
  openExistingStore,
  readOnlyQuery
};
