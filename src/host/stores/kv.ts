/**
 * `std.kv.*`: a namespaced key–value store in SQLite (`kv.sqlite`, see `sqlite.ts` for where).
 *
 * Owns get/set/delete/list. Values are any JSON-able Lua value, stored as canonical JSON
 * (`src/json/codec.ts`: sorted keys, `3.0` stays a float, big integers exact) and given back as
 * they were stored (a stored `std.json.null` comes back as `std.json.null`). `set` is an upsert,
 * `delete` answers whether the key existed, `list` answers the keys in byte order, optionally
 * only those starting with `prefix`.
 *
 * Each call is one autocommit statement (atomic on its own; the busy timeout makes concurrent
 * processes wait for each other instead of failing). The table is `__kv(ns, key, value)`.
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { LuaEngine } from "../../lua/engine.ts";
import type { Args } from "../../lua/args.ts";
import { parseJson, stringifyJson } from "../../json/codec.ts";
import { LuaMulti } from "../../json/values.ts";
import type { RunContext } from "../context.ts";
import { LazyDatabase } from "./sqlite.ts";

const SCHEMA = `CREATE TABLE IF NOT EXISTS __kv (
  ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (ns, key)
) WITHOUT ROWID`;

interface Statements {
  get: StatementSync;
  set: StatementSync;
  del: StatementSync;
  list: StatementSync;
  listPrefix: StatementSync;
}

function prepare(db: DatabaseSync): Statements {
  return {
    get: db.prepare("SELECT value FROM __kv WHERE ns = ? AND key = ?"),
    set: db.prepare(
      "INSERT INTO __kv (ns, key, value) VALUES (?, ?, ?) ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value",
    ),
    del: db.prepare("DELETE FROM __kv WHERE ns = ? AND key = ?"),
    list: db.prepare("SELECT key FROM __kv WHERE ns = ? ORDER BY key"),
    listPrefix: db.prepare(
      "SELECT key FROM __kv WHERE ns = ? AND substr(key, 1, length(?2)) = ?2 ORDER BY key",
    ),
  };
}

/** Installs `std.kv.*` (the tools are in `stores.lua`). */
export function installKv(engine: LuaEngine, run: RunContext): void {
  let st: Statements | undefined;
  const store = new LazyDatabase("kv", run, (db) => {
    db.exec(SCHEMA);
  });
  run.onCleanup(() => store.close());
  const stmts = () => st ??= prepare(store.db);
  const ns = (a: Args) => {
    const v = a.string(1, "ns");
    if (v === "") a.fail(1, "ns", "a non-empty string", "an empty string");
    return v;
  };
  const sqlError = (fn: string, e: unknown) => new Error(`std.kv.${fn}: ${(e as Error).message}`);

  engine.define("std.kv.get", {
    sync: (a) => {
      const n = ns(a);
      const key = a.string(2, "key");
      let row: { value: string } | undefined;
      try {
        row = stmts().get.get(n, key) as { value: string } | undefined;
      } catch (e) {
        throw sqlError("get", e);
      }
      return row ? parseJson(row.value) : new LuaMulti([undefined]);
    },
  });
  engine.define("std.kv.set", {
    floats: "tagged",
    sync: (a) => {
      const n = ns(a);
      const key = a.string(2, "key");
      if (a.at(3) === undefined) {
        a.fail(3, "value", "a value (use std.kv.delete to remove a key)", "nil");
      }
      let text: string;
      try {
        text = stringifyJson(a.at(3));
      } catch (e) {
        throw new Error(`std.kv.set: argument 3 (value): ${(e as Error).message}`);
      }
      try {
        stmts().set.run(n, key, text);
      } catch (e) {
        throw sqlError("set", e);
      }
    },
  });
  engine.define("std.kv.delete", {
    sync: (a) => {
      const n = ns(a);
      const key = a.string(2, "key");
      try {
        return Number(stmts().del.run(n, key).changes) > 0;
      } catch (e) {
        throw sqlError("delete", e);
      }
    },
  });
  engine.define("std.kv.list", {
    sync: (a) => {
      const n = ns(a);
      const prefix = a.optString(2, "prefix");
      try {
        const rows = (prefix ? stmts().listPrefix.all(n, prefix) : stmts().list.all(n)) as { key: string }[];
        return rows.map((r) => r.key);
      } catch (e) {
        throw sqlError("list", e);
      }
    },
  });
}
