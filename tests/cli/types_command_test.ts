/**
 * `agent-block types [DIR]` as a real subprocess: what it writes (the repository's
 * `docs/types/*.lua` byte for byte, a `.luarc.json` and a `.luacheckrc`), the annotation files
 * being valid Lua, the write rule (a file it did not write, or one edited since, is refused
 * without `--force`, naming it, and nothing is written; its own files are refreshed), and the
 * command line (`--help`, a missing directory, too many arguments).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, resultOf, runCli, runLua, tempProject, testEnv } from "../helpers.ts";
import { LUA_API } from "../../src/docs/lua_api/mod.ts";
import { allEntries, methodOf } from "../../src/docs/names.ts";

const TYPES = ".agent-block/types";
const read = (dir: string, rel: string) => Deno.readTextFileSync(join(dir, rel));
const exists = (dir: string, rel: string) => {
  try {
    Deno.statSync(join(dir, rel));
    return true;
  } catch {
    return false;
  }
};

Deno.test("types writes the reference's annotation files, .luarc.json and .luacheckrc; again: unchanged", async () => {
  const dir = await tempProject({});
  const r = await runCli(["types"], { cwd: dir, env: testEnv() });
  assert.equal(r.code, 0, r.stderr);
  const metas = [...Deno.readDirSync(join(REPO_ROOT, "docs", "types"))].map((e) => e.name).sort();
  assert.deepEqual(metas, [
    "agent-block.lua",
    "agent.lua",
    "coding.lua",
    "compile_loop.lua",
    "knl.lua",
    "lspec.lua",
    "policy.lua",
    "supervisor.lua",
  ]);
  for (const m of metas) {
    assert.equal(
      read(dir, `${TYPES}/${m}`),
      read(REPO_ROOT, `docs/types/${m}`),
      `${m} differs from docs/types`,
    );
    assert.match(r.stdout, new RegExp(`^wrote \\.agent-block/types/${m.replace(".", "\\.")}$`, "m"));
  }
  assert.match(read(dir, `${TYPES}/agent.lua`), /^---@meta agent\n/);
  assert.match(read(dir, `${TYPES}/knl.lua`), /\nreturn knl\n$/);
  const luarc = JSON.parse(read(dir, ".luarc.json"));
  assert.equal(luarc.runtime.version, "Lua 5.4");
  assert.deepEqual(luarc.workspace.library, [TYPES]);
  for (const g of ["std", "sh", "tool", "mcp", "llm", "bus", "job", "http", "log", "_PROMPT", "_CONTEXT"]) {
    assert.ok(luarc.diagnostics.globals.includes(g), `.luarc.json does not declare ${g}`);
  }
  const rc = read(dir, ".luacheckrc");
  assert.match(rc, /^std = "lua54"$/m);
  assert.match(rc, /^ {2}_PROMPT = \{ other_fields = true \},$/m);
  assert.match(rc, /^files\["\*\*\/\*_spec\.lua"\] = \{ read_globals = \{ .*"describe".* \} \}$/m);
  const manifest = JSON.parse(read(dir, `${TYPES}/manifest.json`));
  assert.equal(manifest.written_by, "agent-block types");
  assert.deepEqual(
    Object.keys(manifest.files).sort(),
    [...metas.map((m) => `${TYPES}/${m}`), ".luacheckrc", ".luarc.json"].sort(),
  );

  const again = await runCli(["types", dir], { env: testEnv() });
  assert.equal(again.code, 0, again.stderr);
  assert.doesNotMatch(again.stdout, /^wrote /m);
  assert.equal(again.stdout.split("\n").filter((l) => l.startsWith("unchanged ")).length, metas.length + 2);
});

Deno.test("the annotation files are valid Lua declaring every function and value of the reference", async () => {
  const files = Object.fromEntries(
    [...Deno.readDirSync(join(REPO_ROOT, "docs", "types"))].map((
      e,
    ) => [e.name, read(REPO_ROOT, `docs/types/${e.name}`)]),
  );
  const src = `local bad = {}
for name, text in pairs(std.json.decode(${JSON.stringify(JSON.stringify(files))})) do
  local f, err = load(text, "=" .. name)
  if not f then bad[#bad + 1] = err end
end
return std.json.encode(std.json.array(bad))`;
  assert.deepEqual(resultOf(await runLua(src, { env: testEnv() })), []);
  const locals = new Map(
    allEntries(LUA_API).flatMap(({ entry }) =>
      entry.kind === "class" && entry.local ? [[entry.name, entry.local]] : []
    ),
  );
  const absent: string[] = [];
  for (const { section, entry } of allEntries(LUA_API)) {
    const text = files[`${section.file}.lua`];
    const m = methodOf(entry.name);
    if (entry.kind === "function") {
      const target = m ? `${locals.get(m.cls) ?? m.cls}:${m.method}` : entry.name;
      if (!text.includes(`\nfunction ${target}(`)) absent.push(entry.name);
    } else if (entry.kind === "value" && !text.includes(`\n${entry.name} = nil\n`)) absent.push(entry.name);
    else if ((entry.kind === "class" || entry.kind === "alias") && !text.includes(` ${entry.name}`)) {
      absent.push(entry.name);
    }
  }
  assert.deepEqual(absent, []);
});

Deno.test("types refuses files it did not write, naming them and writing nothing; --force overwrites", async () => {
  const dir = await tempProject({ ".luarc.json": '{ "mine": true }\n', ".luacheckrc": "std = 'max'\n" });
  const r = await runCli(["types"], { cwd: dir, env: testEnv() });
  assert.equal(r.code, 1, r.stdout);
  assert.match(
    r.stderr,
    /^error: types: not overwriting \.luarc\.json, \.luacheckrc: they were not written by agent-block types, or edited since \(--force overwrites\); nothing was written$/m,
  );
  assert.equal(read(dir, ".luarc.json"), '{ "mine": true }\n');
  assert.ok(!exists(dir, TYPES), "nothing was written");

  const forced = await runCli(["types", "--force"], { cwd: dir, env: testEnv() });
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(JSON.parse(read(dir, ".luarc.json")).runtime.version, "Lua 5.4");
});

Deno.test("types refreshes its own files, keeps an edited one, and removes one no longer generated", async () => {
  const dir = await tempProject({});
  assert.equal((await runCli(["types"], { cwd: dir, env: testEnv() })).code, 0);
  // As an older agent-block would have left it: other content, recorded in the manifest.
  const mpath = join(dir, TYPES, "manifest.json");
  const manifest = JSON.parse(Deno.readTextFileSync(mpath));
  const sha = async (t: string) =>
    [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(t)))]
      .map((b) => b.toString(16).padStart(2, "0")).join("");
  const old = "---@meta _\n-- an older version\n";
  Deno.writeTextFileSync(join(dir, TYPES, "agent.lua"), old);
  Deno.writeTextFileSync(join(dir, TYPES, "gone.lua"), old);
  manifest.files[`${TYPES}/agent.lua`] = await sha(old);
  manifest.files[`${TYPES}/gone.lua`] = await sha(old);
  Deno.writeTextFileSync(mpath, JSON.stringify(manifest));
  const up = await runCli(["types"], { cwd: dir, env: testEnv() });
  assert.equal(up.code, 0, up.stderr);
  assert.match(up.stdout, /^wrote \.agent-block\/types\/agent\.lua$/m);
  assert.match(up.stdout, /^removed \.agent-block\/types\/gone\.lua \(no longer generated\)$/m);
  assert.equal(read(dir, `${TYPES}/agent.lua`), read(REPO_ROOT, "docs/types/agent.lua"));
  assert.ok(!exists(dir, `${TYPES}/gone.lua`));

  // Edited by the user since: refused.
  Deno.writeTextFileSync(join(dir, ".luacheckrc"), read(dir, ".luacheckrc") + "max_line_length = 100\n");
  const edited = await runCli(["types"], { cwd: dir, env: testEnv() });
  assert.equal(edited.code, 1);
  assert.match(
    edited.stderr,
    /not overwriting \.luacheckrc: it was not written by agent-block types, or edited since/,
  );
  assert.match(read(dir, ".luacheckrc"), /max_line_length = 100/);
});

Deno.test("types --help says what it writes and about --force; a bad command line is refused", async () => {
  const help = await runCli(["types", "--help"], { env: testEnv() });
  assert.equal(help.code, 0, help.stderr);
  for (
    const s of [".luarc.json", ".luacheckrc", ".agent-block/types", "--force", "never overwrites", "Example:"]
  ) {
    assert.ok(help.stdout.includes(s), `help lacks ${s}`);
  }
  const missing = await runCli(["types", "/nonexistent/dir/h15"], { env: testEnv() });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^error: types: project directory \/nonexistent\/dir\/h15 does not exist$/m);
  const two = await runCli(["types", "a", "b"], { env: testEnv() });
  assert.equal(two.code, 2);
  assert.match(two.stderr, /types: takes one project directory, got 2/);
  const flag = await runCli(["types", "--frce"], { env: testEnv() });
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /--frce/);
});
