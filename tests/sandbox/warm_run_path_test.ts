/**
 * The confined runtime reads Deno's caches but cannot write them, so the launcher warms them from
 * outside when a checkout's run path was never loaded unconfined (`src/proc/warm_run_path.ts`).
 * A copy of this checkout at a path Deno has never cached (its sources, its lockfiles, its laid
 * out `node_modules`) is run with `--sandbox` only: the first launch warms the cache (the run
 * path's cached form appears, dated after its source), the second finds it warm and does not
 * warm again (the cached form keeps its date). Also the layout the check relies on
 * (`<DENO_DIR>/gen/file/<path>.js`, Deno 2.9.6), and where Deno's directory is.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir, testEnv } from "../helpers.ts";
import { SKIP } from "./support.ts";
import { cachedFormOf, denoDir, runPathWarm } from "../../src/proc/warm_run_path.ts";
import { selfLaunch } from "../../src/proc/self.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("warm run path: Deno's directory by its rules", () => {
  assert.equal(denoDir({ DENO_DIR: "/d", HOME: "/h" }), "/d");
  if (Deno.build.os === "linux") {
    assert.equal(denoDir({ XDG_CACHE_HOME: "/x", HOME: "/h" }), "/x/deno");
    assert.equal(denoDir({ HOME: "/h" }), "/h/.cache/deno");
  }
  assert.equal(denoDir({}), undefined);
});

Deno.test({
  name: "warm run path: a checkout used only with --sandbox is warmed once, from outside",
  ignore: SKIP !== undefined,
  fn: async () => {
    const copy = await tempDir("ab_warm_checkout_");
    const project = await tempDir("ab_warm_project_");
    try {
      for (const f of ["cli.ts", "deno.json", "deno.lock", "deno.run.lock"]) {
        Deno.copyFileSync(join(ROOT, f), join(copy, f));
      }
      for (const d of ["src", "embedded"]) {
        const r = new Deno.Command("cp", { args: ["-r", join(ROOT, d), join(copy, d)] }).outputSync();
        assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
      }
      Deno.symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
      Deno.writeTextFileSync(join(project, "hello.lua"), `print("hello")\n`);
      const env = testEnv({ AGENT_BLOCK_HOME: join(project, "home") });
      const launch = selfLaunch(Deno.execPath(), `file://${copy}/src/proc/self.ts`);
      assert.equal(launch.mode, "source");
      const processEnv = { ...Deno.env.toObject(), ...env };
      assert.equal(runPathWarm(launch, processEnv), false, "a path Deno never cached is cold");
      const run = () =>
        new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", "--quiet", join(copy, "cli.ts"), "--sandbox", "-s", "hello.lua"],
          cwd: project,
          env,
          stdout: "piped",
          stderr: "piped",
        }).output();
      const first = await run();
      const stderr = new TextDecoder().decode(first.stderr);
      assert.equal(first.code, 0, stderr);
      assert.equal(new TextDecoder().decode(first.stdout), "hello\n");
      assert.doesNotMatch(stderr, /could not warm/);
      assert.equal(runPathWarm(launch, processEnv), true, "warmed by the launcher");
      const cached = cachedFormOf(denoDir(processEnv)!, join(copy, "src/runtime/run.ts"));
      const dated = Deno.statSync(cached).mtime!.getTime();
      const second = await run();
      assert.equal(second.code, 0, new TextDecoder().decode(second.stderr));
      assert.equal(Deno.statSync(cached).mtime!.getTime(), dated, "not warmed again");
    } finally {
      await Deno.remove(copy, { recursive: true });
      await Deno.remove(project, { recursive: true });
    }
  },
});
