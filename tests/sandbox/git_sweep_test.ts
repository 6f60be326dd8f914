/**
 * The repository sweep's rule on real directories (`src/sandbox/git_sweep.ts`), without a run:
 * what counts as changed (the times are set by `since`: 0 makes everything new, a time ahead makes
 * everything old), what is never walked, and the notes a killed launcher leaves.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import {
  between,
  identity,
  pendingSweeps,
  QUARANTINE_MARK,
  recordPending,
  runSweep,
  sweepDone,
  type SweepPlan,
  sweepRepositories,
  sweepWatched,
} from "../../src/sandbox/git_sweep.ts";

const LATER = Date.now() + 60_000; // nothing made so far changed "after" this
const names = (dir: string) => [...Deno.readDirSync(dir)].map((e) => e.name).sort();

function repo(dir: string): void {
  Deno.mkdirSync(join(dir, ".git", "objects", "ab"), { recursive: true });
  Deno.mkdirSync(join(dir, ".git", "refs", "heads"), { recursive: true });
  Deno.mkdirSync(join(dir, ".git", "hooks"), { recursive: true });
  Deno.writeTextFileSync(join(dir, ".git", "HEAD"), "ref: refs/heads/main\n");
  Deno.writeTextFileSync(join(dir, ".git", "config"), "[core]\n");
}

Deno.test("git sweep: a repository older than the run is kept; one of the run's is renamed aside, HEAD too", async () => {
  const root = await tempDir("ab_sweep_");
  try {
    repo(join(root, "a"));
    assert.deepEqual(sweepRepositories([root], LATER, "r1").quarantined, []);
    const r = sweepRepositories([root], 0, "r2");
    assert.deepEqual(r.quarantined, [{
      path: join(root, "a", ".git"),
      to: join(root, "a", `.git${QUARANTINE_MARK}r2`),
      kind: "repository",
    }]);
    assert.deepEqual(names(join(root, "a")), [`.git${QUARANTINE_MARK}r2`]);
    assert.ok(names(join(root, "a", `.git${QUARANTINE_MARK}r2`)).includes(`HEAD${QUARANTINE_MARK}r2`));
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("git sweep: a file changed inside an old repository counts, its objects do not", async () => {
  const root = await tempDir("ab_sweep_");
  try {
    repo(join(root, "a"));
    await new Promise((r) => setTimeout(r, 1100)); // the next second: the grain of the change time
    const since = Date.now();
    Deno.writeTextFileSync(join(root, "a", ".git", "objects", "ab", "cdef"), "blob");
    assert.deepEqual(sweepRepositories([root], since, "r").quarantined, [], "objects/ is data");
    Deno.writeTextFileSync(join(root, "a", ".git", "hooks", "post-checkout"), "#!/bin/sh\n", {
      append: true,
    });
    assert.equal(sweepRepositories([root], since, "r").quarantined.length, 1, "a hook is code");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("git sweep: skip, depth and symlinked directories are not walked; a bare layout loses its HEAD", async () => {
  const root = await tempDir("ab_sweep_");
  const elsewhere = await tempDir("ab_sweep_else_");
  try {
    repo(join(root, "own"));
    repo(join(root, "deep", "er"));
    repo(elsewhere);
    Deno.symlinkSync(elsewhere, join(root, "link"));
    Deno.mkdirSync(join(root, "bare", "objects"), { recursive: true });
    Deno.mkdirSync(join(root, "bare", "refs"));
    Deno.writeTextFileSync(join(root, "bare", "HEAD"), "ref: refs/heads/main\n");
    const top = sweepRepositories([root], 0, "t", [join(root, "own", ".git")], 0);
    assert.deepEqual(top.quarantined, [], "nothing at the root's own level");
    const r = sweepRepositories([root], 0, "w", [join(root, "own", ".git")]);
    assert.deepEqual(r.quarantined.map((q) => q.path).sort(), [
      join(root, "bare", "HEAD"),
      join(root, "deep", "er", ".git"),
    ]);
    assert.ok(Deno.statSync(join(elsewhere, ".git")).isDirectory, "a symlink is not followed");
    assert.ok(Deno.statSync(join(root, "own", ".git")).isDirectory, "skipped");
  } finally {
    Deno.removeSync(root, { recursive: true });
    Deno.removeSync(elsewhere, { recursive: true });
  }
});

Deno.test({
  name: "git sweep: a note of a launcher gone is swept once by the next launch on its project",
  ignore: Deno.build.os !== "linux", // a launcher is known by /proc/<pid>/stat
}, async () => {
  const root = await tempDir("ab_sweep_");
  const notes = await tempDir("ab_sweep_notes_");
  try {
    const plan: SweepPlan = { since: 0, roots: [root], topOnly: [], skip: [], runId: "k" };
    // this process's own note: its launcher (this process) lives, so it is left alone
    const mine = recordPending(notes, plan);
    assert.ok(mine);
    repo(join(root, "a"));
    assert.deepEqual(pendingSweeps(notes, plan).quarantined, []);
    // notes of processes gone (no pid is above the kernel's largest, 4194304)
    Deno.writeTextFileSync(join(notes, "4999999-1.json"), JSON.stringify(plan));
    Deno.writeTextFileSync(join(notes, "4999998-1.json"), JSON.stringify({ ...plan, roots: ["/elsewhere"] }));
    const r = pendingSweeps(notes, { ...plan, runId: "now" });
    assert.deepEqual(r.quarantined.map((q) => q.path), [join(root, "a", ".git")]);
    assert.ok(!names(notes).includes("4999999-1.json"), "done: removed");
    assert.ok(names(notes).includes("4999998-1.json"), "another project's: left for its next run");
    // a run's own note emptied once it swept: removed by the next launch as done
    sweepDone(mine);
    const own = names(notes).find((n) => n.startsWith(`${Deno.pid}-`))!;
    assert.equal(Deno.statSync(join(notes, own)).size, 0);
    assert.deepEqual(runSweep(plan).quarantined, []);
  } finally {
    Deno.removeSync(root, { recursive: true });
    Deno.removeSync(notes, { recursive: true });
  }
});

Deno.test("git sweep: a shared directory (/tmp) is checked by name only: its own .git and layout, nothing below", async () => {
  const root = await tempDir("ab_sweep_");
  try {
    repo(join(root, "below"));
    repo(root);
    const r = sweepRepositories([root], 0, "s", [], -1);
    assert.deepEqual(r.quarantined.map((q) => q.path), [join(root, ".git")]);
    assert.ok(Deno.statSync(join(root, "below", ".git")).isDirectory, "below is other programs'");
    Deno.mkdirSync(join(root, "objects"));
    Deno.mkdirSync(join(root, "refs"));
    Deno.writeTextFileSync(join(root, "HEAD"), "ref: refs/heads/main\n");
    assert.deepEqual(sweepRepositories([root], 0, "b", [], -1).quarantined.map((q) => q.path), [
      join(root, "HEAD"),
    ]);
    assert.equal(r.dirs, 0, "the directory itself is never listed");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("git sweep: .GIT counts as .git (a casefolded directory finds it so)", async () => {
  const root = await tempDir("ab_sweep_");
  try {
    Deno.mkdirSync(join(root, "a"));
    Deno.writeTextFileSync(join(root, "a", ".GIT"), "gitdir: /tmp/elsewhere\n");
    assert.deepEqual(sweepRepositories([root], 0, "c").quarantined.map((q) => q.path), [
      join(root, "a", ".GIT"),
    ]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("config sweep: a .env file or symlink the run made or changed anywhere is renamed aside; a .env directory (a venv) and one kept are not", async () => {
  const root = await tempDir("ab_sweep_env_");
  try {
    Deno.mkdirSync(join(root, "sub", "deeper"), { recursive: true });
    Deno.mkdirSync(join(root, "venv", ".env"), { recursive: true });
    Deno.writeTextFileSync(join(root, ".env"), "A=1\n");
    Deno.writeTextFileSync(join(root, "sub", "deeper", ".ENV"), "OPENAI_BASE_URL=http://x\n");
    Deno.symlinkSync("/nowhere/at/all", join(root, "sub", ".env"));
    assert.deepEqual(sweepRepositories([root], LATER, "old").quarantined, [], "older than the run: kept");
    const r = sweepRepositories([root], 0, "e", [join(root, ".env")]);
    assert.deepEqual(r.quarantined.map((q) => [q.path, q.kind]).sort(), [
      [join(root, "sub", ".env"), "config"],
      [join(root, "sub", "deeper", ".ENV"), "config"],
    ]);
    assert.deepEqual(names(join(root, "sub", "deeper")), [`.ENV${QUARANTINE_MARK}e`]);
    assert.ok(Deno.statSync(join(root, ".env")).isFile, "skipped (kept read-only for the run)");
    assert.ok(
      Deno.statSync(join(root, "venv", ".env")).isDirectory,
      "a directory named .env is no configuration",
    );
    // /tmp's own .env is checked by name too
    const top = sweepRepositories([root], 0, "t", [], -1);
    assert.deepEqual(top.quarantined.map((q) => q.path), [join(root, ".env")]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("config sweep: a watched place (absent at the start) is renamed aside once it resolves, whatever its times", async () => {
  const root = await tempDir("ab_sweep_watch_");
  try {
    const lib = join(root, "home", "lib");
    Deno.mkdirSync(join(root, "home"));
    Deno.symlinkSync(join(root, "target"), lib); // a symlink to nothing: no mount could cover it
    const env = join(root, ".env");
    assert.deepEqual(sweepWatched([lib, env], "w0"), { quarantined: [], failed: [], dirs: 0 });
    Deno.mkdirSync(join(root, "target"));
    Deno.writeTextFileSync(join(root, "target", "planted.lua"), "return 1\n");
    Deno.writeTextFileSync(env, "ANTHROPIC_BASE_URL=http://127.0.0.1:9\n");
    const r = sweepWatched([lib, env], "w1");
    assert.deepEqual(r.quarantined, [
      { path: lib, to: `${lib}${QUARANTINE_MARK}w1`, kind: "config" },
      { path: env, to: `${env}${QUARANTINE_MARK}w1`, kind: "config" },
    ]);
    assert.ok(Deno.lstatSync(`${lib}${QUARANTINE_MARK}w1`).isSymlink, "the entry itself, not its target");
    assert.ok(Deno.statSync(join(root, "target", "planted.lua")).isFile, "nothing deleted");
    // a second quarantine of the same name in the same run is numbered, never over the first
    Deno.writeTextFileSync(env, "X=1\n");
    assert.equal(sweepWatched([env], "w1").quarantined[0].to, `${env}${QUARANTINE_MARK}w1-2`);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test({
  name:
    "config sweep: a killed launcher's note: its watched places are taken only where this launch would watch them",
  ignore: Deno.build.os !== "linux",
}, async () => {
  const root = await tempDir("ab_sweep_");
  const notes = await tempDir("ab_sweep_notes_");
  try {
    const env = join(root, ".env");
    const other = join(root, "elsewhere.txt");
    const plan: SweepPlan = {
      since: Date.now() + 60_000, // nothing is newer: only the watch can quarantine
      roots: [root],
      topOnly: [],
      skip: [],
      runId: "n",
      watch: [env, other],
      keep: [env],
    };
    Deno.writeTextFileSync(env, "A=1\n");
    Deno.writeTextFileSync(other, "mine\n");
    Deno.writeTextFileSync(join(notes, "4999999-1.json"), JSON.stringify(plan));
    const r = pendingSweeps(notes, { ...plan, watch: [], keep: [], runId: "now" }, [env]);
    assert.deepEqual(
      r.quarantined.map((q) => q.path),
      [env],
      "a note's keep is not read; its watch only as candidates",
    );
    assert.ok(Deno.statSync(other).isFile, "a place no launch would watch is left alone");
  } finally {
    Deno.removeSync(root, { recursive: true });
    Deno.removeSync(notes, { recursive: true });
  }
});

Deno.test("between: the directories from a shared grant down to each root inside it, nearest the grant first", () => {
  assert.deepEqual(between(["/tmp"], ["/tmp/a/b/proj", "/tmp/a/home", "/srv/x"]), ["/tmp/a", "/tmp/a/b"]);
  assert.deepEqual(between(["/tmp"], ["/tmp/proj"]), []); // directly inside: /tmp itself is checked
  assert.deepEqual(between(["/tmp"], ["/tmpfoo/proj"]), []); // a name that only starts alike
  assert.deepEqual(between([], ["/tmp/a/proj"]), []);
});

Deno.test("held paths: one replaced under its name is checked as new, a replaced configuration place is quarantined", async () => {
  const root = Deno.realPathSync(await tempDir());
  const home = join(root, "home");
  const lib = join(home, "lib");
  const env = join(root, ".env");
  Deno.mkdirSync(lib, { recursive: true });
  Deno.writeTextFileSync(env, "A=1\n");
  const held = [{ path: home }, { path: lib, config: true }, { path: env, config: true }].map((h) => ({
    ...h,
    id: identity(h.path)!,
  }));
  const plan: SweepPlan = {
    since: LATER,
    roots: [root],
    topOnly: [],
    skip: [],
    runId: "h",
    keep: [lib, env],
    held,
  };
  // nothing replaced: kept by name, nothing said
  assert.deepEqual(runSweep(plan), { quarantined: [], failed: [], dirs: 2 }); // lib/ not read
  // the home renamed away and another made in its place, with a lib/ of its own
  Deno.renameSync(home, join(root, "home.orig"));
  Deno.mkdirSync(lib, { recursive: true });
  const r = runSweep(plan);
  assert.deepEqual(r.replaced, [home, lib]);
  assert.deepEqual(r.quarantined.map((q) => q.path), [lib]);
  assert.ok(
    Deno.statSync(join(root, "home.orig", "lib")).isDirectory,
    "the original is left where the run put it",
  );
});
