/**
 * New repositories in the grants (issue 25: "only one `.git` is protected"): a confined run makes
 * or rewires a git repository in the project, configured to run a command (`core.fsmonitor`,
 * `core.pager`, a hook), so that the user's next `git status` or `git log` there, outside the
 * sandbox, runs it. The launcher sweeps the grants once the run has ended (`git_sweep.ts`): every
 * such repository is renamed aside before the run's process exits, the stderr names it, and git
 * afterwards runs nothing the run planted. Forms tried: a new `.git` directory, a `.git` file
 * (`gitdir:` into `/tmp`), a symlink named `.git`, a new `.git` at the root of a project inside a
 * larger checkout (it would shadow the outer repository), an existing nested repository moved,
 * one whose config is appended to in place, a bare-repository layout, and a run killed outright
 * with a daemon left to plant after it. On the root path and the user-namespace path.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, tempDir, testEnv } from "../helpers.ts";
import { outsideDir, SKIP } from "./support.ts";
import { userNamespaceHop } from "../../src/sandbox/mount_ns.ts";

const noHop = SKIP ?? (() => {
  const hop = userNamespaceHop();
  return "why" in hop ? hop.why : undefined;
})();
if (SKIP) console.warn(`git_sweep_attack_test: skipped: ${SKIP}`);

const PATHS = [
  { name: "root path", env: {} as Record<string, string>, skip: SKIP },
  { name: "user-namespace path", env: { AGENT_BLOCK_SANDBOX_TEST_USERNS: "1" }, skip: noHop },
];

function git(args: string[], cwd: string): { code: number; out: string } {
  const r = new Deno.Command("git", {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { GIT_PAGER: "", PAGER: "" },
  }).outputSync();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

/** Runs `lua` (its `_PROMPT` is `prompt`) sandboxed in `project`. */
async function run(project: string, lua: string, prompt: string, env: Record<string, string>) {
  Deno.writeTextFileSync(join(project, "plant.lua"), lua);
  return await runCli(["--sandbox", "-s", "plant.lua", "-p", project, "--prompt", prompt], {
    cwd: project,
    env: testEnv({ AGENT_BLOCK_HOME: join(project, "home"), ...env }),
  });
}

/** The outside marker's path a planted command would touch. */
const pwned = (outside: string, name: string) => join(outside, `pwned-${name}`);

/** Lua: each line of the plan runs as a shell command, in order; the outputs. */
const SHELL = `local out = {}
for line in _PROMPT:gmatch("[^\\n]+") do
  local r = sh.exec(line)
  out[#out + 1] = line .. " -> " .. tostring(r.code) .. " " .. (r.stderr or "")
end
return table.concat(out, "\\n")`;

