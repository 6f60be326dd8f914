/**
 * sh.exec / sh.kill with real processes: results, cwd, stdin, env, credential stripping seen from
 * inside the child, timeouts that kill the whole group, a grandchild holding the pipe, a command
 * that ignores SIGTERM, concurrent output on both pipes, other tasks running meanwhile, and an
 * agent-block process forwarding SIGTERM to its commands (exit 130). Every test checks that the
 * processes it started are gone afterwards (a zombie counts as gone).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, processAlive, runLua, tempDir, testEnv, waitFor } from "../helpers.ts";

/** True while `pid` is a live (non-zombie) process. */
const alive = processAlive;

async function ret(source: string, dir?: string, graceMs?: number): Promise<string> {
  const r = await runLua(source, { projectRoot: dir, graceMs });
  if (r.outcome.status !== "returned") throw new Error(`${JSON.stringify(r.outcome)}\n${r.stderr}`);
  return r.outcome.value as string;
}

/** `ret` for a run whose environment is `env`. */
async function retIn(env: Record<string, string>, source: string): Promise<string> {
  const r = await runLua(source, { env });
  if (r.outcome.status !== "returned") throw new Error(`${JSON.stringify(r.outcome)}\n${r.stderr}`);
  return r.outcome.value as string;
}

Deno.test("sh.exec: code, stdout, stderr; a non-zero exit is still ok = true; exact bytes", async () => {
  const out = await ret(`
    local r = sh.exec("echo out; echo err >&2; exit 3")
    local b = sh.exec("printf '\\\\377\\\\000x'")
    return std.json.encode({ r.ok, r.code, r.stdout, r.stderr, r.timed_out == nil, r.killed == nil }) .. #b.stdout .. b.stdout:byte(1)`);
  assert.equal(out, '[true,3,"out\\n","err\\n",true,true]3255');
});

Deno.test("sh.exec: cwd defaults to the project root; opts.cwd; a missing cwd is ok = false", async () => {
  const d = await tempDir();
  await Deno.mkdir(join(d, "sub"));
  const out = await ret(
    `local a = sh.exec("pwd").stdout
     local b = sh.exec("pwd", { cwd = "${join(d, "sub")}" }).stdout
     local c = sh.exec("pwd", { cwd = "${join(d, "nope")}" })
     local rel = sh.exec("pwd", { cwd = "sub" }).stdout
     return a .. b .. rel .. tostring(c.ok) .. " " .. c.error`,
    d,
  );
  const real = Deno.realPathSync(d);
  assert.equal(
    out,
    `${real}\n${join(d, "sub")}\n${join(real, "sub")}\nfalse sh.exec: cwd ${join(d, "nope")} does not exist`,
  );
});

Deno.test("sh.exec: opts.stdin is the command's input; without it stdin is empty", async () => {
  const out = await ret(`
    return sh.exec("tr a-z A-Z", { stdin = "hello\\n" }).stdout .. "|" .. sh.exec("cat").stdout .. "|"
      .. sh.exec("head -c 3", { stdin = string.rep("x", 1000000) }).stdout`);
  assert.equal(out, "HELLO\n||xxx");
});

