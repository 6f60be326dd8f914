/** The example block blocks/project_stats.lua, end to end through the CLI. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runCli } from "../helpers.ts";

Deno.test("project_stats counts files, lines and bytes per extension and returns JSON", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_stats_" });
  Deno.mkdirSync(join(dir, "src", "deep"), { recursive: true });
  Deno.mkdirSync(join(dir, ".hidden"));
  Deno.mkdirSync(join(dir, "node_modules"));
  Deno.writeTextFileSync(join(dir, "src", "a.lua"), "one\ntwo\n");
  Deno.writeTextFileSync(join(dir, "src", "deep", "b.lua"), "no newline at end");
  Deno.writeTextFileSync(join(dir, "c.ts"), "x\n".repeat(70_000)); // more than one 64 KiB block
  Deno.writeTextFileSync(join(dir, "Makefile"), "all:\n");
  Deno.writeTextFileSync(join(dir, ".hidden", "skip.lua"), "skipped\n");
  Deno.writeTextFileSync(join(dir, "node_modules", "skip.ts"), "skipped\n");
  const out = join(dir, "stats.json");
  const r = await runCli(["-s", join(REPO_ROOT, "blocks", "project_stats.lua"), "-p", dir, "--result", out], {
    env: { GIT_CEILING_DIRECTORIES: dir },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^4 files, 70004 lines in /);
  const stats = JSON.parse(Deno.readTextFileSync(out));
  assert.equal(stats.listed_by, "find");
  assert.deepEqual(stats.total, { files: 4, lines: 70004, bytes: 8 + 17 + 140_000 + 5 });
  assert.deepEqual(stats.by_extension.lua, { files: 2, lines: 3, bytes: 25 });
  assert.deepEqual(stats.by_extension["(none)"], { files: 1, lines: 1, bytes: 5 });
  assert.deepEqual(stats.top, ["ts", "lua", "(none)"]);

  const only = await runCli([
    "-s",
    join(REPO_ROOT, "blocks", "project_stats.lua"),
    "-p",
    dir,
    "--prompt",
    "lua",
    "--result",
    out,
  ], {
    env: { GIT_CEILING_DIRECTORIES: dir },
  });
  assert.equal(only.code, 0, only.stderr);
  assert.deepEqual(JSON.parse(Deno.readTextFileSync(out)).total, { files: 2, lines: 3, bytes: 25 });
});

Deno.test("project_stats is registered with its description", async () => {
  const { blockRoots, findBlock } = await import("../../src/blocks/registry.ts");
  const b = findBlock(blockRoots(REPO_ROOT, join(REPO_ROOT, "no_home")), "project_stats");
  assert.ok(b);
  assert.match(b.description, /^Counts the files, lines and bytes of the project per file extension/);
});
