/**
 * The flow runs' locks under `--sandbox`: a run recorded `running` is `interrupted` once no
 * process holds its lock (`flows/run_lock.ts`), so a confined run that could create or hold a
 * lock would make a dead run look live and keep `flow resume`/`rerun` refused. The locks live in
 * the home's `flow-locks/`, which the launcher mounts read-only, and a lock file has mode 0200
 * (the confined run holds no capability to read past it). A confined block — the shape of a
 * sandboxed flow step — tries every way to a descriptor it could `flock` (open for reading, for
 * writing, `chmod`, util-linux `flock`) and to plant a lock of its own; every attempt fails and
 * the live run's lock stays held by its own process only.
 *
 * `serve`'s manager locks (`serve/manager_lock.ts`, in `serve-locks/`) get the same treatment
 * and the same attack: a confined run holding one after its manager died would keep every later
 * manager of the project from starting.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathExists, tempDir, waitUnlocked, writeTree } from "../helpers.ts";
import { sandboxedRun, sandboxEnv, SKIP } from "./support.ts";
import { userNamespaceHop } from "../../src/sandbox/mount_ns.ts";
import { EventStore } from "../../src/knl/store.ts";
import { runLockPath, takeRunLock } from "../../src/flows/run_lock.ts";
import { flowLocksDir, serveLocksDir } from "../../src/home.ts";
import { lockPath as managerLockPath, ManagerLock } from "../../src/serve/manager_lock.ts";
import { lockIsHeld } from "../../src/util/file_lock.ts";

if (SKIP) console.warn(`flow_lock_attack_test: skipped: ${SKIP}`);
const noHop = SKIP ?? (() => {
  const hop = userNamespaceHop();
  return "why" in hop ? hop.why : undefined;
})();

const GRAB = `
local p = std.json.decode(_PROMPT)
local out = {}
local function try(what, f) local ok, err = f(); out[#out + 1] = what .. ": " .. (ok and "DONE" or tostring(err)) end
local function open(path, mode) return function()
  local f, e = io.open(path, mode); if not f then return false, e end; f:close(); return true
end end
try("read", open(p.lock, "r"))
try("write", open(p.lock, "a"))
try("plant", open(p.dir .. "/ffffffffffffffffffffffffffffffff.lock", "w"))
try("remove", function() return os.remove(p.lock) end)
for _, cmd in ipairs({ "chmod 600 ", "flock -n " }) do
  local r = sh.exec(cmd .. p.lock .. (cmd:match("flock") and " true" or "") .. " 2>&1")
  out[#out + 1] = cmd:match("%S+") .. ": " .. (r.code == 0 and "DONE" or ("exit " .. tostring(r.code) .. " " .. r.stdout))
end
return std.json.encode({ said = table.concat(out, "\\n") })
`;

const PATHS = [
  { name: "root path", env: {} as Record<string, string>, skip: SKIP },
  { name: "user-namespace path", env: { AGENT_BLOCK_SANDBOX_TEST_USERNS: "1" }, skip: noHop },
];

for (const path of PATHS) {
  Deno.test({
    name: `attack: sandbox a confined run can neither hold nor plant a flow run's lock (${path.name})`,
    ignore: path.skip !== undefined,
    fn: async () => {
      const project = await tempDir("ab_sbx_flowlock_");
      writeTree(project, { "grab.lua": GRAB });
      const home = join(project, "home");
      const store = new EventStore(join(project, ".agent-block", "knl.sqlite"));
      const runId = "flow-live-0123456789ab";
      const lock = takeRunLock(home, store, runId);
      const lockPath = runLockPath(home, store, runId);
      try {
        const r = await sandboxedRun(project, "grab.lua", {
          env: sandboxEnv(project, path.env),
          prompt: JSON.stringify({ lock: lockPath, dir: flowLocksDir(home) }),
        });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, /agent-block config read-only/);
        const said = r.value.said;
        assert.doesNotMatch(said, /DONE/, said);
        assert.match(said, /^read: .*Permission denied$/m);
        assert.equal(said.match(/^(write|plant|remove): .*Read-only file system$/gm)?.length, 3, said);
        assert.match(said, /^chmod: exit [1-9]\d* .*Read-only file system/m);
        assert.match(said, /^flock: exit [1-9]\d* /m);
        assert.equal(pathExists(join(flowLocksDir(home), "ffffffffffffffffffffffffffffffff.lock")), false);
        assert.equal(Deno.statSync(lockPath).mode! & 0o777, 0o200, "the lock's mode is as it was");
        assert.equal(lockIsHeld(lockPath), true, "the live run still holds its lock");
      } finally {
        lock.release();
        store.close();
      }
      await waitUnlocked(lockPath, "nothing to hold the lock once its process lets go");
    },
  });
}

/**
 * A project with the grabbing block, and a manager lock file of it in its home as an earlier
 * version left it: readable (0600), with its holder's text inside.
 */
