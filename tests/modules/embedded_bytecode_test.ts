/**
 * How `require` loads embedded modules (src/modules/embedded.ts, the resolver, the prelude's
 * `require`): from precompiled bytecode when it was generated from the current text, from text
 * otherwise — and never bytecode from a file, whatever the file holds.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ModuleResolver } from "../../src/modules/resolver.ts";
import { evalLua } from "../helpers.ts";

Deno.test("an embedded module resolves to its bytecode; textOnly and files give text", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_embc_" });
  try {
    Deno.writeTextFileSync(join(dir, "mine.lua"), "return 1\n");
    const r = new ModuleResolver([{ label: "dir", dir }], false, () => {}, dir);
    const b = r.resolve("lspec");
    assert.ok(b.found && b.mode === "b" && b.source[0] === 0x1b, "bytecode for lspec");
    assert.equal(b.found && b.chunkname, "@embedded/lspec/init.lua");
    const t = r.resolve("lspec", true);
    assert.ok(
      t.found && t.mode === "t" && t.source[0] !== 0x1b && t.chunkname === "@embedded/lspec/init.lua",
    );
    const f = r.resolve("mine");
    assert.ok(f.found && f.mode === "t");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a file holding Lua bytecode is refused by require", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_embc_" });
  try {
    // A real dump of an embedded module, copied beside the script under another name.
    const r = new ModuleResolver([{ label: "dir", dir }], false, () => {}, dir);
    const b = r.resolve("lspec");
    assert.ok(b.found && b.mode === "b");
    Deno.writeFileSync(join(dir, "sneaky.lua"), b.source);
    const out = await evalLua(`local ok, err = pcall(require, "sneaky")\nreturn tostring(ok) .. " " .. err`, {
      projectRoot: dir,
    });
    assert.match(out!, /^false [\s\S]*attempt to load a binary chunk/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
