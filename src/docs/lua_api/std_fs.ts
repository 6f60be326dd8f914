/** Reference entries: `std.fs`, with the model-facing file tools. */
import type { Entry, Section } from "./types.ts";

const PATH = { name: "path", type: "string", doc: "The path (relative: the run's working directory)." };
const FAILS = (fn: string) => `Raises \`std.fs.${fn}: <path>: <reason>\` (the C library's reason).`;

const predicate = (name: string, what: string): Entry => ({
  kind: "function",
  name: `std.fs.${name}`,
  doc: `True when ${what}; false otherwise (never raises for a missing path).`,
  params: [PATH],
  returns: [{ type: "boolean", doc: "The answer." }],
  example: `if std.fs.${name}("notes") then print("yes") end`,
});

export const STD_FS: Section = {
  id: "std.fs",
  title: "std.fs",
  file: "agent-block",
  tables: ["std.fs"],
  doc: "Files and directories on the real filesystem. Relative paths resolve against the run's working " +
    "directory, as `io.open` does; results and messages keep paths as written. `walk` and `glob` " +
    "answer sorted paths and never follow a symlinked directory.",
  entries: [
    {
      kind: "function",
      name: "std.fs.read",
      doc: "Reads a text file.",
      params: [PATH],
      returns: [{ type: "string", doc: "Its text." }],
      errors: FAILS("read") + " Bytes that are not UTF-8 are refused: use `read_binary`.",
      example: 'local text = std.fs.read("README.md")',
    },
    {
      kind: "function",
      name: "std.fs.read_binary",
      doc: "Reads a file's exact bytes.",
      params: [PATH],
      returns: [{ type: "string", doc: "Its bytes." }],
      errors: FAILS("read_binary"),
      example: 'local png = std.fs.read_binary("logo.png")',
    },
    {
      kind: "function",
      name: "std.fs.write",
      doc: "Writes a file (created or truncated) with the string's exact bytes.",
      params: [PATH, { name: "content", type: "string", doc: "The content." }],
      returns: [{ type: "true", doc: "Always true." }],
      errors: FAILS("write"),
      example: 'std.fs.write("out/summary.md", text)',
    },
    {
      kind: "function",
      name: "std.fs.write_binary",
      doc: "Same as `write`, for bytes.",
      params: [PATH, { name: "bytes", type: "string", doc: "The bytes." }],
      returns: [{ type: "true", doc: "Always true." }],
      errors: FAILS("write_binary"),
      example: 'std.fs.write_binary("copy.png", std.fs.read_binary("logo.png"))',
    },
    predicate("exists", "something (a file, a directory, ...) is at the path"),
    predicate("is_file", "the path is a regular file (following symlinks)"),
    predicate("is_dir", "the path is a directory (following symlinks)"),
    {
      kind: "class",
      name: "std.fs.Stat",
      doc: "What `std.fs.stat` answers (times in epoch seconds).",
      fields: [
        { name: "size", type: "integer", doc: "Size in bytes." },
        { name: "is_file", type: "boolean", doc: "A regular file." },
        { name: "is_dir", type: "boolean", doc: "A directory." },
        {
          name: "is_symlink",
          type: "boolean",
          doc: "The path itself is a symlink (the rest describes its target).",
        },
        { name: "mode", type: "integer", optional: true, doc: "Permission bits." },
        { name: "mtime", type: "number", optional: true, doc: "Last modification." },
        { name: "atime", type: "number", optional: true, doc: "Last access." },
        { name: "ctime", type: "number", optional: true, doc: "Last status change." },
      ],
    },
    {
      kind: "function",
      name: "std.fs.stat",
      doc: "Facts about a path.",
      params: [PATH],
      returns: [{ type: "std.fs.Stat", doc: "The facts." }],
      errors: FAILS("stat"),
      example: 'print(std.fs.stat("README.md").size)',
    },
    {
      kind: "function",
      name: "std.fs.mkdir",
      doc: "Creates a directory and its missing parents (an existing one is fine).",
      params: [PATH],
      returns: [{ type: "true", doc: "Always true." }],
      errors: FAILS("mkdir"),
      example: 'std.fs.mkdir("out/reports")',
    },
    {
      kind: "function",
      name: "std.fs.remove",
      doc: "Removes a file or an empty directory; with `{ recursive = true }` a whole tree.",
      params: [PATH, { name: "opts", type: "{ recursive: boolean? }", optional: true, doc: "`recursive`." }],
      returns: [{ type: "true", doc: "Always true." }],
      errors: FAILS("remove") + " A non-empty directory without `recursive` says so.",
      example: 'std.fs.remove("out", { recursive = true })',
    },
    {
      kind: "function",
      name: "std.fs.copy",
      doc: "Copies a file.",
      params: [
        { name: "src", type: "string", doc: "The file to copy." },
        { name: "dst", type: "string", doc: "Where to (overwritten)." },
      ],
      returns: [{ type: "true", doc: "Always true." }],
      errors: "Raises `std.fs.copy: <path>: <reason>`, naming the side that failed.",
      example: 'std.fs.copy("config.json", "config.json.bak")',
    },
    {
      kind: "function",
      name: "std.fs.walk",
      doc: "Every file below a directory (files only, hidden ones included), as paths starting with `dir`.",
      params: [{ name: "dir", type: "string", doc: "The directory." }],
      returns: [{ type: "string[]", doc: "Sorted paths." }],
      errors: "Raises `std.fs.walk: <dir>: <reason>` when `dir` is not a readable directory, and past " +
        "256 levels or 100000 files.",
      example: 'for _, f in ipairs(std.fs.walk("src")) do print(f) end',
    },
    {
      kind: "function",
      name: "std.fs.glob",
      doc: "Paths matching a pattern: `*`, `?` and `[...]` within one segment, `**` as a whole segment " +
        "for any number of segments. Hidden entries match only when the segment starts with `.`; a " +
        "leading `./` is dropped from the results.",
      params: [{ name: "pattern", type: "string", doc: "The pattern (relative: the working directory)." }],
      returns: [{ type: "string[]", doc: "Sorted matching paths." }],
      errors: "Raises `std.fs.glob: invalid pattern '<pattern>': <why>` for a pattern that cannot mean " +
        "anything: a `[` never closed, a range that runs backwards (`[z-a]`), `**` inside a segment (`a**`).",
      example: 'local specs = std.fs.glob("tests/**/*_spec.lua")',
    },
    {
      kind: "class",
      name: "std.fs.ToolOpts",
      doc: "Options of `std.fs.tool_specs` / `register_tools`.",
      fields: [
        {
          name: "allowed",
          type: '("fs_write"|"fs_rollback"|"fs_search_replace")[]',
          optional: true,
          doc: "Tools offered besides `fs_read` and `fs_edit`.",
        },
        {
          name: "roots",
          type: "string[]",
          optional: true,
          doc: "More directories the tools may touch (relative: the project root).",
        },
        {
          name: "max_file_bytes",
          type: "integer",
          optional: true,
          doc:
            "The largest file the tools read or replace (default 16 MiB); a larger one is refused, naming " +
            "its size and the limit.",
        },
        {
          name: "no_symlinks",
          type: "boolean",
          optional: true,
          doc:
            "Refuse a change (edit, replace, write, rollback) whose path goes through any symbolic link, " +
            "checked as the file is opened, so the file changed is the one the path names (what a caller's " +
            "allow-list of names needs); reads still follow symlinks inside the roots.",
        },
        { name: "group", type: "string", optional: true, doc: "`register_tools` only: the tools' group." },
      ],
    },
    {
      kind: "class",
      name: "std.fs.ToolSpec",
      doc: "A model-facing tool: what `tool.register` takes, with its handler.",
      fields: [
        { name: "name", type: "string", doc: "The tool name." },
        { name: "description", type: "string", doc: "What the model reads." },
        { name: "input_schema", type: "table", doc: "JSON Schema of the input." },
        {
          name: "handler",
          type: "fun(input: table): any",
          doc: "Runs the tool; raises its failure for the model.",
        },
      ],
    },
    {
      kind: "function",
      name: "std.fs.tool_specs",
      doc: "The file tools a model is offered, for a registry of the caller's own: `fs_read` (a text file " +
        "with line numbers, optionally a line range) and `fs_edit` (replace lines start..end, checked " +
        "against `expect`, their exact current text), plus those named in `opts.allowed`: `fs_write`, " +
        "`fs_rollback` (undo this run's newest edit of a file) and `fs_search_replace` (one unique " +
        "verbatim snippet). Paths are confined to the project root and `opts.roots`: `..` and escaping " +
        "symlinks are refused, and the file checked is the file used (opened again component by component " +
        "without following symlinks, so one swapped in after the check fails the call); a write through a " +
        "file with several hard links is refused (a read is not: its other names cannot be known, and " +
        "package stores hard-link into projects), as is anything but a regular file (FIFOs, devices) and " +
        "a file past `opts.max_file_bytes`. Linux only (`/proc/self/fd`): elsewhere the tools refuse to run.",
      params: [{
        name: "opts",
        type: "std.fs.ToolOpts",
        optional: true,
        doc: "Which tools, which roots, which size limit.",
      }],
      returns: [{ type: "std.fs.ToolSpec[]", doc: "The specs with their handlers." }],
      errors: "Raises for a name in `allowed` that is not a file tool, or a root that does not exist.",
      example: 'for _, s in ipairs(std.fs.tool_specs({ allowed = { "fs_write" } })) do print(s.name) end',
    },
    {
      kind: "function",
      name: "std.fs.register_tools",
      doc: "Registers the file tools of `tool_specs(opts)` with `tool.register` (in `opts.group`).",
      params: [{
        name: "opts",
        type: "std.fs.ToolOpts",
        optional: true,
        doc: "As for `tool_specs`, plus `group`.",
      }],
      returns: [{ type: "string[]", doc: "The registered tool names." }],
      errors: "As `tool_specs`.",
      example: 'std.fs.register_tools({ allowed = { "fs_write", "fs_rollback" } })',
    },
  ],
};
