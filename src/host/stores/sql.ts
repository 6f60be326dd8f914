/**
 * `std.sql.*`: SQL on the run's SQLite database (`sql.sqlite`, see `sqlite.ts` for where).
 *
 * Owns execute/query and parameter binding:
 * - `execute(sql [, params])` → `{ affected = N, last_id = rowid }`; without params it may hold
 *   several statements (a migration), then `affected` counts the rows all of them changed, and
 *   unless the script manages transactions itself it runs in one `BEGIN IMMEDIATE` transaction
 *   (all or nothing);
 * - `query(sql [, params])` → an array of rows keyed by column name; SQL NULL is `std.sql.null`
 *   (= `std.json.null`) so the key stays present; BLOBs come back as Lua strings of their bytes;
 * - params: an array (`?`, `?N`) or a table of names (`:name`, `@name`, `$name`, written without
 *   the sigil); values nil/`std.sql.null` → NULL, booleans → 1/0, numbers, strings (non-UTF-8
 *   strings bind as BLOBs). A table or function value is an error naming the parameter.
 * - SQL errors raise with SQLite's own message: `std.sql.query: no such table: nope`.
 * A statement list passed where one statement is expected is refused instead of having its tail
 * silently dropped (SQLite's prepare compiles only the first statement).
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import type { LuaEngine } from "../../lua/engine.ts";
import { type Args, LuaArgError } from "../../lua/args.ts";
import { LuaFloat, luaTypeName } from "../../json/values.ts";
import type { RunContext } from "../context.ts";
import { LazyDatabase, writeTx } from "./sqlite.ts";

/** A statement that controls transactions (or ends a trigger body) somewhere in a script. */
const TX_CONTROL = /(^|;)\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b/im;

/** True when `sql` holds more than one statement (a `;` followed by more than space/comments). */
export function hasSeveralStatements(sql: string): boolean {
  let i = 0;
  let sawEnd = false;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === "`" || c === "[") {
      if (sawEnd) return true;
      const close = c === "[" ? "]" : c;
      i++;
      while (i < sql.length) {
        if (sql[i] === close) {
          if (close !== "]" && sql[i + 1] === close) {
            i += 2;
            continue;
          }
          break;
        }
        i++;
      }
      i++;
    } else if (c === "-" && sql[i + 1] === "-") {
      while (i < sql.length && sql[i] !== "\n") i++;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === ";") {
      sawEnd = true;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      if (sawEnd) return true;
      i++;
    }
  }
  return false;
}

type Params = SQLInputValue[] | Record<string, SQLInputValue>;

function bindValue(fn: string, where: string, v: unknown): SQLInputValue {
  if (v === undefined || v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "string") return v;
  if (v instanceof LuaFloat) return v.value;
  if (v instanceof Uint8Array) return v;
  throw new LuaArgError(
    `${fn}: argument 2 (params) ${where} must be a string, number, boolean or nil, got ${luaTypeName(v)}`,
  );
}

/** Reads argument 2 as positional (array, holes allowed) or named parameters. */
function readParams(a: Args): Params {
  const t = a.optTable(2, "params");
  if (!t) return [];
  if (Array.isArray(t)) return t.map((v, i) => bindValue(a.fn, `element ${i + 1}`, v));
  const keys = Object.keys(t);
  if (keys.length > 0 && keys.every((k) => /^[1-9][0-9]*$/.test(k))) {
    const n = Math.max(...keys.map(Number));
    const out: SQLInputValue[] = [];
    for (let i = 1; i <= n; i++) out.push(bindValue(a.fn, `element ${i}`, t[String(i)]));
    return out;
  }
  const named: Record<string, SQLInputValue> = {};
  for (const k of keys) {
    if (/^[0-9]+$/.test(k)) {
      throw new LuaArgError(`${a.fn}: argument 2 (params) mixes positional and named parameters`);
    }
    named[k.replace(/^[:@$]/, "")] = bindValue(a.fn, `field '${k}'`, t[k]);
  }
  return named;
}

function run(db: DatabaseSync, sql: string, params: Params, mode: "run" | "all") {
  const st = db.prepare(sql);
  st.setReadBigInts(true); // exact integers up to 2^63; toLuaNumber narrows the safe ones
  if (Array.isArray(params)) return mode === "run" ? st.run(...params) : st.all(...params);
  return mode === "run" ? st.run(params) : st.all(params);
}

function toLuaNumber(v: unknown): unknown {
  if (typeof v === "bigint") return v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v;
  return v;
}

/** Installs `std.sql.execute/query` (the tools are in `stores.lua`). */
export function installSql(engine: LuaEngine, runCx: RunContext): void {
  const store = new LazyDatabase("sql", runCx, (db) => {
    db.exec("select 1");
  });
  runCx.onCleanup(() => store.close());
  const fail = (fn: string, e: unknown) => {
    if (e instanceof LuaArgError) return e;
    const msg = (e as Error).message;
    return new Error(msg.startsWith("std.sql") ? msg : `${fn}: ${msg}`);
  };

  engine.define("std.sql.execute", {
    sync: (a) => {
      const sql = a.string(1, "sql");
      const params = readParams(a);
      try {
        const db = store.db;
        if (hasSeveralStatements(sql)) {
          const hasParams = Array.isArray(params) ? params.length > 0 : Object.keys(params).length > 0;
          if (hasParams) {
            throw new Error("std.sql.execute: parameters can only be bound to a single statement");
          }
          const before = Number((db.prepare("select total_changes() as n").get() as { n: number }).n);
          // A script that does not manage transactions itself runs as one immediate write
          // transaction: all or nothing, and no read-to-write upgrade for another process to break.
          if (db.isTransaction || TX_CONTROL.test(sql)) db.exec(sql);
          else writeTx(db, () => db.exec(sql));
          const after = Number((db.prepare("select total_changes() as n").get() as { n: number }).n);
          const last = (db.prepare("select last_insert_rowid() as id").get() as { id: number }).id;
          return { affected: after - before, last_id: toLuaNumber(last) };
        }
        const r = run(db, sql, params, "run") as {
          changes: number | bigint;
          lastInsertRowid: number | bigint;
        };
        return { affected: toLuaNumber(r.changes), last_id: toLuaNumber(r.lastInsertRowid) };
      } catch (e) {
        throw fail("std.sql.execute", e);
      }
    },
  });

  engine.define("std.sql.query", {
    sync: (a) => {
      const sql = a.string(1, "sql");
      const params = readParams(a);
      if (hasSeveralStatements(sql)) {
        throw new Error("std.sql.query: only one statement can be queried at a time");
      }
      try {
        const rows = run(store.db, sql, params, "all") as Record<string, unknown>[];
        for (const r of rows) for (const k in r) r[k] = toLuaNumber(r[k]);
        return rows;
      } catch (e) {
        throw fail("std.sql.query", e);
      }
    },
  });
}
