/**
 * Reading a run from outside: the records `agent-block knl export` and `knl sessions` print.
 *
 * Owns the two export shapes and the session listing, as plain functions over a store so the
 * CLI stays thin and a test can compare them with what the Lua side reads:
 * - `events`: every event of the session in `seq` order, upcast — the same rows `s:events()` gives;
 * - `messages`: the conversation — `msg_user`, `msg_assistant`, `llm_response`, `tool_call` and
 *   `tool_result`, one record each carrying `beat`, `seq`, `epoch_ms`, `kind`, plus `role` and
 *   `content` in the Anthropic message vocabulary (and `usage` / `model` / `stop_reason` on
 *   responses); each tool use is listed once: a `tool_call` whose use the model's response
 *   already carries (a `tool_use` block with its id) is left out, one made outside a response
 *   (a block's own `tool.call` in a session) stays;
 * - `listSessions`: one line per session, newest first (by the open event's `position`): the
 *   columns of `knl.views.sessions` (the same SQL, from the Lua side) plus the script that opened
 *   it, when it ended, and the cost its model calls carried.
 * Every record is printed as one line of `exportLine` (the canonical JSON codec: sorted keys),
 * the form a run's `--events FILE` streams too, so a live stream and a later export of the
 * same rows are the same lines.
 *
 * Invariant: an unknown session is an error (`UnknownSession`), never an empty answer.
 */
import type { EventRow, EventStore } from "./store.ts";
import { decodeRow } from "./store.ts";
import { readOnlyQuery } from "./query.ts";
import { stringifyJson } from "../json/codec.ts";

/**
 * The session is not in the store.
 *
 * @example An id that is not there
 * ```ts
 * import { EventStore, exportSession, UnknownSession } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const store = new EventStore(":memory:"); // an empty log
 * assert.throws(() => exportSession(store, "s_missing", "events"), (e) => {
 *   assert.ok(e instanceof UnknownSession);
 *   assert.equal(e.message, "no session 's_missing' in :memory:");
 *   return true;
 * });
 * store.close();
 * ```
 */
export class UnknownSession extends Error {
  /**
   * An unknown-session error naming the database searched.
   * @param id the session asked for; @param path the database searched
   */
  constructor(id: string, path: string) {
    super(`no session '${id}' in ${path}`);
    this.name = "UnknownSession";
  }
}

/**
 * Export shapes: `events`, every event of the session as stored (upcast); `messages`, the
 * conversation only, in the Anthropic message vocabulary.
 *
 * ```ts
 * import {
 *   BlockConfig,
 *   closeStore,
 *   exportSession,
 *   type ExportShape,
 *   openExistingStore,
 *   runBlock,
 *   ScriptSource,
 * } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * const dir = await Deno.makeTempDir();
 * const kernel = join(dir, "knl.sqlite");
 * const script = `require("knl").session({ owner = "docs" }, function(s)
 *   s:append({ kind = "msg_user", data = { content = "hello" } })
 * end)`;
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "log.lua"), dir).stores({ kernel }).env({}).build(),
 * );
 * const store = openExistingStore(kernel);
 * const kinds = (shape: ExportShape) => exportSession(store, report.sessions[0], shape).map((r) => r.kind);
 * assert.deepEqual(kinds("events"), ["session_open", "msg_user", "session_close"]);
 * assert.deepEqual(kinds("messages"), ["msg_user"]);
 * closeStore(kernel);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export type ExportShape = "events" | "messages";

const MESSAGE_KINDS = new Set(["msg_user", "msg_assistant", "llm_response", "tool_call", "tool_result"]);

/** One conversation record of `--as messages`. */
export function messageRecord(ev: EventRow): Record<string, unknown> | undefined {
  if (!MESSAGE_KINDS.has(ev.kind)) return undefined;
  const d = ev.data;
  const base: Record<string, unknown> = {
    kind: ev.kind,
    seq: ev.seq,
    beat: ev.meta.beat ?? null,
    epoch_ms: ev.epoch_ms,
  };
  switch (ev.kind) {
    case "msg_user":
      return { ...base, role: "user", content: d.content };
    case "msg_assistant":
      return { ...base, role: "assistant", content: d.content };
    case "llm_response":
      return {
        ...base,
        role: "assistant",
        content: d.content,
        model: d.model ?? null,
        stop_reason: d.stop_reason ?? null,
        usage: d.usage ?? null,
      };
    case "tool_call":
      return {
        ...base,
        role: "assistant",
        content: [{ type: "tool_use", id: d.id, name: d.name, input: d.input }],
      };
    default:
      return {
        ...base,
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: d.id,
          content: d.content,
          is_error: d.is_error === true,
        }],
      };
  }
}

