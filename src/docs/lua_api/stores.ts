/** Reference entries: the SQLite stores `std.kv`, `std.sql`, `std.ts`. */
import type { Entry, Section } from "./types.ts";

const WHERE = (kind: string, env: string) =>
  `The database is \`$AGENT_BLOCK_HOME/${kind}.sqlite\` unless \`${env}\` names another file ` +
  "(relative: the working directory; `:memory:` for a private in-memory one), in WAL mode with a busy " +
  "timeout (`AGENT_BLOCK_SQL_BUSY_TIMEOUT_MS`, default 5000), so several processes share it safely.";

const toolOpts = (prefix: string, ops: string, extra = ""): Entry => ({
  kind: "class",
  name: `std.${prefix}.ToolOpts`,
  doc: `Options of \`std.${prefix}.register_tools\`.`,
  fields: [
    {
      name: "allowed",
      type: "string[]",
      optional: true,
      doc: `A subset of ${ops} (default all; the prefix may be included).`,
    },
    {
      name: "prefix",
      type: "string",
      optional: true,
      doc: `The tool names' prefix (default \`${prefix}_\`).`,
    },
    {
      name: "group",
      type: "string",
      optional: true,
      doc: "The tools' group (`tool.register`'s `meta.group`).",
    },
    ...(extra ? [{ name: "ns_lock", type: "string", optional: true, doc: extra }] : []),
  ],
});

export const STD_KV: Section = {
  id: "std.kv",
  title: "std.kv",
  file: "agent-block",
  tables: ["std.kv"],
  doc: "A namespaced key-value store. Values are any JSON-able Lua value, given back as stored. " +
    WHERE("kv", "AGENT_BLOCK_KV_PATH") + " Failures of SQLite raise `std.kv.<fn>: <reason>`.",
  entries: [
    {
      kind: "function",
      name: "std.kv.get",
      doc: "The value stored under a key.",
      params: [
        { name: "ns", type: "string", doc: "The namespace (non-empty)." },
        { name: "key", type: "string", doc: "The key." },
      ],
      returns: [{ type: "any", doc: "The value, or nil when absent." }],
      example: 'local seen = std.kv.get("crawler", "seen") or {}',
    },
    {
      kind: "function",
      name: "std.kv.set",
      doc: "Stores a value under a key, replacing any previous one.",
      params: [
        { name: "ns", type: "string", doc: "The namespace." },
        { name: "key", type: "string", doc: "The key." },
        { name: "value", type: "any", doc: "A JSON-able value (not nil: use `delete`)." },
      ],
      example: 'std.kv.set("crawler", "seen", { "a", "b" })',
    },
    {
      kind: "function",
      name: "std.kv.delete",
      doc: "Deletes a key.",
      params: [
        { name: "ns", type: "string", doc: "The namespace." },
        { name: "key", type: "string", doc: "The key." },
      ],
      returns: [{ type: "boolean", doc: "Whether it existed." }],
      example: 'std.kv.delete("crawler", "seen")',
    },
    {
      kind: "function",
      name: "std.kv.list",
      doc: "The keys of a namespace in byte order, optionally only those starting with `prefix`.",
      params: [
        { name: "ns", type: "string", doc: "The namespace." },
        { name: "prefix", type: "string", optional: true, doc: "A key prefix." },
      ],
      returns: [{ type: "string[]", doc: "The keys." }],
      example: 'for _, k in ipairs(std.kv.list("crawler", "page:")) do print(k) end',
    },
    toolOpts(
      "kv",
      "get, set, delete, list",
      "Every call uses this namespace; the model cannot pick another.",
    ),
    {
      kind: "function",
      name: "std.kv.register_tools",
      doc:
        "Registers `kv_get` (→ `{ value }`), `kv_set` (→ `{ ok = true }`), `kv_delete` (→ `{ deleted }`) " +
        "and `kv_list` (→ `{ keys }`) as model tools.",
      params: [{
        name: "opts",
        type: "std.kv.ToolOpts",
        optional: true,
        doc: "Which tools, their prefix, group, namespace.",
      }],
      returns: [{ type: "string[]", doc: "The registered tool names." }],
      example: 'std.kv.register_tools({ ns_lock = "notes", allowed = { "get", "set" } })',
    },
  ],
};

