/**
 * The sandbox launcher: turns a process that was asked for `--sandbox` into the confined runtime.
 *
 * The boundary has to be in place before the runtime's first thread exists: Landlock confines
 * only the thread that asks (Deno's async file I/O runs on pool threads started earlier, which
 * stayed unconfined when it was tried in-process). So the launcher, on its main thread:
 * 1. resolves the policy from the run's environment (`policy.ts`) and checks the kernel
 *    (`landlock.ts`: fail closed on no Landlock, or a TCP denial it cannot enforce);
 * 2. keeps `.git` and the MCP token store (`$AGENT_BLOCK_HOME/mcp-auth`: logins a later
 *    unconfined run trusts) read-only in a private mount namespace (`mount_ns.ts`; without
 *    privilege it first re-executes itself through `unshare` into a user namespace,
 *    `--sandbox-stage=userns`). Where no mount namespace can be had, `.git` stays writable with a
 *    warning, an empty token store too, but a store holding logins fails the start;
 * 3. installs the Landlock ruleset and the seccomp filter (`seccomp.ts`, all threads);
 * 4. prints one start-up line on stderr (what is enforced, and what is not);
 * 5. `execve`s this same program (`Deno.execPath()`: `deno run -A cli.ts`, or the compiled
 *    binary) with `--sandbox-stage=runtime` first. Same pid, so process groups, tags and the
 *    parent-death signal are unchanged; every thread and child of the new image is inside the
 *    boundary, which no later code can lift.
 *
 * The layers and what each catches: Landlock — writes outside the list and (when denied) TCP,
 * by any process; seccomp — io_uring; the mount — writes into `.git` and the token store. Deno's permissions are not
 * a layer here: Deno 2.9 asks for `--allow-all` to read any `/proc` path, and the runtime reads
 * `/proc` for its process tree, its tags and the file tools' descriptor checks, so any narrower
 * grant (even one that drops only FFI) breaks them. `stage.ts` is the runtime's side.
 *
 * Errors are `AgentBlockError` (exit 1) naming what failed; nothing is half-applied and then run.
 */
import { resolve } from "node:path";
import { AgentBlockError } from "../errors.ts";
import { agentBlockHome, mcpAuthDir } from "../home.ts";
import { type SelfLaunch, selfLaunch } from "../proc/self.ts";
import { resolvePolicy, type SandboxPolicy, sandboxRequest } from "./policy.ts";
import { applyLandlock, landlockAbi, type LandlockPlan, planLandlock } from "./landlock.ts";
import { installSeccomp } from "./seccomp.ts";
import { protectGitDirs } from "./mount_ns.ts";
import { archInfo, cstring, lastError, type Sys, sys } from "./sys.ts";
import { STAGE_FLAG } from "./stage.ts";

/** What the launcher needs from the CLI edge. */
export interface LaunchRequest {
  /** The run's command line as given (no stage flag). */
  argv: string[];
  /** The run's environment (the process's with the project's `.env`): the policy's source. */
  env: Readonly<Record<string, string>>;
  /** The process environment, handed unchanged to the runtime (which loads `.env` itself). */
  processEnv: Readonly<Record<string, string>>;
  /** The working directory relative paths are taken from. */
  cwd: string;
  /** The project root as given. */
  project: string;
  /** This launcher came through the user-namespace hop. */
  inUserNs: boolean;
  /** Writes one line to stderr. */
  say: (line: string) => void;
  /** How to start this program (default `selfLaunch()`). */
  launch?: SelfLaunch;
}

const PR_CAP_AMBIENT = 47;
const PR_CAP_AMBIENT_CLEAR_ALL = 4n;

/** libc for the launcher, or the start-up error of a platform that cannot have the sandbox. */
function kernel(): Sys {
  if (Deno.build.os !== "linux") {
    throw new AgentBlockError(
      `--sandbox is Linux only (Landlock and seccomp); this is ${Deno.build.os}, and a requested ` +
        `sandbox never runs unconfined`,
    );
  }
  const c = sys();
  if (typeof c === "string") {
    throw new AgentBlockError(`--sandbox: cannot reach the kernel's interfaces: ${c}`);
  }
  return c;
}

/**
 * Checks that runs of `project` could be sandboxed here, without confining this process (a
 * server that hands `--sandbox` to every run fails at its start, not at each run). Returns the
 * Landlock ABI; throws the error a run would fail with.
 */
export function sandboxPreflight(
  env: Readonly<Record<string, string>>,
  project: string,
  cwd: string,
): number {
  const c = kernel();
  return kernelPlan(c, resolvePolicy(sandboxRequest(env, resolve(cwd, project), cwd))).abi;
}

