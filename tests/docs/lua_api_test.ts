/**
 * The Lua API reference (`src/docs/lua_api/`) against the real runtime: a block walks everything
 * a script can reach — the globals beyond stock Lua 5.4, the tables under them (the lazily
 * installed ones installed by the walk's own `pairs`), `require("agent")`, `require("knl")`, the packs
 * (`policy`, `supervisor`) and `coding`, and the methods of task handles, kernel sessions and stores — and a spec file run by the real
 * `agent-block test` walks the globals a spec adds. Every function and value found must have an
 * entry, and every entry must name something found. Also held: each entry's types name classes
 * and aliases that exist, each example is valid Lua, and anchors are unique.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { LUA_API } from "../../src/docs/lua_api/mod.ts";
import { allEntries, anchor } from "../../src/docs/names.ts";
import { renderMcpSupport } from "../../src/docs/render_mcp_support.ts";
import { LUA_GLOBALS } from "../../src/sdk/config.ts";
import { REPO_ROOT, resultOf, runCli, runLua, tempProject, testEnv } from "../helpers.ts";

/** Lua 5.4's own globals: not agent-block's to document. */
const STOCK = LUA_GLOBALS;

/** Lua that lists `function <path>`, `value <path>` and `table <path>` for what it can reach. */
const WALKER = `
local STOCK = {}
for _, n in ipairs(std.json.decode(${JSON.stringify(JSON.stringify(STOCK))})) do STOCK[n] = true end
local out, skip = {}, {}
local function add(line) out[#out + 1] = line end
-- A namespace: a plain table (no metatable, not an array) with a public key; anything else is a value.
-- A lazily installed table carries a metatable until its first touch: pairs installs it.
local function namespace(v)
  if type(v) == "table" and getmetatable(v) ~= nil and not skip[v] then for _ in pairs(v) do break end end
  if type(v) ~= "table" or getmetatable(v) ~= nil or skip[v] or rawlen(v) > 0 then return false end
  for k in next, v do if type(k) == "string" and k:sub(1, 1) ~= "_" then return true end end
  return false
end
local function leaf(path, v) add((type(v) == "function" and "function " or "value ") .. path) end
local function walk(prefix, t)
  for k, v in pairs(t) do
    if type(k) == "string" and k:sub(1, 1) ~= "_" and not skip[v] then
      if namespace(v) then add("table " .. prefix .. k); walk(prefix .. k .. ".", v) else leaf(prefix .. k, v) end
    end
  end
end
WALK_BODY
table.sort(out)
return std.json.encode(out)
`;

const BLOCK_WALK = WALKER.replace(
  "WALK_BODY",
  `
local knl = require("knl")
local classes = {
  ["std.Task"] = getmetatable(std.task.spawn(function() end)),
  ["knl.Session"] = knl.Session,
  ["knl.Store"] = getmetatable(knl.open({ store = "mem" })),
  ["supervisor.Watch"] = getmetatable(require("supervisor").watch()),
}
for _, c in pairs(classes) do skip[c] = true end
for k, v in pairs(_G) do
  if not STOCK[k] and not skip[v] then
    if namespace(v) then add("table " .. k); walk(k .. ".", v) else leaf(k, v) end
  end
end
add("table agent"); walk("agent.", require("agent"))
add("table knl"); walk("knl.", knl)
for _, m in ipairs({ "policy", "supervisor", "coding", "compile_loop" }) do add("table " .. m); walk(m .. ".", require(m)) end
for name, c in pairs(classes) do
  for k, v in pairs(c) do
    if type(k) == "string" and k:sub(1, 1) ~= "_" and type(v) == "function" then add("function " .. name .. ":" .. k) end
  end
end`,
);

/** A spec file: the globals it sees, for the test to subtract a block's from. */
const SPEC_WALK = WALKER.replace(
  "WALK_BODY",
  `for k, v in pairs(_G) do if not STOCK[k] then leaf(k, v) end end
print("WALK " .. std.json.encode(out))`,
).replace(/table\.sort\(out\)\nreturn std\.json\.encode\(out\)\n$/, "");

