/**
 * `require` resolution (src/modules/resolver.ts + the Lua `require` in prelude.lua): the tiers in
 * order, `init.lua`, dotted names, the not-found message, cycles, host calls at a module's top
 * level, `embedded.<name>`, and the seal check.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runLua, tempProject, writeTree } from "../helpers.ts";

/** A project with a script in `scripts/`, and a separate AGENT_BLOCK_HOME. */
async function project(files: Record<string, string>, script: string) {
  const root = await tempProject({ ...files, "scripts/main.lua": script }, "ab_req_");
  const home = join(root, "_home");
  return {
    root,
    home,
    run: (extra: Record<string, unknown> = {}) =>
      runLua("", { script: { path: join(root, "scripts/main.lua") }, projectRoot: root, home, ...extra }),
  };
}

const mod = (tag: string) => `return { tag = "${tag}" }`;

Deno.test("require: every tier in order, first hit wins", async () => {
  const tiers: [string, string][] = [
    ["scripts/m.lua", "script dir"],
    [".agent-block/lib/m.lua", ".agent-block/lib"],
    ["lib/m.lua", "lib"],
    ["_home/lib/m.lua", "home lib"],
  ];
  const files = Object.fromEntries(tiers.map(([p, tag]) => [p, mod(tag)]));
  const p = await project(files, `return require("m").tag`);
  for (const [path, tag] of tiers) {
    const r = await p.run();
    assert.deepEqual(r.outcome, { status: "returned", value: tag }, `expected the ${tag} tier`);
    Deno.removeSync(join(p.root, path));
  }
  // Last tier: the embedded library (lspec is embedded).
  const e = await project({}, `return type(require("lspec").describe)`);
  assert.deepEqual((await e.run()).outcome, { status: "returned", value: "function" });
});

Deno.test("require: <name>/init.lua, dotted names, module caching and the loader's second value", async () => {
  const p = await project(
    {
      "lib/pkg/init.lua": `return { sub = require("pkg.sub"), name = ... }`,
      "lib/pkg/sub.lua": `count = (count or 0) + 1\nreturn { v = "sub", where = select(2, ...) }`,
    },
    `
    local pkg = require("pkg")
    local again = require("pkg.sub")
    assert(again == pkg.sub, "modules are cached")
    assert(count == 1, "a module runs once")
    return pkg.name .. "|" .. pkg.sub.v .. "|" .. pkg.sub.where
  `,
  );
  const r = await p.run();
  assert.equal(r.outcome.status, "returned");
  const [name, v, where] = String((r.outcome as { value: string }).value).split("|");
  assert.equal(name, "pkg");
  assert.equal(v, "sub");
  assert.match(where, /lib\/pkg\/sub\.lua$/);
});

Deno.test("require: blocks/ is never on the path; a miss lists every place searched", async () => {
  const p = await project({
    "blocks/only_block.lua": mod("block"),
    ".agent-block/blocks/only_block.lua": mod("block"),
  }, `require("only_block")`);
  const r = await p.run();
  assert.equal(r.outcome.status, "raised");
  const msg = (r.outcome as { message: string }).message;
  assert.match(
    msg,
    /^scripts\/main\.lua:1: module 'only_block' not found:|main\.lua:1: module 'only_block' not found:/,
  );
  const order = [
    join(p.root, "scripts", "only_block.lua"),
    join(p.root, "scripts", "only_block", "init.lua"),
    join(p.root, ".agent-block", "lib", "only_block.lua"),
    join(p.root, ".agent-block", "lib", "only_block", "init.lua"),
    join(p.root, "lib", "only_block.lua"),
    join(p.root, "lib", "only_block", "init.lua"),
    join(p.home, "lib", "only_block.lua"),
    join(p.home, "lib", "only_block", "init.lua"),
  ];
  let at = -1;
  for (const place of order) {
    const i = msg.indexOf(`no file '${place}'`);
    assert.ok(i > at, `'${place}' missing or out of order in:\n${msg}`);
    at = i;
  }
  assert.ok(msg.indexOf("no embedded module 'only_block'") > at);
  assert.doesNotMatch(msg, /blocks/);
});

Deno.test("require: a block's own directory is not a tier, in every block root", async () => {
  const root = await Deno.makeTempDir({ prefix: "ab_req_" });
  const home = join(root, "_home");
  const sibling = `return require("helper").tag`;
  writeTree(root, {
    "blocks/b.lua": sibling,
    "blocks/helper.lua": mod("sibling in blocks/"),
    "blocks/dir/init.lua": sibling,
    "blocks/dir/helper.lua": mod("inside a block directory"),
    ".agent-block/blocks/b.lua": sibling,
    ".agent-block/blocks/helper.lua": mod("sibling in .agent-block/blocks/"),
    "_home/blocks/b.lua": sibling,
    "_home/blocks/helper.lua": mod("sibling in the user's blocks/"),
  });
  for (
    const path of ["blocks/b.lua", "blocks/dir/init.lua", ".agent-block/blocks/b.lua", "_home/blocks/b.lua"]
  ) {
    const r = await runLua("", { script: { path: join(root, path) }, projectRoot: root, home });
    assert.equal(
      r.outcome.status,
      "raised",
      `${path} must not reach its sibling: ${JSON.stringify(r.outcome)}`,
    );
    assert.match((r.outcome as { message: string }).message, /module 'helper' not found/);
  }
  // The same helper in lib/ is found from every block.
  writeTree(root, { "lib/helper.lua": mod("lib") });
  const r = await runLua("", { script: { path: join(root, "blocks/b.lua") }, projectRoot: root, home });
  assert.deepEqual(r.outcome, { status: "returned", value: "lib" });
});

