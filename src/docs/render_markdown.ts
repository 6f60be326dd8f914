/**
 * Renders the Lua API reference (`src/docs/lua_api/`) as Markdown: `docs/lua-api.md`.
 *
 * Owns the page's layout: a generated-file notice, the conventions every function follows, a
 * table of contents, then per section its introduction and per entry a heading with the
 * signature, the description, an arguments table, returns, errors and the example. The text
 * itself is the data's; nothing here adds facts.
 */
import type { ClassEntry, Entry, Field, FunctionEntry, Return, Section } from "./lua_api/types.ts";
import { anchor, signature } from "./names.ts";

/** The conventions stated once for the whole page. */
const CONVENTIONS = `Conventions that hold for every function below:

- **Arguments are checked.** A wrong type raises at the caller's line, naming the function, the
  argument and both types: \`std.fs.write: argument 2 (content) must be a string, got table\`.
- **Host calls look synchronous.** A function that waits (a process, a request, a sleep) yields
  only the calling task, from the main chunk, inside \`pcall\` and inside any coroutine; other
  tasks (\`std.task\`) run meanwhile. Where Lua cannot yield (a \`table.sort\` comparator, a
  \`string.gsub\` callback, \`__tostring\`) such a call raises an error that says so.
- **Values cross by one rule** (see [std.json](#std-json)): a table is an array when marked so or
  its keys are exactly \`1..n\`, otherwise an object; strings are byte-exact.
- **Relative paths** resolve against the run's working directory — the project root, unless
  the caller named another (\`--cwd\`, the SDK's \`.cwd()\`), whichever front end runs the block
  (the CLI, \`mcp\`, \`serve\`, the SDK) and wherever it was started — except where an entry says
  otherwise (\`sh.exec\`'s \`cwd\` and the model-facing file tools: always the project root).
- **Types** are written as LuaCATS (\`string?\` may be nil, \`string[]\` an array,
  \`table<string, string>\` a map). \`agent-block types\` writes the same entries as annotation
  files for lua-language-server, with a \`.luarc.json\` and a \`.luacheckrc\`.

Standard Lua 5.4 is there too (\`string\`, \`table\`, \`math\`, \`utf8\`, \`coroutine\`, ...), with
\`io\` and \`os\` on the real filesystem and processes; \`os.exit(code)\` ends the run with that code
after cleanup, \`load\` takes text chunks only, \`require\` searches the project's tiers (see the
README's "Blocks and libraries").`;

/** Escapes what would break a table cell. */
const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
const code = (s: string) => "`" + s + "`";

/** Renders a type in code, linked when it names a class or alias of the page. */
type TypeRef = (type: string) => string;

/** The `TypeRef` of a page whose classes and aliases are `known` (`sh.ExecOpts`, `std.Task[]` link). */
function typeRefs(known: ReadonlySet<string>): TypeRef {
  return (type) => {
    const base = type.replace(/(\[\]|\?)+$/, "");
    return known.has(base) ? `[${code(type)}](#${anchor(base)})` : code(type);
  };
}

function fieldTable(head: string, fields: readonly Field[], typeRef: TypeRef): string[] {
  if (fields.length === 0) return [];
  return [
    `| ${head} | Type | Description |`,
    "| --- | --- | --- |",
    ...fields.map((f) =>
      `| ${code(f.name + (f.optional ? "?" : ""))} | ${cell(typeRef(f.type))} | ${cell(f.doc)} |`
    ),
    "",
  ];
}

function returns(rs: readonly Return[], typeRef: TypeRef): string[] {
  if (rs.length === 0) return [];
  const one = (r: Return) => `${typeRef(r.type)}${r.name ? ` (${r.name})` : ""} — ${r.doc}`;
  if (rs.length === 1) return [`**Returns** ${one(rs[0])}`, ""];
  return ["**Returns**", "", ...rs.map((r) => `- ${one(r)}`), ""];
}

function fn(e: FunctionEntry, typeRef: TypeRef): string[] {
  return [
    `<a id="${anchor(e.name)}"></a>`,
    "",
    `### ${code(signature(e))}`,
    "",
    e.doc,
    "",
    ...fieldTable("Argument", e.params ?? [], typeRef),
    ...returns(e.returns ?? [], typeRef),
    ...(e.errors ? [`**Errors** ${e.errors}`, ""] : []),
    ...(e.example ? ["```lua", e.example, "```", ""] : []),
  ];
}

function cls(e: ClassEntry, typeRef: TypeRef): string[] {
  return [
    `<a id="${anchor(e.name)}"></a>`,
    "",
    `### ${code(e.name)} (table)`,
    "",
    e.doc + (e.extends ? ` It has the fields of ${typeRef(e.extends)} too.` : ""),
    "",
    ...fieldTable("Field", e.fields, typeRef),
  ];
}

function entry(e: Entry, typeRef: TypeRef): string[] {
  switch (e.kind) {
    case "function":
      return fn(e, typeRef);
    case "class":
      return cls(e, typeRef);
    case "value":
      return [
        `<a id="${anchor(e.name)}"></a>`,
        "",
        `### ${code(e.name)}`,
        "",
        `${code(e.type)} — ${e.doc}`,
        "",
      ];
    case "alias":
      return [
        `<a id="${anchor(e.name)}"></a>`,
        "",
        `### ${code(e.name)} (type)`,
        "",
        `${code(e.type)} — ${e.doc}`,
        "",
      ];
  }
}

/** The whole page. */
export function renderMarkdown(sections: readonly Section[]): string {
  const typeRef = typeRefs(
    new Set(
      sections.flatMap((s) =>
        s.entries.flatMap((e) => e.kind === "class" || e.kind === "alias" ? [e.name] : [])
      ),
    ),
  );
  const lines = [
    "<!-- Generated by tools/gen_lua_api.ts from src/docs/lua_api/ (`deno task gen`). Do not edit by hand. -->",
    "",
    "# The agent-block Lua API",
    "",
    "Every global, table, function and module the runtime gives a Lua script. The README says what " +
    "agent-block is and how to run it; this page is the reference.",
    "",
    CONVENTIONS,
    "",
    "## Contents",
    "",
    ...sections.map((s) => `- [${s.title}](#${anchor(s.id)})`),
    "",
  ];
  for (const s of sections) {
    lines.push(`<a id="${anchor(s.id)}"></a>`, "", `## ${s.title}`, "", s.doc, "");
    for (const e of s.entries) lines.push(...entry(e, typeRef));
  }
  return lines.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n";
}
