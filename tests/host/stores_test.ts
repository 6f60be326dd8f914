/**
 * std.kv, std.sql, std.ts on real SQLite files: values round-trip exactly, ordering and
 * tie-break guarantees, aggregation and buckets, paging, tag AND-filters, env path overrides,
 * `:memory:`, SQL errors with SQLite's message, positional and named parameters (a missing one an
 * error), duplicate result columns refused, `affected` per statement, the tools, and
 * 4 agent-block processes writing 2,000 keys each into one kv file at the same time.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { runCli, runLua, tempDir, testEnv } from "../helpers.ts";

/** Runs `source` with `home`; `env` adds variables to the run's environment. */
async function ret(source: string, home: string, env: Record<string, string> = {}): Promise<string> {
  const r = await runLua(source, { home, env: testEnv(env) });
  if (r.outcome.status !== "returned") throw new Error(`${JSON.stringify(r.outcome)}\n${r.stderr}`);
  return r.outcome.value as string;
}

Deno.test("std.kv: set/get round-trips values exactly; delete answers existence; list sorts and filters", async () => {
  const home = await tempDir();
  const out = await ret(
    `std.kv.set("ns", "b", { x = 1, f = 2.0, big = 9007199254740993, list = { 1, "two" }, empty = std.json.array() })
     std.kv.set("ns", "a", "text")
     std.kv.set("ns", "ab", std.json.null)
     std.kv.set("other", "a", 1)
     std.kv.set("ns", "a", "replaced")
     local v = std.kv.get("ns", "b")
     return std.json.encode({ v, std.kv.get("ns", "a"), std.kv.get("ns", "ab") == std.json.null, std.kv.get("ns", "zz") == nil,
       std.kv.list("ns"), std.kv.list("ns", "a"), std.kv.delete("ns", "a"), std.kv.delete("ns", "a"), std.kv.list("ns"),
       math.type(v.f), math.type(v.big) })`,
    home,
  );
  assert.equal(
    out,
    '[{"big":9007199254740993,"empty":[],"f":2.0,"list":[1,"two"],"x":1},"replaced",true,true,["a","ab","b"],["a","ab"],true,false,["ab","b"],"float","integer"]',
  );
  // The file is where the seed says, in WAL mode.
  const db = new DatabaseSync(join(home, "kv.sqlite"));
  assert.equal((db.prepare("pragma journal_mode").get() as { journal_mode: string }).journal_mode, "wal");
  assert.equal((db.prepare("select count(*) as n from __kv").get() as { n: number }).n, 3);
  db.close();
});

Deno.test("std.kv: AGENT_BLOCK_KV_PATH overrides (parent dirs created); :memory: leaves no file", async () => {
  const home = await tempDir();
  const path = join(home, "deep", "er", "my.db");
  await ret(`std.kv.set("n", "k", 1) return "x"`, home, { AGENT_BLOCK_KV_PATH: path });
  assert.ok(Deno.statSync(path).isFile);
  const out = await ret(
    `std.kv.set("n", "k", 5) std.sql.execute("create table t(a)") std.ts.append("s", 1)
     return std.kv.get("n", "k") .. #std.ts.query("s")`,
    home,
    { AGENT_BLOCK_KV_PATH: ":memory:", AGENT_BLOCK_SQL_PATH: ":memory:", AGENT_BLOCK_TS_PATH: ":memory:" },
  );
  assert.equal(out, "51");
  assert.deepEqual([...Deno.readDirSync(home)].map((e) => e.name), ["deep"]);
});

Deno.test("stores: a path that cannot be opened raises naming the store, the function and the file", async () => {
  const home = await tempDir();
  await Deno.writeTextFile(join(home, "plain"), "not a database, just text that is long enough to be read");
  const out = await ret(
    `local a = select(2, pcall(std.kv.set, "n", "k", 1))
     local b = select(2, pcall(std.ts.append, "s", 1))
     return a .. "\\n" .. b`,
    home,
    { AGENT_BLOCK_KV_PATH: join(home, "plain", "kv.sqlite"), AGENT_BLOCK_TS_PATH: join(home, "plain") },
  );
  assert.equal(
    out,
    `std.kv.set: cannot open the kv store ${join(home, "plain", "kv.sqlite")}: Not a directory: ${
      join(home, "plain")
    }\n` +
      `std.ts.append: cannot open the ts store ${join(home, "plain")}: file is not a database`,
  );
});