/** What the reference declares, in the walker's words. */
function declared(specOnly: boolean): Set<string> {
  const out = new Set<string>();
  for (const s of LUA_API) {
    if (Boolean(s.specOnly) !== specOnly || s.servedOnly) continue;
    for (const t of s.tables ?? []) out.add(`table ${t}`);
    for (const e of s.entries) {
      if (e.kind === "function") out.add(`function ${e.name}`);
      if (e.kind === "value") out.add(`value ${e.name}`);
    }
  }
  return out;
}

function diff(found: Set<string>, decl: Set<string>): { undocumented: string[]; missing: string[] } {
  return {
    undocumented: [...found].filter((x) => !decl.has(x)).sort(),
    missing: [...decl].filter((x) => !found.has(x)).sort(),
  };
}

Deno.test("the reference names exactly what a block can reach (a real run walks it)", async () => {
  const run = await runLua(BLOCK_WALK, { prompt: "p", context: "c", env: testEnv() });
  const found = new Set<string>(resultOf(run));
  assert.ok(
    found.has("function std.fs.read") && found.has("function knl.Session:append"),
    [...found].join("\n"),
  );
  assert.ok(found.has("function mcp.call") && found.has("function std.kv.get"), "lazy tables were walked");
  assert.deepEqual(diff(found, declared(false)), { undocumented: [], missing: [] });
});

Deno.test("the reference names exactly the globals a spec file adds (agent-block test walks them)", async () => {
  const dir = await tempProject({ "walk_spec.lua": SPEC_WALK });
  const r = await runCli(["test", "walk_spec.lua"], { cwd: dir, env: testEnv() });
  const line = r.stdout.split("\n").map((l) => l.replace(/^.*?WALK /, "WALK ")).find((l) =>
    l.startsWith("WALK ")
  );
  assert.ok(line, `no WALK line:\n${r.stdout}\n${r.stderr}`);
  const blockRun = await runLua(BLOCK_WALK, { env: testEnv() });
  const block = new Set<string>(resultOf(blockRun));
  const topLevel = (x: string) => !x.slice(x.indexOf(" ") + 1).includes(".");
  const specOnly = new Set<string>(
    (JSON.parse(line.slice(5)) as string[]).filter((x) =>
      !block.has(x) && !block.has(x.replace(/^value /, "table ")) && topLevel(x)
    ),
  );
  assert.deepEqual(diff(specOnly, declared(true)), { undocumented: [], missing: [] });
});

/** Identifiers a LuaCATS type expression names, without field and parameter names. */
function typeNames(type: string): string[] {
  const bare = type.replace(/"[^"]*"/g, '""');
  const out: string[] = [];
  for (const m of bare.matchAll(/([A-Za-z_][\w.]*)(\??\s*:(?!:))?/g)) if (!m[2]) out.push(m[1]);
  return out;
}

const BUILTIN = new Set(
  "nil any boolean string number integer function table thread userdata lightuserdata true false fun unknown"
    .split(" "),
);

Deno.test("every type the reference uses is a Lua type or one of its classes and aliases", () => {
  const defined = new Set(
    allEntries(LUA_API).flatMap(({ entry }) =>
      entry.kind === "class" || entry.kind === "alias" ? [entry.name] : []
    ),
  );
  const bad: string[] = [];
  const check = (where: string, type: string) => {
    for (const n of typeNames(type)) {
      if (!BUILTIN.has(n) && !defined.has(n)) bad.push(`${where}: ${n} (in ${type})`);
    }
  };
  for (const { entry: e } of allEntries(LUA_API)) {
    if (e.kind === "function") {
      for (const p of e.params ?? []) check(`${e.name}(${p.name})`, p.type);
      for (const r of e.returns ?? []) check(`${e.name} returns`, r.type);
    } else if (e.kind === "class") {
      for (const f of e.fields) check(`${e.name}.${f.name}`, f.type);
      if (e.extends) check(`${e.name} extends`, e.extends);
    } else check(e.name, e.type);
  }
  assert.deepEqual(bad, []);
});