export const STD_SQL: Section = {
  id: "std.sql",
  title: "std.sql",
  file: "agent-block",
  tables: ["std.sql"],
  doc: "SQL on the run's SQLite database. " + WHERE("sql", "AGENT_BLOCK_SQL_PATH") +
    " Parameters are an array (`?`, `?N`) or a table of names (`:name`, `@name`, `$name`, written " +
    "without the sigil); nil and `std.sql.null` bind NULL, booleans 1/0, non-UTF-8 strings BLOBs. " +
    "SQL errors raise with SQLite's message: `std.sql.query: no such table: nope`.",
  entries: [
    {
      kind: "class",
      name: "std.sql.ExecResult",
      doc: "What `std.sql.execute` answers.",
      fields: [
        { name: "affected", type: "integer", doc: "Rows this call changed (0 for DDL or a `SELECT`)." },
        { name: "last_id", type: "integer", doc: "The rowid of the last insert." },
      ],
    },
    {
      kind: "function",
      name: "std.sql.execute",
      doc: "Runs a statement that changes data or schema. Without parameters it may hold several " +
        "statements (a migration), run in one immediate transaction unless the script manages " +
        "transactions itself. `affected` counts the rows this call changed: 0 for a statement that " +
        "changes none (`CREATE TABLE`, a `SELECT`).",
      params: [
        { name: "sql", type: "string", doc: "The statement(s)." },
        {
          name: "params",
          type: "table",
          optional: true,
          doc: "Positional (a list: `?`, `?N`) or named (`{ name = v }` for `:name`, `@name`, `$name`) " +
            "parameters; `std.sql.null` binds NULL.",
        },
      ],
      returns: [{ type: "std.sql.ExecResult", doc: "Rows affected and the last rowid." }],
      errors: "Raises for an SQL error, for parameters given to several statements, and for a parameter of " +
        "the statement that gets no value (a trailing nil of a list is no value: pass `std.sql.null`).",
      example: 'std.sql.execute("INSERT INTO notes (title) VALUES (?)", { "first" })',
    },
    {
      kind: "function",
      name: "std.sql.query",
      doc: "Runs one query. SQL NULL comes back as `std.sql.null`, so every column's key is present; " +
        "BLOBs come back as strings of their bytes.",
      params: [
        { name: "sql", type: "string", doc: "One statement." },
        {
          name: "params",
          type: "table",
          optional: true,
          doc: "Positional or named parameters, as for `execute`.",
        },
      ],
      returns: [{ type: "table[]", doc: "The rows, keyed by column name." }],
      errors: "Raises for an SQL error, several statements, a parameter that gets no value, or two result " +
        "columns with one name (name them apart with `AS`).",
      example:
        'for _, r in ipairs(std.sql.query("SELECT id, title FROM notes WHERE id > :min", { min = 3 })) do\n' +
        "  print(r.id, r.title)\nend",
    },
    {
      kind: "value",
      name: "std.sql.null",
      type: "userdata",
      doc: "SQL NULL: the same value as `std.json.null`.",
    },
    toolOpts("sql", "execute, query"),
    {
      kind: "function",
      name: "std.sql.register_tools",
      doc:
        "Registers `sql_execute` (→ `{ affected, last_id }`) and `sql_query` (→ `{ rows }`) as model tools.",
      params: [{
        name: "opts",
        type: "std.sql.ToolOpts",
        optional: true,
        doc: "Which tools, their prefix, group.",
      }],
      returns: [{ type: "string[]", doc: "The registered tool names." }],
      example: 'std.sql.register_tools({ allowed = { "query" } })',
    },
  ],
};

