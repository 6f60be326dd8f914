/**
 * Bringing a kernel database to today's layout, once, on its first open by this release.
 *
 * Owns layout detection (`PRAGMA user_version`, and the tables present when it is 0) and the
 * migration from layout 1 — the earlier pair `knl_log(id, session_id, n, at, type, body)` plus
 * `knl_sessions(id, owner, labels, opened_at, closed_at)` — into the `events` table.
 *
 * Layout 1 → 2, row by row in `id` order (so `position` keeps the old global order):
 * `session_id` → `stream`, `n` → `seq`, `at` (ISO-8601) → `epoch_ms`, `type` → `kind` (`open` and
 * `close` become `session_open` / `session_close`), `body` → `data` minus its `beat`, which moves
 * to `meta.beat`; a session's labels (`knl_sessions.labels`) become the `meta` of its open event.
 * Rows keep `schema_version = 1`: their payloads are upcast on read (`upcast.ts`), not rewritten.
 *
 * Within layout 2, the general `events_by_kind` index a database was first created with is
 * replaced by the partial `events_session_opens` (see `schema.ts`) on the first open by this
 * release: an index, not data, so nothing is rewritten and an older release reads the file as
 * before.
 *
 * Invariants: the whole migration is one `BEGIN IMMEDIATE` transaction that re-reads the layout
 * inside it, so two processes opening an old file at once migrate it exactly once; a failure rolls
 * back and leaves the old layout intact. A database from a newer release (user_version above ours)
 * is refused rather than written under a layout we do not know.
 */
import type { DatabaseSync } from "node:sqlite";
import { CREATE_EVENTS, LAYOUT_VERSION, OLD_KIND_INDEX, SESSION_INDEX } from "./schema.ts";

/** The layout a database is in. */
export function detectLayout(db: DatabaseSync): number {
  const v = Number((db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
  if (v !== 0) return v;
  const tables = new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[])
      .map((r) => r.name),
  );
  if (tables.has("knl_log")) return 1;
  if (tables.has("events")) return LAYOUT_VERSION; // written by this layout before the stamp
  return 0;
}

/** Creates or migrates the schema; returns the layout found before (0 = new). */
export function ensureLayout(db: DatabaseSync, label: string): number {
  // Fast path without a write lock: an up-to-date database needs nothing.
  const before = detectLayout(db);
  if (before === LAYOUT_VERSION) {
    if (hasIndex(db, OLD_KIND_INDEX)) replaceKindIndex(db);
    return before;
  }
  if (before > LAYOUT_VERSION) {
    throw new Error(
      `knl: ${label} has layout ${before}, newer than this release understands (${LAYOUT_VERSION})`,
    );
  }
  db.exec("BEGIN IMMEDIATE");
  try {
    const now = detectLayout(db); // another process may have migrated meanwhile
    if (now === 0) db.exec(CREATE_EVENTS);
    else if (now === 1) migrateFrom1(db);
    if (now !== LAYOUT_VERSION) db.exec(`PRAGMA user_version = ${LAYOUT_VERSION}`);
    db.exec("COMMIT");
    return now;
  } catch (e) {
    db.exec("ROLLBACK");
    throw new Error(`knl: cannot bring ${label} to layout ${LAYOUT_VERSION}: ${(e as Error).message}`);
  }
}

function hasIndex(db: DatabaseSync, name: string): boolean {
  return db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'index' AND name = ?").get(name) !==
    undefined;
}

/**
 * `events_by_kind` → `events_session_opens`, once (a concurrent opener finds it done). A file
 * that cannot be written now (read-only, locked past the busy timeout) keeps its old index,
 * which answers the same queries: the replacement is retried on the next open.
 */
function replaceKindIndex(db: DatabaseSync): boolean {
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

const KIND_1: Record<string, string> = { open: "session_open", close: "session_close" };

function migrateFrom1(db: DatabaseSync): void {
  db.exec(CREATE_EVENTS);
  const labels = new Map<string, string>();
  for (
    const r of db.prepare("SELECT id, labels FROM knl_sessions").all() as {
      id: string;
      labels: string | null;
    }[]
  ) {
    if (r.labels) labels.set(r.id, r.labels);
  }
  const insert = db.prepare(
    "INSERT INTO events (position, stream, seq, epoch_ms, kind, schema_version, meta, data) VALUES (?, ?, ?, ?, ?, 1, ?, ?)",
  );
  const rows = db.prepare("SELECT id, session_id, n, at, type, body FROM knl_log ORDER BY id").all() as {
    id: number;
    session_id: string;
    n: number;
    at: string;
    type: string;
    body: string;
  }[];
  for (const r of rows) {
    const ms = Date.parse(r.at);
    if (!Number.isFinite(ms)) throw new Error(`knl_log row ${r.id}: 'at' is not an ISO-8601 time: ${r.at}`);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(r.body);
    } catch {
      throw new Error(`knl_log row ${r.id}: 'body' is not JSON`);
    }
    const kind = KIND_1[r.type] ?? r.type;
    const meta: Record<string, unknown> = {};
    if (kind === "session_open" && labels.has(r.session_id)) {
      Object.assign(meta, JSON.parse(labels.get(r.session_id)!));
    }
    if (body.beat !== undefined) {
      meta.beat = body.beat;
      delete body.beat;
    }
    insert.run(r.id, r.session_id, r.n, ms, kind, JSON.stringify(meta), JSON.stringify(body));
  }
  db.exec("DROP TABLE knl_log; DROP TABLE knl_sessions;");
}