for (const path of PATHS) {
  Deno.test({
    name: `attack: sandbox a new repository anywhere in the project runs nothing outside (${path.name})`,
    ignore: path.skip !== undefined,
    fn: async () => {
      const project = await tempDir("ab_sbx_sweep_");
      const outside = outsideDir();
      try {
        // before the run: a vendored repository left alone, and one the run moves into place
        for (const d of ["vendor/kept", "vendor/moved", "vendor/appended"]) {
          Deno.mkdirSync(join(project, d), { recursive: true });
          assert.equal(git(["init", "-q"], join(project, d)).code, 0);
        }
        // the run's start falls in a later second than these (the sweep's grain is the second)
        await new Promise((r) => setTimeout(r, 1100));
        const fsmon = (name: string) => `git config core.fsmonitor 'touch ${pwned(outside, name)}'`;
        const gitdir = join(await tempDir("ab_sbx_sweep_gitdir_"), "g");
        const plan = [
          // a new .git directory
          `mkdir -p ${project}/a && cd ${project}/a && git init -q && ${fsmon("dir")}`,
          // a .git file pointing into /tmp
          `git init -q --bare ${gitdir} && git --git-dir=${gitdir} config core.bare false && ` +
          `git --git-dir=${gitdir} config core.fsmonitor 'touch ${pwned(outside, "file")}' && ` +
          `mkdir -p ${project}/b && printf 'gitdir: ${gitdir}\\n' > ${project}/b/.git`,
          // a symlink named .git
          `mkdir -p ${project}/c && ln -s ${gitdir} ${project}/c/.git`,
          // an existing repository moved to a new place, then configured
          `mkdir -p ${project}/d && mv ${project}/vendor/moved/.git ${project}/d/.git && cd ${project}/d && ${
            fsmon("moved")
          }`,
          // an existing repository's config appended to in place (no lock file, no rename)
          `printf '[core]\\n\\tfsmonitor = touch ${
            pwned(outside, "appended")
          }\\n' >> ${project}/vendor/appended/.git/config`,
          // in a directory made searchable only (git still finds it by name), and in a read-only one
          `mkdir -p ${project}/f/inner && cd ${project}/f/inner && git init -q && ${
            fsmon("hidden")
          } && chmod 0311 ${project}/f`,
          `mkdir -p ${project}/g && cd ${project}/g && git init -q && ${
            fsmon("readonly")
          } && chmod 0555 ${project}/g`,
          // a bare layout git takes for a repository when started inside it
          `git init -q --bare ${project}/e && git --git-dir=${project}/e config core.pager 'touch ${
            pwned(outside, "bare")
          }; cat'`,
        ].join("\n");
        const r = await run(project, SHELL, plan, path.env);
        assert.equal(r.code, 0, r.stderr);
        const planted = [
          "a/.git",
          "b/.git",
          "c/.git",
          "d/.git",
          "vendor/appended/.git",
          "e/HEAD",
          "f/inner/.git",
          "g/.git",
        ];
        for (const p of planted) {
          assert.match(
            r.stderr,
            new RegExp(`quarantined ${join(project, p).replaceAll("/", "\\/")} as `),
            r.stderr,
          );
          assert.throws(() => Deno.lstatSync(join(project, p)), Deno.errors.NotFound, p);
          const aside = [...Deno.readDirSync(join(project, p, ".."))].filter((e) =>
            e.name.startsWith(p.split("/").at(-1)! + ".agent-block-quarantined-")
          );
          assert.equal(aside.length, 1, `${p} is kept aside, not deleted`);
        }
        // the repository the run did not touch is left as it was
        assert.doesNotMatch(r.stderr, /vendor\/kept/);
        assert.ok(Deno.statSync(join(project, "vendor/kept/.git")).isDirectory);
        // outside, git runs nothing the run planted
        for (const d of ["a", "b", "c", "d", "vendor/appended", "f/inner", "g"]) {
          git(["status"], join(project, d));
        }
        git(["-c", "core.pager=", "log"], join(project, "e"));
        git(["log"], join(project, "e"));
        for (const name of ["dir", "file", "moved", "appended", "bare", "hidden", "readonly"]) {
          assert.throws(() => Deno.statSync(pwned(outside, name)), Deno.errors.NotFound, name);
        }
        // and what was planted was real: renamed back, the first repository runs its command
        const aside = [...Deno.readDirSync(join(project, "a"))].find((e) => e.name.startsWith(".git."))!;
        // the directory aside is no repository either, even to git started inside it
        const inside = git(["rev-parse", "--git-dir"], join(project, "a", aside.name));
        assert.notEqual(inside.code, 0, inside.out);
        Deno.renameSync(join(project, "a", aside.name), join(project, "a", ".git"));
        const head = [...Deno.readDirSync(join(project, "a", ".git"))].find((e) =>
          e.name.startsWith("HEAD.")
        )!;
        Deno.renameSync(join(project, "a", ".git", head.name), join(project, "a", ".git", "HEAD"));
        git(["status"], join(project, "a"));
        assert.ok(
          Deno.statSync(pwned(outside, "dir")).isFile,
          "the planted core.fsmonitor runs once renamed back",
        );
      } finally {
        await Deno.remove(project, { recursive: true });
        await Deno.remove(outside, { recursive: true });
      }
    },
  });

  Deno.test({
    name:
      `attack: sandbox a new .git at the root of a project inside a larger checkout does not shadow it (${path.name})`,
    ignore: path.skip !== undefined,
    fn: async () => {
      const outer = await tempDir("ab_sbx_sweep_outer_");
      const outside = outsideDir();
      try {
        assert.equal(git(["init", "-q"], outer).code, 0);
        const project = join(outer, "proj");
        Deno.mkdirSync(project);
        const plan = `cd ${project} && git init -q && git config core.fsmonitor 'touch ${
          pwned(outside, "root")
        }'`;
        const r = await run(project, SHELL, plan, path.env);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, new RegExp(`quarantined ${join(project, ".git")} as `));
        const st = git(["rev-parse", "--show-toplevel"], project);
        assert.equal(st.out.trim(), Deno.realPathSync(outer), "git finds the outer repository again");
        git(["status"], project);
        assert.throws(() => Deno.statSync(pwned(outside, "root")), Deno.errors.NotFound);
      } finally {
        await Deno.remove(outer, { recursive: true });
        await Deno.remove(outside, { recursive: true });
      }
    },
  });

  Deno.test({
    name:
      `attack: sandbox a repository planted between /tmp and a project in it, or in the checkout enclosing it, runs nothing outside (${path.name})`,
    ignore: path.skip !== undefined,
    fn: async () => {
      // /tmp is a grant swept by name only; the project sits two levels below it, in no repository
      const top = Deno.makeTempDirSync({ dir: "/tmp", prefix: "ab_sbx_between_" });
      const checkout = Deno.makeTempDirSync({ dir: "/tmp", prefix: "ab_sbx_enclosing_" });
      const outside = outsideDir();
      try {
        const project = join(top, "mid", "proj");
        Deno.mkdirSync(project, { recursive: true });
        const r = await run(
          project,
          SHELL,
          `cd ${top}/mid && git init -q && git config core.fsmonitor 'touch ${pwned(outside, "between")}'`,
          path.env,
        );
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, new RegExp(`quarantined ${join(top, "mid", ".git")} as `));
        git(["status"], project);
        assert.throws(() => Deno.statSync(pwned(outside, "between")), Deno.errors.NotFound);

        // a project inside a checkout whose repository is in /tmp: that repository is read-only to
        // the run (as the project's own is), and left where it is
        assert.equal(git(["init", "-q"], checkout).code, 0);
        const inner = join(checkout, "proj");
        Deno.mkdirSync(inner);
        const r2 = await run(
          inner,
          SHELL,
          `git -C ${checkout} config core.fsmonitor 'touch ${pwned(outside, "enclosing")}'`,
          path.env,
        );
        assert.equal(r2.code, 0, r2.stderr);
        const set = git(["config", "--get", "core.fsmonitor"], checkout);
        assert.notEqual(set.code, 0, `the enclosing repository's config was writable: ${set.out}`);
        assert.doesNotMatch(r2.stderr, /quarantined/);
        assert.equal(git(["rev-parse", "--show-toplevel"], inner).out.trim(), Deno.realPathSync(checkout));
        git(["status"], inner);
        assert.throws(() => Deno.statSync(pwned(outside, "enclosing")), Deno.errors.NotFound);
      } finally {
        await Deno.remove(top, { recursive: true });
        await Deno.remove(checkout, { recursive: true });
        await Deno.remove(outside, { recursive: true });
      }
    },
  });
}