Deno.test("std.kv: argument errors", async () => {
  const home = await tempDir();
  for (
    const [code, msg] of [
      [`std.kv.get(1 == 1, "k")`, "std.kv.get: argument 1 (ns) must be a string, got boolean"],
      [`std.kv.get("", "k")`, "std.kv.get: argument 1 (ns) must be a non-empty string, got an empty string"],
      [`std.kv.set("n", {}, 1)`, "std.kv.set: argument 2 (key) must be a string, got table"],
      [
        `std.kv.set("n", "k")`,
        "std.kv.set: argument 3 (value) must be a value (use std.kv.delete to remove a key), got nil",
      ],
      [
        `std.kv.set("n", "k", { f = 0/0 })`,
        "std.kv.set: argument 3 (value): cannot encode NaN as a JSON number at .f",
      ],
      [`std.kv.delete("n")`, "std.kv.delete: argument 2 (key) must be a string, got nil"],
      [`std.kv.list("n", {})`, "std.kv.list: argument 2 (prefix) must be a string, got table"],
    ]
  ) {
    const r = await runLua(`\n${code}`, { home });
    assert.equal((r.outcome as { message: string }).message, `test.lua:2: ${msg}`, code);
  }
});

Deno.test("std.sql: execute/query with positional and named params; NULL, blobs, booleans; errors", async () => {
  const home = await tempDir();
  const out = await ret(
    `local r1 = std.sql.execute("create table t (id integer primary key, name text, n real, b blob, flag int)")
     local r2 = std.sql.execute("insert into t (name, n, b, flag) values (?, ?, ?, ?)", { "a", 1.5, "\\0\\255", true })
     local r3 = std.sql.execute("insert into t (name, n, flag) values (:name, @n, $flag)", { name = "b", n = 2, flag = false })
     local r4 = std.sql.execute("insert into t (name, n) values (?1, ?2)", { [1] = "c", [2] = std.sql.null })
     local rows = std.sql.query("select * from t order by id")
     local one = std.sql.query("select name from t where n > ? and flag = ?", { 1, 1 })
     local upd = std.sql.execute("update t set flag = 7 where flag is not null")
     local many = std.sql.execute("create table u (x); insert into u values (1); insert into u values (2);")
     local atomic = select(2, pcall(std.sql.execute, "insert into u values (3); insert into nope values (1);"))
     local after_atomic = std.sql.query("select count(*) as n from u")[1].n
     local e1 = select(2, pcall(std.sql.query, "select * from nope"))
     local e2 = select(2, pcall(std.sql.execute, "insert into t (id) values (1)"))
     local e3 = select(2, pcall(std.sql.query, "select 1; select 2"))
     local e4 = select(2, pcall(std.sql.execute, "insert into u values (?); insert into u values (?)", { 1, 2 }))
     return std.json.encode({ r1.affected, r2, r3.last_id, r4.last_id, rows[1].name, rows[1].n, #rows[1].b, rows[1].b:byte(2),
       rows[1].flag, rows[2].flag, rows[3].n == std.sql.null, rows[3].b == std.json.null, one[1].name, #one, upd.affected,
       many.affected, e1, e2, e3, e4, atomic, after_atomic })`,
    home,
  );
  assert.deepEqual(JSON.parse(out), [
    0,
    { affected: 1, last_id: 1 },
    2,
    3,
    "a",
    1.5,
    2,
    255,
    1,
    0,
    true,
    true,
    "a",
    1,
    2,
    2,
    "std.sql.query: no such table: nope",
    "std.sql.execute: UNIQUE constraint failed: t.id",
    "std.sql.query: only one statement can be queried at a time",
    "std.sql.execute: parameters can only be bound to a single statement",
    "std.sql.execute: no such table: nope",
    2, // the script's first insert was rolled back with the failing second one
  ]);
  assert.ok(Deno.statSync(join(home, "sql.sqlite")).isFile);
});

