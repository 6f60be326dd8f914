/**
 * `std.ts.*`: a time-series store in SQLite (`ts.sqlite`, see `sqlite.ts` for where).
 *
 * Owns append/query/last and their guarantees (seed README, "std.ts.*"):
 * - a point is `(series, ts ms, tags JSON object or NULL, value JSON)`; values are numbers or
 *   tables, stored as canonical JSON and decoded losslessly (a string or a boolean is refused
 *   with the message nil gets: `must be a number or a table, got string`);
 * - tag keys match `[A-Za-z0-9_]+`, tag values are strings, numbers or booleans; a tag filter is
 *   an AND of `json_extract(tags, '$.k') = v`, bound with v's own type (so numeric tags match
 *   numbers — the original compared everything as text and never matched them);
 * - raw rows `{ ts, value, tags }` come ordered by `(ts ASC, rowid ASC)`; `last` and
 *   `agg = "last"` break same-millisecond ties by `(ts DESC, rowid DESC)`, so the point appended
 *   last wins — rowid order is append order because rows are never updated;
 * - aggregated rows are `{ value }` (one row without `bucket_ms`), `{ bucket, value }` with it
 *   (`bucket` = the bucket's start, floor division, also for negative times), ordered by bucket;
 *   `sum`/`avg` consider numeric values only; `count` counts points; bucketed `last` is the value
 *   of the bucket's last point (not its time, which the original returned);
 * - `from`/`to` are inclusive; `limit`/`offset` page raw rows and buckets.
 */
import type { SQLInputValue } from "node:sqlite";
import type { LuaEngine } from "../../lua/engine.ts";
import { type Args, LuaArgError } from "../../lua/args.ts";
import { parseJson, stringifyJson } from "../../json/codec.ts";
import { LuaFloat, LuaMulti, luaTypeName } from "../../json/values.ts";