Deno.test("attack: an sh.exec command reads the host's credentials from its environment (opts.env applied after)", async () => {
  const parent = {
    ANTHROPIC_API_KEY: "sk-ant-parent",
    OPENAI_API_KEY: "sk-oai-parent",
    AGENT_BLOCK_MESH_SECRET_KEY: "mesh-parent",
    AB_TEST_VISIBLE: "inherited",
    AB_TEST_TOKEN: "tok",
  };
  {
    const out = await retIn(
      testEnv(parent),
      `
      local r = sh.exec("env")
      local given = sh.exec("printf %s \\"$ANTHROPIC_API_KEY/$EXTRA\\"", { env = { ANTHROPIC_API_KEY = "given", EXTRA = "e" } })
      return r.stdout .. "\\n@@" .. given.stdout`,
    );
    const [env, given] = out.split("\n@@");
    assert.doesNotMatch(env, /ANTHROPIC_API_KEY|OPENAI_API_KEY|AGENT_BLOCK_MESH_SECRET_KEY|parent/);
    assert.match(env, /^AB_TEST_VISIBLE=inherited$/m);
    assert.match(env, /^AB_TEST_TOKEN=tok$/m);
    assert.equal(given, "given/e");

    const strict = await retIn(
      testEnv({ ...parent, AGENT_BLOCK_CHILD_ENV: "strip-secrets" }),
      `return sh.exec("env").stdout`,
    );
    assert.doesNotMatch(strict, /AB_TEST_TOKEN/);
    assert.match(strict, /^AB_TEST_VISIBLE=inherited$/m);

    const allow = await retIn(
      testEnv({ ...parent, AGENT_BLOCK_CHILD_ENV: "allowlist:AB_TEST_TOKEN" }),
      `return sh.exec("env").stdout`,
    );
    assert.match(allow, /^AB_TEST_TOKEN=tok$/m);
    assert.doesNotMatch(allow, /AB_TEST_VISIBLE/);
  }
  // The process environment never had any of it.
  for (const [k, v] of Object.entries(parent)) assert.notEqual(Deno.env.get(k), v);
});

Deno.test("sh.exec: a timeout SIGKILLs the whole group, grandchildren included", async () => {
  const d = await tempDir();
  const out = await ret(
    `local r = sh.exec("sleep 300 & echo $! > gc.pid; echo $$ > leader.pid; wait", { timeout = 0.5 })
     return std.json.encode({ r.ok, r.timed_out, r.signal, r.error, r.code == nil })`,
    d,
  );
  assert.equal(out, '[false,true,"SIGKILL","sh.exec: timed out after 0.5 s (process group killed)",true]');
  for (const f of ["gc.pid", "leader.pid"]) {
    const pid = Number(await Deno.readTextFile(join(d, f)));
    await waitFor(() => !alive(pid), { what: `${f} to be gone` });
  }
});

Deno.test("sh.exec: a grandchild holding the pipe does not hang the call (its group is ended)", async () => {
  const d = await tempDir();
  const out = await ret(
    `local r = sh.exec("sleep 300 & echo $! > gc.pid; echo started")
     return std.json.encode({ r.ok, r.code, r.stdout, r.timed_out == nil })`,
    d,
  );
  assert.equal(out, '[true,0,"started\\n",true]');
  const pid = Number(await Deno.readTextFile(join(d, "gc.pid")));
  await waitFor(() => !alive(pid), { what: "the grandchild to be gone" });
});

Deno.test("sh.exec: a background process with its output redirected outlives the command, not the run", async () => {
  const d = await tempDir();
  const out = await ret(
    `local r = sh.exec("sleep 300 > /dev/null 2>&1 & echo $!")
     local pid = r.stdout:match("%d+")
     local still = sh.exec("kill -0 " .. pid .. " && echo alive").stdout
     return pid .. " " .. still`,
    d,
  );
  const [pid, state] = out.split(" ");
  assert.equal(state, "alive\n");
  await waitFor(() => !alive(Number(pid)), { what: "the background process to end with the run" });
});

Deno.test("sh.kill: SIGTERM, then SIGKILL for a command that ignores SIGTERM; killed = true", async () => {
  const d = await tempDir();
  const out = await ret(
    `local t = std.task.spawn(function()
       return sh.exec("trap '' TERM; echo $$ > pid; while :; do sleep 0.05; done", { label = "stubborn" })
     end)
     local u = std.task.spawn(function()
       return sh.exec("echo $$ > pid2; while :; do sleep 0.05; done", { label = "polite" })
     end)
     local root = std.env.project_root()
     while not (std.fs.exists(root .. "/pid") and std.fs.exists(root .. "/pid2")) do std.time.sleep(0.02) end
     local dup = select(2, pcall(sh.exec, "true", { label = "polite" }))
     local a, b, c = sh.kill("stubborn"), sh.kill("polite"), sh.kill("nobody")
     local r, s = t:join(), u:join()
     return std.json.encode({ a, b, c, r.ok, r.killed, r.signal, s.killed, s.signal, r.error, dup })`,
    d,
    100,
  );
  const v = JSON.parse(out);
  assert.deepEqual(v.slice(0, 9), [
    true,
    true,
    false,
    false,
    true,
    "SIGKILL",
    true,
    "SIGTERM",
    "sh.exec: killed by sh.kill('stubborn')",
  ]);
  assert.match(v[9], /sh\.exec: label 'polite' is already used by a running command/);
  for (const f of ["pid", "pid2"]) {
    const pid = Number(await Deno.readTextFile(join(d, f)));
    await waitFor(() => !alive(pid), { what: `${f} to be gone` });
  }
});