Deno.test("std.sql: a parameter without a value is an error, never a silent NULL", async () => {
  const home = await tempDir();
  const out = await ret(
    `std.sql.execute("create table t (a, b)")
     local function err(f, ...) local ok, e = pcall(f, ...) assert(not ok, "no error") return e end
     return std.json.encode({
       err(std.sql.execute, "insert into t values (?, ?)", { 1 }),
       err(std.sql.execute, "insert into t values (?, ?)", { 1, nil }),
       err(std.sql.execute, "insert into t values (?1, ?2)", { [1] = 1 }),
       err(std.sql.query, "select :a as a, :b as b", { a = 1 }),
       err(std.sql.query, "select @b as b", { a = 1, b = nil }),
       err(std.sql.query, "select ? as a"),
       err(std.sql.query, "select ? as a", {}),
       err(std.sql.query, "select :a as a", { 1 }),
       err(std.sql.query, "select ? as a", { a = 1 }),
       err(std.sql.execute, "insert into t values (?, 1); insert into t values (2, 2)"),
       -- what is not a parameter: literals, comments, identifiers with a $ in them
       std.sql.query("select '?' as q, 1 as a$b -- :nope\\n")[1].q,
       std.sql.query("select ? as a, ? as b", { 1, std.sql.null })[1].b == std.sql.null,
       std.sql.query("select $x as x, :y as y, $x as z", { x = 5, y = 6 })[1].z,
       #std.sql.query("select * from t"),
     })`,
    home,
  );
  assert.deepEqual(JSON.parse(out), [
    "std.sql.execute: parameter #2 (?) of the statement has no value (params gives 1 value and it " +
    "takes value 2; a nil at the end of a list is no value: pass std.sql.null for NULL)",
    "std.sql.execute: parameter #2 (?) of the statement has no value (params gives 1 value and it " +
    "takes value 2; a nil at the end of a list is no value: pass std.sql.null for NULL)",
    "std.sql.execute: parameter ?2 of the statement has no value (params gives 1 value and it " +
    "takes value 2; a nil at the end of a list is no value: pass std.sql.null for NULL)",
    "std.sql.query: parameter :b of the statement has no value (params has no field 'b'; pass " +
    "std.sql.null for NULL)",
    "std.sql.query: parameter @b of the statement has no value (params has no field 'b'; pass " +
    "std.sql.null for NULL)",
    "std.sql.query: parameter #1 (?) of the statement has no value (no params were given; pass " +
    "std.sql.null for NULL)",
    "std.sql.query: parameter #1 (?) of the statement has no value (params gives 0 values and it " +
    "takes value 1; a nil at the end of a list is no value: pass std.sql.null for NULL)",
    "std.sql.query: parameter :a of the statement has no value (a named parameter, and params is a " +
    "list; give params as a table of names)",
    "std.sql.query: parameter #1 (?) of the statement has no value (a positional parameter, and " +
    "params is a table of names; give params as a list)",
    "std.sql.execute: parameter #1 (?) has no value: parameters can only be bound to a single statement",
    "?",
    true,
    5,
    0, // nothing was inserted by the refused statements
  ]);
});

Deno.test("std.sql: two result columns with one name are an error; execute's affected is its own", async () => {
  const home = await tempDir();
  const out = await ret(
    `local created = std.sql.execute("create table t (id integer primary key, a)")
     local ins = std.sql.execute("insert into t (a) values (1), (2), (3)")
     local ddl = std.sql.execute("create table u (id integer primary key, a)")
     local sel = std.sql.execute("select * from t")
     local none = std.sql.execute("update t set a = 0 where a > 100")
     local upd = std.sql.execute("update t set a = a + 1 where a >= 2")
     std.sql.execute("insert into u (a) values (9)")
     local trig = std.sql.execute("create trigger tr after insert on t begin insert into u (a) values (new.a); end")
     local with_trigger = std.sql.execute("insert into t (a) values (7)") -- its own row, not the trigger's
     local dup = select(2, pcall(std.sql.query, "select t.id, u.id from t join u on t.a = u.a"))
     local star = select(2, pcall(std.sql.query, "select * from t join u on t.a = u.a"))
     local apart = std.sql.query("select t.id as t_id, u.id as u_id from t join u on t.a = u.a order by t.id")
     return std.json.encode({ created.affected, ins.affected, ddl.affected, sel.affected, none.affected,
       upd.affected, trig.affected, with_trigger.affected, dup, star, #apart })`,
    home,
  );
  assert.deepEqual(JSON.parse(out), [
    0,
    3,
    0,
    0,
    0,
    2,
    0,
    1,
    "std.sql.query: the result has two columns named 'id', and a row keys its columns by name " +
    "(name them apart with AS)",
    "std.sql.query: the result has two columns named 'id', and a row keys its columns by name " +
    "(name them apart with AS)",
    1,
  ]);
});

