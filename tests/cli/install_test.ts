/**
 * `deno task install` (tools/install.ts): the launcher it writes into a temporary root runs blocks
 * from a temporary project outside the repository — one with a deno.json and package.json of its
 * own, which must not be picked up — with the checkout's frozen lockfile; a re-install replaces
 * its own launcher, and a file it did not write is left alone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertIncludes, REPO_ROOT, tempDir, tempProject, testEnv } from "../helpers.ts";
import { install, launcherText, MARKER, transientDeno } from "../../tools/install.ts";

const INSTALLER = join(REPO_ROOT, "tools", "install.ts");
const dec = new TextDecoder();

async function run(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const r = await new Deno.Command(cmd, {
    args,
    cwd: opts.cwd,
    env: opts.env,
    clearEnv: opts.env !== undefined,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: r.code, stdout: dec.decode(r.stdout), stderr: dec.decode(r.stderr) };
}

function installer(args: string[], cwd: string) {
  return run(Deno.execPath(), ["run", "-A", INSTALLER, ...args], { cwd, env: testEnv() });
}

Deno.test({
  name: "install: the installed agent-block runs a block in a project outside the repository",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const root = await tempDir("ab_install_root_");
    const elsewhere = await tempDir("ab_install_cwd_");
    const inst = await installer(["--root", root], elsewhere);
    assert.equal(inst.code, 0, inst.stderr);
    const bin = join(root, "bin");
    const launcher = join(bin, "agent-block");
    assertIncludes(inst.stdout, `installed ${launcher}`);
    assert.match(
      inst.stdout,
      /^agent-block \d+\.\d+\.\d+\ncommit none \(not a release build\)\nDeno \d+\.\d+\.\d+\nLua 5\.4$/m,
    );
    assert.equal(Deno.readTextFileSync(launcher), launcherText(Deno.execPath(), REPO_ROOT));

    const project = await tempProject({
      "blocks/greet.lua": `-- Greets whoever the prompt names.
return "hello, " .. _PROMPT .. " from " .. std.env.project_root()`,
      "lib/shout.lua": `return function(s) return s:upper() end`,
      "blocks/loud.lua": `return require("shout")(_PROMPT)`,
      // a project of its own kind: neither file may leak into the launcher's resolution
      "deno.json": `{ "imports": { "zod": "npm:zod@3.0.0" }, "lock": { "frozen": true } }`,
      "package.json": `{ "name": "someone-elses", "dependencies": { "left-pad": "1.0.0" } }`,
    }, "ab_install_project_");
    const env = testEnv({ PATH: `${bin}:${testEnv().PATH ?? ""}` });
    const greet = await run("agent-block", ["-b", "greet", "--prompt", "you", "--result", "out.txt"], {
      cwd: project,
      env,
    });
    assert.equal(greet.code, 0, greet.stderr);
    assert.equal(greet.stderr, "");
    assert.equal(
      Deno.readTextFileSync(join(project, "out.txt")),
      `hello, you from ${Deno.realPathSync(project)}`,
    );
    const loud = await run("agent-block", ["-b", "loud", "--prompt", "quiet", "--result", "loud.txt"], {
      cwd: project,
      env,
    });
    assert.equal(loud.code, 0, loud.stderr);
    assert.equal(Deno.readTextFileSync(join(project, "loud.txt")), "QUIET");
    // the launcher left nothing of Deno's in the project: no lockfile, no node_modules
    for (const name of ["deno.lock", "node_modules"]) {
      assert.throws(() => Deno.statSync(join(project, name)), Deno.errors.NotFound, name);
    }
    const version = await run("agent-block", ["--version"], { cwd: project, env });
    assert.equal(version.code, 0, version.stderr);
    assert.match(
      version.stdout,
      /^agent-block \d+\.\d+\.\d+\ncommit none \(not a release build\)\nDeno 2\.\d+\.\d+\nLua 5\.4\n$/,
    );
  },
});

Deno.test({
  name: "install: a re-install replaces its own launcher; a file it did not write needs --force",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const root = await tempDir("ab_install_root_");
    const cwd = await tempDir("ab_install_cwd_");
    const launcher = join(root, "bin", "ab");
    assert.equal((await installer(["--root", root, "--name", "ab"], cwd)).code, 0);
    const again = await installer(["--root", root, "--name", "ab"], cwd);
    assert.equal(again.code, 0, again.stderr);
    assertIncludes(Deno.readTextFileSync(launcher), MARKER);

    const mine = join(root, "bin", "mine");
    Deno.writeTextFileSync(mine, "#!/bin/sh\necho mine\n");
    const refused = await installer(["--root", root, "--name", "mine"], cwd);
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr,
      `error: ${mine} exists and was not written by this installer (pass --force to replace it)\n`,
    );
    assert.equal(Deno.readTextFileSync(mine), "#!/bin/sh\necho mine\n");
    const forced = await installer(["--root", root, "--name", "mine", "--force"], cwd);
    assert.equal(forced.code, 0, forced.stderr);
    assertIncludes(Deno.readTextFileSync(mine), MARKER);
  },
});

Deno.test("install: the launcher quotes paths for the shell and pins the checkout's config and lockfile", () => {
  const sh = launcherText("/opt/deno it's/deno", "/src/agent block", "linux");
  assert.equal(
    sh,
    `#!/bin/sh\n# ${MARKER} from /src/agent block (deno task install)\n` +
      `exec '/opt/deno it'\\''s/deno' 'run' '-A' '--quiet' '--config' '/src/agent block/deno.json' ` +
      `'--lock=/src/agent block/deno.run.lock' '--frozen' '/src/agent block/cli.ts' "$@"\n`,
  );
  const cmd = launcherText("C:\\deno\\deno.exe", "C:\\src\\ab", "windows");
  assertIncludes(cmd, `@"C:\\deno\\deno.exe" "run" "-A" "--quiet" "--config"`);
  assert.ok(cmd.endsWith(" %*\r\n"));
});

Deno.test({
  name:
    "install: run by a Deno from npx's cache, the launcher gets a Deno of its own that a cache clean leaves",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const root = await tempDir("ab_install_own_root_");
    // what `npx --yes deno@2.9.6 task install` runs: a deno under ~/.npm/_npx/<hash>/node_modules/
    const cache = await tempDir("ab_install_cache_");
    const npxDir = join(cache, ".npm", "_npx", "0f1e2d3c", "node_modules", "deno");
    Deno.mkdirSync(npxDir, { recursive: true });
    const npxDeno = join(npxDir, "deno");
    Deno.symlinkSync(Deno.execPath(), npxDeno);
    assert.ok(transientDeno(npxDeno));
    if (!Deno.execPath().includes("_npx")) assert.equal(transientDeno(Deno.execPath()), undefined);
    const done = await install({ root, name: "agent-block", force: false, deno: npxDeno });
    const own = join(root, "lib", "agent-block", "deno");
    const text = Deno.readTextFileSync(done.path);
    assert.equal(text, launcherText(own, REPO_ROOT));
    assert.ok(!text.includes("_npx"), "the launcher does not name the npx cache");
    assert.match(done.version, /^agent-block \d+\.\d+\.\d+/);
    // the cache is cleaned: the launcher still runs
    Deno.removeSync(join(cache, ".npm"), { recursive: true });
    const after = await run(done.path, ["--version"], { env: testEnv() });
    assert.equal(after.code, 0, after.stderr);
    assert.match(after.stdout, /^agent-block \d+\.\d+\.\d+/);
  },
});

Deno.test({
  name: "a run installs a run's npm packages only: the README's run command in a fresh copy of the checkout",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    // the checkout's tracked files, without node_modules: what a fresh clone has
    const copy = await tempDir("ab_fresh_clone_");
    const files = dec.decode(
      (await new Deno.Command("git", { args: ["ls-files", "-z"], cwd: REPO_ROOT, stdout: "piped" }).output())
        .stdout,
    ).split("\0").filter((f) => f !== "");
    for (const f of files) {
      Deno.mkdirSync(join(copy, f, ".."), { recursive: true });
      Deno.copyFileSync(join(REPO_ROOT, f), join(copy, f));
    }
    // packages come from this machine's cache (DENO_DIR): nothing is downloaded, only set up
    // the README's run command (`deno task` would install every package of deno.lock first: by design)
    const r = await run(Deno.execPath(), [
      "run",
      "-A",
      "--quiet",
      "--lock=deno.run.lock",
      "cli.ts",
      "--version",
    ], {
      cwd: copy,
      env: testEnv(),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^agent-block /);
    const runLock = JSON.parse(Deno.readTextFileSync(join(copy, "deno.run.lock")));
    const installed = [...Deno.readDirSync(join(copy, "node_modules", ".deno"))]
      .filter((e) => e.isDirectory && e.name !== "node_modules") // Deno's own hoisting directory
      .map((e) => e.name);
    assert.equal(installed.length, Object.keys(runLock.npm).length, installed.join(" "));
    for (
      const testOnly of [
        "playwright-core",
        "openai",
        "@anthropic-ai+sdk",
        "@modelcontextprotocol+server-everything",
      ]
    ) {
      assert.ok(!installed.some((p) => p.startsWith(testOnly + "@")), `${testOnly} is a test's, not a run's`);
    }
    const full = JSON.parse(Deno.readTextFileSync(join(copy, "deno.lock")));
    assert.ok(Object.keys(full.npm).length > installed.length, "deno.lock still pins the tests' packages");
  },
});