/** One record as a line of JSON Lines (no newline): what `knl export` prints and `--events` streams. */
export function exportLine(record: unknown): string {
  return stringifyJson(record);
}

/**
 * The records of one session in `shape` (what `agent-block knl export --session ID --as SHAPE`
 * prints, one per line); an id not in the store throws `UnknownSession`.
 *
 * @example The conversation of an `agent.run`
 * ```ts
 * import {
 *   BlockConfig,
 *   closeStore,
 *   exportSession,
 *   openExistingStore,
 *   runBlock,
 *   ScriptSource,
 * } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * // an offline model: the `replay` provider answers from a JSON Lines script
 * const dir = await Deno.makeTempDir();
 * const kernel = join(dir, "knl.sqlite");
 * await Deno.writeTextFile(join(dir, "model.jsonl"), JSON.stringify({ content: "Hello there." }));
 * const script =
 *   `return require("agent").run({ provider = "replay", replay = "model.jsonl", prompt = _PROMPT }).content`;
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "hello.lua"), dir)
 *     .prompt("Say hello")
 *     .stores({ kernel })
 *     .env({})
 *     .build(),
 * );
 * assert.equal(report.value, "Hello there.");
 *
 * const store = openExistingStore(kernel);
 * const messages = exportSession(store, report.sessions[0], "messages");
 * assert.deepEqual(messages.map((m) => m.kind), ["msg_user", "llm_response"]);
 * assert.deepEqual(messages.map((m) => m.role), ["user", "assistant"]);
 * assert.deepEqual(messages[1].content, [{ type: "text", text: "Hello there." }]);
 * closeStore(kernel);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function exportSession(store: EventStore, id: string, shape: ExportShape): Record<string, unknown>[] {
  if (!store.hasStream(id)) throw new UnknownSession(id, store.path);
  const events = store.read(id);
  if (shape === "events") return events as unknown as Record<string, unknown>[];
  const out: Record<string, unknown>[] = [];
  const used = new Set<unknown>(); // ids of tool uses a model response already carried
  for (const ev of events) {
    const r = messageRecord(ev);
    if (!r) continue;
    if (ev.kind === "tool_call" && used.has(ev.data.id)) continue; // listed once, in its response
    if (ev.kind === "llm_response" || ev.kind === "msg_assistant") {
      for (const b of Array.isArray(r.content) ? r.content : []) {
        if (b?.type === "tool_use" && b.id !== undefined) used.add(b.id);
      }
    }
    out.push(r);
  }
  return out;
}

/**
 * A line of `knl sessions`.
 *
 * ```ts
 * import {
 *   BlockConfig,
 *   closeStore,
 *   listSessions,
 *   openExistingStore,
 *   runBlock,
 *   ScriptSource,
 *   type SessionSummary,
 * } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * const dir = await Deno.makeTempDir();
 * const kernel = join(dir, "knl.sqlite");
 * const script = 'require("knl").session({ owner = "triage-bot" }, function(s) end)';
 * await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "s.lua"), dir).stores({ kernel }).env({}).build(),
 * );
 *
 * const row = (s: SessionSummary) =>
 *   `${s.owner} ${s.closed ? s.status : "open"} beats=${s.beats} tokens=${s.tokens}`;
 * const store = openExistingStore(kernel);
 * assert.deepEqual(listSessions(store).map(row), ["triage-bot ok beats=0 tokens=0"]);
 * closeStore(kernel);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export interface SessionSummary {
  /** Session id (what `knl export --session` takes). */
  id: string;
  /**
   * The script whose run opened it (the seed event's `script`: relative to the project root, or
   * absolute, or an inline script's name); null for a session recorded before it was stamped.
   */
  script: string | null;
  /** The owner given to `knl.session`. */
  owner: unknown;
  /** Run labels stamped on the seed event. */
  labels: Record<string, unknown>;
  /** Opening time, ms since the epoch. */
  started: number;
  /** Time of the `session_close` event, ms since the epoch; null while open. */
  ended: number | null;
  /** From the opening to the close, or to the last event while open, ms. */
  duration_ms: number;
  /** Whether a `session_close` event was written. */
  closed: boolean;
  /** Close status (`ok`, `error`, `exit`, `interrupted`, ...), null while open. */
  status: string | null;
  /** Number of beats (model turns: `llm_request` events) recorded. */
  beats: number;
  /** Tokens charged across the session's model calls. */
  tokens: number;
  /**
   * USD the model calls cost: the sum of their `usage.cost_usd`, which a call carries when its
   * model has a price (`llm_proto.prices`); null when none does.
   */
  cost_usd: number | null;
}