/** Applies the sandbox and becomes the confined runtime; returns only by throwing. */
export function launchSandboxed(req: LaunchRequest): never {
  const c = kernel();
  const home = resolve(req.cwd, agentBlockHome(req.env, req.cwd));
  try {
    Deno.mkdirSync(home, { recursive: true }); // the runtime would create it; a rule needs it now
  } catch {
    // not creatable: it grants nothing, and the run reports what it cannot write
  }
  const policy = resolvePolicy(sandboxRequest(req.env, resolve(req.cwd, req.project), req.cwd));
  const plan = kernelPlan(c, policy);
  const warnings: string[] = [];
  for (const s of policy.skipped) warnings.push(`AGENT_BLOCK_SANDBOX_FS_RW: ${s} does not exist, skipped`);
  if (plan.dropped.length) {
    warnings.push(
      `Landlock ABI ${plan.abi} cannot enforce ${plan.dropped.join("; ")}: continuing without them`,
    );
  }
  const arch = archInfo();
  if (!arch) warnings.push(`io_uring is not denied on ${Deno.build.arch} (seccomp filter skipped)`);
  let git = policy.gitRw ? "writable (AGENT_BLOCK_SANDBOX_GIT_RW=1)" : "read-only";
  const store = tokenStore(home);
  const gitDirs = policy.gitRw ? [] : policy.gitDirs;
  let logins = store ? "MCP logins read-only" : "MCP logins: none";
  if (gitDirs.length || store) {
    const prot = protectGitDirs(
      c,
      [...gitDirs, ...(store ? [store.path] : [])],
      req.inUserNs,
      policy.testUserNs,
    );
    if (prot.status === "hop") {
      execve(c, [...prot.prefix, ...selfArgs(req, "userns")], req.processEnv);
    }
    if (prot.status === "unavailable") {
      if (store?.logins) {
        // Stored credentials a later unconfined run trusts: never beside a writable hole.
        throw new AgentBlockError(
          `--sandbox: the MCP logins in ${store.path} cannot be made read-only here (${prot.why}), and a ` +
            `sandboxed run must not be able to replace them; run where a mount namespace can be had ` +
            `(root, or user namespaces), or remove the logins first (agent-block mcp logout URL)`,
        );
      }
      if (gitDirs.length) {
        warnings.push(`.git stays writable: ${prot.why}`);
        git = "WRITABLE (no mount namespace)";
      }
      if (store) {
        warnings.push(`the (empty) MCP token store ${store.path} stays writable: ${prot.why}`);
        logins = "MCP token store WRITABLE (no mount namespace)";
      }
    }
  }
  if (!policy.gitDirs.length && !policy.gitRw) git = "none";
  // The user-namespace hop kept its capabilities for the mounts: the runtime gets none of them.
  if (req.inUserNs && c.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0n, 0n, 0n) !== 0) {
    throw new AgentBlockError(
      `--sandbox: clearing the user namespace's capabilities failed: ${lastError(c).text}`,
    );
  }
  applyLandlock(c, plan, policy.writable);
  if (arch) installSeccomp(c, arch);
  for (const w of warnings) req.say(`[warn] agent-block: --sandbox: ${w}`);
  req.say(`${startupLine(policy, plan, arch !== undefined, git)}; ${logins}`);
  execve(c, selfArgs(req, "runtime"), req.processEnv);
}

/**
 * The MCP token store of `home` (`mcpAuthDir`), created (0700) so that it can be mounted
 * read-only — a sandboxed run must not plant a login a later unconfined run would trust — with
 * whether it holds logins; undefined when it cannot be had (an unwritable home grants nothing).
 */
function tokenStore(home: string): { path: string; logins: boolean } | undefined {
  const dir = mcpAuthDir(home);
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = Deno.realPathSync(dir);
    const logins = [...Deno.readDirSync(path)].some((e) => e.name.endsWith(".json"));
    return { path, logins };
  } catch {
    return undefined;
  }
}

/** The Landlock plan for this kernel, the test seam applied where it makes start-up fail. */
function kernelPlan(c: Sys, policy: SandboxPolicy): LandlockPlan {
  const abi = landlockAbi(c);
  if (policy.testAbi !== undefined && policy.testAbi < abi) {
    const pretended = planLandlock(policy.testAbi, policy.tcp, true);
    if (pretended instanceof AgentBlockError) throw pretended;
  }
  const plan = planLandlock(abi, policy.tcp);
  if (plan instanceof AgentBlockError) throw plan;
  return plan;
}

/** The command line of this program again, at `stage`. */
function selfArgs(req: LaunchRequest, stage: string): string[] {
  const launch = req.launch ?? selfLaunch();
  return [...launch.prefix, `${STAGE_FLAG}${stage}`, ...req.argv];
}

/** The one line saying what the sandbox enforces. */
export function startupLine(
  policy: SandboxPolicy,
  plan: LandlockPlan,
  seccomp: boolean,
  git: string,
): string {
  const writes = policy.writable.map((w) => w.path).join(", ");
  return `agent-block: sandbox on (Landlock ABI ${plan.abi}${
    seccomp ? ", seccomp" : ""
  }): writes only to ${writes}; ` +
    `TCP ${policy.tcp ? "allowed" : "denied"}; io_uring ${seccomp ? "denied" : "NOT denied"}; .git ${git}`;
}

/** Replaces this process with `cmd`; throws when the kernel refuses. */
function execve(c: Sys, cmd: string[], env: Readonly<Record<string, string>>): never {
  const keep: Uint8Array[] = [];
  const array = (items: string[]) => {
    const ptrs = new BigUint64Array(items.length + 1);
    items.forEach((s, i) => {
      const b = cstring(s);
      keep.push(b);
      ptrs[i] = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(b)));
    });
    return new Uint8Array(ptrs.buffer);
  };
  const argv = array(cmd);
  const envp = array(Object.entries(env).map(([k, v]) => `${k}=${v}`));
  c.execve(cstring(cmd[0]), argv, envp);
  const e = lastError(c);
  void keep;
  throw new AgentBlockError(`--sandbox: cannot start the confined runtime (${cmd[0]}): ${e.text}`);
}