Deno.test("require: a module's top level may make host calls; syntax errors name the file", async () => {
  const p = await project(
    {
      "lib/slow.lua":
        `std.task.sleep(0.01)\nlocal p = io.popen("echo from-shell")\nlocal v = p:read("l")\np:close()\nreturn v`,
      "lib/broken.lua": `return {\n  x = = 1\n}`,
    },
    `
    local v = require("slow")
    local ok, err = pcall(require, "broken")
    return v .. "|" .. err
  `,
  );
  const r = await p.run();
  assert.equal(r.outcome.status, "returned");
  const [v, err] = String((r.outcome as { value: string }).value).split("|");
  assert.equal(v, "from-shell");
  assert.match(err, /error loading module 'broken' from file '.*lib\/broken\.lua':\n\t.*broken\.lua:2:/);
});

Deno.test("require: a cyclic require fails with a message naming the module", async () => {
  const p = await project({
    "lib/a.lua": `return { b = require("b") }`,
    "lib/b.lua": `return { a = require("a") }`,
  }, `require("a")`);
  const r = await p.run();
  assert.equal(r.outcome.status, "raised");
  assert.match((r.outcome as { message: string }).message, /cyclic require: module 'a' requires itself/);
});

Deno.test("require('embedded.<name>') reads the embedded source even when a tier shadows it", async () => {
  const p = await project(
    { "lib/lspec.lua": `return { shadow = true }` },
    `
    local fs = require("lspec")
    local emb = require("embedded.lspec")
    assert(fs.shadow == true, "the filesystem tier wins for plain names")
    assert(emb.shadow == nil and type(emb.describe) == "function", "embedded.lspec is the embedded one")
    assert(fs ~= emb, "two distinct tables")
    local ok, err = pcall(require, "embedded.no_such_thing")
    return err
  `,
  );
  const r = await p.run();
  assert.equal(r.outcome.status, "returned");
  assert.match(String((r.outcome as { value: string }).value), /no embedded module 'no_such_thing'/);
});

for (
  const [label, path, module] of [
    ["lib/knl.lua", "lib/knl.lua", "knl"],
    ["script dir knl_types.lua", "scripts/knl_types.lua", "knl_types"],
    [".agent-block/lib/lshape/init.lua", ".agent-block/lib/lshape/init.lua", "lshape"],
    ["home lib knl_adapter.lua", "_home/lib/knl_adapter.lua", "knl_adapter"],
    ["lib/lshape/t.lua, a sub-module", "lib/lshape/t.lua", "lshape.t"],
    ["lib/knl/extra/init.lua, deeper", "lib/knl/extra/init.lua", "knl.extra"],
  ]
) {
  Deno.test(`seal check: a filesystem copy (${label}) fails the run before the script starts`, async () => {
    const p = await project({ [path]: `return {}` }, `print("script ran")`);
    const r = await p.run({ unseal: false });
    assert.equal(r.outcome.status, "raised");
    const msg = (r.outcome as { message: string }).message;
    // The module it would replace and the file (relative to the run's directory, the project root).
    assert.ok(
      msg.startsWith(
        `sealed module '${module}' cannot be replaced from the filesystem: ${path} would replace it;`,
      ),
      msg,
    );
    assert.ok(msg.includes(`require("embedded.${module}")`), msg);
    assert.equal(r.stdout, "", "the script must not start");
  });
}

Deno.test("seal check: only Lua files count — an empty or Lua-free lib/knl/ is no copy", async () => {
  const p = await project(
    { "lib/knl/README.md": "notes", "lib/lshape/data/x.json": "{}", "lib/knl_types": "a file" },
    `
    return type(require("knl").session) .. " " .. type(require("lshape").t)`,
  );
  Deno.mkdirSync(join(p.root, ".agent-block", "lib", "knl_adapter"), { recursive: true }); // empty
  const r = await p.run({ unseal: false });
  assert.deepEqual(r.outcome, { status: "returned", value: "function table" }, r.stderr);
  assert.equal(r.stderr, "");
});

Deno.test("seal check: several copies are all named, the nearest tier's file first", async () => {
  const p = await project({
    "lib/knl.lua": "return {}",
    "lib/knl/init.lua": "return {}",
    "_home/lib/knl.lua": "return {}",
    "lib/lshape/t.lua": "return {}",
  }, `print("script ran")`);
  const msg = ((await p.run({ unseal: false })).outcome as { message: string }).message;
  assert.ok(
    msg.startsWith(
      "sealed module 'knl' cannot be replaced from the filesystem: lib/knl.lua would replace it " +
        "(and 'lshape.t' by lib/lshape/t.lua);",
    ),
    msg,
  );
});

Deno.test("seal check: AGENT_BLOCK_UNSEAL turns the failure into a warning, once per module", async () => {
  const p = await project(
    { "lib/knl.lua": `return { fake = true }`, "lib/lshape/t.lua": `return { fake_t = true }` },
    `local a = require("knl")
     package.loaded.knl = nil
     local b = require("knl")
     return tostring(a.fake and b.fake) .. " " .. tostring(require("lshape.t").fake_t)`,
  );
  const r = await p.run({ unseal: true });
  assert.deepEqual(r.outcome, { status: "returned", value: "true true" }, r.stderr);
  const warnings = r.stderr.split("\n").filter((l) => l.includes("sealed module"));
  assert.deepEqual(warnings, [
    "[warn] main.lua: sealed module 'knl' is replaced by lib/knl.lua (AGENT_BLOCK_UNSEAL=1)",
    "[warn] main.lua: sealed module 'lshape.t' is replaced by lib/lshape/t.lua (AGENT_BLOCK_UNSEAL=1)",
  ]);
});
