/**
 * The read-only `.git` beyond the plain case of the escape suite: a linked worktree (its `.git`
 * is a `gitdir:` file; the hooks live in the main repository's `.git`, its `commondir`, here
 * under `/tmp`, which a sandboxed run may otherwise write), and the unprivileged path to the
 * mount (a user namespace through util-linux `unshare`), forced as root by the test seam
 * `AGENT_BLOCK_SANDBOX_TEST_USERNS=1`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, tempDir, testEnv } from "../helpers.ts";
import { gitProtectionMissing, SKIP } from "./support.ts";
import { userNamespaceHop } from "../../src/sandbox/mount_ns.ts";

const noHop = SKIP ?? (() => {
  const hop = userNamespaceHop();
  return "why" in hop ? hop.why : undefined;
})();
if (SKIP) console.warn(`git_readonly_attack_test: skipped: ${SKIP}`);
else if (noHop) console.warn(`git_readonly_attack_test: the user-namespace test is skipped: ${noHop}`);

const PLANT = `local out = {}
for _, path in ipairs({ _PROMPT .. "/worktrees/wt/HEAD", _PROMPT .. "/hooks/pre-commit", _PROMPT .. "/config" }) do
  local f, err = io.open(path, "a")
  if f then f:write("#!/bin/sh\\n"); f:close(); out[#out + 1] = "wrote " .. path
  else out[#out + 1] = "denied: " .. tostring(err) end
end
out[#out + 1] = sh.exec("readlink /proc/self/ns/user").stdout
return table.concat(out, "\\n")`;

function git(args: string[], cwd: string): void {
  const r = new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" }).outputSync();
  if (!r.success) throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(r.stderr)}`);
}

/** A main repository with one commit and a linked worktree of it; both under /tmp. */
async function worktree(): Promise<{ main: string; wt: string }> {
  const base = await tempDir("ab_sbx_git_");
  const main = join(base, "main");
  Deno.mkdirSync(main);
  git(["init", "-q"], main);
  git(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"], main);
  const wt = join(base, "wt");
  git(["worktree", "add", "-q", wt], main);
  Deno.writeTextFileSync(join(wt, "plant.lua"), PLANT);
  return { main, wt };
}

async function plant(wt: string, main: string, extra: Record<string, string> = {}) {
  const env = testEnv({ AGENT_BLOCK_HOME: join(wt, "..", "home"), ...extra });
  return await runCli(
    ["--sandbox", "-s", "plant.lua", "--prompt", join(main, ".git"), "--result", "r.txt"],
    { cwd: wt, env },
  );
}

/** Asserts nothing was planted; the block's report, or undefined where `.git` may not be protected. */
function assertNothingPlanted(
  r: { code: number; stderr: string },
  wt: string,
  main: string,
): string | undefined {
  assert.equal(r.code, 0, r.stderr);
  const missing = gitProtectionMissing(r.stderr);
  if (missing) {
    console.warn(`skipped: this user cannot have the read-only .git here (${missing})`);
    return undefined;
  }
  const said = Deno.readTextFileSync(join(wt, "r.txt"));
  assert.doesNotMatch(said, /^wrote/m, said);
  assert.equal(said.match(/^denied: .*Read-only file system/gm)?.length, 3, said);
  assert.throws(() => Deno.statSync(join(main, ".git", "hooks", "pre-commit")), Deno.errors.NotFound);
  assert.doesNotMatch(Deno.readTextFileSync(join(main, ".git", "config")), /#!\/bin\/sh/);
  assert.doesNotMatch(Deno.readTextFileSync(join(main, ".git", "worktrees", "wt", "HEAD")), /#!\/bin\/sh/);
  assert.match(r.stderr, /\.git read-only/);
  return said;
}

Deno.test({
  name: "attack: sandbox a linked worktree's hooks (the gitdir: target's commondir, under /tmp)",
  ignore: SKIP !== undefined,
  fn: async () => {
    const { main, wt } = await worktree();
    assertNothingPlanted(await plant(wt, main), wt, main);
  },
});

Deno.test({
  name:
    "attack: sandbox git hooks on the unprivileged path (user namespace, AGENT_BLOCK_SANDBOX_TEST_USERNS=1)",
  ignore: noHop !== undefined,
  fn: async () => {
    const { main, wt } = await worktree();
    const said = assertNothingPlanted(
      await plant(wt, main, { AGENT_BLOCK_SANDBOX_TEST_USERNS: "1" }),
      wt,
      main,
    );
    // it did go through a user namespace of its own
    if (said !== undefined) {
      assert.notEqual(said.trim().split("\n").at(-1), Deno.readLinkSync("/proc/self/ns/user"));
    }
  },
});
