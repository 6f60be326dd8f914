/**
 * Real `luacheck` (Debian's `lua-check`) with the `.luacheckrc` that `agent-block types` writes:
 * the repository's example blocks (`blocks/*.lua`, `examples/**\/*.lua`) check clean in a project
 * that has them, and a block with a misspelt global or field does not. `.ci/run` installs
 * luacheck; on a machine without it the tests are skipped, saying so.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { REPO_ROOT, runCli, tempProject, testEnv } from "../helpers.ts";

function which(cmd: string): boolean {
  try {
    return new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const HAVE_LUACHECK = which("luacheck");
const NEEDS = HAVE_LUACHECK
  ? ""
  : " (skipped: luacheck is not installed; Debian package lua-check, .ci/run installs it)";

/** The example Lua files of the repository, relative to it. */
function exampleBlocks(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) walk(p);
      else if (e.name.endsWith(".lua")) out.push(relative(REPO_ROOT, p));
    }
  };
  for (const e of Deno.readDirSync(join(REPO_ROOT, "blocks"))) {
    if (e.isFile && e.name.endsWith(".lua")) out.push(join("blocks", e.name));
  }
  walk(join(REPO_ROOT, "examples"));
  return out.sort();
}

/** A project holding `files` with the config `agent-block types` writes into it. */
async function project(files: Record<string, string>): Promise<string> {
  const dir = await tempProject(files);
  const r = await runCli(["types"], { cwd: dir, env: testEnv() });
  assert.equal(r.code, 0, r.stderr);
  return dir;
}

async function luacheck(cwd: string): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command("luacheck", {
    args: ["--no-color", "--codes", "."],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

Deno.test({
  name: "luacheck with the generated config finds nothing in the example blocks" + NEEDS,
  ignore: !HAVE_LUACHECK,
  fn: async () => {
    const blocks = exampleBlocks();
    assert.ok(blocks.includes("blocks/hello_agent.lua") && blocks.length >= 3, blocks.join(", "));
    const dir = await project(
      Object.fromEntries(blocks.map((f) => [f, Deno.readTextFileSync(join(REPO_ROOT, f))])),
    );
    const r = await luacheck(dir);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /0 warnings \/ 0 errors/);
    for (const f of blocks) assert.ok(r.out.includes(f), `luacheck did not check ${f}:\n${r.out}`);
    assert.ok(!r.out.includes(".agent-block/types"), "the annotation files are left out of the check");
  },
});

Deno.test({
  name: "luacheck with the generated config warns on a misspelt global, field or spec global" + NEEDS,
  ignore: !HAVE_LUACHECK,
  fn: async () => {
    const dir = await project({
      "blocks/typo.lua": [
        "local text = std.jsn.encode({ a = 1 })",
        'too.register("t", { description = "d" }, function() return text end)',
        "std.json.encode = nil",
        "describe('not in a spec file', function() end)",
        "print(_PROMPT:upper(), _CONTEXT, _SCRIPT_NAME, std.json.null, std.task.spawn)",
        "",
      ].join("\n"),
      "tests/ok_spec.lua":
        "describe('x', function() it('y', function() expect(SPEC_PATH).to.exist() end) end)\n",
    });
    const r = await luacheck(dir);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /typo\.lua:1:\d+: \(W143\) accessing undefined field 'jsn\.encode' of global 'std'/);
    assert.match(r.out, /typo\.lua:2:1: \(W113\) accessing undefined variable 'too'/);
    assert.match(r.out, /typo\.lua:3:1: \(W122\) setting read-only field 'json\.encode' of global 'std'/);
    assert.match(r.out, /typo\.lua:4:1: \(W113\) accessing undefined variable 'describe'/);
    assert.doesNotMatch(r.out, /typo\.lua:5:/, "line 5 uses only what exists");
    assert.match(r.out, /ok_spec\.lua\s+OK/);
    assert.match(r.out, /4 warnings \/ 0 errors/);
  },
});
