/**
 * The block registry (src/blocks/registry.ts): roots, tiers, nearer tier winning, directory
 * blocks, descriptions from the leading comment.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  blockNameProblem,
  blockRoots,
  findBlock,
  leadingDescription,
  notRegisteredNote,
  scanBlocks,
  scanRegistry,
} from "../../src/blocks/registry.ts";

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
});

Deno.test("leadingDescription: blank lines before the comment, and --[[ ]] long comments", () => {
  assert.equal(leadingDescription("\n\n-- After blank lines.\nreturn 1"), "After blank lines.");
  assert.equal(leadingDescription("\r\n  \r\n-- CRLF and spaces.\r\n"), "CRLF and spaces.");
  assert.equal(leadingDescription("--[[ One line. ]]\nreturn 1"), "One line.");
  assert.equal(
    leadingDescription("--[[\n  Counts files.\n  Returns JSON.\n]]\nreturn 1"),
    "Counts files. Returns JSON.",
  );
  assert.equal(leadingDescription("--[==[ Level two ]] still ]==]\n"), "Level two ]] still");
  assert.equal(leadingDescription("--[[\n  First paragraph.\n\n  Second.\n]]"), "First paragraph.");
  assert.equal(leadingDescription("\n--[[ blocks/x.lua\n  The real one. ]]"), "The real one.");
  assert.equal(
    leadingDescription("--[[ ]]\n-- After an empty long comment."),
    "After an empty long comment.",
  );
  assert.equal(leadingDescription("--[[ unclosed\nstill comment"), "unclosed still comment");
  assert.equal(leadingDescription("#\n-- After a lone '#'."), "After a lone '#'.");
  assert.equal(leadingDescription("\uFEFF-- After a BOM."), "After a BOM.");
  assert.equal(leadingDescription("\n\nreturn 1"), "");
});

Deno.test("block names: any letters and spaces register; a name that cannot be one is listed with why", async () => {
  const root = await Deno.makeTempDir({ prefix: "ab_reg_names_" });
  write(root, {
    "blocks/café.lua": "-- Accents.\nreturn 1",
    "blocks/rapport hebdo.lua": "-- Spaces.\nreturn 1",
    "blocks/日報/init.lua": "-- A directory block.\nreturn 1",
    "blocks/-x.lua": "return 1",
    "blocks/ pad.lua": "return 1",
    "blocks/tab\there.lua": "return 1",
    "blocks/.hidden.lua": "return 1",
  });
  const roots = blockRoots(root, join(root, "home"));
  const { blocks, skipped } = scanRegistry(roots);
  assert.deepEqual(blocks.map((b) => [b.name, b.description]), [
    ["café", "Accents."],
    ["rapport hebdo", "Spaces."],
    ["日報", "A directory block."],
  ]);
  assert.deepEqual(skipped.map((x) => [x.name, x.reason]), [
    [" pad", "the name starts or ends with white space"],
    ["-x", "the name starts with '-', so it would read as a flag"],
    ["tab\there", "the name holds a control character"],
  ]);
  assert.equal(skipped[0].path, join(root, "blocks", " pad.lua"));
  // NFC and NFD spellings of one name find the same block.
  assert.equal(findBlock(roots, "cafe\u0301")?.path, join(root, "blocks", "café.lua"));
  assert.equal(blockNameProblem("ok name"), undefined);
  assert.match(
    notRegisteredNote(skipped),
    /^; not registered: .* pad\.lua \(the name starts or ends with white space\)/,
  );
  assert.equal(notRegisteredNote([]), "");
});