Deno.test("sh.exec: large output on both pipes at once does not deadlock", async () => {
  const out = await ret(`
    local r = sh.exec("yes out | head -n 300000 & yes err | head -n 300000 >&2; wait")
    return #r.stdout .. " " .. #r.stderr`);
  assert.equal(out, `${300000 * 4} ${300000 * 4}`);
});

Deno.test("sh.exec: other tasks keep running while a command runs", async () => {
  const d = await tempDir();
  const out = await ret(
    `local t = std.task.spawn(function()
       return sh.exec("while [ ! -f flag ]; do sleep 0.02; done; echo saw the flag", { timeout = 60 })
     end)
     std.task.yield()
     std.fs.write(std.env.project_root() .. "/flag", "")
     return t:join().stdout`,
    d,
  );
  assert.equal(out, "saw the flag\n");
});

Deno.test("sh.exec / sh.kill: argument errors", async () => {
  const cases: [string, string][] = [
    [`sh.exec({})`, "sh.exec: argument 1 (cmd) must be a string, got table"],
    [`sh.exec("true", 5)`, "sh.exec: argument 2 (opts) must be a table, got number"],
    [
      `sh.exec("true", { timeout = "x" })`,
      "sh.exec: argument 2 (opts) field 'timeout' must be a number, got string",
    ],
    [
      `sh.exec("true", { timeout = -1 })`,
      "sh.exec: argument 2 (opts) field 'timeout' must be a positive number, got -1",
    ],
    [`sh.exec("true", { cwd = 1 })`, "sh.exec: argument 2 (opts) field 'cwd' must be a string, got number"],
    [
      `sh.exec("true", { stdin = {} })`,
      "sh.exec: argument 2 (opts) field 'stdin' must be a string, got table",
    ],
    [
      `sh.exec("true", { env = { A = 1 } })`,
      "sh.exec: argument 2 (opts) field 'env' value of 'A' must be a string, got number",
    ],
    [
      `sh.exec("true", { label = true })`,
      "sh.exec: argument 2 (opts) field 'label' must be a string, got boolean",
    ],
    [`sh.kill()`, "sh.kill: argument 1 (label) must be a string, got nil"],
  ];
  for (const [code, msg] of cases) {
    const r = await runLua(`\n${code}`);
    assert.equal((r.outcome as { message: string }).message, `test.lua:2: ${msg}`, code);
  }
});

Deno.test("agent-block forwards SIGTERM to its commands and exits 130", async () => {
  const d = await tempDir();
  await Deno.writeTextFile(
    join(d, "block.lua"),
    `local r = sh.exec("trap 'echo got TERM > term.txt; exit 0' TERM; echo $$ > cmd.pid; while :; do sleep 0.05; done", { timeout = 120 })
     print("not reached", r.code)`,
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, "-s", join(d, "block.lua"), "-p", d],
    cwd: d,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await waitFor(
    () => {
      try {
        return Deno.readTextFileSync(join(d, "cmd.pid")).trim() !== "";
      } catch {
        return false;
      }
    },
    { what: "the command to start", timeoutMs: 60_000 },
  );
  const cmdPid = Number(Deno.readTextFileSync(join(d, "cmd.pid")));
  child.kill("SIGTERM");
  const r = await child.output();
  assert.equal(r.code, 130, new TextDecoder().decode(r.stderr));
  assert.equal(await Deno.readTextFile(join(d, "term.txt")), "got TERM\n");
  assert.match(new TextDecoder().decode(r.stderr), /stopped: received SIGTERM/);
  assert.equal(new TextDecoder().decode(r.stdout), "");
  await waitFor(() => !alive(cmdPid), { what: "the command to be gone" });
});
