/**
 * The block registry (src/blocks/registry.ts): roots, tiers, nearer tier winning, directory
 * blocks, descriptions from the leading comment.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { blockRoots, findBlock, leadingDescription, scanBlocks } from "../../src/blocks/registry.ts";

function write(root: string, files: Record<string, string>) {
  for (const [rel, content] of Object.entries(files)) {
    Deno.mkdirSync(dirname(join(root, rel)), { recursive: true });
    Deno.writeTextFileSync(join(root, rel), content);
  }
}

Deno.test("scanBlocks: three tiers plus extra dirs, nearer wins, sorted by name", async () => {
  const root = await Deno.makeTempDir({ prefix: "ab_reg_" });
  const home = join(root, "home");
  write(root, {
    ".agent-block/blocks/a.lua": "-- local a\nreturn 1",
    "blocks/a.lua": "-- project a\nreturn 1",
    "blocks/b/init.lua": "-- b as a directory\nreturn 1",
    "blocks/b/helper.lua": "return 1",
    "blocks/c.txt": "not a block",
    "blocks/.hidden.lua": "return 1",
    "blocks/empty_dir/README": "no init.lua",
    "home/blocks/a.lua": "-- user a",
    "home/blocks/u.lua": "-- user only",
    "extra/e.lua": "-- extra",
  });
  const roots = blockRoots(root, home, [join(root, "extra")]);
  assert.deepEqual(roots.map((r) => r.tier), ["project-local", "project", "user", "extra"]);
  const blocks = scanBlocks(roots);
  assert.deepEqual(blocks.map((b) => [b.name, b.tier, b.description]), [
    ["a", "project-local", "local a"],
    ["b", "project", "b as a directory"],
    ["e", "extra", "extra"],
    ["u", "user", "user only"],
  ]);
  assert.equal(findBlock(roots, "b")?.path, join(root, "blocks", "b", "init.lua"));
  assert.equal(findBlock(roots, "helper"), undefined);
  assert.equal(findBlock(roots, "empty_dir"), undefined);
});

Deno.test("leadingDescription: the leading -- comment, joined; a path-only first line is skipped", () => {
  assert.equal(
    leadingDescription("-- Counts files.\n-- Returns JSON.\nlocal x"),
    "Counts files. Returns JSON.",
  );
  assert.equal(
    leadingDescription("#!/usr/bin/env agent-block\n-- After a shebang\nreturn 1"),
    "After a shebang",
  );
  assert.equal(leadingDescription("-- blocks/stats.lua\n-- The real description\n"), "The real description");
  assert.equal(leadingDescription("--- Doc style\n--\n-- second paragraph"), "Doc style");
  assert.equal(leadingDescription("local x = 1 -- not leading"), "");
  assert.equal(leadingDescription("--[[ long comment ]]"), "");
});