export const STD_TS: Section = {
  id: "std.ts",
  title: "std.ts",
  file: "agent-block",
  tables: ["std.ts"],
  doc: "A time-series store. A point is a series name, a time in ms, optional tags and a value (a number " +
    "or a table). " + WHERE("ts", "AGENT_BLOCK_TS_PATH") + " Raw rows come in `(ts, append order)`; " +
    '`last` and `agg = "last"` let the point appended last win a same-millisecond tie.',
  entries: [
    {
      kind: "class",
      name: "std.ts.Row",
      doc: "A raw point.",
      fields: [
        { name: "ts", type: "integer", doc: "Epoch milliseconds." },
        { name: "value", type: "any", doc: "The value as appended." },
        { name: "tags", type: "table<string, string|number|boolean>", optional: true, doc: "Its tags." },
      ],
    },
    {
      kind: "class",
      name: "std.ts.Query",
      doc: "Options of `std.ts.query` (`from`/`to` inclusive).",
      fields: [
        { name: "from", type: "integer", optional: true, doc: "Start, epoch ms." },
        { name: "to", type: "integer", optional: true, doc: "End, epoch ms." },
        {
          name: "tags",
          type: "table<string, string|number|boolean>",
          optional: true,
          doc: "AND-filter on tags.",
        },
        {
          name: "agg",
          type: '"count"|"sum"|"avg"|"last"',
          optional: true,
          doc: "Aggregate instead of raw rows (`sum`/`avg` over numeric values).",
        },
        {
          name: "bucket_ms",
          type: "integer",
          optional: true,
          doc: "Bucket width (needs `agg`): rows `{ bucket, value }`.",
        },
        { name: "limit", type: "integer", optional: true, doc: "At most this many rows or buckets." },
        { name: "offset", type: "integer", optional: true, doc: "Skip this many." },
      ],
    },
    {
      kind: "function",
      name: "std.ts.append",
      doc: "Appends a point.",
      params: [
        { name: "series", type: "string", doc: "The series (non-empty)." },
        { name: "value", type: "number|table", doc: "The value." },
        {
          name: "tags",
          type: "table<string, string|number|boolean>",
          optional: true,
          doc: "Tags (keys `[A-Za-z0-9_]+`).",
        },
        { name: "at", type: "integer", optional: true, doc: "Epoch ms (default now)." },
      ],
      errors: "Raises `must be a number or a table` for any other value (nil, a string, a boolean).",
      example: 'std.ts.append("latency_ms", 42, { host = "a" })',
    },
    {
      kind: "function",
      name: "std.ts.query",
      doc: "Raw points `{ ts, value, tags }`, or with `agg` one row `{ value }`, or with `bucket_ms` rows " +
        "`{ bucket, value }` ordered by bucket.",
      params: [
        { name: "series", type: "string", doc: "The series." },
        { name: "opts", type: "std.ts.Query", optional: true, doc: "Range, tags, aggregation, paging." },
      ],
      returns: [{ type: "table[]", doc: "The rows." }],
      errors: "Raises for an unknown option, a non-integer bound, or `bucket_ms` without `agg`.",
      example: 'local rows = std.ts.query("latency_ms", { agg = "avg", bucket_ms = 60000 })',
    },
    {
      kind: "function",
      name: "std.ts.last",
      doc: "The most recent point of a series, optionally among those matching `tags`.",
      params: [
        { name: "series", type: "string", doc: "The series." },
        { name: "tags", type: "table<string, string|number|boolean>", optional: true, doc: "AND-filter." },
      ],
      returns: [{ type: "std.ts.Row?", doc: "The point, or nil when there is none." }],
      example: 'local p = std.ts.last("latency_ms", { host = "a" })',
    },
    toolOpts("ts", "append, query, last"),
    {
      kind: "function",
      name: "std.ts.register_tools",
      doc:
        "Registers `ts_append` (→ `{ ok = true }`), `ts_query` (→ `{ rows }`) and `ts_last` (→ `{ row }`) " +
        "as model tools.",
      params: [{
        name: "opts",
        type: "std.ts.ToolOpts",
        optional: true,
        doc: "Which tools, their prefix, group.",
      }],
      returns: [{ type: "string[]", doc: "The registered tool names." }],
      example: "std.ts.register_tools()",
    },
  ],
};
