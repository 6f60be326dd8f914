/**
 * Proof that a run is a value, not the process: two blocks running AT THE SAME TIME in one
 * process, with different environments and working directories, each see only their own.
 *
 * The two runs interleave through a file handshake in a shared directory: each sets a variable
 * with `std.env.set`, says so, and waits until the other has done the same before looking — so
 * each looks while the other's overlay is live. Then each checks its own variables
 * (`std.env.get`, `os.getenv`), that the other's variables and overlay are invisible, that its
 * shell children see its own overlay, and that relative writes (`io.open`, `std.fs.write`,
 * `std.json.write_file`) and `std.path.abs` land in its own working directory. Afterwards the
 * process environment is unchanged.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runLua, tempDir, testEnv } from "../helpers.ts";

const BLOCK = `
local me, other, shared = ME, OTHER, SHARED
local function mark(name) local f = assert(io.open(shared .. "/" .. name, "w")) f:write("1") f:close() end
local function await(name)
  for _ = 1, 2000 do
    if std.fs.exists(shared .. "/" .. name) then return end
    std.task.sleep(0.005)
  end
  error("the other run never wrote " .. name)
end

local seen = {}
seen.own_get = std.env.get("OWN")
seen.own_getenv = os.getenv("OWN")
seen.other_base = tostring(os.getenv("ONLY_" .. other))
std.env.set("SET_BY_" .. me, me .. "-overlay")
std.env.set("OWN", me .. "-changed")
mark(me .. "_set")
await(other .. "_set")
-- the other run has set its variables by now: none of them is visible here
seen.other_overlay = tostring(std.env.get("SET_BY_" .. other))
seen.own_overlay = std.env.get("SET_BY_" .. me)
seen.own_after_set = os.getenv("OWN")
local r = sh.exec('printf "%s|%s|%s" "$OWN" "$SET_BY_' .. me .. '" "$SET_BY_' .. other .. '"', { cwd = CWD })
seen.child = r.stdout
seen.child_pwd = sh.exec("pwd", { cwd = CWD }).stdout:gsub("\\n$", "")
seen.popen = io.popen("printf %s \\"$SET_BY_" .. me .. "\\"; printf '|'; pwd"):read("a"):gsub("\\n$", "")
local f = assert(io.open("io_" .. me .. ".txt", "w")) f:write(me) f:close()
std.fs.write("fs_" .. me .. ".txt", me)
std.json.write_file("json_" .. me .. ".json", { who = me })
seen.abs = std.path.abs("x")
seen.read_back = std.fs.read("fs_" .. me .. ".txt")
mark(me .. "_done")
await(other .. "_done")
return std.json.encode(seen)
`;

Deno.test("two runs at the same time in one process: own environment, own overlay, own cwd", async () => {
  const shared = await tempDir();
  const cwdA = await tempDir();
  const cwdB = await tempDir();
  const processBefore = Deno.env.toObject();
  const run = (me: string, other: string, cwd: string) =>
    runLua(BLOCK, {
      name: `${me}.lua`,
      cwd,
      env: testEnv({ OWN: `${me}-base`, [`ONLY_${me}`]: "mine" }),
      globals: { ME: me, OTHER: other, SHARED: shared, CWD: cwd },
    });
  const [a, b] = await Promise.all([run("A", "B", cwdA), run("B", "A", cwdB)]);
  for (const [me, other, r, cwd] of [["A", "B", a, cwdA], ["B", "A", b, cwdB]] as const) {
    assert.equal(r.outcome.status, "returned", `${me}: ${JSON.stringify(r.outcome)}\n${r.stderr}`);
    const seen = JSON.parse((r.outcome as { value: string }).value);
    assert.deepEqual(seen, {
      own_get: `${me}-base`,
      own_getenv: `${me}-base`,
      other_base: "nil",
      other_overlay: "nil",
      own_overlay: `${me}-overlay`,
      own_after_set: `${me}-changed`,
      child: `${me}-changed|${me}-overlay|`,
      child_pwd: cwd,
      popen: `${me}-overlay|${cwd}`,
      abs: join(cwd, "x"),
      read_back: me,
    }, `run ${me}`);
    // Relative writes landed in the run's own working directory, and only there.
    for (const f of [`io_${me}.txt`, `fs_${me}.txt`, `json_${me}.json`]) {
      assert.ok(Deno.statSync(join(cwd, f)).isFile, `${me}: ${f} in its own cwd`);
    }
    const otherCwd = me === "A" ? cwdB : cwdA;
    for (const f of [`io_${me}.txt`, `fs_${me}.txt`, `json_${me}.json`]) {
      assert.throws(
        () => Deno.statSync(join(otherCwd, f)),
        Deno.errors.NotFound,
        `${me}: ${f} not in ${other}'s cwd`,
      );
    }
  }
  // Neither run changed the process environment.
  assert.deepEqual(Deno.env.toObject(), processBefore);
  for (const k of ["SET_BY_A", "SET_BY_B", "OWN", "ONLY_A", "ONLY_B"]) {
    assert.equal(Deno.env.get(k), undefined);
  }
});
