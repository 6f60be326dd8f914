/**
 * The two-run escapes: a first confined run prepares something a later run reads as
 * configuration, code or a switch, and the later run — confined, or an unconfined user of the
 * same home or project — must not be affected:
 * - the project's `.env` names wider write grants, a writable `.git`, another home or TCP; the
 *   sweep after the run quarantines it, and, renamed back, the next `--sandbox` run ignores them
 *   (and says so) and still cannot write outside;
 * - the `.env` that holds the sandbox switch (`AGENT_BLOCK_SANDBOX=1`) is rewritten, removed or
 *   replaced; it stays as it was and the next run is confined again;
 * - the home's `lib/` and `blocks/` get a module and a block, and `serve.token` is replaced (or,
 *   in a home without one, planted); another project's unconfined `require` does not find the
 *   module, the token is unchanged (or is one minted before the run, as serve mints it);
 * - a `serve` job with `sandbox = true` rewrites its own `job.toml` and plants a new job; every
 *   later run of the manager, and of the next manager of the project, stays sandboxed.
 * - a hard link made before the run from the project to a file outside: the file tools refuse to
 *   write through it (what `sh` can do through it is documented, not prevented).
 * Each is tried on the root path and, for the `.env` and home cases, on the user-namespace path.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathExists, runCli, tempDir, tempProject, testEnv, waitFor } from "../helpers.ts";
import { outsideDir, sandboxedRun, sandboxEnv, SKIP } from "./support.ts";
import { userNamespaceHop } from "../../src/sandbox/mount_ns.ts";
import { startManager, waitForRun } from "../serve/serve_helpers.ts";
import { ServeRecord } from "../../src/serve/record.ts";

const noHop = SKIP ?? (() => {
  const hop = userNamespaceHop();
  return "why" in hop ? hop.why : undefined;
})();
if (SKIP) console.warn(`two_run_attack_test: skipped: ${SKIP}`);
const opts = { sanitizeResources: false, sanitizeOps: false };

const PATHS = [
  { name: "root path", env: {} as Record<string, string>, skip: SKIP },
  { name: "user-namespace path", env: { AGENT_BLOCK_SANDBOX_TEST_USERNS: "1" }, skip: noHop },
];

/** Lua: each `{name, path, text, mode}` of `_PROMPT` (JSON) tried with io.open; the outcomes. */
const WRITES = `local out = {}
for _, w in ipairs(std.json.decode(_PROMPT)) do
  local f, err = io.open(w.path, w.mode or "w")
  if f then f:write(w.text or "x"); f:close(); out[w.name] = "wrote" else out[w.name] = "denied: " .. tostring(err) end
end
return std.json.encode(out)`;

function git(dir: string): void {
  const r = new Deno.Command("git", { args: ["init", "-q", dir], stdout: "null", stderr: "null" })
    .outputSync();
  if (!r.success) throw new Error("git init failed");
}