Deno.test("std.sql: argument errors", async () => {
  const home = await tempDir();
  for (
    const [code, msg] of [
      [`std.sql.query({})`, "std.sql.query: argument 1 (sql) must be a string, got table"],
      [
        `std.sql.execute("select 1", "x")`,
        "std.sql.execute: argument 2 (params) must be a table, got string",
      ],
      [
        `std.sql.query("select ?", { {} })`,
        "std.sql.query: argument 2 (params) element 1 must be a string, number, boolean or nil, got table",
      ],
      [
        `std.sql.query("select :a", { a = {} })`,
        "std.sql.query: argument 2 (params) field 'a' must be a string, number, boolean or nil, got table",
      ],
    ]
  ) {
    const r = await runLua(`\n${code}`, { home });
    assert.equal((r.outcome as { message: string }).message, `test.lua:2: ${msg}`, code);
  }
});

Deno.test("std.ts: raw order (ts, rowid), last ties, tag AND-filter incl. numbers, from/to, limit/offset", async () => {
  const home = await tempDir();
  const out = await ret(
    `std.ts.append("cpu", 1, { host = "a", core = 0 }, 1000)
     std.ts.append("cpu", 2, { host = "b", core = 1 }, 1000)
     std.ts.append("cpu", { x = 3.0 }, { host = "a", core = 1 }, 1000)
     std.ts.append("cpu", 4, nil, 500)
     std.ts.append("cpu", 5, { host = "a", core = 0 }, 3000)
     std.ts.append("mem", 9, nil, 2000)
     local function vals(rows) local o = {} for i, r in ipairs(rows) do o[i] = std.json.encode(r.value) end return table.concat(o, ",") end
     return table.concat({
       vals(std.ts.query("cpu")),
       vals(std.ts.query("cpu", { tags = { host = "a" } })),
       vals(std.ts.query("cpu", { tags = { host = "a", core = 1 } })),
       vals(std.ts.query("cpu", { from = 1000, to = 1000 })),
       vals(std.ts.query("cpu", { limit = 2, offset = 1 })),
       vals(std.ts.query("cpu", { offset = 4 })),
       std.json.encode(std.ts.last("cpu")),
       std.json.encode(std.ts.last("cpu", { core = 1 })),
       tostring(std.ts.last("nothing")),
       std.json.encode(std.ts.query("cpu", { agg = "last", to = 1000 })),
       std.json.encode(std.ts.query("cpu")[1]),
     }, "|")`,
    home,
  );
  assert.equal(
    out,
    [
      '4,1,2,{"x":3.0},5',
      '1,{"x":3.0},5',
      '{"x":3.0}',
      '1,2,{"x":3.0}',
      "1,2",
      "5",
      '{"tags":{"core":0,"host":"a"},"ts":3000,"value":5}',
      '{"tags":{"core":1,"host":"a"},"ts":1000,"value":{"x":3.0}}',
      "nil",
      '[{"value":{"x":3.0}}]',
      '{"ts":500,"value":4}',
    ].join("|"),
  );
});

Deno.test("std.ts: count/sum/avg/last, with and without buckets (floor buckets, numeric values only)", async () => {
  const home = await tempDir();
  const out = await ret(
    `for i, p in ipairs({ { -1500, 1 }, { -10, 2 }, { 0, 3 }, { 999, 4 }, { 1000, 5.5 }, { 1999, { obj = 1 } } }) do
       std.ts.append("s", p[2], nil, p[1])
     end
     local q = function(o) return std.json.encode(std.ts.query("s", o)) end
     return table.concat({
       q({ agg = "count" }), q({ agg = "sum" }), q({ agg = "avg", from = 0, to = 999 }), q({ agg = "last" }),
       q({ agg = "count", bucket_ms = 1000 }), q({ agg = "sum", bucket_ms = 1000 }),
       q({ agg = "last", bucket_ms = 1000 }), q({ agg = "avg", bucket_ms = 1000, limit = 1, offset = 1 }),
       q({ agg = "sum", from = 5000 }), q({ agg = "avg", from = 5000 }), q({ agg = "last", from = 5000 }),
     }, "|")`,
    home,
  );
  assert.equal(
    out,
    [
      '[{"value":6}]',
      '[{"value":15.5}]',
      '[{"value":3.5}]',
      '[{"value":{"obj":1}}]',
      '[{"bucket":-2000,"value":1},{"bucket":-1000,"value":1},{"bucket":0,"value":2},{"bucket":1000,"value":2}]',
      '[{"bucket":-2000,"value":1},{"bucket":-1000,"value":2},{"bucket":0,"value":7},{"bucket":1000,"value":5.5}]',
      '[{"bucket":-2000,"value":1},{"bucket":-1000,"value":2},{"bucket":0,"value":4},{"bucket":1000,"value":{"obj":1}}]',
      '[{"bucket":-1000,"value":2}]',
      '[{"value":0}]',
      "[{}]",
      "[{}]",
    ].join("|"),
  );
});

