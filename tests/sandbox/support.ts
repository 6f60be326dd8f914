/**
 * What the sandbox tests share: whether this machine can run them (Linux with Landlock, a
 * directory outside `/tmp` to aim the escapes at), and a sandboxed run of a Lua script whose
 * value is JSON; the answer of the test servers its runs aim at (`answerHttp`); and a private
 * copy of the checkout (its own `node_modules`) outside every grant (`checkoutCopy`).
 */
import { cpSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, runCli, testEnv } from "../helpers.ts";
import { landlockAbi } from "../../src/sandbox/landlock.ts";
import { sys } from "../../src/sandbox/sys.ts";

/** The kernel's Landlock ABI here (0: none, or not Linux). */
export const ABI = (() => {
  if (Deno.build.os !== "linux") return 0;
  const c = sys();
  return typeof c === "string" ? 0 : landlockAbi(c);
})();

/**
 * Where the escapes aim: a directory the tests may write that no sandboxed test run is granted —
 * the checkout, or (when the checkout is under `/tmp`, which every run may write, as in a CI
 * clone there) the user's home (the runs get their own `AGENT_BLOCK_HOME`: `sandboxEnv`).
 */
const OUTSIDE_BASE = [REPO_ROOT, Deno.env.get("HOME")].find((d) =>
  d && d !== "/tmp" && !d.startsWith("/tmp/")
);

/** Why the sandbox tests cannot run here, or undefined when they can. */
export const SKIP: string | undefined = Deno.build.os !== "linux"
  ? `the sandbox is Linux only (this is ${Deno.build.os})`
  : ABI === 0
  ? "this kernel has no Landlock"
  : OUTSIDE_BASE === undefined
  ? `the checkout ${REPO_ROOT} and HOME are both under /tmp, which a sandboxed run may write: no place outside to aim at`
  : undefined;

/** A fresh directory outside every default grant of a sandboxed run. The caller removes it. */
export function outsideDir(): string {
  return Deno.makeTempDirSync({ dir: OUTSIDE_BASE, prefix: ".sandbox_outside_" });
}

/**
 * Why the read-only `.git` could not be had by a run whose stderr is `stderr`, when that is
 * allowed to happen: only without privilege (the user-namespace path can be closed to a user,
 * e.g. by AppArmor's unprivileged user namespace restriction); the launcher then says so in its
 * start-up line and a warning. As root the in-process mount namespace must work: undefined.
 */
export function gitProtectionMissing(stderr: string): string | undefined {
  if (Deno.uid() === 0 || !/\.git WRITABLE/.test(stderr)) return undefined;
  return /\.git stays writable: (.*)/.exec(stderr)?.[1] ?? "the start-up line says .git WRITABLE";
}

/**
 * The environment of a sandboxed test run: its own agent-block home, in the project (the user's
 * `HOME` stays, for Deno's caches, and is outside the grants).
 */
export function sandboxEnv(project: string, extra: Record<string, string> = {}): Record<string, string> {
  return testEnv({ AGENT_BLOCK_HOME: join(project, "home"), ...extra });
}

/** Runs `script` (a file in `project`) under `--sandbox`; its returned value is parsed as JSON. */
export async function sandboxedRun(
  project: string,
  script: string,
  opts: { env?: Record<string, string>; prompt?: string; args?: string[] } = {},
): Promise<{ code: number; stderr: string; value: Record<string, string> }> {
  const result = join(project, "result.json");
  const r = await runCli(
    [
      "--sandbox",
      "-s",
      script,
      "-p",
      project,
      "--result",
      result,
      ...(opts.prompt !== undefined ? ["--prompt", opts.prompt] : []),
      ...(opts.args ?? []),
    ],
    { cwd: project, env: opts.env ?? sandboxEnv(project) },
  );
  let value: Record<string, string> = {};
  try {
    value = JSON.parse(Deno.readTextFileSync(result));
  } catch {
    // no value: the caller checks the code and stderr
  }
  return { code: r.code, stderr: r.stderr, value };
}

/**
 * Enough HTTP for a test server the sandbox's runs aim at: the request is read to the end of its
 * head, then `response` (a whole response) is written and the connection closed (closing with
 * unread bytes would reset it). A raw connect that sends no request just gets closed.
 */
export async function answerHttp(conn: Deno.Conn, response: string): Promise<void> {
  const buf = new Uint8Array(4096);
  let head = "";
  try {
    while (!head.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) break;
      head += new TextDecoder().decode(buf.subarray(0, n));
    }
    if (head.includes("\r\n\r\n")) await conn.write(new TextEncoder().encode(response));
  } catch {
    // a raw connect closes without a request
  } finally {
    conn.close();
  }
}

/** What a run of `cli.ts` needs of the checkout: its code, config and both lockfiles. */
const CHECKOUT_FILES = ["cli.ts", "mod.ts", "src", "embedded", "deno.json", "deno.lock", "deno.run.lock"];

/** Where a private copy of the checkout can go: the user's home, when it is outside `/tmp`. */
const COPY_BASE = [Deno.env.get("HOME")].find((d) => d && d !== "/tmp" && !d.startsWith("/tmp/"));

/** Why `checkoutCopy` cannot be had here, or undefined when it can. */
export const CHECKOUT_COPY_SKIP: string | undefined = COPY_BASE === undefined
  ? "HOME is unset or under /tmp, which a sandboxed run may write: no place for a checkout outside the grants"
  : undefined;

/**
 * A copy of the checkout's code with no `node_modules`, in a fresh directory outside every grant
 * of a sandboxed run and outside the checkout (the user's home), so a test can lay out and watch
 * its own `node_modules` without the other tests' processes touching it. The caller removes it.
 */
export function checkoutCopy(): string {
  const dir = Deno.makeTempDirSync({ dir: COPY_BASE, prefix: ".ab_checkout_" });
  for (const f of CHECKOUT_FILES) cpSync(join(REPO_ROOT, f), join(dir, f), { recursive: true });
  return dir;
}