/**
 * Sessions in the store, newest first; `labels` filters on the open event's `meta` (every pair
 * must match). The SQL is the same read `knl.views.sessions` runs from Lua.
 *
 * @example The sessions of one job
 * ```ts
 * import {
 *   BlockConfig,
 *   closeStore,
 *   listSessions,
 *   openExistingStore,
 *   runBlock,
 *   ScriptSource,
 * } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * const dir = await Deno.makeTempDir();
 * const kernel = join(dir, "knl.sqlite");
 * const script = 'require("knl").session({ owner = _PROMPT }, function(s) end)';
 * for (const [owner, job] of [["a", "nightly"], ["b", "adhoc"], ["c", "nightly"]]) {
 *   await runBlock(
 *     BlockConfig.builder(ScriptSource.inline(script, "s.lua"), dir)
 *       .prompt(owner)
 *       .label("job", job) // stamped on the session's open event
 *       .stores({ kernel })
 *       .env({})
 *       .build(),
 *   );
 * }
 * const store = openExistingStore(kernel);
 * assert.deepEqual(listSessions(store, { labels: { job: "nightly" } }).map((s) => s.owner), ["c", "a"]);
 * assert.equal(listSessions(store, { limit: 1 })[0].owner, "c");
 * closeStore(kernel);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function listSessions(
  store: EventStore,
  opts: { labels?: Record<string, string>; limit?: number } = {},
): SessionSummary[] {
  const where: string[] = ["o.kind = 'session_open'"];
  const params: unknown[] = [];
  for (const [k, v] of Object.entries(opts.labels ?? {})) {
    where.push(`CAST(json_extract(o.meta, ?) AS TEXT) = ?`);
    params.push(`$."${k.replace(/"/g, '""')}"`, v);
  }
  params.push(opts.limit ?? -1);
  const rows = readOnlyQuery(
    store,
    `SELECT o.stream AS id, o.epoch_ms AS started, o.meta AS meta, o.data AS data, o.schema_version AS v,
       (SELECT json_extract(c.data, '$.status') FROM events c
         WHERE c.stream = o.stream AND c.kind = 'session_close' LIMIT 1) AS status,
       (SELECT COUNT(*) FROM events c WHERE c.stream = o.stream AND c.kind = 'session_close') AS closes,
       (SELECT MIN(c.epoch_ms) FROM events c WHERE c.stream = o.stream AND c.kind = 'session_close') AS ended,
       (SELECT MAX(l.epoch_ms) FROM events l WHERE l.stream = o.stream) AS last,
       (SELECT COUNT(*) FROM events r WHERE r.stream = o.stream AND r.kind = 'llm_request') AS beats,
       (SELECT COALESCE(SUM(COALESCE(json_extract(r.data, '$.usage.total_tokens'),
                                     json_extract(r.data, '$.input_tokens') + json_extract(r.data, '$.output_tokens'),
                                     0)), 0)
          FROM events r WHERE r.stream = o.stream AND r.kind = 'llm_response') AS tokens,
       (SELECT SUM(json_extract(r.data, '$.usage.cost_usd'))
          FROM events r WHERE r.stream = o.stream AND r.kind = 'llm_response') AS cost
     FROM events o WHERE ${where.join(" AND ")}
     ORDER BY o.position DESC LIMIT ?`,
    params,
    { raw: true },
  );
  return rows.map((r) => {
    const open = decodeRow({
      position: 0,
      stream: String(r.id),
      seq: 1,
      epoch_ms: Number(r.started),
      kind: "session_open",
      schema_version: Number(r.v),
      meta: String(r.meta),
      data: String(r.data),
    });
    const started = Number(r.started);
    const ended = r.ended === null || r.ended === undefined ? null : Number(r.ended);
    return {
      id: String(r.id),
      script: typeof open.data.script === "string" ? open.data.script : null,
      owner: open.data.owner ?? null,
      labels: open.meta,
      started,
      ended,
      duration_ms: Math.max(0, (ended ?? Number(r.last ?? started)) - started),
      closed: Number(r.closes) > 0,
      status: r.status === null || r.status === undefined ? null : String(r.status),
      beats: Number(r.beats),
      tokens: Number(r.tokens),
      cost_usd: r.cost === null || r.cost === undefined ? null : Number(r.cost),
    };
  });
}
