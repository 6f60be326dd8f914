/**
 * `std.sql.*`: SQL on the run's SQLite database (`sql.sqlite`, see `sqlite.ts` for where).
 *
 * Owns execute/query and parameter binding:
 * - `execute(sql [, params])` → `{ affected = N, last_id = rowid }`: `affected` is the rows THIS
 *   call changed (0 for a statement that changes no rows, such as `CREATE TABLE` — SQLite's own
 *   count would still show the previous statement's); without params it may hold several
 *   statements (a migration), then `affected` counts the rows all of them changed, and unless the
 *   script manages transactions itself it runs in one `BEGIN IMMEDIATE` transaction (all or
 *   nothing);
 * - `query(sql [, params])` → an array of rows keyed by column name; SQL NULL is `std.sql.null`
 *   (= `std.json.null`) so the key stays present; BLOBs come back as Lua strings of their bytes;
 *   two result columns with one name are an error naming it (one key could hold only one of
 *   them);
 * - params: an array (`?`, `?N`) or a table of names (`:name`, `@name`, `$name`, written without
 *   the sigil); values `std.sql.null` (or a nil inside the array) → NULL, booleans → 1/0,
 *   numbers, strings (non-UTF-8 strings bind as BLOBs). A table or function value is an error
 *   naming the parameter, and so is a parameter of the statement that gets no value (SQLite would
 *   bind NULL without a word; a trailing nil of an array is no value: use `std.sql.null`).
 * - SQL errors raise with SQLite's own message: `std.sql.query: no such table: nope`.
 * A statement list passed where one statement is expected is refused instead of having its tail
 * silently dropped (SQLite's prepare compiles only the first statement).
 *
 * Both checks read the SQL text itself (`scan`): `node:sqlite` binds a missing parameter as NULL
 * without a word and exposes no parameter count. The scan follows SQLite's lexical rules where
 * they matter: string literals (`'...'`), quoted identifiers (`"..."`, `` `...` ``, `[...]`) and
 * comments (`-- ...`, `/* ... *\/`) are skipped whole; a word (letters, digits, `_`, `$`, anything
 * non-ASCII) is one token, so `a$b` is an identifier, not a parameter. Parameters are numbered as
 * SQLite numbers them: `?NNN` is NNN, a bare `?` one more than the largest number so far, a named
 * `:n` / `@n` / `$n` the next number the first time its name appears and the same after that.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import type { LuaEngine } from "../../lua/engine.ts";
import { type Args, LuaArgError } from "../../lua/args.ts";
import { LuaFloat, luaTypeName } from "../../json/values.ts";
import type { RunContext } from "../context.ts";
import { LazyDatabase, writeTx } from "./sqlite.ts";

/** A statement that controls transactions (or ends a trigger body) somewhere in a script. */
const TX_CONTROL = /(^|;)\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b/im;

/** One parameter of a statement: its number and, for a named one, its name with the sigil. */
export interface SqlParameter {
  index: number;
  /** `:name`, `@name`, `$name`; undefined for `?` and `?NNN`. */
  name?: string;
  /** How it is written (`?`, `?3`, `:name`). */
  text: string;
}

const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;

/** Calls `onCode(i)` for every character of `sql` outside literals and comments; stops when it returns false. */
function scan(sql: string, onCode: (i: number) => number | false): void {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === "`" || c === "[") {
      if (onCode(i) === false) return; // the literal itself is code (a token) for the caller
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
    } else {
      const next = onCode(i);
      if (next === false) return;
      i = Math.max(next, i + 1);
    }
  }
}

/** True when `sql` holds more than one statement (a `;` followed by more than space/comments). */
export function hasSeveralStatements(sql: string): boolean {
  let sawEnd = false;
  let several = false;
  scan(sql, (i) => {
    const c = sql[i];
    if (c === ";") sawEnd = true;
    else if (!/\s/.test(c) && sawEnd) {
      several = true;
      return false;
    }
    return i + 1;
  });
  return several;
}

