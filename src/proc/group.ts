/**
 * Process groups: the one module that starts a run's child processes and ends them.
 *
 * Owns: spawning every child in a session of its own (so the child is the leader of a new process
 * group) with a parent-death signal — both set by the one exec of the session stub
 * (`session_stub.ts`), else by `setsid` and `setpriv` (`own_session.ts`, `parent_death.ts`), else
 * a `detached: true` spawn without the signal — tagged (`tags.ts`: `AGENT_BLOCK_PROC_TAGS` gets
 * this registry's tag for the child); the registry of live groups of one run; and ending a child's whole tree
 * (`tree.ts`: its group, its descendants, and every process carrying its tag — so a daemon that
 * double-forked or called `setsid` ends with it) — SIGTERM, SIGKILL after a grace period if
 * anything of it is still there.
 *
 * Invariants:
 * - Every child started through `ProcessGroups.spawn` is in the registry until it has exited
 *   and its group is gone; `endAll()` ends every registered tree and every process still
 *   carrying this registry's tag (what detached from a command that had already finished)
 *   together — SIGTERM to all of them first, then one wait, each round reading the process
 *   table once for all (not once per child: 1000 children end within the grace and a moment) —
 *   and resolves when they are gone.
 * - A child's environment is the RUN's (`env` given at construction: a run's `RunEnv`, read at
 *   each spawn so what `std.env.set` put in its overlay is inherited), passed through `childEnv`
 *   (credentials removed, the run's `AGENT_BLOCK_CHILD_ENV` policy applied: `options.childEnv`), then `opts.env`, then its
 *   tags (set last: `opts.env` cannot drop them) — except a child that is agent-block itself
 *   asked for with `wholeEnv` (a `serve` run): it gets its base environment whole, credentials
 *   included, and applies this rule to its own children. Nothing here reads the process
 *   environment: a registry built without one starts children with only their tags.
 * - Nothing here reads the child's output; callers own their pipes (read stdout and stderr
 *   concurrently, or a full pipe stalls the child).
 * - Before each spawn `reaper.ts` is told (a host that asked to adopt orphans becomes a
 *   subreaper then) and the child's pid is recorded as Deno's own until Deno has reaped it; the
 *   lifeline (`lifeline.ts`) knows this registry's tag, so a host killed outright still has
 *   its trees ended. Apart from the one-off probes of the session stub, `setpriv` and `setsid`, the
 *   lifeline's one sentinel per process and the sandbox's probe of `unshare`
 *   (`src/sandbox/mount_ns.ts`, before any run exists), no other module starts processes.
 *
 * Why a registry: a child in a session of its own does not end with its host by itself (the
 * parent-death signal covers only a host that dies, and only the direct child). The run ends
 * every tree it started, on success, on error and on SIGINT/SIGTERM. Mechanisms that are
 * unavailable (neither the stub nor `setpriv`, `/proc` unreadable) are reported once per process through `warn`
 * on Linux (elsewhere none exists, by design), and ending falls back to the process group alone.
 */
