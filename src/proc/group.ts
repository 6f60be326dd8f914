/**
 * Process groups: the one module that starts child processes and ends them.
 *
 * Owns: spawning every child in a session of its own (`detached: true` → `setsid`, so the child
 * is the leader of a new process group), the registry of live groups of one run, and ending a
 * group as a whole — SIGTERM to `-pgid`, SIGKILL after a grace period if anything of it is still
 * there. Killing the group, not the child, is what reaches grandchildren that hold a pipe open.
 *
 * Invariants:
 * - Every child started through `ProcessGroups.spawn` is in the registry until it has exited
 *   and its group is gone; `endAll()` ends every registered group and resolves when they are.
 * - A child's environment is the RUN's (`env` given at construction: a run's `RunEnv`, read at
 *   each spawn so what `std.env.set` put in its overlay is inherited), passed through `childEnv`
 *   (credentials removed, `AGENT_BLOCK_CHILD_ENV` of the run applied), then `opts.env`. Nothing
 *   here reads the process environment: a registry built without one starts children with an
 *   empty environment.
 * - Nothing here reads the child's output; callers own their pipes (read stdout and stderr
 *   concurrently, or a full pipe stalls the child).
 *
 * Why a registry: Deno has no `PR_SET_PDEATHSIG`, so a detached group outlives a host that
 * forgets it. The run ends every group it started, on success, on error and on SIGINT/SIGTERM.
 */
import { childEnv } from "./child_env.ts";

/** Options for `ProcessGroups.spawn`. */
export interface SpawnOptions {
  /** Program and arguments. */
  cmd: [string, ...string[]];
  /** Working directory, absolute (callers resolve it against their run's cwd). */
  cwd?: string;
  /** Extra variables applied after credential removal (see `childEnv`). */
  env?: Record<string, string>;
  /**
   * The environment this child starts from instead of the registry's (a runner starting a run
   * with an environment of its own); credentials are removed from it all the same.
   */
  baseEnv?: Readonly<Record<string, string>>;
  /** Standard input (default `null`). */
  stdin?: "piped" | "null" | "inherit";
  /** Standard output (default `piped`). */
  stdout?: "piped" | "null" | "inherit";
  /** Standard error (default `piped`). */
  stderr?: "piped" | "null" | "inherit";
  /** A name other tasks can end the group by (`sh.kill`). */
  label?: string;
}

/** One started child and its group. */
export class ManagedProcess {
  /** How it ended, once it has: set before `status` resolves. */
  endedBy: "exit" | "terminated" | "killed" | undefined;
  #exited = false;
  /**
   * Wraps a spawned child; `ProcessGroups.spawn` is the only caller.
   * @param child the group leader
   * @param label the `sh.exec` label, if any
   * @param groups the registry it belongs to
   */
  constructor(
    readonly child: Deno.ChildProcess,
    readonly label: string | undefined,
    private readonly groups: ProcessGroups,
  ) {
    child.status.then(() => {
      this.#exited = true;
    }, () => {
      this.#exited = true;
    });
  }

  /** The leader's pid (= the group id). */
  get pid(): number {
    return this.child.pid;
  }

  /** The child's exit status (the leader's). */
  get status(): Promise<Deno.CommandStatus> {
    return this.child.status;
  }

  /** True once the leader has exited. */
  get exited(): boolean {
    return this.#exited;
  }