Deno.test("every example in the reference is valid Lua, and every name and anchor is unique", async () => {
  const examples = allEntries(LUA_API).flatMap(({ entry }) =>
    entry.kind === "function" && entry.example ? [[entry.name, entry.example]] : []
  );
  const withoutExample = allEntries(LUA_API).flatMap(({ entry }) =>
    entry.kind === "function" && !entry.example ? [entry.name] : []
  );
  assert.deepEqual(withoutExample, [], "functions without an example");
  const src = `local bad = {}
for name, code in pairs(std.json.decode(${JSON.stringify(JSON.stringify(Object.fromEntries(examples)))})) do
  local f, err = load(code, "=" .. name)
  if not f then bad[#bad + 1] = err end
end
table.sort(bad)
return std.json.encode(std.json.array(bad))`;
  assert.deepEqual(resultOf(await runLua(src, { env: testEnv() })), []);
  const names = allEntries(LUA_API).map(({ entry }) => entry.name);
  assert.deepEqual(names.filter((n, i) => names.indexOf(n) !== i), [], "names given twice");
  const anchors = [...LUA_API.map((s) => anchor(s.id)), ...names.map(anchor)];
  assert.deepEqual(anchors.filter((a, i) => anchors.indexOf(a) !== i), [], "anchors given twice");
});

Deno.test("docs/lua-api.md is in the repository and links every section", () => {
  const md = Deno.readTextFileSync(join(REPO_ROOT, "docs", "lua-api.md"));
  for (const s of LUA_API) assert.ok(md.includes(`](#${anchor(s.id)})`), `no link to section ${s.id}`);
});

Deno.test("the README links the reference and shows the shipped replay file verbatim", () => {
  const readme = Deno.readTextFileSync(join(REPO_ROOT, "README.md"));
  assert.ok(readme.includes("](docs/lua-api.md)"), "the README does not link docs/lua-api.md");
  assert.ok(readme.includes("### The replay file"));
  const lines = Deno.readTextFileSync(join(REPO_ROOT, "blocks", "hello_agent.replay.jsonl")).trim().split(
    "\n",
  );
  for (const l of lines) assert.ok(readme.includes(l), `the README's replay example lacks ${l}`);
});

Deno.test("the README's contents list every section, in order, with working anchors", () => {
  const readme = Deno.readTextFileSync(join(REPO_ROOT, "README.md"));
  const anchor = (h: string) => h.toLowerCase().replace(/[^\w\- ]/g, "").replaceAll(" ", "-");
  const sections = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]).filter((h) => h !== "Contents");
  const contents = readme.slice(
    readme.indexOf("## Contents"),
    readme.indexOf("\n## ", readme.indexOf("## Contents") + 1),
  );
  const listed = [...contents.matchAll(/^- \[(.+?)\]\(#([^)]+)\)/gm)].map((m) => [m[1], m[2]]);
  assert.deepEqual(listed.map(([title]) => title), sections);
  assert.deepEqual(listed.map(([, a]) => a), sections.map(anchor));
  const headings = new Set([...readme.matchAll(/^#{2,4} (.+)$/gm)].map((m) => anchor(m[1])));
  for (const [, a] of [...contents.matchAll(/\(#([^)]+)\)/g)].map((m) => ["", m[1]])) {
    assert.ok(headings.has(a), `#${a} names no heading`);
  }
});

Deno.test("docs/architecture/mcp-support.md: one matrix row per mcp.* function of the reference, kept in step", () => {
  const doc = Deno.readTextFileSync(join(REPO_ROOT, "docs", "architecture", "mcp-support.md"));
  assert.equal(doc, renderMcpSupport(LUA_API), "run deno task gen");
  const fns = allEntries(LUA_API).filter(({ entry }) =>
    entry.kind === "function" && entry.name.startsWith("mcp.")
  );
  for (const { entry } of fns) assert.ok(doc.includes(`[\`${entry.name}(`), entry.name);
  // a function the reference gains without a row fails the render, naming it
  const extra = structuredClone(LUA_API) as typeof LUA_API;
  const mcp = extra.find((s) => s.id === "mcp")!;
  mcp.entries.push({ kind: "function", name: "mcp.teleport", doc: "New." });
  assert.throws(() => renderMcpSupport(extra), /MCP_METHODS lacks mcp\.teleport/);
});
