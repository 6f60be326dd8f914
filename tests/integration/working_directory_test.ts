/**
 * The one working-directory rule of every front end (issue 27 §1): a run works in its project
 * root unless its caller names another directory (`--cwd`, the builder's `.cwd()`), whatever the
 * directory the front end itself was started in. The same block — counting the words of a
 * project file it names relatively — runs through the CLI started elsewhere with `-p`, the SDK,
 * `agent-block mcp` and `agent-block serve`, and each answers from the project, not from where
 * its process happens to be. Real subprocesses, real servers on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { runCli, tempDir, tempProject, testEnv } from "../helpers.ts";
import { BlockConfig, runBlock, ScriptSource } from "../../mod.ts";
import { resultText, serverCommand, serverEnv } from "../mcp_server/mcp_helpers.ts";
import { startManager, waitForEnd } from "../serve/serve_helpers.ts";

/** Counts the words of `words.txt` (relative: the run's working directory) and says where it ran. */
const WORDCOUNT = `
local f = assert(io.open("words.txt"))
local n = 0
for _ in f:read("a"):gmatch("%S+") do n = n + 1 end
f:close()
return n .. " " .. std.path.abs(".")`;

async function wordProject(): Promise<string> {
  return await tempProject({
    "words.txt": "one two three\n",
    "blocks/wordcount.lua": WORDCOUNT,
    "blocks/wordcount.job.toml": 'every = "1h"\n',
  });
}

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("cwd rule, CLI: -p DIR from another directory runs in the project; --cwd names another", async () => {
  const root = Deno.realPathSync(await wordProject());
  const elsewhere = Deno.realPathSync(await tempDir());
  const out = join(elsewhere, "out.txt");
  // -b, and -s with a path of the caller's (relative to where the CLI was started)
  Deno.writeTextFileSync(join(elsewhere, "local.lua"), WORDCOUNT);
  for (const what of [["-b", "wordcount"], ["-s", "local.lua"]]) {
    const r = await runCli([...what, "-p", root, "--result", "out.txt"], { cwd: elsewhere, env: testEnv() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(Deno.readTextFileSync(out), `3 ${root}`, `${what.join(" ")}: the run works in the project`);
  }
  // --cwd: the run's relative paths are that directory's (relative to where the CLI was started)
  Deno.mkdirSync(join(elsewhere, "other"));
  Deno.writeTextFileSync(join(elsewhere, "other", "words.txt"), "just two\n");
  let r = await runCli(["-b", "wordcount", "-p", root, "--cwd", "other", "--result", "out.txt"], {
    cwd: elsewhere,
    env: testEnv(),
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(Deno.readTextFileSync(out), `2 ${join(elsewhere, "other")}`);
  r = await runCli(["-b", "wordcount", "-p", root, "--cwd", "missing"], { cwd: elsewhere, env: testEnv() });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--cwd .*missing does not exist/);
});

Deno.test("cwd rule, CLI: -p naming no directory says so, not 'unknown block'", async () => {
  const elsewhere = await tempDir();
  const r = await runCli(["-b", "wordcount", "-p", join(elsewhere, "nope")], {
    cwd: elsewhere,
    env: testEnv(),
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /project directory .*nope does not exist/);
  assert.doesNotMatch(r.stderr, /unknown block/);
});

Deno.test("cwd rule, SDK: no .cwd() runs in the project root, a relative script path too; .cwd() wins", async () => {
  const root = Deno.realPathSync(await wordProject());
  const report = await runBlock(
    BlockConfig.builder(ScriptSource.path("blocks/wordcount.lua"), root).env(testEnv()).build(),
  );
  assert.equal(report.value, `3 ${root}`, report.error?.message);
  const other = Deno.realPathSync(await tempProject({ "words.txt": "a b c d\n" }));
  const there = await runBlock(
    BlockConfig.builder(ScriptSource.path(join(root, "blocks/wordcount.lua")), root)
      .env(testEnv())
      .cwd(other)
      .build(),
  );
  assert.equal(there.value, `4 ${other}`, there.error?.message);
});

Deno.test({
  name: "cwd rule, mcp: a block served from a project runs in it, wherever the server was started",
  ...opts,
  fn: async () => {
    const root = Deno.realPathSync(await wordProject());
    const home = await tempDir();
    const elsewhere = await tempDir();
    const [command, ...args] = serverCommand(["-p", root]);
    const transport = new StdioClientTransport({ command, args, env: serverEnv(home), cwd: elsewhere });
    const client = new Client({ name: "cwd-test", version: "0" });
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: "run_block", arguments: { block: "wordcount" } });
      assert.equal(resultText(r), `3 ${root}`);
    } finally {
      await client.close();
    }
  },
});

Deno.test({
  name: "cwd rule, serve: a job runs in its project",
  ...opts,
  fn: async () => {
    const root = Deno.realPathSync(await wordProject());
    const home = await tempDir();
    const m = await startManager(root, home);
    try {
      const run = await waitForEnd(m, "wordcount");
      assert.equal(run.state, "ok", m.stderr());
      assert.equal(run.result, `3 ${root}`);
    } finally {
      assert.equal(await m.stop(), 0);
    }
  },
});