import { childEnv, type ChildEnvPolicy } from "./child_env.ts";
import { holdLifeline } from "./lifeline.ts";
import { childStart, parentDeathWrapper } from "./parent_death.ts";
import { beforeSpawn, disown, ownChild } from "./reaper.ts";
import { newRegistryId, PROC_TAGS_VAR, tagsValue } from "./tags.ts";
import { endMembers, members, procUnreadable, startTicks, type Tree } from "./tree.ts";

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
  /**
   * The child is agent-block itself and gets its base environment whole — the host's credentials
   * and `AGENT_BLOCK_CHILD_ENV` included — since it applies the credential rule to its own
   * children (a `serve` run: "a run inherits the manager's environment"). Default false.
   */
  wholeEnv?: boolean;
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
   * @param tag the child's own tag (`tags.ts`), carried by everything it starts
   * @param since the child's start time (`tree.ts`'s `startTicks`), when known: nothing that
   *   carries its tag started before it, so the walks for its tag skip older processes
   */
  constructor(
    readonly child: Deno.ChildProcess,
    readonly label: string | undefined,
    private readonly groups: ProcessGroups,
    readonly tag: string,
    readonly since?: number,
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

  /**
   * Sends `signal` to the whole group. Returns false when the group no longer exists. A child
   * that has not made its session yet (`own_session.ts`: the wrapper has not run) is signalled
   * itself: its group does not exist, but it is not gone.
   */
  signalGroup(signal: Deno.Signal): boolean {
    try {
      Deno.kill(-this.child.pid, signal);
      return true;
    } catch {
      if (this.#exited) return false;
      try {
        Deno.kill(this.child.pid, signal);
        return true;
      } catch {
        return false;
      }
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

  /** The child's tree (`tree.ts`): its group, its descendants while it is unreaped, its tag. */
  tree(): Tree {
    return {
      pgid: this.child.pid,
      root: this.#exited ? undefined : this.child.pid,
      tag: this.tag,
      since: this.since,
    };
  }

  /** True while anything of the tree is alive (the group, or a process that left it). */
  leftovers(): boolean {
    return this.groupAlive() || members(this.tree()).length > 0;
  }

  /**
   * Ends the whole tree: SIGTERM to the group and to every member, then SIGKILL after `graceMs`
   * to whatever is left (re-read: a process forked meanwhile is ended too). Resolves once the
   * leader has exited and nothing of the tree is left.
   */
  async terminate(graceMs = this.groups.graceMs): Promise<void> {
    this.endedBy ??= "terminated";
    await endTrees([this], graceMs);
  }

  /** SIGKILL to the whole tree at once; resolves once the leader has exited and the tree is gone. */
  async kill(): Promise<void> {
    this.endedBy ??= "killed";
    await endTrees([this], 0);
  }

  /**
   * SIGKILL to the process group only (what detached from it lives on); resolves once the leader
   * has exited and the group is gone.
   */
  async killGroup(): Promise<void> {
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

/**
 * Ends the trees of `procs` together (`tree.ts`'s `endMembers`: every group signalled first, one
 * walk of the process table per round for all of them), plus every process carrying `tag` (a
 * registry prefix); then waits for each leader's exit and SIGKILLs whatever its exit left.
 * Ending 1000 children costs a few walks of the table, not 1000 walks per round.
 */
async function endTrees(procs: readonly ManagedProcess[], graceMs: number, tag?: string): Promise<void> {
  const trees = (): Tree[] => {
    const list = procs.map((p) => p.tree());
    if (tag !== undefined) list.push({ tag });
    return list;
  };
  // Leaders that had all exited before a walk that found nothing: no exit can leave anything
  // behind any more, so the closing walk is skipped (each walk reads every process's environment).
  const exitedBefore = procs.every((p) => p.exited);
  const found = await endMembers(trees, graceMs);
  await Promise.all(procs.map((p) => p.status.catch(() => undefined)));
  if (found || !exitedBefore) await endMembers(trees, 0);
}

/** Where children's environments come from: a run's `RunEnv` (read per spawn) or a fixed record. */
export type ChildEnvBase = { toObject(): Record<string, string> } | Readonly<Record<string, string>>;

/** Options of a registry beyond the grace period and the environment. */
export interface ProcessGroupsOptions {
  /**
   * Where to say, once per process, that a mechanism is unavailable (no `setpriv`, no orphan
   * adoption). Default: a `[warn]` line on stderr.
   */
  warn?: (message: string) => void;
  /**
   * What children inherit of the environment (the run's `AGENT_BLOCK_CHILD_ENV`, parsed at the
   * edge: `parseChildEnvPolicy`); default `inherit`.
   */
  childEnv?: ChildEnvPolicy;
}

/** A `[warn]` line on stderr, written here: the process layer sits below the logger (`src/obs`). */
const defaultWarn = (m: string) => {
  const bytes = new TextEncoder().encode(`[warn] agent-block: ${m}\n`);
  let off = 0;
  while (off < bytes.length) off += Deno.stderr.writeSync(bytes.subarray(off));
};
let reported = false;

/** The live process groups of one run. */
export class ProcessGroups {
  #live = new Set<ManagedProcess>();
  readonly #env: ChildEnvBase;
  readonly #warn: (message: string) => void;
  readonly #policy: ChildEnvPolicy | undefined;
  /** This registry's tag prefix (`tags.ts`); its children are `<id>.1`, `<id>.2`, ... */
  readonly id: string = newRegistryId();
  #spawned = 0;
  /** Grace between SIGTERM and SIGKILL, in ms (`AGENT_BLOCK_TASK_GRACE_MS`, default 1000). */
  graceMs: number;

  /**
   * An empty registry.
   * @param graceMs grace between SIGTERM and SIGKILL, ms
   * @param env the environment children start from (the run's; default: none at all)
   * @param options where unavailable mechanisms are reported
   */
  constructor(graceMs = 1000, env: ChildEnvBase = {}, options: ProcessGroupsOptions = {}) {
    this.graceMs = graceMs;
    this.#env = env;
    this.#warn = options.warn ?? defaultWarn;
    this.#policy = options.childEnv;
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
    beforeSpawn();
    const base = opts.baseEnv ? { ...opts.baseEnv } : this.#baseEnv();
    const env = opts.wholeEnv ? { ...base, ...opts.env } : childEnv(base, opts.env ?? {}, this.#policy);
    const tag = `${this.id}.${++this.#spawned}`;
    env[PROC_TAGS_VAR] = tagsValue(base[PROC_TAGS_VAR], tag);
    // Behind the session stub (or setsid and setpriv) the program is resolved first (a missing
    // one throws here, as spawn would); without either the spawn is detached as it always was.
    const session = childStart(opts.cmd, env, opts.cwd);
    const [program, ...args] = session.argv;
    const lifeline = holdLifeline(this.id);
    if (!reported && Deno.build.os === "linux") {
      // Once per process: what this host cannot do (elsewhere none of it exists, by design).
      reported = true;
      const w = parentDeathWrapper();
      if ("why" in w) {
        this.#warn(
          `children get no parent-death signal (${w.why}): they may outlive a host killed by SIGKILL`,
        );
      }
      const proc = procUnreadable();
      if (proc) this.#warn(`${proc}: ending a command reaches its process group only`);
      if (lifeline) {
        this.#warn(`no lifeline (${lifeline}): what children start may outlive a host killed by SIGKILL`);
      }
    }
    const child = new Deno.Command(program, {
      args,
      cwd: opts.cwd,
      env,
      clearEnv: true,
      stdin: opts.stdin ?? "null",
      stdout: opts.stdout ?? "piped",
      stderr: opts.stderr ?? "piped",
      detached: session.detached,
    }).spawn();
    ownChild(child.pid);
    // read while the child is unreaped (its pid cannot be another's yet)
    const p = new ManagedProcess(child, opts.label, this, tag, startTicks(child.pid));
    this.#live.add(p);
    // Unregister once the leader is gone and the group has emptied (or been killed).
    child.status.finally(() => {
      disown(child.pid);
      // (not once per child while `endAll` ends them all: it has unregistered them already)
      if (this.#live.has(p) && !p.groupAlive()) this.#live.delete(p);
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

  /**
   * Ends every registered tree (SIGTERM, then SIGKILL after the grace period), then every process
   * still carrying this registry's tag: what a finished command left running in the background.
   */
  async endAll(graceMs = this.graceMs): Promise<void> {
    const all = [...this.#live];
    this.#live.clear();
    for (const p of all) if (!p.exited) p.endedBy ??= "terminated";
    if (all.length || this.#spawned > 0) {
      await endTrees(all, graceMs, this.#spawned > 0 ? `${this.id}.` : undefined);
    }
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
