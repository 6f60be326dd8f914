/** Reference entries: `std.json`, `std.env`, `std.path`, `std.time`. */
import type { Section } from "./types.ts";

export const STD: Section = {
  id: "std",
  title: "std",
  file: "agent-block",
  tables: ["std"],
  doc: "The standard library's namespace: `std.json`, `std.env`, `std.path`, `std.time`, `std.task`, " +
    "`std.fs`, `std.kv`, `std.sql`, `std.ts`.",
  entries: [],
};

export const STD_JSON: Section = {
  id: "std.json",
  title: "std.json",
  file: "agent-block",
  tables: ["std.json"],
  doc: "JSON with one value rule shared by every host function: a table is an array when it is marked " +
    "so (`std.json.array`) or its keys are exactly `1..n`, otherwise an object; strings are byte-exact; " +
    "integers stay integers (exact to 2^63) and floats stay floats (`3.0` encodes as `3.0`). " +
    "Keys are sorted when encoding.",
  entries: [
    {
      kind: "alias",
      name: "std.json.Value",
      type: "nil|boolean|number|string|table|userdata",
      doc: "A value JSON can carry (`userdata`: `std.json.null`).",
    },
    {
      kind: "function",
      name: "std.json.encode",
      doc:
        "Encodes a value as compact JSON with sorted keys (a table with keys besides `1..n` is an object).",
      params: [{ name: "value", type: "any", doc: "Tables, strings, numbers, booleans, `std.json.null`." }],
      returns: [{ type: "string", name: "json", doc: "The JSON text." }],
      errors:
        "Raises `std.json.encode: ...` naming where, for a function or another value JSON cannot carry, " +
        "a table that contains itself, or a missing argument.",
      example: 'print(std.json.encode({ b = 1, a = { 1, 2 } })) --> {"a":[1,2],"b":1}',
    },
    {
      kind: "function",
      name: "std.json.encode_pretty",
      doc: "Like `encode`, indented by two spaces.",
      params: [{ name: "value", type: "any", doc: "The value." }],
      returns: [{ type: "string", name: "json", doc: "The indented JSON text." }],
      errors: "As `encode`.",
      example: 'std.fs.write("out.json", std.json.encode_pretty(result))',
    },
    {
      kind: "function",
      name: "std.json.decode",
      doc: "Decodes JSON text. `null` becomes nil (an object's key is then absent, an array keeps its " +
        "length); with `opts.null = true` it becomes `std.json.null` instead. Arrays come back marked " +
        "as arrays.",
      params: [
        { name: "text", type: "string", doc: "The JSON text." },
        { name: "opts", type: "{ null: boolean? }", optional: true, doc: "`null = true` keeps nulls." },
      ],
      returns: [{ type: "any", name: "value", doc: "The decoded value." }],
      errors: "Raises `std.json.decode: <reason>` for text that is not JSON.",
      example: "local v = std.json.decode('{\"a\": null}', { null = true })\nassert(std.json.is_null(v.a))",
    },
    {
      kind: "function",
      name: "std.json.read_file",
      doc: "Reads and decodes a JSON file (relative paths: the run's working directory).",
      params: [
        { name: "path", type: "string", doc: "The file." },
        { name: "opts", type: "{ null: boolean? }", optional: true, doc: "As for `decode`." },
      ],
      returns: [{ type: "any", name: "value", doc: "The decoded value." }],
      errors: "Raises `std.json.read_file: <path>: <reason>` when the file cannot be read or is not JSON.",
      example: 'local cfg = std.json.read_file("config.json")',
    },
    {
      kind: "function",
      name: "std.json.write_file",
      doc: "Writes a value as indented JSON with a final newline, atomically (a temporary file beside the " +
        "target, then a rename) over a regular file or none; a character device or FIFO is written in place, " +
        "a directory or a link to nothing is refused, a link is followed.",
      params: [
        { name: "path", type: "string", doc: "The file." },
        { name: "value", type: "any", doc: "The value." },
      ],
      returns: [{ type: "true", doc: "Always true." }],
      errors: "Raises `std.json.write_file: ...` when the value cannot be encoded or the file written.",
      example: 'std.json.write_file("state.json", { seen = 3 })',
    },
    {
      kind: "function",
      name: "std.json.array",
      doc: "Marks a table as a JSON array, so an empty one encodes as `[]`.",
      params: [{ name: "t", type: "table", optional: true, doc: "The table (default a new one)." }],
      returns: [{ type: "table", doc: "`t`, marked." }],
      example: 'print(std.json.encode({ items = std.json.array() })) --> {"items":[]}',
    },
    {
      kind: "function",
      name: "std.json.object",
      doc: "Marks a table as a JSON object, so an empty one encodes as `{}` and `{ [1] = x }` as an object.",
      params: [{ name: "t", type: "table", optional: true, doc: "The table (default a new one)." }],
      returns: [{ type: "table", doc: "`t`, marked." }],
      example: 'local schema = { type = "object", properties = std.json.object() }',
    },
    {
      kind: "function",
      name: "std.json.is_array",
      doc: "True when `v` is a table marked as an array (by `std.json.array` or by `decode`).",
      params: [{ name: "v", type: "any", doc: "Any value." }],
      returns: [{ type: "boolean", doc: "Whether it is marked." }],
      example: 'assert(std.json.is_array(std.json.decode("[]")))',
    },
    {
      kind: "function",
      name: "std.json.is_null",
      doc: "True when `v` is `std.json.null`.",
      params: [{ name: "v", type: "any", doc: "Any value." }],
      returns: [{ type: "boolean", doc: "Whether it is the null sentinel." }],
      example: "if std.json.is_null(row.deleted_at) then print('live') end",
    },
    {
      kind: "value",
      name: "std.json.null",
      type: "userdata",
      doc: "The JSON null sentinel: encodes as `null`; also SQL NULL (`std.sql.null` is the same value).",
    },
    {
      kind: "value",
      name: "std.json.array_mt",
      type: "table",
      doc: "The metatable `std.json.array` sets (compare with `getmetatable`).",
    },
    {
      kind: "value",
      name: "std.json.object_mt",
      type: "table",
      doc: "The metatable `std.json.object` sets.",
    },
  ],
};