for (const path of PATHS) {
  Deno.test({
    name: `attack: sandbox a confined run's .env widens the next confined run (${path.name})`,
    ignore: path.skip !== undefined,
    ...opts,
    fn: async () => {
      const project = await tempProject({ "w.lua": WRITES });
      git(project);
      const outside = outsideDir();
      // the starter names no home of its own: its HOME (a fresh directory) decides it
      const home = await tempDir("ab_sbx_user_");
      const env = testEnv({ HOME: home, ...path.env });
      try {
        const dotenv = [
          `AGENT_BLOCK_SANDBOX_FS_RW=${outside}`,
          "AGENT_BLOCK_SANDBOX_GIT_RW=1",
          `AGENT_BLOCK_HOME=${outside}`,
          "AGENT_BLOCK_SANDBOX_TCP=1",
        ].join("\n") + "\n";
        const first = await sandboxedRun(project, "w.lua", {
          env,
          prompt: JSON.stringify([{ name: "env", path: ".env", text: dotenv }]),
        });
        assert.equal(first.code, 0, first.stderr);
        assert.equal(first.value.env, "wrote", "a new .env may be written (the next run must not use it)");
        // the sweep after the run quarantined it (config_sweep_attack_test.ts); a user who renames
        // it back unread still gets a confined next run
        const aside = [...Deno.readDirSync(project)].find((e) =>
          e.name.startsWith(".env.agent-block-quarantined-")
        );
        assert.ok(aside, first.stderr);
        assert.equal(pathExists(join(project, ".env")), false);
        Deno.renameSync(join(project, aside.name), join(project, ".env"));

        const second = await sandboxedRun(project, "w.lua", {
          env,
          prompt: JSON.stringify([
            { name: "fs_rw", path: join(outside, "fs_rw.txt") },
            { name: "hook", path: ".git/hooks/pre-commit", text: "#!/bin/sh\n" },
            { name: "git config", path: ".git/config", mode: "a", text: "[core]\n\tfsmonitor = touch /x\n" },
          ]),
        });
        assert.equal(second.code, 0, second.stderr);
        assert.match(second.stderr, /sandbox on/);
        for (const name of ["AGENT_BLOCK_SANDBOX_FS_RW", "AGENT_BLOCK_SANDBOX_GIT_RW", "AGENT_BLOCK_HOME"]) {
          assert.match(second.stderr, new RegExp(`${name} in the project's \\.env is ignored`));
        }
        assert.doesNotMatch(second.stderr, new RegExp(`writes only to [^\\n]*${outside}`));
        assert.match(second.value.fs_rw, /^denied: .*Permission denied/, second.value.fs_rw);
        assert.match(second.value.hook, /^denied: .*Read-only file system/, second.value.hook);
        assert.match(second.value["git config"], /^denied: .*Read-only file system/);
        assert.equal(pathExists(join(outside, "fs_rw.txt")), false);
        assert.equal(pathExists(join(project, ".git/hooks/pre-commit")), false);
        assert.doesNotMatch(Deno.readTextFileSync(join(project, ".git/config")), /fsmonitor/);
      } finally {
        Deno.removeSync(outside, { recursive: true });
      }
    },
  });

  Deno.test({
    name: `attack: sandbox a confined run turns off the sandbox switch in .env (${path.name})`,
    ignore: path.skip !== undefined,
    ...opts,
    fn: async () => {
      const original = "AGENT_BLOCK_SANDBOX=1\n";
      const project = await tempProject({
        ".env": original,
        "flip.lua": `local out = {}
local f, err = io.open(".env", "w")
if f then f:write("AGENT_BLOCK_SANDBOX=0\\n"); f:close(); out.write = "wrote" else out.write = "denied: " .. tostring(err) end
local ok, rerr = os.remove(".env")
out.remove = ok and "removed" or ("denied: " .. tostring(rerr))
local g = assert(io.open("other.env", "w")); g:write("AGENT_BLOCK_SANDBOX=0\\n"); g:close()
local rok, rnerr = os.rename("other.env", ".env")
out.rename = rok and "renamed" or ("denied: " .. tostring(rnerr))
local r = sh.exec("printf 'AGENT_BLOCK_SANDBOX=off\\\\n' > .env; mv other.env .env")
out.sh = "exit " .. r.code .. " " .. r.stderr
return std.json.encode(out)`,
        "mark.lua": `return "ran"`,
      });
      const env = { ...sandboxEnv(project), ...path.env };
      // started without --sandbox: the project's .env is what asks for it
      const first = await runCli(["-s", "flip.lua", "--result", "r.json"], { cwd: project, env });
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stderr, /sandbox on/);
      const said = JSON.parse(Deno.readTextFileSync(join(project, "r.json")));
      assert.match(said.write, /^denied: .*Read-only file system/, said.write);
      assert.match(said.remove, /^denied: /, said.remove);
      assert.match(said.rename, /^denied: /, said.rename);
      assert.match(said.sh, /^exit [1-9]/, said.sh);
      assert.equal(Deno.readTextFileSync(join(project, ".env")), original);
      const second = await runCli(["-s", "mark.lua"], { cwd: project, env });
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stderr, /sandbox on/, "the next run must be confined again");
    },
  });

  Deno.test({
    name:
      `attack: sandbox a confined run plants code in the home's lib/ and blocks/ and a serve token (${path.name})`,
    ignore: path.skip !== undefined,
    ...opts,
    fn: async () => {
      const home = await tempDir("ab_sbx_home_");
      Deno.writeTextFileSync(join(home, "serve.token"), "the-real-token\n", { mode: 0o600 });
      const project = await tempProject({ "w.lua": WRITES });
      const env = testEnv({ AGENT_BLOCK_HOME: home, ...path.env });
      const first = await sandboxedRun(project, "w.lua", {
        env,
        prompt: JSON.stringify([
          { name: "lib", path: join(home, "lib", "evil.lua"), text: 'return "planted"' },
          { name: "blocks", path: join(home, "blocks", "evil.lua"), text: 'return "planted"' },
          { name: "token", path: join(home, "serve.token"), text: "attacker-token\n" },
          { name: "kv", path: join(home, "kv.sqlite-probe"), text: "x" },
        ]),
      });
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.value.lib, /^denied: .*Read-only file system/, first.value.lib);
      assert.match(first.value.blocks, /^denied: .*Read-only file system/, first.value.blocks);
      assert.match(first.value.token, /^denied: .*Read-only file system/, first.value.token);
      assert.equal(first.value.kv, "wrote", "the home's stores stay writable");
      // the same home, another project, no sandbox: nothing planted is found
      const other = await tempProject({
        "r.lua": `local ok, v = pcall(require, "evil"); return tostring(ok)`,
      });
      const r = await runCli(["-s", "r.lua", "--result", "r.txt"], {
        cwd: other,
        env: testEnv({ AGENT_BLOCK_HOME: home }),
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        Deno.readTextFileSync(join(other, "r.txt")),
        "false",
        "another project's require found planted code",
      );
      assert.equal(pathExists(join(home, "blocks", "evil.lua")), false);
      assert.equal(Deno.readTextFileSync(join(home, "serve.token")), "the-real-token\n");
    },
  });
}

