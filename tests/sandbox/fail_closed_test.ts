/**
 * The sandbox fails closed: a run that asked for it runs confined or not at all, and the switch
 * is read where the seed says (`--sandbox`, `AGENT_BLOCK_SANDBOX` from the environment or the
 * project's `.env`). Each refusal exits 1 before any Lua runs (the script's marker file is never
 * written, stdout stays empty, an earlier run's result file is removed): an unresolvable
 * project, a kernel without Landlock and a TCP denial without network rules (both through the
 * test seam `AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI`, which can only make start-up fail), a bad
 * `AGENT_BLOCK_SANDBOX_TCP`, the hidden stage flag typed by hand, `agent-block test` asked for
 * the sandbox; on a platform other than Linux, `--sandbox` itself.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, tempProject, testEnv } from "../helpers.ts";
import { refuseSandbox } from "../../src/config/env_settings.ts";
import { AgentBlockError } from "../../src/errors.ts";
import { SKIP } from "./support.ts";

const opts = { ignore: SKIP !== undefined, sanitizeResources: false, sanitizeOps: false };
const MARKER_SCRIPT = `local f = assert(io.open("ran.txt", "w")); f:write("ran"); f:close(); return "value"`;

async function project(files: Record<string, string> = {}): Promise<string> {
  return await tempProject({ "s.lua": MARKER_SCRIPT, ...files });
}

/** Asserts `r` is a refusal before the script ran, with `pattern` in its error. */
function refusedBeforeRunning(
  r: { code: number; stdout: string; stderr: string },
  root: string,
  pattern: RegExp,
) {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, pattern);
  assert.equal(Deno.statSync(root).isDirectory, true);
  assert.throws(
    () => Deno.statSync(join(root, "ran.txt")),
    Deno.errors.NotFound,
    "the script must not have run",
  );
}

Deno.test({
  name: "sandbox: a kernel without Landlock (the test seam) exits 1 before the script runs",
  ...opts,
  fn: async () => {
    const root = await project({ "result.txt": "an earlier run's value" });
    const env = testEnv({ AGENT_BLOCK_HOME: join(root, "home"), AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI: "0" });
    const r = await runCli(["--sandbox", "-s", "s.lua", "--result", "result.txt"], { cwd: root, env });
    refusedBeforeRunning(
      r,
      root,
      /^error: --sandbox: this kernel enforces no Landlock \(pretended by .*=0\)/,
    );
    assert.throws(
      () => Deno.statSync(join(root, "result.txt")),
      Deno.errors.NotFound,
      "a stale result is removed",
    );
  },
});

