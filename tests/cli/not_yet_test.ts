/**
 * What the seed describes and agent-block does not have yet is refused out loud, never silently
 * dropped: a sandbox request (`--sandbox`, `AGENT_BLOCK_SANDBOX` from the environment or `.env`)
 * fails closed before any Lua runs — for a run, `agent-block test` and `agent-block mcp`
 * (src/config/settings.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, tempProject } from "../helpers.ts";
import { refuseSandbox, sandboxRequested } from "../../src/config/settings.ts";
import { AgentBlockError } from "../../src/errors.ts";

Deno.test("sandboxRequested: off when unset, empty, 0, false, no, off (any case); on otherwise", () => {
  for (const off of [undefined, "", "0", "false", "FALSE", " no ", "Off"]) {
    assert.equal(sandboxRequested(off), false, String(off));
  }
  for (const on of ["1", "true", "yes", "on", "landlock", "2"]) assert.equal(sandboxRequested(on), true, on);
  assert.throws(() => refuseSandbox({ AGENT_BLOCK_SANDBOX: "yes" }), AgentBlockError);
  assert.throws(() => refuseSandbox({}, true), /--sandbox is not available yet/);
  refuseSandbox({ AGENT_BLOCK_SANDBOX: "0" }); // off: nothing to refuse
});

Deno.test("a sandbox request is a startup error (exit 1) before the script runs", async () => {
  const root = await tempProject({ "s.lua": `print("the script ran")\nreturn "ran"` });
  const env = { AGENT_BLOCK_HOME: join(root, "_home") };
  const flag = await runCli(["-s", "s.lua", "--sandbox"], { cwd: root, env });
  assert.equal(flag.code, 1, flag.stderr);
  assert.equal(flag.stdout, "");
  assert.match(flag.stderr, /^error: --sandbox is not available yet: .*does not run unconfined/);

  for (const value of ["1", "true", "yes"]) {
    const r = await runCli(["-s", "s.lua"], { cwd: root, env: { ...env, AGENT_BLOCK_SANDBOX: value } });
    assert.equal(r.code, 1, `AGENT_BLOCK_SANDBOX=${value}: ${r.stderr}`);
    assert.equal(r.stdout, "", "the script must not start");
    assert.match(
      r.stderr,
      new RegExp(`^error: AGENT_BLOCK_SANDBOX=${value} asks for the sandbox, which is not available yet`),
    );
  }
  for (const value of ["0", "false", "off", ""]) {
    const r = await runCli(["-s", "s.lua"], { cwd: root, env: { ...env, AGENT_BLOCK_SANDBOX: value } });
    assert.equal(r.code, 0, `AGENT_BLOCK_SANDBOX=${value} is off: ${r.stderr}`);
  }

  // From the project's .env (the host half's configuration) just the same.
  Deno.writeTextFileSync(join(root, ".env"), "AGENT_BLOCK_SANDBOX=1\n");
  const dotenv = await runCli(["-s", "s.lua"], { cwd: root, env });
  assert.equal(dotenv.code, 1);
  assert.equal(dotenv.stdout, "");
  assert.match(dotenv.stderr, /AGENT_BLOCK_SANDBOX=1 asks for the sandbox/);

  // agent-block test and agent-block mcp run Lua too: refused at start.
  Deno.writeTextFileSync(join(root, "a_spec.lua"), `describe("a", function() it("b", function() end) end)`);
  const spec = await runCli(["test"], { cwd: root, env });
  assert.equal(spec.code, 1, spec.stderr);
  assert.match(spec.stderr, /^error: test: AGENT_BLOCK_SANDBOX=1 asks for the sandbox/);
  const mcp = await runCli(["mcp"], { cwd: root, env, stdin: "" });
  assert.equal(mcp.code, 1, mcp.stderr);
  assert.match(mcp.stderr, /error: mcp: AGENT_BLOCK_SANDBOX=1 asks for the sandbox/);
});