async function projectWithReadableManagerLock(prefix: string) {
  const project = await tempDir(prefix);
  writeTree(project, { "grab.lua": GRAB });
  const home = join(project, "home");
  const lockPath = managerLockPath(home, project);
  Deno.mkdirSync(serveLocksDir(home), { recursive: true, mode: 0o700 });
  Deno.writeTextFileSync(lockPath, '{"pid":1}\n', { mode: 0o600 });
  Deno.chmodSync(lockPath, 0o600);
  return { project, home, lockPath };
}

for (const path of PATHS) {
  Deno.test({
    name: `attack: sandbox a confined run can neither hold nor plant a serve manager's lock (${path.name})`,
    ignore: path.skip !== undefined,
    fn: async () => {
      const { project, home, lockPath } = await projectWithReadableManagerLock("ab_sbx_servelock_");
      const lock = ManagerLock.take(home, { pid: Deno.pid, project, session: "s", started_ms: 0 });
      try {
        assert.equal(Deno.statSync(lockPath).mode! & 0o777, 0o200, "a readable lock file is made unreadable");
        const r = await sandboxedRun(project, "grab.lua", {
          env: sandboxEnv(project, path.env),
          prompt: JSON.stringify({ lock: lockPath, dir: serveLocksDir(home) }),
        });
        assert.equal(r.code, 0, r.stderr);
        const said = r.value.said;
        assert.doesNotMatch(said, /DONE/, said);
        assert.match(said, /^read: .*Permission denied$/m);
        assert.equal(said.match(/^(write|plant|remove): .*Read-only file system$/gm)?.length, 3, said);
        assert.match(said, /^flock: exit [1-9]\d* /m);
        assert.equal(pathExists(join(serveLocksDir(home), "ffffffffffffffffffffffffffffffff.lock")), false);
        assert.equal(lockIsHeld(lockPath), true, "the manager still holds its lock");
        assert.throws(
          () => ManagerLock.take(home, { pid: 2, project, session: "t", started_ms: 0 }),
          new RegExp(`the manager with pid ${Deno.pid} already serves project`),
        );
      } finally {
        lock.release();
      }
      await waitUnlocked(lockPath, "nothing to hold the lock once the manager lets go");
    },
  });
}

Deno.test({
  name: "attack: sandbox a manager lock an earlier version left readable is not held from inside",
  ignore: SKIP !== undefined,
  fn: async () => {
    // No manager runs: the launcher makes the old, readable lock file unreadable before the run.
    const { project, home, lockPath } = await projectWithReadableManagerLock("ab_sbx_oldlock_");
    const r = await sandboxedRun(project, "grab.lua", {
      env: sandboxEnv(project, {}),
      prompt: JSON.stringify({ lock: lockPath, dir: serveLocksDir(home) }),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.value.said, /DONE/, r.value.said);
    assert.equal(Deno.statSync(lockPath).mode! & 0o777, 0o200);
  },
});