  /** Sends `signal` to the whole group. Returns false when the group no longer exists. */
  signalGroup(signal: Deno.Signal): boolean {
    try {
      Deno.kill(-this.child.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * True while any member of the group is alive. A zombie does not count: a grandchild orphaned
   * by the group's end is reparented to PID 1, and where PID 1 is slow to reap (containers
   * without an init) its zombie would otherwise hold every run's exit for the whole grace period.
   */
  groupAlive(): boolean {
    try {
      Deno.kill(-this.child.pid, "SIGCONT");
    } catch {
      return false;
    }
    return Deno.build.os !== "linux" || linuxGroupHasLiveMember(this.child.pid);
  }

  /**
   * Ends the group: SIGTERM, then SIGKILL after `graceMs` if any member remains.
   * Resolves once the leader has exited.
   */
  async terminate(graceMs = this.groups.graceMs): Promise<void> {
    this.endedBy ??= "terminated";
    this.signalGroup("SIGTERM");
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && this.groupAlive()) {
      await new Promise((r) => setTimeout(r, Math.min(20, Math.max(1, deadline - Date.now()))));
      if (this.#exited && !this.groupAlive()) break;
    }
    if (this.groupAlive()) this.signalGroup("SIGKILL");
    await this.child.status.catch(() => undefined);
    await this.#settle();
  }

  /** SIGKILL to the whole group at once. */
  async kill(): Promise<void> {
    this.endedBy ??= "killed";
    this.signalGroup("SIGKILL");
    await this.child.status.catch(() => undefined);
    await this.#settle();
  }

  /**
   * After SIGKILL the leader's status can resolve while another member has the signal pending
   * but is not dead yet; wait (bounded) until the kernel has ended every member, so callers see
   * the group gone when the promise resolves.
   */
  async #settle(limitMs = 2000): Promise<void> {
    const deadline = Date.now() + limitMs;
    while (this.groupAlive() && Date.now() < deadline) {
      this.signalGroup("SIGKILL");
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

/** Where children's environments come from: a run's `RunEnv` (read per spawn) or a fixed record. */
export type ChildEnvBase = { toObject(): Record<string, string> } | Readonly<Record<string, string>>;

/** The live process groups of one run. */
export class ProcessGroups {
  #live = new Set<ManagedProcess>();
  readonly #env: ChildEnvBase;
  /** Grace between SIGTERM and SIGKILL, in ms (`AGENT_BLOCK_TASK_GRACE_MS`, default 1000). */
  graceMs: number;

  /**
   * An empty registry.
   * @param graceMs grace between SIGTERM and SIGKILL, ms
   * @param env the environment children start from (the run's; default: none at all)
   */
  constructor(graceMs = 1000, env: ChildEnvBase = {}) {
    this.graceMs = graceMs;
    this.#env = env;
  }

  /** The environment a child starts from now (before credential removal). */
  #baseEnv(): Record<string, string> {
    const e = this.#env as { toObject?: unknown };
    return typeof e.toObject === "function"
      ? (this.#env as { toObject(): Record<string, string> }).toObject()
      : { ...(this.#env as Readonly<Record<string, string>>) };
  }

  /** Starts a child as the leader of a new process group and registers it. */
  spawn(opts: SpawnOptions): ManagedProcess {
    const [program, ...args] = opts.cmd;
    const child = new Deno.Command(program, {
      args,
      cwd: opts.cwd,
      env: childEnv(opts.baseEnv ? { ...opts.baseEnv } : this.#baseEnv(), opts.env ?? {}),
      clearEnv: true,
      stdin: opts.stdin ?? "null",
      stdout: opts.stdout ?? "piped",
      stderr: opts.stderr ?? "piped",
      detached: true,
    }).spawn();
    const p = new ManagedProcess(child, opts.label, this);
    this.#live.add(p);
    // Unregister once the leader is gone and the group has emptied (or been killed).
    child.status.finally(() => {
      if (!p.groupAlive()) this.#live.delete(p);
    }).catch(() => undefined);
    return p;
  }

  /** The live process started with `label`, if any. */
  byLabel(label: string): ManagedProcess | undefined {
    for (const p of this.#live) if (p.label === label && (!p.exited || p.groupAlive())) return p;
    return undefined;
  }

  /** Number of registered groups. */
  get size(): number {
    return this.#live.size;
  }

  /** Ends every registered group (SIGTERM, then SIGKILL after the grace period). */
  async endAll(graceMs = this.graceMs): Promise<void> {
    const all = [...this.#live];
    this.#live.clear();
    await Promise.all(
      all.map((p) => (p.exited && !p.groupAlive()) ? Promise.resolve() : p.terminate(graceMs)),
    );
  }
}

/**
 * Linux: whether process group `pgid` has a member that is not a zombie, from `/proc/<pid>/stat`
 * (state is the first field after the command's closing parenthesis, the group id the third).
 * When `/proc` cannot be read, every member counts as alive.
 */
function linuxGroupHasLiveMember(pgid: number): boolean {
  let entries: Iterable<Deno.DirEntry>;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return true;
  }
  for (const e of entries) {
    const c = e.name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
    } catch {
      continue; // exited meanwhile
    }
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ", 3);
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}