export const STD_ENV: Section = {
  id: "std.env",
  title: "std.env",
  file: "agent-block",
  tables: ["std.env"],
  doc: "The run's environment: for the CLI, the process's with `<project>/.env` layered in. " +
    "`std.env.set` changes it for this run and the children it starts afterwards (`sh.exec`, " +
    "`io.popen`, MCP servers), never the process; `os.getenv` agrees with it. The run's own " +
    "`AGENT_BLOCK_*` settings (log level, store paths, kernel timings, mesh credentials, ...) were " +
    "read when it started: setting one changes what the run's children see, not the run.",
  entries: [
    {
      kind: "function",
      name: "std.env.get",
      doc: "The value of a variable.",
      params: [{ name: "name", type: "string", doc: "A variable name (no `=` or NUL)." }],
      returns: [{ type: "string?", doc: "Its value, or nil when unset." }],
      example: 'local model = std.env.get("ANTHROPIC_MODEL")',
    },
    {
      kind: "function",
      name: "std.env.get_or",
      doc: "The value of a variable, or `default` when it is unset.",
      params: [
        { name: "name", type: "string", doc: "A variable name." },
        { name: "default", type: "any", doc: "What to answer when unset (required)." },
      ],
      returns: [{ type: "any", doc: "The value (a string) or `default`." }],
      example: 'local n = tonumber(std.env.get_or("BATCH", "10"))',
    },
    {
      kind: "function",
      name: "std.env.set",
      doc: "Sets a variable for this run and the children it starts from now on; `nil` unsets it. " +
        "Credential stripping still applies to children.",
      params: [
        { name: "name", type: "string", doc: "A variable name." },
        { name: "value", type: "string", optional: true, doc: "The value (no NUL), or nil to unset." },
      ],
      example: 'std.env.set("GIT_PAGER", "cat")',
    },
    {
      kind: "function",
      name: "std.env.home",
      doc: "The user's home directory: the run's `HOME`, else `USERPROFILE`, else the working directory.",
      returns: [{ type: "string", doc: "An absolute path." }],
      example: 'local cache = std.path.join(std.env.home(), ".cache")',
    },
    {
      kind: "function",
      name: "std.env.agent_id",
      doc: "The run's `AGENT_BLOCK_AGENT_ID`, else an id minted once per process (`ab-<pid>-<random>`).",
      returns: [{ type: "string", doc: "The agent id." }],
      example: 'log.info("running as", std.env.agent_id())',
    },
    {
      kind: "function",
      name: "std.env.project_root",
      doc: "The project directory (`-p/--project`, default the working directory), absolute and canonical.",
      returns: [{ type: "string", doc: "An absolute path." }],
      example: 'local readme = std.path.join(std.env.project_root(), "README.md")',
    },
  ],
};