Deno.test({
  name:
    "attack: sandbox a run killed outright, with a daemon left to plant a repository after it, is still swept",
  ignore: SKIP !== undefined,
  fn: async () => {
    const project = await tempDir("ab_sbx_sweep_kill_");
    const outside = outsideDir();
    try {
      const plan = [
        `mkdir -p ${project}/a && cd ${project}/a && git init -q && git config core.fsmonitor 'touch ${
          pwned(outside, "killed")
        }'`,
        // detached, environment cleared: planted after the runtime is gone
        `setsid env -i /bin/sh -c 'sleep 2; mkdir -p ${project}/late && cd ${project}/late && git init -q' ` +
        `>/dev/null 2>&1 < /dev/null &`,
        // the runtime (sh's parent) killed outright: it ends nothing, and says nothing
        `kill -KILL $PPID`,
      ].join("\n");
      const r = await run(project, SHELL, plan, {});
      assert.equal(r.code, 137, r.stderr);
      assert.match(r.stderr, new RegExp(`quarantined ${join(project, "a", ".git")} as `));
      git(["status"], join(project, "a"));
      assert.throws(() => Deno.statSync(pwned(outside, "killed")), Deno.errors.NotFound);
      // the daemon was ended with the run: nothing appears once its sleep is over
      await new Promise((res) => setTimeout(res, 3000));
      assert.throws(() => Deno.lstatSync(join(project, "late", ".git")), Deno.errors.NotFound);
    } finally {
      await Deno.remove(project, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "attack: sandbox a launcher killed outright before its sweep: the next confined run on the project sweeps for it",
  ignore: SKIP !== undefined,
  fn: async () => {
    const project = await tempDir("ab_sbx_sweep_launcher_");
    const outside = outsideDir();
    try {
      const plan = [
        `mkdir -p ${project}/a && cd ${project}/a && git init -q && git config core.fsmonitor 'touch ${
          pwned(outside, "launcher")
        }'`,
        // the launcher is the runtime's parent: killed outright, it sweeps nothing
        `kill -KILL $(awk '{print $4}' /proc/$PPID/stat)`,
      ].join("\n");
      const first = await run(project, SHELL, plan, {});
      assert.equal(first.code, 137, first.stderr);
      assert.doesNotMatch(first.stderr, /quarantined/);
      assert.ok(Deno.statSync(join(project, "a", ".git")).isDirectory, "nothing swept it yet");
      // the next confined run on the project (doing nothing) sweeps before it starts
      const second = await run(project, `return "ok"`, "", {});
      assert.equal(second.code, 0, second.stderr);
      assert.match(
        second.stderr,
        new RegExp(`quarantined ${join(project, "a", ".git")} as .*an earlier confined run`),
      );
      git(["status"], join(project, "a"));
      assert.throws(() => Deno.statSync(pwned(outside, "launcher")), Deno.errors.NotFound);
      // and only once: its note is gone
      const third = await run(project, `return "ok"`, "", {});
      assert.doesNotMatch(third.stderr, /quarantined/);
      assert.deepEqual(
        [...Deno.readDirSync(join(project, "home", "sandbox-sweeps"))].filter((e) =>
          Deno.statSync(join(project, "home", "sandbox-sweeps", e.name)).size > 0
        ),
        [],
      );
    } finally {
      await Deno.remove(project, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    }
  },
});