/** The parameters of `sql` in order of first appearance, numbered as SQLite numbers them. */
export function sqlParameters(sql: string): SqlParameter[] {
  const out: SqlParameter[] = [];
  const named = new Map<string, number>();
  let max = 0;
  scan(sql, (i) => {
    const c = sql[i];
    if (c === "?") {
      let j = i + 1;
      while (j < sql.length && sql[j] >= "0" && sql[j] <= "9") j++;
      const index = j > i + 1 ? Number(sql.slice(i + 1, j)) : max + 1;
      max = Math.max(max, index);
      out.push({ index, text: sql.slice(i, j) });
      return j;
    }
    if ((c === ":" || c === "@" || c === "$") && WORD.test(sql[i + 1] ?? "")) {
      let j = i + 1;
      // `$` names may hold `::` (SQLite's TCL-variable syntax); the others only word characters.
      while (j < sql.length && (WORD.test(sql[j]) || (c === "$" && sql.startsWith("::", j)))) {
        j += sql.startsWith("::", j) ? 2 : 1;
      }
      const name = sql.slice(i, j);
      let index = named.get(name);
      if (index === undefined) {
        index = ++max;
        named.set(name, index);
        out.push({ index, name, text: name });
      }
      return j;
    }
    if (WORD.test(c)) {
      let j = i + 1;
      while (j < sql.length && WORD.test(sql[j])) j++;
      return j; // a word: a `$` or digits inside it are part of it
    }
    return i + 1;
  });
  return out;
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

/** A parameter as messages name it: `:name`, `?3`, or `#2 (?)` for the second bare `?`. */
function label(p: SqlParameter): string {
  return p.text === "?" ? `#${p.index} (?)` : p.text;
}

/**
 * Refuses a statement one of whose parameters `params` gives no value (see `sqlParameters` for
 * the numbering). Positional values bind, in order, to the numbers not taken by a named
 * parameter, as `node:sqlite` binds them.
 */
function checkBound(fn: string, sql: string, params: Params, given: boolean): void {
  const wanted = sqlParameters(sql);
  if (wanted.length === 0) return;
  const missing = (p: SqlParameter, why: string) =>
    new LuaArgError(`${fn}: parameter ${label(p)} of the statement has no value (${why})`);
  if (!given) throw missing(wanted[0], "no params were given; pass std.sql.null for NULL");
  if (!Array.isArray(params) && Object.keys(params).length === 0) params = []; // `{}`: no values at all
  if (Array.isArray(params)) {
    const namedIndexes = new Set(wanted.filter((p) => p.name !== undefined).map((p) => p.index));
    for (const p of wanted) {
      if (p.name !== undefined) {
        throw missing(p, `a named parameter, and params is a list; give params as a table of names`);
      }
      let slot = 0; // which positional value binds to p.index
      for (let i = 1; i <= p.index; i++) if (!namedIndexes.has(i)) slot++;
      if (slot > params.length) {
        throw missing(
          p,
          `params gives ${params.length} value${
            params.length === 1 ? "" : "s"
          } and it takes value ${slot}; ` +
            `a nil at the end of a list is no value: pass std.sql.null for NULL`,
        );
      }
    }
    return;
  }
  for (const p of wanted) {
    if (p.name === undefined) {
      throw missing(p, "a positional parameter, and params is a table of names; give params as a list");
    }
    if (!Object.hasOwn(params, p.name.slice(1))) {
      throw missing(p, `params has no field '${p.name.slice(1)}'; pass std.sql.null for NULL`);
    }
  }
}

function run(db: DatabaseSync, sql: string, params: Params, mode: "run" | "all", fn: string) {
  const st = db.prepare(sql);
  st.setReadBigInts(true); // exact integers up to 2^63; toLuaNumber narrows the safe ones
  if (mode === "all") {
    const seen = new Set<string>();
    for (const c of st.columns()) {
      if (seen.has(c.name)) {
        throw new Error(
          `${fn}: the result has two columns named '${c.name}', and a row keys its columns by name ` +
            `(name them apart with AS)`,
        );
      }
      seen.add(c.name);
    }
  }
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

  /** SQLite's count of rows changed on `db` since it opened (a statement kept per connection). */
  let total: { db: DatabaseSync; st: StatementSync } | undefined;
  const totalChanges = (db: DatabaseSync): number => {
    if (total?.db !== db) total = { db, st: db.prepare("select total_changes() as n") };
    return Number((total.st.get() as { n: number | bigint }).n);
  };

  engine.define("std.sql.execute", {
    sync: (a) => {
      const sql = a.string(1, "sql");
      const params = readParams(a);
      const given = a.at(2) !== undefined;
      try {
        const db = store.db;
        if (hasSeveralStatements(sql)) {
          const hasParams = Array.isArray(params) ? params.length > 0 : Object.keys(params).length > 0;
          if (hasParams) {
            throw new Error("std.sql.execute: parameters can only be bound to a single statement");
          }
          const wanted = sqlParameters(sql);
          if (wanted.length) {
            throw new LuaArgError(
              `std.sql.execute: parameter ${label(wanted[0])} has no value: parameters can only be bound ` +
                `to a single statement`,
            );
          }
          const before = totalChanges(db);
          // A script that does not manage transactions itself runs as one immediate write
          // transaction: all or nothing, and no read-to-write upgrade for another process to break.
          if (db.isTransaction || TX_CONTROL.test(sql)) db.exec(sql);
          else writeTx(db, () => db.exec(sql));
          const after = totalChanges(db);
          const last = (db.prepare("select last_insert_rowid() as id").get() as { id: number }).id;
          return { affected: after - before, last_id: toLuaNumber(last) };
        }
        checkBound("std.sql.execute", sql, params, given);
        const before = totalChanges(db);
        const r = run(db, sql, params, "run", "std.sql.execute") as {
          changes: number | bigint;
          lastInsertRowid: number | bigint;
        };
        // SQLite's `changes` is the last INSERT/UPDATE/DELETE's: a statement that changed no rows
        // (DDL, a SELECT) leaves the previous count there. Only a statement that moved the total
        // changed rows, and then `changes` is its own (not counting what its triggers did).
        const affected = totalChanges(db) === before ? 0 : toLuaNumber(r.changes);
        return { affected, last_id: toLuaNumber(r.lastInsertRowid) };
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
      checkBound("std.sql.query", sql, params, a.at(2) !== undefined);
      try {
        const rows = run(store.db, sql, params, "all", "std.sql.query") as Record<string, unknown>[];
        for (const r of rows) for (const k in r) r[k] = toLuaNumber(r[k]);
        return rows;
      } catch (e) {
        throw fail("std.sql.query", e);
      }
    },
  });
}
