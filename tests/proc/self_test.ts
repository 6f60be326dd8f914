/**
 * `src/proc/self.ts`: how agent-block starts itself, from source and from a compiled binary, and
 * that the source-mode command really runs this program when started through a process group.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { selfCommand, selfLaunch, sourceCli } from "../../src/proc/self.ts";
import { ProcessGroups } from "../../src/proc/group.ts";
import { REPO_ROOT, testEnv } from "../helpers.ts";
import { VERSION } from "../../src/version.ts";

Deno.test("self: from source, deno runs cli.ts with the repository's config and run lockfile, node_modules as it is", () => {
  const url = new URL("../../src/proc/self.ts", import.meta.url).href;
  const l = selfLaunch("/opt/deno/bin/deno", url);
  assert.equal(l.mode, "source");
  assert.deepEqual(l.prefix, [
    "/opt/deno/bin/deno",
    "run",
    "-A",
    "--quiet",
    "--node-modules-dir=manual",
    "--config",
    join(REPO_ROOT, "deno.json"),
    `--lock=${join(REPO_ROOT, "deno.run.lock")}`,
    join(REPO_ROOT, "cli.ts"),
  ]);
  assert.equal(sourceCli(), join(REPO_ROOT, "cli.ts"));
  // No deno.json beside cli.ts: no --config.
  const bare = selfLaunch("/usr/bin/deno", "file:///nowhere/src/proc/self.ts");
  assert.deepEqual(bare.prefix, [
    "/usr/bin/deno",
    "run",
    "-A",
    "--quiet",
    "--node-modules-dir=manual",
    "/nowhere/cli.ts",
  ]);
  // The module's URL is percent-encoded; the command names the path it stands for.
  const spaced = selfLaunch("/usr/bin/deno", "file:///no%20where/%C3%A9t%C3%A9%23/src/proc/self.ts");
  assert.deepEqual(spaced.prefix, [
    "/usr/bin/deno",
    "run",
    "-A",
    "--quiet",
    "--node-modules-dir=manual",
    "/no where/été#/cli.ts",
  ]);
});

Deno.test("self: a compiled binary runs itself", () => {
  const a = selfLaunch("/usr/local/bin/agent-block", "file:///tmp/deno-compile-agent-block/src/proc/self.ts");
  assert.deepEqual(a, { mode: "compiled", prefix: ["/usr/local/bin/agent-block"] });
  // Even when the binary's embedded files look like a source tree, the executable decides.
  const b = selfLaunch("/home/u/bin/ab", new URL("../../src/proc/self.ts", import.meta.url).href);
  assert.equal(b.mode, "compiled");
  // A binary that happens to be called deno but runs from the compiled file system.
  const c = selfLaunch("/x/deno", "file:///tmp/deno-compile-deno/src/proc/self.ts");
  assert.equal(c.mode, "compiled");
  assert.deepEqual(selfCommand(["-s", "x.lua"], a), ["/usr/local/bin/agent-block", "-s", "x.lua"]);
});

Deno.test({
  name: "self: the source command starts agent-block through a process group",
  sanitizeResources: false,
  fn: async () => {
    const procs = new ProcessGroups(1000, testEnv());
    const cwd = await Deno.makeTempDir({ prefix: "ab_self_" });
    const p = procs.spawn({ cmd: selfCommand(["--version"]), cwd, stdout: "piped", stderr: "piped" });
    const [status, out] = await Promise.all([
      p.status,
      new Response(p.child.stdout).text(),
      p.child.stderr.cancel(),
    ]);
    assert.equal(status.code, 0);
    assert.equal(out.split("\n")[0], `agent-block ${VERSION}`);
    await procs.endAll();
  },
});
