/**
 * The generated embedded index (embedded/index.gen.ts) must be what `deno task gen` would write
 * today: a Lua file added under embedded/ without regenerating fails here.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { render, rootPath, walk } from "../../tools/gen_embedded_index.ts";
import { EMBEDDED_FILES } from "../../embedded/index.gen.ts";
import { embeddedModules, moduleNameOf } from "../../src/modules/embedded.ts";

Deno.test("embedded/index.gen.ts is up to date (run `deno task gen` if this fails)", () => {
  const onDisk = Deno.readTextFileSync(join(rootPath, "index.gen.ts"));
  assert.equal(onDisk, render(walk()));
});

Deno.test("the index carries every embedded Lua file's exact text, and no spec file", () => {
  const files = walk();
  assert.ok(files.length > 0);
  assert.deepEqual(Object.keys(EMBEDDED_FILES).sort(), [...files].sort());
  for (const f of files) {
    assert.equal(EMBEDDED_FILES[f], Deno.readTextFileSync(join(rootPath, f)), f);
    assert.ok(!f.split("/").includes("spec"), `spec file embedded: ${f}`);
  }
});

Deno.test("module names of embedded paths", () => {
  assert.equal(moduleNameOf("lspec/init.lua"), "lspec");
  assert.equal(moduleNameOf("agent/loop.lua"), "agent.loop");
  assert.equal(moduleNameOf("util.lua"), "util");
  assert.equal(moduleNameOf("README.md"), undefined);
  assert.ok(embeddedModules().has("lspec"));
});
