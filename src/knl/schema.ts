/**
 * The kernel's on-disk contract: the published `events` table, the layout version stamped in
 * `PRAGMA user_version`, and the event schema version new events are written under.
 *
 * Owns:
 * - `PUBLISHED_COLUMNS`: the columns `knl.api().schema` publishes and `s:query` may read. They are
 *   a promise to every consumer's query view, so a column is added, never renamed or dropped.
 * - `LAYOUT_VERSION`: 2 is today's layout (one `events` table). 1 was the earlier
 *   `knl_log` / `knl_sessions` pair (see `migrate.ts`); 0 is a database nobody wrote yet.
 * - `EVENT_SCHEMA_VERSION`: the shape version of `data` / `meta` written today; older rows are
 *   brought to this shape on read by `upcast.ts`, never rewritten in place (the log is append-only).
 *
 * Invariants: `position` is the global order of the log (INTEGER PRIMARY KEY, assigned by
 * SQLite in commit order); `(stream, seq)` is unique and `seq` counts 1, 2, 3... within a stream.
 */

/** Layout of a database written by this release (`PRAGMA user_version`). */
export const LAYOUT_VERSION = 2;

/** Shape version of events written by this release. */
export const EVENT_SCHEMA_VERSION = 2;

/** One published column. */
export interface ColumnDoc {
  name: string;
  type: "INTEGER" | "TEXT";
  doc: string;
}

/** The columns of `events`, in table order. */
export const PUBLISHED_COLUMNS: readonly ColumnDoc[] = [
  { name: "position", type: "INTEGER", doc: "the log's global order across sessions, and its key" },
  { name: "stream", type: "TEXT", doc: "the session id the event belongs to" },
  {
    name: "seq",
    type: "INTEGER",
    doc: "1, 2, 3... within the stream; a read within one session orders by it",
  },
  { name: "epoch_ms", type: "INTEGER", doc: "wall-clock time of the append, milliseconds since the epoch" },
  {
    name: "kind",
    type: "TEXT",
    doc: "what happened: session_open, msg_user, llm_request, llm_response, ...",
  },
  { name: "schema_version", type: "INTEGER", doc: "shape version of data/meta when written (today: 2)" },
  { name: "meta", type: "TEXT", doc: "JSON object of labels: beat, run_id, trace_id, job, ..." },
  { name: "data", type: "TEXT", doc: "JSON object: the fact itself, shaped by kind" },
];

/**
 * The one index besides `(stream, seq)`: the sessions' seed events, which is what reads across
 * streams look up (`knl.views.sessions`, `knl sessions`). It is partial so that an append of
 * any other kind writes no page of it: a general `(kind, stream)` index (what layout 2 first
 * shipped with, `events_by_kind`) put one more page in every transaction's WAL frames —
 * about a quarter of an append's cost. Other cross-stream reads by kind scan the table.
 */
export const SESSION_INDEX =
  "CREATE INDEX IF NOT EXISTS events_session_opens ON events (position) WHERE kind = 'session_open';";

/** The index databases of layout 2 were first created with, replaced by `SESSION_INDEX` on open. */
export const OLD_KIND_INDEX = "events_by_kind";

/** DDL of today's layout. Idempotent. */
export const CREATE_EVENTS = `
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

/** Kinds the kernel itself writes. Consumers may append any other kind. */
export const KERNEL_KINDS = [
  "session_open",
  "session_close",
  "msg_user",
  "msg_assistant",
  "llm_request",
  "llm_response",
  "llm_call_failed",
  "tool_call",
  "tool_result",
  "policy_decision",
  "budget_charge",
  "beat_refused",
  "beat_stopped",
] as const;