Deno.test({
  name: "sandbox: AGENT_BLOCK_SANDBOX_TCP=0 on a kernel without Landlock network rules exits 1",
  ...opts,
  fn: async () => {
    const root = await project();
    const env = testEnv({
      AGENT_BLOCK_HOME: join(root, "home"),
      AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI: "3",
      AGENT_BLOCK_SANDBOX_TCP: "no",
    });
    const r = await runCli(["--sandbox", "-s", "s.lua"], { cwd: root, env });
    refusedBeforeRunning(r, root, /AGENT_BLOCK_SANDBOX_TCP denies TCP, but this kernel's Landlock \(ABI 3/);
    // The seam never weakens a run: at ABI 3 with TCP allowed the real kernel's rules apply.
    const ok = await runCli(["--sandbox", "-s", "s.lua"], {
      cwd: root,
      env: { ...env, AGENT_BLOCK_SANDBOX_TCP: "1" },
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.doesNotMatch(ok.stderr, /ABI 3/);
    assert.doesNotMatch(ok.stderr, /cannot enforce/);
  },
});

Deno.test({
  name: "sandbox: an unresolvable --project is a start-up error",
  ...opts,
  fn: async () => {
    const root = await project();
    const env = testEnv({ AGENT_BLOCK_HOME: join(root, "home") });
    const r = await runCli(["--sandbox", "-s", "s.lua", "-p", "no/such/dir"], { cwd: root, env });
    refusedBeforeRunning(r, root, /^error: --sandbox: the project root .*no\/such\/dir cannot be resolved/);
  },
});

Deno.test({
  name: "sandbox: a bad AGENT_BLOCK_SANDBOX_TCP is an error naming it",
  ...opts,
  fn: async () => {
    const root = await project();
    const env = testEnv({ AGENT_BLOCK_HOME: join(root, "home"), AGENT_BLOCK_SANDBOX_TCP: "sometimes" });
    const r = await runCli(["--sandbox", "-s", "s.lua"], { cwd: root, env });
    refusedBeforeRunning(r, root, /AGENT_BLOCK_SANDBOX_TCP must be .* got 'sometimes'/);
  },
});

Deno.test({
  name: "attack: sandbox the hidden stage flag typed by hand does not run a block unconfined",
  ...opts,
  fn: async () => {
    const root = await project();
    const env = testEnv({ AGENT_BLOCK_HOME: join(root, "home") });
    const r = await runCli(["--sandbox-stage=runtime", "--sandbox", "-s", "s.lua"], { cwd: root, env });
    refusedBeforeRunning(r, root, /--sandbox-stage=runtime is agent-block's own flag .* not confined/);
    const odd = await runCli(["--sandbox-stage=root", "-s", "s.lua"], { cwd: root, env });
    refusedBeforeRunning(odd, root, /unknown sandbox stage/);
  },
});

Deno.test({
  name:
    "sandbox: AGENT_BLOCK_SANDBOX from the environment or the project's .env turns it on; 0 leaves it off",
  ...opts,
  fn: async () => {
    const root = await project();
    const env = testEnv({ AGENT_BLOCK_HOME: join(root, "home") });
    const fromEnv = await runCli(["-s", "s.lua"], { cwd: root, env: { ...env, AGENT_BLOCK_SANDBOX: "yes" } });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.match(fromEnv.stderr, /agent-block: sandbox on /);
    const off = await runCli(["-s", "s.lua"], { cwd: root, env: { ...env, AGENT_BLOCK_SANDBOX: "0" } });
    assert.equal(off.code, 0, off.stderr);
    assert.doesNotMatch(off.stderr, /sandbox on/);
    Deno.writeTextFileSync(join(root, ".env"), "not a line\nAGENT_BLOCK_SANDBOX=1\n");
    const fromDotenv = await runCli(["-s", "s.lua"], { cwd: root, env });
    assert.equal(fromDotenv.code, 0, fromDotenv.stderr);
    assert.match(fromDotenv.stderr, /agent-block: sandbox on /);
    // the .env file's warning is said once, by the launching process, not again by the runtime
    assert.equal(fromDotenv.stderr.match(/\.env:1: malformed line/g)?.length, 1, fromDotenv.stderr);
    const flagged = await runCli(["--sandbox", "-s", "s.lua"], { cwd: root, env });
    assert.equal(flagged.stderr.match(/\.env:1: malformed line/g)?.length, 1, flagged.stderr);
    assert.equal(Deno.readTextFileSync(join(root, "ran.txt")), "ran");
  },
});

Deno.test({
  name: "sandbox: AGENT_BLOCK_SANDBOX_GIT_RW=1 leaves .git writable and the start-up line says so",
  ...opts,
  fn: async () => {
    const root = await project({
      "hook.lua":
        `local f, e = io.open(".git/hooks/pre-commit", "w"); if f then f:close() end; return tostring(f ~= nil)`,
    });
    Deno.mkdirSync(join(root, ".git", "hooks"), { recursive: true });
    const env = testEnv({ AGENT_BLOCK_HOME: join(root, "home"), AGENT_BLOCK_SANDBOX_GIT_RW: "1" });
    const r = await runCli(["--sandbox", "-s", "hook.lua", "--result", "r.txt"], { cwd: root, env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(Deno.readTextFileSync(join(root, "r.txt")), "true");
    assert.match(r.stderr, /\.git writable \(AGENT_BLOCK_SANDBOX_GIT_RW=1\)/);
  },
});

Deno.test("sandbox: agent-block test asked for the sandbox stops rather than run specs unconfined", async () => {
  assert.throws(() => refuseSandbox({ AGENT_BLOCK_SANDBOX: "yes" }, "test"), AgentBlockError);
  refuseSandbox({ AGENT_BLOCK_SANDBOX: "0" }, "test"); // off: nothing to refuse
  const root = await tempProject({ "a_spec.lua": `describe("a", function() it("b", function() end) end)` });
  const r = await runCli(["test"], { cwd: root, env: testEnv({ AGENT_BLOCK_SANDBOX: "1" }) });
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    /^error: test: AGENT_BLOCK_SANDBOX=1 asks for the sandbox, and agent-block test does not/,
  );
});

Deno.test({
  name: "sandbox: on a platform other than Linux --sandbox is a start-up error",
  ignore: Deno.build.os === "linux",
  fn: async () => {
    const root = await project();
    const r = await runCli(["--sandbox", "-s", "s.lua"], { cwd: root, env: testEnv() });
    refusedBeforeRunning(r, root, /--sandbox is Linux only/);
  },
});
