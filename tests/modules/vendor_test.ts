/**
 * The vendoring rules (`src/modules/vendor.ts`) against an injected module map shaped like the
 * full embedded library — sealed roots with sub-modules, a pack, a utility with sub-modules, a
 * single-file root — so layer handling is checked before those modules exist in `embedded/`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { EmbeddedModule } from "../../src/modules/embedded.ts";
import { AgentBlockError } from "../../src/errors.ts";
import {
  copyRelPath,
  embeddedRoots,
  isVendored,
  listLines,
  planVendor,
  vendorModule,
  writeVendored,
} from "../../src/modules/vendor.ts";

function mod(name: string, path: string): [string, EmbeddedModule] {
  return [name, { name, path, source: `-- ${name}\nreturn { name = "${name}" }\n` }];
}

const MODULES: ReadonlyMap<string, EmbeddedModule> = new Map([
  mod("agent", "agent/init.lua"),
  mod("knl", "knl/init.lua"),
  mod("lshape", "lshape/init.lua"),
  mod("lshape.t", "lshape/t.lua"),
  mod("lshape.check", "lshape/check.lua"),
  mod("lshape.reflect", "lshape/reflect.lua"),
  mod("lshape.luacats", "lshape/luacats.lua"),
  mod("llm_proto", "llm_proto/init.lua"),
  mod("llm_proto.openai", "llm_proto/openai.lua"),
  mod("llm_proto.anthropic", "llm_proto/anthropic.lua"),
  mod("policy", "policy/init.lua"),
  mod("single", "single.lua"),
]);

function thrown(fn: () => unknown): AgentBlockError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof AgentBlockError, `expected an AgentBlockError, got ${e}`);
    return e;
  }
  throw new Error("expected an error");
}

Deno.test("vendor: roots group their sub-modules and carry their layer", () => {
  const roots = embeddedRoots(MODULES);
  assert.deepEqual(roots.map((r) => [r.name, r.layer, r.subs.map((s) => s.name)]), [
    ["agent", "lib", []],
    ["knl", "sealed", []],
    ["llm_proto", "lib", ["llm_proto.anthropic", "llm_proto.openai"]],
    ["lshape", "sealed", ["lshape.check", "lshape.luacats", "lshape.reflect", "lshape.t"]],
    ["policy", "pack", []],
    ["single", "lib", []],
  ]);
  assert.equal(copyRelPath("single", MODULES.get("single")!), "init.lua");
  assert.equal(copyRelPath("lshape", MODULES.get("lshape.t")!), "t.lua");
  assert.equal(copyRelPath("lshape", MODULES.get("lshape")!), "init.lua");
});

Deno.test("vendor --list: one line per root, sub-modules folded, layer and vendored flags", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_vendor_list_" });
  assert.deepEqual(listLines(dir, MODULES), [
    "agent                                 lib",
    "knl                                   lib  sealed",
    "llm_proto (+anthropic, openai)        lib",
    "lshape (+check, luacats, reflect, t)  lib  sealed",
    "policy                                lib  pack",
    "single                                lib",
  ]);
  Deno.mkdirSync(join(dir, "agent"));
  Deno.writeTextFileSync(join(dir, "single.lua"), "return {}");
  vendorModule("policy", dir, { modules: MODULES });
  const lines = listLines(dir, MODULES);
  assert.equal(lines[0], "agent                                 lib  vendored");
  assert.equal(lines[4], "policy                                lib  pack  vendored");
  assert.equal(lines[5], "single                                lib  vendored");
  assert.equal(lines[2], "llm_proto (+anthropic, openai)        lib");
});

Deno.test("vendor: a module is written whole, sub-modules beside its init.lua", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_vendor_write_" });
  const r = vendorModule("llm_proto", dir, { modules: MODULES });
  assert.equal(r.dir, join(dir, "llm_proto"));
  assert.equal(r.warning, undefined);
  assert.deepEqual(r.written.sort(), [
    join(dir, "llm_proto", "anthropic.lua"),
    join(dir, "llm_proto", "init.lua"),
    join(dir, "llm_proto", "openai.lua"),
  ]);
  for (const [name, file] of [["llm_proto", "init.lua"], ["llm_proto.openai", "openai.lua"]]) {
    assert.equal(Deno.readTextFileSync(join(dir, "llm_proto", file)), MODULES.get(name)!.source);
  }
  assert.ok(isVendored(dir, "llm_proto"));
  const single = vendorModule("single", dir, { modules: MODULES });
  assert.deepEqual(single.written, [join(dir, "single", "init.lua")]);
});

Deno.test("vendor: a sub-module alone, an unknown name and a sealed module are refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_vendor_refuse_" });
  assert.match(
    thrown(() => vendorModule("llm_proto.openai", dir, { modules: MODULES })).message,
    /vendored whole.*agent-block vendor llm_proto/,
  );
  assert.match(
    thrown(() => vendorModule("nope", dir, { modules: MODULES })).message,
    /no embedded module 'nope'; embedded: agent, knl/,
  );
  for (const sealed of ["knl", "lshape"]) {
    const e = thrown(() => vendorModule(sealed, dir, { modules: MODULES }));
    assert.match(e.message, new RegExp(`'${sealed}' is sealed`));
    assert.ok(e.message.includes(`require("embedded.${sealed}")`), e.message);
    assert.equal(e.exitCode, 1);
  }
  assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing was written");
});

Deno.test("planVendor: every name is checked before anything is written; a repeated name once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_vendor_plan_" });
  Deno.mkdirSync(join(dir, "single"));
  for (
    const [names, re] of [
      [["agent", "knl"], /'knl' is sealed/],
      [["agent", "llm_proto.openai"], /vendored whole/],
      [["nope", "agent"], /no embedded module 'nope'/],
      [["agent", "single"], /single already exists/],
    ] as const
  ) {
    assert.match(thrown(() => planVendor(names, dir, { modules: MODULES })).message, re, names.join(" "));
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["single"], `${names.join(" ")} wrote`);
  }
  const plans = planVendor(["agent", "agent", "llm_proto"], dir, { modules: MODULES });
  assert.deepEqual(plans.map((p) => p.root.name), ["agent", "llm_proto"]);
  for (const p of plans) writeVendored(p);
  assert.ok(isVendored(dir, "agent") && isVendored(dir, "llm_proto"));
});

Deno.test("vendor: a pack is written with a warning", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_vendor_pack_" });
  const r = vendorModule("policy", dir, { modules: MODULES });
  assert.match(r.warning ?? "", /'policy' is a pack.*require\("embedded\.policy"\)/);
  assert.equal(Deno.readTextFileSync(join(dir, "policy", "init.lua")), MODULES.get("policy")!.source);
});

Deno.test("vendor: an existing copy is kept unless forced", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_vendor_force_" });
  vendorModule("agent", dir, { modules: MODULES });
  const file = join(dir, "agent", "init.lua");
  Deno.writeTextFileSync(file, "-- edited by the project\nreturn {}\n");
  Deno.writeTextFileSync(join(dir, "agent", "extra.lua"), "return 1\n");
  assert.match(
    thrown(() => vendorModule("agent", dir, { modules: MODULES })).message,
    /already exists.*--force/,
  );
  assert.equal(Deno.readTextFileSync(file), "-- edited by the project\nreturn {}\n");
  vendorModule("agent", dir, { modules: MODULES, force: true });
  assert.equal(Deno.readTextFileSync(file), MODULES.get("agent")!.source);
  assert.equal(
    Deno.readTextFileSync(join(dir, "agent", "extra.lua")),
    "return 1\n",
    "files of its own are left alone",
  );

  // A single-file copy would shadow the directory: --force removes it, and says so.
  Deno.writeTextFileSync(join(dir, "single.lua"), "return 'mine'\n");
  assert.match(
    thrown(() => vendorModule("single", dir, { modules: MODULES })).message,
    /single\.lua already exists/,
  );
  const r = vendorModule("single", dir, { modules: MODULES, force: true });
  assert.equal(r.removed, join(dir, "single.lua"));
  assert.equal(Deno.readTextFileSync(join(dir, "single", "init.lua")), MODULES.get("single")!.source);
});
