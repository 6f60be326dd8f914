/**
 * `agent-block vendor` as a real subprocess on the embedded library as it is: list, write,
 * refuse to overwrite, `--force`, `--path` (the project root), refusals (all or nothing over
 * several names), what `require` resolves afterwards (the vendored copy, while
 * `require("embedded.<name>")` still reaches the original), and a pack written with a warning and
 * shadowed by a copy that delegates to `embedded.policy`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runCli } from "../helpers.ts";
import { embeddedModules, PACK_ROOTS } from "../../src/modules/embedded.ts";

const LSPEC = embeddedModules().get("lspec")!;

const PROBE = `local a = require("lspec")
local b = require("embedded.lspec")
return std.json.encode({ marker = VENDORED_MARK == true, distinct = a ~= b,
  both_work = type(a.describe) == "function" and type(b.describe) == "function" })
`;

Deno.test("vendor lspec: list, write, refuse, force, and require resolves the copy", async () => {
  const project = await Deno.makeTempDir({ prefix: "ab_vendor_cli_" });
  Deno.writeTextFileSync(join(project, "probe.lua"), PROBE);

  const list0 = await runCli(["vendor", "--list", "-p", project]);
  assert.equal(list0.code, 0, list0.stderr);
  const lspecLine = list0.stdout.split("\n").find((l) => l.startsWith("lspec"));
  assert.match(lspecLine ?? "", /^lspec\s+lib$/);

  // Before vendoring, both names reach the embedded source.
  const before = await runCli([
    "-s",
    join(project, "probe.lua"),
    "-p",
    project,
    "--result",
    join(project, "r0.json"),
  ]);
  assert.equal(before.code, 0, before.stderr);
  assert.equal(JSON.parse(Deno.readTextFileSync(join(project, "r0.json"))).marker, false);
  Deno.removeSync(join(project, "r0.json"));

  const w = await runCli(["vendor", "lspec", "-p", project]);
  assert.equal(w.code, 0, w.stderr);
  assert.match(w.stdout, /vendored lspec into .*\.agent-block\/lib\/lspec\//);
  const copy = join(project, ".agent-block", "lib", "lspec", "init.lua");
  assert.equal(Deno.readTextFileSync(copy), LSPEC.source);

  const list1 = await runCli(["vendor", "--list", "-p", project]);
  assert.match(list1.stdout.split("\n").find((l) => l.startsWith("lspec")) ?? "", /^lspec\s+lib\s+vendored$/);

  // The project edits its copy; require("lspec") now resolves to it, embedded.lspec does not.
  Deno.writeTextFileSync(copy, "VENDORED_MARK = true\n" + LSPEC.source);
  const after = await runCli([
    "-s",
    join(project, "probe.lua"),
    "-p",
    project,
    "--result",
    join(project, "r.json"),
  ]);
  assert.equal(after.code, 0, after.stderr);
  assert.deepEqual(JSON.parse(Deno.readTextFileSync(join(project, "r.json"))), {
    marker: true,
    distinct: true,
    both_work: true,
  });

  const again = await runCli(["vendor", "lspec", "-p", project]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already exists.*--force/);
  assert.ok(Deno.readTextFileSync(copy).startsWith("VENDORED_MARK = true\n"), "the edited copy is untouched");

  const forced = await runCli(["vendor", "lspec", "--force", "-p", project]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(Deno.readTextFileSync(copy), LSPEC.source);
});

Deno.test("vendor --path DIR: DIR is the project root; bad names and command lines are refused", async () => {
  const project = await Deno.makeTempDir({ prefix: "ab_vendor_cli2_" });
  const elsewhere = join(project, "other_project");
  Deno.mkdirSync(elsewhere);
  const w = await runCli(["vendor", "lspec", "--path", "other_project"], { cwd: project });
  assert.equal(w.code, 0, w.stderr);
  assert.equal(
    Deno.readTextFileSync(join(elsewhere, ".agent-block", "lib", "lspec", "init.lua")),
    LSPEC.source,
  );
  assert.match(w.stdout, /vendored lspec into other_project\/\.agent-block\/lib\/lspec\//);
  assert.deepEqual([...Deno.readDirSync(elsewhere)].map((e) => e.name), [".agent-block"]);
  const l = await runCli(["vendor", "--list", "--path", elsewhere], { cwd: project });
  assert.match(l.stdout, /^lspec\s+lib\s+vendored$/m);
  // What the copy is for: a run of that project resolves require("lspec") to it.
  Deno.writeTextFileSync(
    join(elsewhere, ".agent-block", "lib", "lspec", "init.lua"),
    "VENDORED_MARK = true\n" + LSPEC.source,
  );
  Deno.writeTextFileSync(join(elsewhere, "probe.lua"), PROBE);
  const run = await runCli(["-s", "probe.lua", "--result", "r.json"], { cwd: elsewhere });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(Deno.readTextFileSync(join(elsewhere, "r.json"))).marker, true);

  const both = await runCli(["vendor", "lspec", "--path", elsewhere, "-p", project]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--path and -p\/--project both name the project root/);
  const noDir = await runCli(["vendor", "lspec", "--path", join(project, "nope")]);
  assert.equal(noDir.code, 1);
  assert.match(noDir.stderr, /vendor: --path directory .*nope does not exist/);

  const sub = await runCli(["vendor", "lspec.sub", "-p", project]);
  assert.equal(sub.code, 1);
  assert.match(sub.stderr, /part of 'lspec'.*vendored whole/);

  const knl = await runCli(["vendor", "knl", "-p", project]);
  assert.equal(knl.code, 1);
  if (embeddedModules().has("knl")) {
    assert.match(knl.stderr, /'knl' is sealed.*require\("embedded\.knl"\)/);
  } else {
    assert.match(knl.stderr, /no embedded module 'knl'/);
  }

  assert.equal((await runCli(["vendor", "-p", project])).code, 2);
  assert.equal((await runCli(["vendor", "--list", "lspec", "-p", project])).code, 2);
  assert.equal((await runCli(["vendor", "--bogus"])).code, 2);
  const missing = await runCli(["vendor", "lspec", "-p", join(project, "nope")]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /project directory .* does not exist/);
  assert.deepEqual([...Deno.readDirSync(project)].map((e) => e.name), ["other_project"]);
});

Deno.test("vendor a b: one refused name and nothing is written; a name given twice is written once", async () => {
  const project = await Deno.makeTempDir({ prefix: "ab_vendor_cli3_" });
  for (const names of [["lspec", "knl"], ["lspec", "no_such_module"], ["no_such_module", "lspec"]]) {
    const r = await runCli(["vendor", ...names, "-p", project]);
    assert.equal(r.code, 1, names.join(" "));
    assert.equal(r.stdout, "", `${names.join(" ")}: nothing is reported written`);
    assert.deepEqual([...Deno.readDirSync(project)], [], `${names.join(" ")} wrote something`);
  }
  const twice = await runCli(["vendor", "lspec", "lspec", "-p", project]);
  assert.equal(twice.code, 0, twice.stderr);
  assert.equal(twice.stdout.match(/^vendored lspec/gm)?.length, 1);
});

Deno.test("vendor --help and the README name the packs, and vendor policy writes it with a warning", async () => {
  const help = await runCli(["vendor", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--path DIR +take DIR as the project root/);
  assert.match(help.stdout, /nothing is written/);
  const readme = Deno.readTextFileSync(join(REPO_ROOT, "README.md"));
  for (const [what, text] of [["vendor --help", help.stdout], ["README.md", readme]]) {
    assert.match(
      text,
      /Packs \(`?policy`?,\s+`?supervisor`?\) are written with a warning/,
      `${what} describes the packs`,
    );
  }
  for (const pack of PACK_ROOTS) {
    assert.ok(embeddedModules().has(pack), `${pack} is not embedded`);
  }
  const project = await Deno.makeTempDir({ prefix: "ab_vendor_pack_cli_" });
  const r = await runCli(["vendor", "policy", "-p", project]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^vendored policy/m);
  assert.match(r.stderr, /'policy' is a pack/);
  const copy = join(project, ".agent-block", "lib", "policy", "init.lua");
  assert.equal(Deno.readTextFileSync(copy), embeddedModules().get("policy")!.source);
  // a shadowing copy that delegates: require("policy") is the project's, embedded.policy the base
  Deno.writeTextFileSync(
    copy,
    'local base = require("embedded.policy")\nlocal M = setmetatable({ SHADOW = true }, { __index = base })\nreturn M\n',
  );
  Deno.writeTextFileSync(
    join(project, "probe.lua"),
    'local p, b = require("policy"), require("embedded.policy")\n' +
      "print(std.json.encode({ shadow = p.SHADOW == true, distinct = p ~= b, delegates = p.allow == b.allow,\n" +
      '  sup = require("embedded.supervisor") ~= nil, coding = type(require("coding").run) == "function" }))\n',
  );
  const probe = await runCli(["-s", join(project, "probe.lua"), "-p", project]);
  assert.equal(probe.code, 0, probe.stderr);
  assert.deepEqual(JSON.parse(probe.stdout.trim()), {
    shadow: true,
    distinct: true,
    delegates: true,
    sup: true,
    coding: true,
  });
});