Deno.test({
  name: "attack: sandbox the file tools write through a hard link made before the run to a file outside",
  ignore: SKIP !== undefined,
  ...opts,
  fn: async () => {
    const outside = outsideDir();
    try {
      const target = join(outside, "target.txt");
      Deno.writeTextFileSync(target, "original\n");
      const project = await tempProject({
        "t.lua": `std.fs.register_tools({ allowed = { "fs_write" } })
local ok, err = pcall(tool.call, "fs_write", { path = "linked.txt", content = "changed" })
return std.json.encode({ r = ok and "wrote" or ("refused: " .. tostring(err)) })`,
      });
      try {
        Deno.linkSync(target, join(project, "linked.txt"));
      } catch (e) {
        console.warn(`skipped: no hard link from ${project} to ${outside} here (${(e as Error).message})`);
        return;
      }
      const r = await sandboxedRun(project, "t.lua");
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.value.r, /^refused: .*hard links/, r.value.r);
      assert.equal(Deno.readTextFileSync(target), "original\n");
    } finally {
      Deno.removeSync(outside, { recursive: true });
    }
  },
});

Deno.test({
  name: "attack: sandbox a confined run plants serve's token in a home that has none",
  ignore: SKIP !== undefined,
  ...opts,
  fn: async () => {
    const home = await tempDir("ab_sbx_home_");
    const project = await tempProject({ "w.lua": WRITES });
    const token = join(home, "serve.token");
    const r = await sandboxedRun(project, "w.lua", {
      env: testEnv({ AGENT_BLOCK_HOME: home }),
      prompt: JSON.stringify([{ name: "token", path: token, text: "attacker-token\n" }]),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.value.token, /^denied: .*Read-only file system/, r.value.token);
    // the token the launcher minted, as serve mints it: 64 hex digits, mode 0600
    assert.match(Deno.readTextFileSync(token), /^[0-9a-f]{64}\n$/);
    assert.equal(Deno.statSync(token).mode! & 0o777, 0o600);
  },
});

for (const path of PATHS) {
  Deno.test({
    name:
      `attack: sandbox a confined run creates serve's record, or a -wal or -journal beside one not open (${path.name})`,
    ignore: path.skip !== undefined,
    ...opts,
    fn: async () => {
      for (const existing of [false, true]) {
        const home = await tempDir("ab_sbx_home_");
        const project = await tempProject({ "w.lua": WRITES });
        try {
          if (existing) {
            // a record a manager left: WAL mode, closed (so no -wal or -shm beside it)
            const rec = new ServeRecord(join(home, "serve.sqlite"), { project, pid: Deno.pid });
            rec.close();
            assert.throws(() => Deno.statSync(join(home, "serve.sqlite-wal")), Deno.errors.NotFound);
          }
          const before = existing ? Deno.readFileSync(join(home, "serve.sqlite")) : undefined;
          const names = ["serve.sqlite", "serve.sqlite-wal", "serve.sqlite-shm", "serve.sqlite-journal"];
          const r = await sandboxedRun(project, "w.lua", {
            env: testEnv({ AGENT_BLOCK_HOME: home, ...path.env }),
            prompt: JSON.stringify(names.map((n) => ({ name: n, path: join(home, n), text: "planted" }))),
          });
          assert.equal(r.code, 0, r.stderr);
          for (const n of names) {
            assert.match(r.value[n], /^denied: .*Read-only file system/, `${n}: ${r.value[n]}`);
            if (n !== "serve.sqlite" || !existing) assert.equal(Deno.statSync(join(home, n)).size, 0, n);
          }
          if (before) assert.deepEqual(Deno.readFileSync(join(home, "serve.sqlite")), before);
          // a manager started later opens it as its own
          const rec = new ServeRecord(join(home, "serve.sqlite"), { project, pid: Deno.pid });
          rec.close();
        } finally {
          Deno.removeSync(home, { recursive: true });
          Deno.removeSync(project, { recursive: true });
        }
      }
    },
  });
}

Deno.test({
  name: "attack: sandbox a sandboxed serve job rewrites its job.toml and plants an unsandboxed job",
  ignore: SKIP !== undefined,
  ...opts,
  fn: async () => {
    const outside = outsideDir();
    const root = await tempDir("ab_sbx_serve_");
    const home = await tempDir("ab_sbx_serve_home_");
    const evil = `local f = io.open(${JSON.stringify(join(outside, "evil.txt"))}, "w")
if f then f:write("x"); f:close(); return "escaped" end
return "confined"`;
    const plant = `local function put(path, text)
  local f = assert(io.open(path, "w")); f:write(text); f:close()
end
put(${JSON.stringify(join(root, "blocks/guard/job.toml"))}, "sandbox = false\\n")
os.execute("mkdir -p " .. ${JSON.stringify(join(root, "blocks/evil"))})
put(${JSON.stringify(join(root, "blocks/evil/init.lua"))}, ${JSON.stringify(evil)})
put(${JSON.stringify(join(root, "blocks/evil/job.toml"))}, "")
return "planted"`;
    Deno.mkdirSync(join(root, "blocks/guard"), { recursive: true });
    Deno.writeTextFileSync(join(root, "blocks/guard/init.lua"), plant);
    Deno.writeTextFileSync(join(root, "blocks/guard/job.toml"), "sandbox = true\n");
    try {
      let m = await startManager(root, home);
      try {
        const first = await m.api("/jobs/guard/runs", { method: "POST" });
        assert.equal(first.status, 202, JSON.stringify(first.body));
        const run = await waitForRun(m, first.body.run_id, "ended");
        assert.equal(run.sandboxed, true);
        assert.equal(run.state, "ok", JSON.stringify(run));
        assert.equal(Deno.readTextFileSync(join(root, "blocks/guard/job.toml")), "sandbox = false\n");
        await waitFor(
          async () => (await m.api("/jobs")).body.jobs?.some((j: { name: string }) => j.name === "evil"),
          {
            what: "the planted job to be seen",
          },
        );
        for (const job of ["evil", "guard"]) {
          const r = await m.api(`/jobs/${job}/runs`, { method: "POST" });
          assert.equal(r.status, 202, JSON.stringify(r.body));
          const later = await waitForRun(m, r.body.run_id, "ended");
          assert.equal(later.sandboxed, true, `${job} ran unconfined: ${JSON.stringify(later)}`);
        }
        assert.equal(pathExists(join(outside, "evil.txt")), false, "the planted job wrote outside");
      } finally {
        await m.stop();
      }
      // the next manager of the project: the record says it was sandboxed
      m = await startManager(root, home);
      try {
        const r = await m.api("/jobs/evil/runs", { method: "POST" });
        assert.equal(r.status, 202, JSON.stringify(r.body));
        const run = await waitForRun(m, r.body.run_id, "ended");
        assert.equal(run.sandboxed, true, `the next manager ran it unconfined: ${JSON.stringify(run)}`);
        assert.equal(pathExists(join(outside, "evil.txt")), false, "the planted job wrote outside");
      } finally {
        await m.stop();
      }
    } finally {
      Deno.removeSync(outside, { recursive: true });
    }
  },
});