Deno.test("std.ts: argument errors", async () => {
  const home = await tempDir();
  for (
    const [code, msg] of [
      [`std.ts.append(1 == 1, 1)`, "std.ts.append: argument 1 (series) must be a string, got boolean"],
      [`std.ts.append("s", nil)`, "std.ts.append: argument 2 (value) must be a number or a table, got nil"],
      [
        `std.ts.append("s", "12")`,
        "std.ts.append: argument 2 (value) must be a number or a table, got string",
      ],
      [
        `std.ts.append("s", "\\255")`,
        "std.ts.append: argument 2 (value) must be a number or a table, got string",
      ],
      [
        `std.ts.append("s", true)`,
        "std.ts.append: argument 2 (value) must be a number or a table, got boolean",
      ],
      [
        `std.ts.append("s", std.json.null)`,
        "std.ts.append: argument 2 (value) must be a number or a table, got userdata",
      ],
      [
        `std.ts.append("s", 1, { ["a-b"] = 1 })`,
        "std.ts.append: argument 3 (tags) key 'a-b' must match [A-Za-z0-9_]+",
      ],
      [
        `std.ts.append("s", 1, { a = {} })`,
        "std.ts.append: argument 3 (tags) value of 'a' must be a string, number or boolean, got table",
      ],
      [`std.ts.append("s", 1, nil, 1.5)`, "std.ts.append: argument 4 (at) must be an integer, got 1.5"],
      [
        `std.ts.query("s", { agg = "max" })`,
        "std.ts.query: argument 2 (opts) field 'agg' must be one of count, sum, avg, last, got 'max'",
      ],
      [
        `std.ts.query("s", { bucket_ms = 10 })`,
        "std.ts.query: argument 2 (opts) field 'bucket_ms' requires field 'agg'",
      ],
      [
        `std.ts.query("s", { agg = "sum", bucket_ms = 0 })`,
        "std.ts.query: argument 2 (opts) field 'bucket_ms' must be >= 1, got 0",
      ],
      [
        `std.ts.query("s", { limit = -1 })`,
        "std.ts.query: argument 2 (opts) field 'limit' must be >= 0, got -1",
      ],
      [
        `std.ts.query("s", { offset = "1" })`,
        "std.ts.query: argument 2 (opts) field 'offset' must be an integer, got string",
      ],
      [
        `std.ts.query("s", { form = 1 })`,
        "std.ts.query: argument 2 (opts) has an unknown field 'form' (known: from, to, tags, agg, bucket_ms, limit, offset)",
      ],
      [`std.ts.last("s", 5)`, "std.ts.last: argument 2 (tags) must be a table, got number"],
    ]
  ) {
    const r = await runLua(`\n${code}`, { home });
    assert.equal((r.outcome as { message: string }).message, `test.lua:2: ${msg}`, code);
  }
});

Deno.test("store tools: kv (ns_lock), sql and ts tools through tool.call", async () => {
  const home = await tempDir();
  const out = await ret(
    `local k = std.kv.register_tools({ ns_lock = "locked", allowed = { "get", "kv_set" } })
     local s = std.sql.register_tools({ group = "db" })
     local t = std.ts.register_tools({ prefix = "m_" })
     tool.call("kv_set", { ns = "ignored", key = "a", value = { 1, 2 } })
     tool.call("sql_execute", { sql = "create table x (v)" })
     tool.call("sql_execute", { sql = "insert into x values (?)", params = { 42 } })
     tool.call("m_append", { series = "s", value = 7, tags = { a = "b" }, at = 10 })
     local schema = tool.schema()
     local kv_get_props = {}
     for name in pairs(schema[1].input_schema.properties) do kv_get_props[#kv_get_props + 1] = name end
     local e = select(2, pcall(tool.call, "kv_get", {}))
     return std.json.encode({ k, s, t, tool.call("kv_get", { key = "a" }), std.kv.get("locked", "a"),
       tool.call("sql_query", { sql = "select v from x where v = :v", params = { v = 42 } }),
       tool.call("m_query", { series = "s" }), tool.call("m_last", { series = "s", tags = { a = "b" } }),
       schema[3].group, kv_get_props, e })`,
    home,
  );
  assert.deepEqual(JSON.parse(out), [
    ["kv_get", "kv_set"],
    ["sql_execute", "sql_query"],
    ["m_append", "m_query", "m_last"],
    { value: [1, 2] },
    [1, 2],
    { rows: [{ v: 42 }] },
    { rows: [{ ts: 10, value: 7, tags: { a: "b" } }] },
    { row: { ts: 10, value: 7, tags: { a: "b" } } },
    "db",
    ["key"],
    "kv_get: input field 'key' must be a string, got nil",
  ]);
});

