/**
 * `agent-block test`: spec discovery, the substring filter, the summary line and exit codes
 * (src/cli/test_command.ts with the embedded lspec).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../helpers.ts";

async function specProject() {
  const root = await Deno.makeTempDir({ prefix: "ab_spec_" });
  Deno.mkdirSync(join(root, "spec", "sub"), { recursive: true });
  Deno.writeTextFileSync(
    join(root, "spec", "good_spec.lua"),
    `describe("good", function()
  it("adds", function() expect(1 + 1).to.equal(2) end)
  it("has", function() expect({1, 2, 3}).to.have(2) end)
  it("prints", function() print("visible output") end)
end)
`,
  );
  Deno.writeTextFileSync(
    join(root, "spec", "sub", "bad_spec.lua"),
    `describe("bad", function()
  it("passes", function() expect(true).to.be.truthy() end)
  it("fails on purpose", function() expect(1).to.equal(2) end)
end)
`,
  );
  Deno.writeTextFileSync(join(root, "spec", "helper.lua"), `error("must not run")`);
  Deno.mkdirSync(join(root, ".hidden"));
  Deno.writeTextFileSync(join(root, ".hidden", "skip_spec.lua"), `error("hidden dirs are skipped")`);
  return root;
}

Deno.test("agent-block test: runs every spec, prints a summary line, exits 1 on a failure", async () => {
  const root = await specProject();
  const r = await runCli(["test"], { cwd: root });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /PASS adds/);
  assert.match(r.stdout, /FAIL fails on purpose/);
  assert.match(r.stdout, /\| visible output/);
  assert.doesNotMatch(r.stdout, /must not run|hidden dirs/);
  assert.match(r.stdout, /\n4 passed, 1 failed\n$/);
});

Deno.test("agent-block test: a substring filter and an explicit path narrow the run", async () => {
  const root = await specProject();
  let r = await runCli(["test", "good"], { cwd: root });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /\n3 passed, 0 failed\n$/);
  assert.doesNotMatch(r.stdout, /bad_spec/);
  r = await runCli(["test", "spec/sub"], { cwd: root });
  assert.equal(r.code, 1);
  assert.match(r.stdout, /\n1 passed, 1 failed\n$/);
  r = await runCli(["test", join(root, "spec", "good_spec.lua")]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  r = await runCli(["test", "-p", root, "nomatch"], { cwd: root });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no spec files found/);
});

Deno.test("agent-block test: a spec file that raises outside `it` counts as a failure", async () => {
  const root = await Deno.makeTempDir({ prefix: "ab_spec_" });
  Deno.writeTextFileSync(join(root, "broken_spec.lua"), `local x = nil\nx.field = 1\n`);
  Deno.writeTextFileSync(join(root, "syntax_spec.lua"), `describe("x", function(\n`);
  const r = await runCli(["test"], { cwd: root });
  assert.equal(r.code, 1);
  assert.match(r.stdout, /broken_spec\.lua:2: attempt to index a nil value/);
  assert.match(r.stdout, /syntax_spec\.lua:2:/);
  assert.match(r.stdout, /\n0 passed, 2 failed\n$/);
});

Deno.test("agent-block test: unknown flag exits 2, --help exits 0", async () => {
  assert.equal((await runCli(["test", "--nope"])).code, 2);
  const h = await runCli(["test", "--help"]);
  assert.equal(h.code, 0);
  assert.match(h.stdout, /Usage: agent-block test/);
});
