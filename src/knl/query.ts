/**
 * `s:query`: one read-only SELECT over the published table, nothing else.
 *
 * Owns the guard that makes a query view unprivileged: the statement is compiled under an SQLite
 * authorizer that allows reading the `events` table (and the JSON table functions) and refuses
 * everything else — writes, pragmas, ATTACH, other tables — and the text must be ONE statement
 * (node:sqlite would silently ignore a second one, so it is refused before preparing).
 * Columns named `meta` and `data` holding JSON objects are decoded unless `raw` is asked for.
 *
 * It reads what is committed: a run's own deferred events are committed first by its writer
 * (`EventWriter.query`), which is how `s:query` reaches this.
 *
 * Invariant: the authorizer is installed only for the prepare of the user's statement and
 * removed before anything else runs on the connection.
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { parseJson } from "../json/codec.ts";
import type { EventStore } from "./store.ts";

/** Options of `s:query`. */
export interface QueryOptions {
  /** Return `meta` / `data` as JSON text instead of decoded tables. */
  raw?: boolean;
  /** At most this many rows. */
  limit?: number;
}

const READABLE = new Set(["events", "json_each", "json_tree"]);

/** SQLite's authorizer codes (sqlite3.h); node:sqlite's typings do not carry them yet. */
const SQLITE_OK = 0;
const SQLITE_DENY = 1;
const SQLITE_READ = 20;
const SQLITE_SELECT = 21;
const SQLITE_FUNCTION = 31;
const SQLITE_RECURSIVE = 33;

type Authorizer = (code: number, a1: string | null, a2: string | null) => number;
/** `DatabaseSync.setAuthorizer`, present at run time in Deno 2.9 but missing from its typings. */
function setAuthorizer(db: DatabaseSync, fn: Authorizer | null): void {
  const set = (db as unknown as { setAuthorizer?: (f: Authorizer | null) => void }).setAuthorizer;
  if (typeof set !== "function") throw new Error("knl: this runtime's node:sqlite has no setAuthorizer");
  set.call(db, fn);
}

/** Refuses text holding more than one statement (quotes and comments understood). */
export function assertSingleStatement(sql: string): void {
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

/** Runs `sql` with `params` as a read-only query over `events`. */
export function readOnlyQuery(
  store: EventStore,
  sql: string,
  params: unknown[] | Record<string, unknown> = [],
  opts: QueryOptions = {},
): Record<string, unknown>[] {
  assertSingleStatement(sql);
  if (!/^\s*(--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*(select|with|values)\b/i.test(sql)) {
    throw new Error("only a SELECT over the events table may be run");
  }
  const db = store.db;
  let denied: string | undefined;
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
    throw new Error(denied ? `refused: ${denied}` : (e as Error).message);
  } finally {
    setAuthorizer(db, null);
  }
  const bound = Array.isArray(params) ? params.map(toSql) : [Object.fromEntries(
    Object.entries(params).map(([k, v]) => [k, toSql(v)]),
  )];
  const out: Record<string, unknown>[] = [];
  const limit = opts.limit ?? Infinity;
  for (const row of stmt.iterate(...(bound as SQLInputValue[]))) {
    if (out.length >= limit) break;
    const r: Record<string, unknown> = { ...(row as Record<string, unknown>) };
    if (!opts.raw) {
      for (const k of ["meta", "data"]) {
        const v = r[k];
        if (typeof v === "string" && (v.startsWith("{") || v.startsWith("["))) {
          try {
            r[k] = parseJson(v);
          } catch { /* not JSON after all: the text stands */ }
        }
      }
    }
    out.push(r);
  }
  return out;
}

function toSql(v: unknown): SQLInputValue {
  if (v === undefined || v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "string") return v;
  if (v instanceof Uint8Array) return v;
  if (typeof v === "object" && "value" in (v as object)) return Number((v as { value: number }).value);
  throw new Error(`a parameter must be a string, number, boolean or nil, got ${typeof v}`);
}