Deno.test("store tools: option errors name the function and the field", async () => {
  const home = await tempDir();
  for (
    const [code, msg] of [
      [`std.kv.register_tools(5)`, "std.kv.register_tools: argument 1 (opts) must be a table, got number"],
      [
        `std.kv.register_tools({ ns_lock = 1 })`,
        "std.kv.register_tools: argument 1 (opts) field 'ns_lock' must be a non-empty string, got number",
      ],
      [
        `std.sql.register_tools({ allowed = { "drop" } })`,
        "std.sql.register_tools: argument 1 (opts) field 'allowed' element 1 must be one of execute, query, got drop",
      ],
      [
        `std.ts.register_tools({ prefix = 1 })`,
        "std.ts.register_tools: argument 1 (opts) field 'prefix' must be a string, got number",
      ],
      [
        `std.ts.register_tools({ allowed = "all" })`,
        "std.ts.register_tools: argument 1 (opts) field 'allowed' must be a table, got string",
      ],
    ]
  ) {
    const r = await runLua(`\n${code}`, { home });
    assert.equal((r.outcome as { message: string }).message, `test.lua:2: ${msg}`, code);
  }
});

Deno.test("attack: std.kv: 4 agent-block processes × 2,000 keys into one file, all 8,000 present", async () => {
  const dir = await tempDir();
  const kvPath = join(dir, "shared", "kv.sqlite");
  await Deno.writeTextFile(
    join(dir, "writer.lua"),
    `local w = _PROMPT
     for i = 1, 2000 do std.kv.set("load", w .. ":" .. i, { w = w, i = i }) end
     return "done " .. w`,
  );
  const runs = await Promise.all(
    [1, 2, 3, 4].map((w) =>
      runCli(["-s", join(dir, "writer.lua"), "-p", dir, "--prompt", `w${w}`], {
        env: { AGENT_BLOCK_KV_PATH: kvPath, AGENT_BLOCK_HOME: dir, AGENT_BLOCK_SQL_BUSY_TIMEOUT_MS: "60000" },
      })
    ),
  );
  for (const r of runs) assert.equal(r.code, 0, r.stderr);
  const db = new DatabaseSync(kvPath);
  const n = db.prepare("select count(*) as n, count(distinct key) as d from __kv where ns = 'load'")
    .get() as {
      n: number;
      d: number;
    };
  const per = db.prepare(
    "select json_extract(value, '$.w') as w, count(*) as c from __kv group by w order by w",
  )
    .all() as { w: string; c: number }[];
  db.close();
  assert.deepEqual([n.n, n.d], [8000, 8000]);
  assert.deepEqual(per.map((p) => [p.w, p.c]), [["w1", 2000], ["w2", 2000], ["w3", 2000], ["w4", 2000]]);
});

Deno.test("stores: a relative store path is taken from the run's working directory", async () => {
  const home = await tempDir();
  const cwd = await tempDir();
  const r = await runLua(`std.kv.set("n", "k", 1) std.ts.append("s", 1) return "x"`, {
    home,
    cwd,
    env: testEnv({ AGENT_BLOCK_KV_PATH: "rel/kv.db", AGENT_BLOCK_TS_PATH: "ts.db" }),
  });
  assert.deepEqual(r.outcome, { status: "returned", value: "x" });
  assert.ok(Deno.statSync(join(cwd, "rel", "kv.db")).isFile);
  assert.ok(Deno.statSync(join(cwd, "ts.db")).isFile);
});