/** One explicit nil result (so `tostring(std.ts.last(...))` sees a value). */
const NIL = new LuaMulti([undefined]);
import type { RunContext } from "../context.ts";
import { LazyDatabase } from "./sqlite.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS ts (
  series TEXT NOT NULL, ts INTEGER NOT NULL, tags TEXT, value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_ts_series_ts ON ts (series, ts);`;

const TAG_KEY = /^[A-Za-z0-9_]+$/;
const AGGS = ["count", "sum", "avg", "last"] as const;
type Agg = typeof AGGS[number];
const QUERY_FIELDS = new Set(["from", "to", "tags", "agg", "bucket_ms", "limit", "offset"]);
const NUMERIC = "CASE WHEN json_type(value) IN ('integer', 'real') THEN json_extract(value, '$') END";

function num(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (v instanceof LuaFloat) return v.value;
  if (typeof v === "bigint") return Number(v);
  return undefined;
}

/** Reads a tags table (argument `i`): validated keys, scalar values. */
function readTags(a: Args, i: number, name: string, t: unknown): Record<string, unknown> | undefined {
  if (t === undefined) return undefined;
  if (t === null || typeof t !== "object" || luaTypeName(t) !== "table") {
    a.fail(i, name, "a table");
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(t as Record<string, unknown>)) {
    if (!TAG_KEY.test(k)) {
      throw new LuaArgError(`${a.fn}: argument ${i} (${name}) key '${k}' must match [A-Za-z0-9_]+`);
    }
    const ok = typeof v === "string" || typeof v === "boolean" || num(v) !== undefined;
    if (!ok) {
      throw new LuaArgError(
        `${a.fn}: argument ${i} (${name}) value of '${k}' must be a string, number or boolean, got ${
          luaTypeName(v)
        }`,
      );
    }
    out[k] = v;
  }
  return out;
}

function tagFilter(tags: Record<string, unknown> | undefined): { sql: string; params: SQLInputValue[] } {
  let sql = "";
  const params: SQLInputValue[] = [];
  for (const [k, v] of Object.entries(tags ?? {})) {
    sql += " AND json_extract(tags, ?) = ?";
    params.push(`$.${k}`, typeof v === "boolean" ? (v ? 1 : 0) : (num(v) ?? (v as string)));
  }
  return { sql, params };
}

function decodeRow(r: { ts: number | bigint; value: string; tags: string | null }) {
  return {
    ts: typeof r.ts === "bigint" ? Number(r.ts) : r.ts,
    value: parseJson(r.value),
    tags: r.tags === null ? undefined : parseJson(r.tags),
  };
}

/** Installs `std.ts.append/query/last` (the tools are in `stores.lua`). */
export function installTs(engine: LuaEngine, run: RunContext): void {
  const store = new LazyDatabase("ts", run, (db) => db.exec(SCHEMA));
  run.onCleanup(() => store.close());
  let insert: ReturnType<typeof store.db.prepare> | undefined;
  const series = (a: Args) => {
    const s = a.string(1, "series");
    if (s === "") a.fail(1, "series", "a non-empty string", "an empty string");
    return s;
  };
  const sqlFail = (fn: string, e: unknown) =>
    e instanceof LuaArgError ? e : new Error(`std.ts.${fn}: ${(e as Error).message}`);

  engine.define("std.ts.append", {
    floats: "tagged",
    sync: (a) => {
      const s = series(a);
      const v = a.at(2);
      // A point is a number or a table (`agg` reads numbers; a table is stored as JSON). A string
      // or a boolean is refused as nil is, with the same message naming what came.
      if (num(v) === undefined && (v === null || luaTypeName(v) !== "table")) {
        a.fail(2, "value", "a number or a table");
      }
      const tags = readTags(a, 3, "tags", a.at(3));
      const at = a.at(4) === undefined ? Date.now() : a.integer(4, "at");
      let valueText: string;
      try {
        valueText = stringifyJson(v);
      } catch (e) {
        throw new Error(`std.ts.append: argument 2 (value): ${(e as Error).message}`);
      }
      const tagsText = tags && Object.keys(tags).length ? stringifyJson(tags) : null;
      try {
        insert ??= store.db.prepare("INSERT INTO ts (series, ts, tags, value) VALUES (?, ?, ?, ?)");
        insert.run(s, at, tagsText, valueText);
      } catch (e) {
        throw sqlFail("append", e);
      }
    },
  });

  engine.define("std.ts.query", {
    sync: (a) => {
      const s = series(a);
      const opts = a.optTable(2, "opts") ?? {};
      for (const k of Object.keys(opts)) {
        if (!QUERY_FIELDS.has(k)) {
          throw new LuaArgError(
            `std.ts.query: argument 2 (opts) has an unknown field '${k}' (known: ${
              [...QUERY_FIELDS].join(", ")
            })`,
          );
        }
      }
      const int = (k: string, min?: number): number | undefined => {
        const v = opts[k];
        if (v === undefined) return undefined;
        const n = num(v);
        if (n === undefined || !Number.isInteger(n)) {
          throw new LuaArgError(
            `std.ts.query: argument 2 (opts) field '${k}' must be an integer, got ${
              n === undefined ? luaTypeName(v) : String(n)
            }`,
          );
        }
        if (min !== undefined && n < min) {
          throw new LuaArgError(`std.ts.query: argument 2 (opts) field '${k}' must be >= ${min}, got ${n}`);
        }
        return n;
      };
      const from = int("from") ?? Number.MIN_SAFE_INTEGER;
      const to = int("to") ?? Number.MAX_SAFE_INTEGER;
      const limit = int("limit", 0) ?? -1;
      const offset = int("offset", 0) ?? 0;
      const bucket = int("bucket_ms", 1);
      let agg: Agg | undefined;
      if (opts.agg !== undefined) {
        if (typeof opts.agg !== "string" || !(AGGS as readonly string[]).includes(opts.agg)) {
          throw new LuaArgError(
            `std.ts.query: argument 2 (opts) field 'agg' must be one of ${AGGS.join(", ")}, got ${
              typeof opts.agg === "string" ? `'${opts.agg}'` : luaTypeName(opts.agg)
            }`,
          );
        }
        agg = opts.agg as Agg;
      }
      if (bucket !== undefined && !agg) {
        throw new LuaArgError("std.ts.query: argument 2 (opts) field 'bucket_ms' requires field 'agg'");
      }
      const tf = tagFilter(readTags(a, 2, "opts.tags", opts.tags));
      const where = `series = ? AND ts >= ? AND ts <= ?${tf.sql}`;
      const wp: SQLInputValue[] = [s, from, to, ...tf.params];
      try {
        const db = store.db;
        if (!agg) {
          const st = db.prepare(
            `SELECT ts, value, tags FROM ts WHERE ${where} ORDER BY ts ASC, rowid ASC LIMIT ? OFFSET ?`,
          );
          return (st.all(...wp, limit, offset) as Parameters<typeof decodeRow>[0][]).map(decodeRow);
        }
        const aggExpr = agg === "count"
          ? "count(*)"
          : agg === "sum"
          ? `coalesce(sum(${NUMERIC}), 0)`
          : `avg(${NUMERIC})`;
        if (bucket === undefined) {
          if (agg === "last") {
            const r = db.prepare(`SELECT value FROM ts WHERE ${where} ORDER BY ts DESC, rowid DESC LIMIT 1`)
              .get(...wp) as { value: string } | undefined;
            return [{ value: r ? parseJson(r.value) : undefined }];
          }
          const r = db.prepare(`SELECT ${aggExpr} AS v FROM ts WHERE ${where}`).get(...wp) as { v: unknown };
          return [{ value: r.v ?? undefined }];
        }
        const b = `(ts - (((ts % ${bucket}) + ${bucket}) % ${bucket}))`;
        if (agg === "last") {
          const rows = db.prepare(
            `SELECT bucket, value FROM (
               SELECT ${b} AS bucket, value,
                 row_number() OVER (PARTITION BY ${b} ORDER BY ts DESC, rowid DESC) AS rn
               FROM ts WHERE ${where})
             WHERE rn = 1 ORDER BY bucket LIMIT ? OFFSET ?`,
          ).all(...wp, limit, offset) as { bucket: number; value: string }[];
          return rows.map((r) => ({ bucket: r.bucket, value: parseJson(r.value) }));
        }
        const rows = db.prepare(
          `SELECT ${b} AS bucket, ${aggExpr} AS value FROM ts WHERE ${where}
           GROUP BY bucket ORDER BY bucket LIMIT ? OFFSET ?`,
        ).all(...wp, limit, offset) as { bucket: number; value: unknown }[];
        return rows.map((r) => ({ bucket: r.bucket, value: r.value ?? undefined }));
      } catch (e) {
        throw sqlFail("query", e);
      }
    },
  });

  engine.define("std.ts.last", {
    sync: (a) => {
      const s = series(a);
      const tf = tagFilter(readTags(a, 2, "tags", a.at(2)));
      try {
        const r = store.db.prepare(
          `SELECT ts, value, tags FROM ts WHERE series = ?${tf.sql} ORDER BY ts DESC, rowid DESC LIMIT 1`,
        ).get(s, ...tf.params) as Parameters<typeof decodeRow>[0] | undefined;
        return r ? decodeRow(r) : NIL;
      } catch (e) {
        throw sqlFail("last", e);
      }
    },
  });
}