const pathFn = (name: string, doc: string, ret: string, example: string) => ({
  kind: "function" as const,
  name: `std.path.${name}`,
  doc,
  params: [{ name: "path", type: "string", doc: "A path." }],
  returns: [{ type: ret, doc: ret === "boolean" ? "The answer." : "The result." }],
  example,
});

export const STD_PATH: Section = {
  id: "std.path",
  title: "std.path",
  file: "agent-block",
  tables: ["std.path"],
  doc: "POSIX path arithmetic, purely lexical: nothing here touches the filesystem.",
  entries: [
    {
      kind: "function",
      name: "std.path.join",
      doc: "Joins the parts with `/` and normalises the result. An absolute part starts the path " +
        "over: what comes before it is dropped.",
      params: [{ name: "...", type: "string", doc: "One or more parts." }],
      returns: [{ type: "string", doc: "The joined path." }],
      example: 'std.path.join("src", "host", "fs.ts") --> "src/host/fs.ts"\n' +
        'std.path.join("a", "/b", "c") --> "/b/c"',
    },
    pathFn(
      "basename",
      "The last component (trailing slashes ignored).",
      "string",
      'std.path.basename("a/b.txt") --> "b.txt"',
    ),
    pathFn(
      "dirname",
      'All but the last component (`"."` when there is none).',
      "string",
      'std.path.dirname("a/b.txt") --> "a"',
    ),
    pathFn(
      "ext",
      'The extension without its dot (`""` when there is none).',
      "string",
      'std.path.ext("a.tar.gz") --> "gz"',
    ),
    pathFn("stem", "The last component without its extension.", "string", 'std.path.stem("a/b.txt") --> "b"'),
    pathFn(
      "abs",
      "The path made absolute against the run's working directory (symlinks not followed).",
      "string",
      'local p = std.path.abs("notes.md")',
    ),
    pathFn(
      "normalize",
      "Resolves `.` and `..` and repeated slashes lexically.",
      "string",
      'std.path.normalize("a/./b/../c/") --> "a/c"',
    ),
    pathFn(
      "is_absolute",
      "True when the path starts with `/`.",
      "boolean",
      'std.path.is_absolute("/tmp") --> true',
    ),
  ],
};

export const STD_TIME: Section = {
  id: "std.time",
  title: "std.time",
  file: "agent-block",
  tables: ["std.time"],
  doc: "Clocks and waiting. Waiting yields the calling task: other tasks keep running.",
  entries: [
    {
      kind: "function",
      name: "std.time.now",
      doc: "Seconds since the Unix epoch, as a float.",
      returns: [{ type: "number", doc: "Epoch seconds." }],
      example: "local t0 = std.time.now()",
    },
    {
      kind: "function",
      name: "std.time.millis",
      doc: "Milliseconds since the Unix epoch, as an integer.",
      returns: [{ type: "integer", doc: "Epoch milliseconds." }],
      example: 'std.ts.append("latency", 12, nil, std.time.millis())',
    },
    {
      kind: "function",
      name: "std.time.sleep",
      doc: "Waits, yielding the calling task; `task:cancel()` ends the wait early.",
      params: [{ name: "seconds", type: "number", doc: "Between 0 and 2000000." }],
      example: "std.time.sleep(0.5)",
    },
    {
      kind: "function",
      name: "std.time.measure",
      doc: "Runs `fn(...)` in the calling task (it may yield) and answers the elapsed seconds on the " +
        "monotonic clock, followed by `fn`'s results.",
      params: [
        { name: "fn", type: "function", doc: "What to time." },
        { name: "...", type: "any", doc: "Its arguments." },
      ],
      returns: [
        { type: "number", name: "seconds", doc: "Elapsed seconds." },
        { type: "any", name: "...", doc: "What `fn` returned." },
      ],
      errors: "Raises what `fn` raises.",
      example: 'local secs, out = std.time.measure(sh.exec, "make")',
    },
  ],
};
