/**
 * `agent-block test`: spec discovery, the substring filter, the summary line and exit codes
 * (src/cli/test_command.ts with the embedded lspec).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, tempDir, tempProject, testEnv } from "../helpers.ts";

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

Deno.test("agent-block test: a failing expectation is its spec's file:line, the describe/it path, expected and actual", async () => {
  const root = await tempProject({
    "fmt_spec.lua": `local function positive(n)
  expect(n > 0).to.be.truthy()
end
describe("math", function()
  describe("addition", function()
    it("adds", function()
      expect({ sum = 1 + 1 }).to.equal({ sum = 3 })
    end)
    it("via a helper", function()
      positive(-1)
    end)
    it("raises", function()
      error("boom")
    end)
    it("logs", function()
      log.info("hello from the spec")
    end)
  end)
end)
`,
  });
  const r = await runCli(["test"], { cwd: root, env: testEnv() });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.equal(
    r.stdout,
    `fmt_spec.lua
  math
    addition
      FAIL adds
        fmt_spec.lua:7: math / addition / adds
        expected: {"sum":3}
          actual: {"sum":2}
      FAIL via a helper
        fmt_spec.lua:2: math / addition / via a helper
        expected: a truthy value
          actual: false
        stack traceback:
          fmt_spec.lua:2: in function 'positive'
          fmt_spec.lua:10: in function <fmt_spec.lua:9>
      FAIL raises
        fmt_spec.lua:13: math / addition / raises
        error: boom
      PASS logs
1 passed, 3 failed
`,
  );
  // the log line names the spec file; nothing of the runner (its driver, lspec, the runtime) shows
  assert.match(r.stderr, /^\[info\] fmt_spec\.lua: hello from the spec$/m);
  assert.doesNotMatch(r.stdout + r.stderr, /lspec_driver|embedded\/lspec|ab:runtime|xpcall/);
});

Deno.test("agent-block test: each spec file gets a temporary AGENT_BLOCK_HOME and stores; `-- lspec: real-home` opts out", async () => {
  const home = await tempDir("ab_spec_home_");
  const abHome = join(home, "ab");
  const kvOverride = join(home, "elsewhere", "kv.sqlite");
  const writes = `std.kv.set("ns", "k", "v")
std.sql.execute("CREATE TABLE t (x)")
std.ts.append("series", 1)
`;
  const root = await tempProject({
    "stores_spec.lua": `describe("stores", function()
  it("writes every store and sees a home of its own", function()
    ${writes.trim().split("\n").join("\n    ")}
    local h = os.getenv("AGENT_BLOCK_HOME")
    expect(h).to_not.equal(${JSON.stringify(abHome)})
    expect(os.getenv("AGENT_BLOCK_KV_PATH")).to.equal(h .. "/kv.sqlite")
    expect(std.kv.get("ns", "k")).to.equal("v")
    print("home=" .. h)
  end)
end)
`,
    "real_spec.lua": `-- A spec that reads the user's own stores.
-- lspec: real-home
describe("real", function()
  it("writes the real kv store", function()
    std.kv.set("ns", "real", "yes")
    expect(os.getenv("AGENT_BLOCK_HOME")).to.equal(${JSON.stringify(abHome)})
  end)
end)
`,
    "typo_spec.lua": "-- lspec: real_home\nit('x', function() end)\n",
  });
  const env = testEnv({ HOME: home, AGENT_BLOCK_HOME: abHome, AGENT_BLOCK_KV_PATH: kvOverride });
  const r = await runCli(["test", "stores_spec"], { cwd: root, env });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const untouched = () => {
    for (const p of [abHome, join(home, ".agent-block"), kvOverride]) {
      assert.throws(() => Deno.statSync(p), Deno.errors.NotFound, `${p} was written`);
    }
  };
  untouched();
  const used = /\| home=(.*)$/m.exec(r.stdout)![1];
  assert.throws(() => Deno.statSync(used), Deno.errors.NotFound, "the temporary home is removed afterwards");

  const real = await runCli(["test", "real_spec"], {
    cwd: root,
    env: testEnv({ HOME: home, AGENT_BLOCK_HOME: abHome }),
  });
  assert.equal(real.code, 0, real.stdout + real.stderr);
  assert.ok(Deno.statSync(join(abHome, "kv.sqlite")).isFile, "a real-home spec writes the user's kv store");

  const typo = await runCli(["test", "typo_spec"], { cwd: root, env });
  assert.equal(typo.code, 1);
  assert.match(
    typo.stdout,
    /unknown lspec directive '-- lspec: real_home' in typo_spec\.lua \(known: real-home\)/,
  );
});

Deno.test("agent-block test: lspec.run_block runs a whole block with the replay provider", async () => {
  const home = await tempDir("ab_spec_home_");
  const root = await tempProject({
    "blocks/greeter.lua": `-- Greets through the model.
local r = require("agent").run({ provider = "replay", prompt = _PROMPT })
print("model said: " .. tostring(r.content))
log.info("greeted")
std.kv.set("greeter", "last", r.content)
if _PROMPT == "leave" then os.exit(4) end
if _PROMPT == "later" then job.defer("no input yet") end
return r.ok and r.content or ("failed: " .. tostring(r.error))
`,
    // a block that names its providers: a spec's replay answers for them, no live model is called
    "blocks/live.lua":
      `local r = require("agent").run({ provider = "anthropic", model = "claude-sonnet-4-5", prompt = _PROMPT })
local c = llm.chat("and you?", { provider = "openai", model = "gpt-4o-mini" })
return r.content .. " / " .. c.content[1].text .. " / " .. tostring(r.ok)`,
    "spec/greet.replay.jsonl": `{"expect": {"last_message_contains": "hi"}, "content": "hello, world"}\n`,
    "spec/greeter_spec.lua": `local lspec = require("lspec")
describe("greeter", function()
  it("answers from a replay file", function()
    local r = lspec.run_block("greeter", { prompt = "hi", replay = "spec/greet.replay.jsonl" })
    expect(r.status).to.equal("returned")
    expect(r.value).to.equal("hello, world")
    expect(r.exit_code).to.equal(0)
    expect(r.stdout).to.equal("model said: hello, world\\n")
    expect(r.stderr).to.match("greeted")
    expect(#r.sessions).to.equal(1)
    -- the block ran in the spec's own stores
    expect(std.kv.get("greeter", "last")).to.equal("hello, world")
  end)
  it("reports how a block that ends the run ended", function()
    local r = lspec.run_block("blocks/greeter.lua", { prompt = "leave", replay = { { content = "bye" } } })
    expect({ r.status, r.code, r.exit_code }).to.equal({ "exited", 4, 4 })
    r = lspec.run_block("greeter", { prompt = "later", replay = { { content = "wait" } } })
    expect({ r.status, r.reason, r.exit_code }).to.equal({ "deferred", "no input yet", 75 })
  end)
  it("reports a replay script that does not match as the block's error", function()
    local r = lspec.run_block("greeter", { prompt = "other", replay = "spec/greet.replay.jsonl" })
    expect(r.status).to.equal("returned")
    expect(r.value).to.match("failed: .*does not match the script: expected the last message to contain")
  end)
  it("forces the replay provider on a block that names anthropic or openai", function()
    local r = lspec.run_block("live", { prompt = "hi", replay = { { content = "from the script" }, { content = "me too" } } })
    expect(r.status).to.equal("returned")
    expect(r.value).to.equal("from the script / me too / true")
  end)
  it("names what it cannot find", function()
    expect(function() lspec.run_block("nope") end).to.fail.with("unknown block 'nope'; known blocks: greeter, live")
    expect(function() lspec.run_block("blocks/nope.lua") end).to.fail.with("no block file blocks/nope.lua")
    expect(function() lspec.run_block("greeter", { replay = "x.jsonl" }) end).to.fail.with("opts.replay: no such file x.jsonl")
    expect(function() lspec.run_block("greeter", { promt = "x" }) end).to.fail.with("unknown field 'promt'")
  end)
end)
`,
  });
  const r = await runCli(["test"], {
    cwd: root,
    env: testEnv({ HOME: home, AGENT_BLOCK_HOME: join(home, "ab") }),
  });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /\n5 passed, 0 failed\n$/);
  assert.throws(() => Deno.statSync(join(home, "ab")), Deno.errors.NotFound, "the user's home is untouched");
  assert.throws(
    () => Deno.statSync(join(root, ".agent-block")),
    Deno.errors.NotFound,
    "no kernel log in the project",
  );
});

Deno.test("agent-block test: os.exit and job.defer inside an it are reported as such, and the file runs on", async () => {
  const root = await tempProject({
    "enders_spec.lua": `describe("enders", function()
  it("exits", function() os.exit(3) end)
  it("defers", function() job.defer("later") end)
  it("still runs", function() expect(1).to.equal(1) end)
end)
os.exit()
`,
  });
  const r = await runCli(["test"], { cwd: root, env: testEnv() });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(
    r.stdout,
    /FAIL exits\n {6}enders_spec\.lua:2: enders \/ exits\n {6}error: os\.exit\(3\) called inside an it: a spec cannot end the run \(lspec\.run_block runs a block that does, and reports how it ended\)\n/,
  );
  assert.match(
    r.stdout,
    /FAIL defers\n {6}enders_spec\.lua:3: enders \/ defers\n {6}error: job\.defer\("later"\) called inside an it/,
  );
  assert.match(r.stdout, /PASS still runs/);
  assert.match(
    r.stdout,
    /FAIL \(error outside of any it\)\n {4}enders_spec\.lua:6: os\.exit\(\) called outside of any it/,
  );
  assert.match(r.stdout, /\n1 passed, 3 failed\n$/);
});

Deno.test("agent-block test: a path argument that names nothing is named", async () => {
  const root = await specProject();
  for (const arg of ["spec/nope_spec.lua", "spec/missing/", "nope_spec.lua"]) {
    const r = await runCli(["test", arg], { cwd: root });
    assert.equal(r.code, 1, arg);
    assert.equal(r.stdout, "");
    assert.match(
      r.stderr,
      new RegExp(`spec file or directory ${arg.replace(".", "\\.")} does not exist \\(looked for `),
    );
  }
  const r = await runCli(["test", "zzz"], { cwd: root });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no spec files found: no \*_spec\.lua file name under \. contains 'zzz'/);
});
