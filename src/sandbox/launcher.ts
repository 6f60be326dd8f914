/**
 * The sandbox launcher: turns a process that was asked for `--sandbox` into the confined runtime.
 *
 * The boundary has to be in place before the runtime's first thread exists: Landlock confines
 * only the thread that asks (Deno's async file I/O runs on pool threads started earlier, which
 * stayed unconfined when it was tried in-process). So the launcher, on its main thread:
 * 1. resolves the policy from the run's sandbox settings (`policy.ts`) and checks the kernel
 *    (`landlock.ts`: fail closed on no Landlock, or a TCP denial it cannot enforce);
 * 2. under `--sandbox-net allow-list` (`prepareNet`, before this module's synchronous part): starts
 *    the proxy outside (without waiting for it: its start overlaps the run's, whose bridge waits
 *    for its socket), then enters a network namespace of the run's own with only `lo` up
 *    (`net_launch.ts`; the same user-namespace hop as below when unprivileged), and hands the
 *    runtime the proxy variables — or fails closed where no namespace can be had;
 * 3. keeps `.git` and agent-block's configuration and code (the project's `.env`, the home's
 *    `lib/`, `blocks/`, serve files and locks `serve-locks/`, MCP token store `mcp-auth/`, flow
 *    locks `flow-locks/` and the mesh's replay memories `mesh-seen/`) read-only in a private mount
 *    namespace (`mount_ns.ts`; without privilege it first re-executes itself through `unshare`
 *    into a user namespace, `--sandbox-stage=userns`). Just before, under a NATS `--relay`, it
 *    opens the run's replay memory and its socket (`LaunchRequest.keep`, from the edge:
 *    `src/clients/mesh/seen_remote.ts`): the descriptors opened now stay writable to this process
 *    whatever the mounts and Landlock refuse later, and the runtime gets the socket and its token
 *    in its environment;
 * 4. drops every capability, bounding set included (`caps.ts`), then installs the Landlock
 *    ruleset and the seccomp filter (`seccomp.ts`, all threads);
 * 5. prints one start-up line on stderr (what is enforced, and what is not; the allowed hosts);
 * 6. starts this same program (`Deno.execPath()`: `deno run -A cli.ts`, or the compiled binary;
 *    `src/proc/self.ts`) with `--sandbox-stage=runtime` first, as its child. From source that
 *    command uses `node_modules` as it is (`--node-modules-dir=manual`), which the first stage laid
 *    out before any of this (`src/cli/sandbox_launch.ts`): inside the boundary it is read-only.
 *    Every step above confined this process's main thread — Landlock, the capabilities, the mount
 *    namespace and no-new-privs are each a thread's own, and the seccomp filter is every thread's
 *    — and a child started from it inherits them all, so the runtime and everything it starts is
 *    inside the boundary, which no later code can lift (checked: `stage.ts`). The launcher's other
 *    threads (Deno's pools) are not confined: it does nothing on them but wait (no file call of
 *    the sweep below is asynchronous);
 * 7. stays, outside the run, as the run's parent and a child subreaper (answering the runtime's
 *    replay-memory checks, if it keeps that memory): it passes SIGINT, SIGTERM
 *    and SIGHUP on to the runtime, waits for it, ends whatever of the run is still left below it
 *    (the runtime ends its own orphans; one killed outright leaves them here), then sweeps the
 *    write grants for git repositories and configuration files the run created or changed and
 *    renames each aside (`git_sweep.ts`: the project, the home and the `AGENT_BLOCK_SANDBOX_FS_RW`
 *    directories whole, `/tmp` — and each directory between it and a swept root inside it, such
 *    as a project at `/tmp/ci/work/proj`, where git run in the project would find a repository
 *    planted in `/tmp/ci` — by name only, for a `.git` or `.env` of its own or its being laid
 *    out as a repository; the project's own `.git` and the configuration files the mounts covered
 *    are skipped; the configuration places that did not exist at the start, `configAbsent`, are
 *    checked by name), says each on stderr in one line with how to rename it back, and exits with
 *    the runtime's code (128 + the signal when it was killed). So whoever started the run sees it
 *    end only after the sweep: the next `git status`, or the next unconfined run reading the
 *    project's `.env`, cannot come first.
 *    The pid the starter holds is this process's; the runtime is its child in the same process
 *    group (a group signal reaches both). If this process is itself killed outright (SIGKILL to
 *    its pid alone), no sweep runs: the next agent-block command on the project, confined or not,
 *    sweeps for it before it reads the project's `.env` (`sweepLeftovers`, called from the CLI's
 *    edge, `src/cli/environment.ts`), and a launch checks again (`pendingSweeps`; a configuration
 *    file it renames is then not mounted for this run). Git or another tool started there first
 *    is not covered: it reads what the run planted.
 *
 * The layers and what each catches: Landlock — writes outside the list, device nodes anywhere and
 * (when denied) TCP, by any process; seccomp — io_uring, and (when TCP is denied) the other
 * stream protocols that reach TCP peers and raw sockets; the mount — writes into `.git` and
 * agent-block's configuration; no capabilities — whatever root could do around the others; the
 * network namespace (allow-list) — every connection but the proxy's, by any process.
 * The policy comes from `SandboxSettings`, which the edge read (`src/cli/sandbox_launch.ts` with
 * `sandboxSettingsFromEnv`) from the environment of whoever started the run, the project's `.env`
 * allowed only to make it stricter; this module reads no environment. Deno's permissions are not
 * a layer here: Deno 2.9 asks for `--allow-all` to read any `/proc` path, and the runtime reads
 * `/proc` for its process tree, its tags and the file tools' descriptor checks, so any narrower
 * grant (even one that drops only FFI) breaks them. `stage.ts` is the runtime's side.
 *
 * Errors are `AgentBlockError` (exit 1) naming what failed; nothing is half-applied and then run
 * (a proxy this launcher started is ended when the launch fails).
 */
import { join, resolve } from "node:path";
import { AgentBlockError } from "../errors.ts";
import { flowLocksDir, mcpAuthDir, meshSeenDir, serveLocksDir } from "../home.ts";
import type { SandboxSettings } from "../run_settings.ts";
import { type SelfLaunch, selfLaunch } from "../proc/self.ts";
import {
  configCandidates,
  configPlaces,
  repositoryDirs,
  resolvePolicy,
  type SandboxPolicy,
  sandboxRequest,
  SERVE_RECORD_FILES,
  SWEEPS_DIR,
} from "./policy.ts";
import {
  between,
  identity,
  pendingSweeps,
  recordPending,
  runSweep,
  sweepDone,
  type SweepPlan,
  type SweepResult,
} from "./git_sweep.ts";
import { applyLandlock, landlockAbi, type LandlockPlan, planLandlock } from "./landlock.ts";
import { installSeccomp } from "./seccomp.ts";
import { protectPaths, userNamespaceHop } from "./mount_ns.ts";
import { dropCapabilities } from "./caps.ts";
import { archInfo, cstring, lastError, type Sys, sys } from "./sys.ts";
import { STAGE_FLAG } from "./stage.ts";
import { type AllowEntry, configuredHosts, type NetMode, parseAllowList, showEntry } from "./net_policy.ts";
import {
  enterNetNamespace,
  netNamespaceProbe,
  proxyEnv,
  type StartedProxy,
  startProxy,
} from "./net_launch.ts";

/** What the launcher needs from the CLI edge. */
export interface LaunchRequest {
  /** The run's command line as given (no stage flag). */
  argv: string[];
  /** The sandbox's settings, read at the edge (`sandboxSettingsFromEnv`): the policy's source. */
  settings: SandboxSettings;
  /**
   * The process environment, handed unchanged (but for the proxy's variables) to the runtime,
   * which reads its own settings from it and loads `.env` itself. Never read here.
   */
  processEnv: Readonly<Record<string, string>>;
  /** The working directory relative paths are taken from. */
  cwd: string;
  /** The project root as given. */
  project: string;
  /** This launcher came through the user-namespace hop. */
  inUserNs: boolean;
  /**
   * In the user-namespace stage under the allow-list: the proxy the first launcher started, as
   * the edge read it from the variables that launcher handed across the exec (`net_bridge.ts`'s
   * `SOCKET_VAR` and `TOKEN_VAR`); absent or empty when none was handed.
   */
  handedProxy?: { socket?: string; token?: string };
  /** Writes one line to stderr. */
  say: (line: string) => void;
  /** How to start this program (default `selfLaunch()`). */
  launch?: SelfLaunch;
  /** The mesh URL the run joins (`--relay`): allowed under the allow-list. */
  relay?: string;
  /** The network plan `prepareNet` made (the proxy started). */
  net?: NetPlan;
  /**
   * Opens the service this launcher keeps for the run (the mesh's replay memory under a NATS
   * `--relay`: `src/clients/mesh/seen_remote.ts`, handed by the edge, which may reach the mesh's
   * modules): called once the user-namespace hop of the network step is behind, before the mounts
   * and Landlock, so what it opens stays writable to this process and to it alone. Undefined when
   * it cannot be opened (it has said why; the run's mesh then remembers ids for the run only).
   */
  keep?: () => KeptService | undefined;
}

/** A service the launcher keeps for the run while it lasts (see `LaunchRequest.keep`). */
export interface KeptService {
  /** The variables naming it for the confined runtime (its socket and token). */
  env: Record<string, string>;
  /** Ends it (the run has ended, or the launch failed or hops). */
  close(): void;
}

/** How the run reaches the network, and under the allow-list the proxy's socket. */
export interface NetPlan {
  mode: NetMode;
  allow: AllowEntry[];
  /** The proxy's Unix socket and token (allow-list only). */
  socket?: string;
  token?: string;
  /** The proxy this launcher started (ended if the launch fails). */
  proxy?: StartedProxy;
}

/**
 * The run's network plan; under the allow-list, the proxy is started here (outside the namespace
 * the launch will enter) unless this is the second launcher of the user-namespace hop, which is
 * handed the first one's socket.
 */
export function prepareNet(req: LaunchRequest): NetPlan {
  const mode = req.settings.net;
  if (mode !== "allow-list") return { mode, allow: [] };
  const allow = [
    ...parseAllowList(req.settings.netAllow),
    ...configuredHosts(req.settings.providerUrls, req.relay),
  ];
  if (req.inUserNs) {
    const socket = req.handedProxy?.socket;
    const token = req.handedProxy?.token;
    if (!socket || !token) {
      throw new AgentBlockError(`--sandbox-net allow-list: the user-namespace stage was given no proxy`);
    }
    return { mode, allow, socket, token };
  }
  const proxy = startProxy(allow, req.launch);
  return { mode, allow, socket: proxy.socket, token: proxy.token, proxy };
}

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
 * server that hands `--sandbox` to every run fails at its start, not at each run): the kernel's
 * Landlock, and under the allow-list (`settings.net`) the list and a network namespace
 * (`netNamespaceProbe`, in a child: this process stays where it is). `settings` are the server's
 * own (the edge reads them from its process environment, without a project's `.env`). Returns the
 * Landlock ABI; throws the error a run would fail with.
 */
export function sandboxPreflight(settings: SandboxSettings, project: string, cwd: string): number {
  const c = kernel();
  const policy = resolvePolicy(sandboxRequest(settings, resolve(cwd, project)));
  const abi = kernelPlan(c, policy).abi;
  if (settings.net === "allow-list") {
    parseAllowList(settings.netAllow);
    const why = policy.testNoNetns
      ? "AGENT_BLOCK_SANDBOX_TEST_NO_NETNS=1 pretends the kernel refuses one"
      : netNamespaceProbe();
    if (why !== undefined) throw netRefusal(why);
  }
  return abi;
}

/** The fail-closed error of an allow-list run where no network namespace can be had. */
function netRefusal(why: string): AgentBlockError {
  return new AgentBlockError(
    `--sandbox-net allow-list: no network namespace can be had here (${why}); the run does not ` +
      `start rather than reach the network unchecked (--sandbox-net open or off need none)`,
  );
}

/**
 * Applies the sandbox, starts the confined runtime and waits for it; then sweeps the grants for
 * repositories the run made or changed and exits with the run's code. Returns only by throwing,
 * and throws only before the runtime has started.
 */
export async function launchSandboxed(req: LaunchRequest): Promise<never> {
  let run: StartedRun;
  try {
    run = launchConfined(req);
  } catch (e) {
    kept?.close();
    req.net?.proxy?.kill();
    sweepDone(notedSweep); // no run started: nothing to sweep for it later
    throw e;
  }
  return await superviseRun(run, req.say, req.net?.proxy);
}

/**
 * Watches the proxy this launcher started beside the run (`startProxy` does not wait for it): one
 * that ends with a failure while the run goes on — it could not start, or died — stops the run,
 * which could not reach the network anyway, rather than leave its bridge waiting. Returns the
 * error to report then (read once the run has ended).
 */
function proxyWatch(proxy: StartedProxy | undefined, runtime: Deno.ChildProcess): () => string | undefined {
  if (!proxy) return () => undefined;
  let failure: string | undefined;
  let runEnded = false;
  runtime.status.then(() => runEnded = true, () => runEnded = true);
  proxy.ended.then((s) => {
    if (s.success || runEnded) return;
    failure = `--sandbox-net allow-list: the proxy ended (${
      s.signal ? `killed by ${s.signal}` : `exit ${s.code}`
    }) while the run needed it, so the run was stopped (the proxy's own message, if any, is above)`;
    try {
      runtime.kill("SIGKILL");
    } catch {
      // ended meanwhile
    }
  }, () => undefined);
  return () => failure;
}

const PR_SET_CHILD_SUBREAPER = 36;

/** The sweep this launch noted (`recordPending`), until the run has started. */
let notedSweep: Deno.FsFile | undefined;
/** The service this launch keeps for the run (`LaunchRequest.keep`), once opened. */
let kept: KeptService | undefined;

/** The confined runtime, started, and what the sweep after it needs. */
interface StartedRun {
  child: Deno.ChildProcess;
  plan: SweepPlan;
  /** The sweep's note (`recordPending`), emptied once it is done. */
  note?: Deno.FsFile;
  /** The service kept for the run (`LaunchRequest.keep`). */
  kept?: KeptService;
}

function launchConfined(req: LaunchRequest): StartedRun {
  const c = kernel();
  const net = req.net ?? { mode: "open", allow: [] };
  const home = req.settings.home;
  // The runtime would create the home; a rule needs it now, and its code tiers must exist to be
  // mounted read-only (an absent lib/ could otherwise be created, and filled, from inside).
  const private_ = [
    mcpAuthDir(home),
    flowLocksDir(home),
    serveLocksDir(home),
    join(home, SWEEPS_DIR),
    meshSeenDir(home),
  ];
  for (const dir of [home, join(home, "lib"), join(home, "blocks"), ...private_]) {
    try {
      Deno.mkdirSync(dir, { recursive: true, mode: private_.includes(dir) ? 0o700 : 0o777 });
    } catch {
      // not creatable: it grants nothing, and the run reports what it cannot write
    }
  }
  // serve's record is read by every later manager, unconfined: on a home where none has run yet
  // a confined run could create it (or, beside a record not open, its -wal or -journal, which
  // the next opener would replay into it). Empty files now, so the mount covers each of them
  // (SQLite takes an empty file for an empty database, an empty -wal or -journal for none).
  for (const name of SERVE_RECORD_FILES) {
    try {
      Deno.writeFileSync(join(home, name), new Uint8Array(), { createNew: true, mode: 0o600 });
    } catch {
      // there already (the mount covers it), or not creatable (the home grants nothing then)
    }
  }
  // A manager lock an earlier version left readable could be opened and held from inside.
  try {
    for (const e of Deno.readDirSync(serveLocksDir(home))) {
      if (e.isFile && e.name.endsWith(".lock")) Deno.chmodSync(join(serveLocksDir(home), e.name), 0o200);
    }
  } catch {
    // not readable: nothing in it can be opened from inside either
  }
  const policy = resolvePolicy(sandboxRequest(req.settings, resolve(req.cwd, req.project)));
  if (net.mode === "off") policy.tcp = false;
  const plan = kernelPlan(c, policy);
  const warnings: string[] = [];
  for (const name of policy.ignored) {
    warnings.push(
      `${name} in the project's .env is ignored: a confined run may write that file, so it cannot widen the sandbox (set it in the environment)`,
    );
  }
  for (const s of policy.skipped) warnings.push(`AGENT_BLOCK_SANDBOX_FS_RW: ${s} does not exist, skipped`);
  if (plan.dropped.length) {
    warnings.push(
      `Landlock ABI ${plan.abi} cannot enforce ${plan.dropped.join("; ")}: continuing without them`,
    );
  }
  const arch = archInfo();
  if (!arch) {
    warnings.push(`io_uring and other sockets are not denied on ${Deno.build.arch} (seccomp filter skipped)`);
  }
  let git = policy.gitRw
    ? "writable (AGENT_BLOCK_SANDBOX_GIT_RW=1)"
    : policy.gitDirs.length
    ? "read-only"
    : "none";
  let config = "read-only";
  const allowList = net.mode === "allow-list";
  const runtimeEnv = proxyEnv(
    req.processEnv,
    allowList && net.socket && net.token ? { socket: net.socket, token: net.token } : undefined,
  );
  // From source the runtime is the Deno CLI, whose background update check (dl.deno.land) would
  // be a refused host of every allow-list run and a connection the run never asked for.
  if ((req.launch ?? selfLaunch()).mode === "source") runtimeEnv.DENO_NO_UPDATE_CHECK = "1";
  if (allowList) {
    // before the mounts: a hop taken here carries both (`unshare --net --mount`)
    if (policy.testNoNetns) {
      throw netRefusal("AGENT_BLOCK_SANDBOX_TEST_NO_NETNS=1 pretends the kernel refuses one");
    }
    const ns = enterNetNamespace(c, req.inUserNs, policy.testUserNs);
    if (ns.status === "hop") {
      const hop = userNamespaceHop(true);
      if ("prefix" in hop) execve(c, [...hop.prefix, ...selfArgs(req, "userns")], runtimeEnv);
      throw netRefusal(`${ns.why}; ${hop.why}`);
    }
    if (ns.status === "unavailable") throw netRefusal(ns.why);
  }
  // The sweep after the run (`superviseRun`), noted first where the run cannot write, so a launcher
  // killed before it leaves it to the next launch on the project; and those earlier ones left.
  const dirs = sweptDirs(policy);
  const sweep = sweepPlan(policy);
  const sweeps = join(home, SWEEPS_DIR);
  const homeGrant = policy.writable.find((w) => w.source === "home")?.path;
  const earlier = pendingSweeps(sweeps, sweep, configCandidates(policy.project, homeGrant));
  sayQuarantine(earlier, req.say, EARLIER);
  // a configuration file that sweep renamed aside is no longer there to be mounted
  if (earlier.quarantined.length) Object.assign(policy, configPlaces(policy.project, homeGrant));
  sweep.watch = policy.configAbsent;
  const note = recordPending(sweeps, sweep);
  notedSweep = note;
  if (!note) {
    warnings.push(
      `cannot note this run's repository sweep in ${sweeps}: if the launcher is killed outright, nothing sweeps after the run`,
    );
  }
  // Opened now — after the network step's hop, before the mounts and Landlock below — so its file
  // stays writable to this process through the descriptors it holds, and read-only to the run.
  kept = req.keep?.();
  const paths = [...policy.gitDirs, ...policy.configPaths];
  // the configuration files the mounts below cover: the run cannot change them (never noted)
  sweep.keep = policy.configPaths;
  // what the sweep takes on trust by name, as it is now: a run able to rename an ancestor could
  // put another in its place
  sweep.held = [
    ...dirs.map((w) => ({ path: w.path })),
    ...sweep.skip.map((path) => ({ path })),
    ...policy.configPaths.map((path) => ({ path, config: true })),
  ].flatMap((h) => {
    const id = identity(h.path);
    return id === undefined ? [] : [{ ...h, id }];
  });
  if (paths.length) {
    const prot = protectPaths(c, paths, req.inUserNs, policy.testUserNs, allowList);
    if (prot.status === "hop") {
      kept?.close(); // the launcher after the hop opens its own
      kept = undefined;
      execve(c, [...prot.prefix, ...selfArgs(req, "userns")], runtimeEnv);
    }
    if (prot.status === "unavailable") {
      const store = tokenStore(home);
      if (store?.logins) {
        // Stored credentials a later unconfined run trusts: never beside a writable hole.
        throw new AgentBlockError(
          `--sandbox: the MCP logins in ${store.path} cannot be made read-only here (${prot.why}), and a ` +
            `sandboxed run must not be able to replace them; run where a mount namespace can be had ` +
            `(root, or user namespaces), or remove the logins first (agent-block mcp logout URL)`,
        );
      }
      warnings.push(`.git and agent-block's configuration stay writable: ${prot.why}`);
      sweep.keep = []; // nothing covered them: each is checked after the run like any other
      if (policy.gitDirs.length) git = "WRITABLE (no mount namespace)";
      config = "WRITABLE (no mount namespace)";
    }
  }
  // As root, or with the user namespace's kept capabilities: the runtime gets none of them.
  dropCapabilities(c);
  applyLandlock(c, plan, policy.writable);
  if (arch) installSeccomp(c, arch, { tcp: policy.tcp });
  for (const w of warnings) req.say(`[warn] agent-block: --sandbox: ${w}`);
  req.say(startupLine(policy, plan, arch !== undefined, git, config, net));
  // Everything above confined this (main) thread: a child it starts is inside the boundary; this
  // process stays, outside the run, to sweep after it.
  // a run killed outright leaves its orphans here, not to init
  if (c.prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n) !== 0) {
    throw new AgentBlockError(
      `--sandbox: cannot keep the run's processes below the launcher: ${lastError(c).text}`,
    );
  }
  const cmd = selfArgs(req, "runtime");
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd[0], {
      args: cmd.slice(1),
      env: { ...runtimeEnv, ...kept?.env },
      clearEnv: true,
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
  } catch (e) {
    throw new AgentBlockError(
      `--sandbox: cannot start the confined runtime (${cmd[0]}): ${(e as Error).message}`,
    );
  }
  return { child, plan: sweep, note, kept };
}

/**
 * Waits for the confined runtime (passing on the signals that would have reached it as this
 * process, and stopping it if the `proxy` this launcher started fails: `proxyWatch`), ends
 * whatever of the run is left below this process, sweeps the grants (`git_sweep.ts`) and exits
 * with the runtime's code (1 when the proxy stopped it). Never throws: the run has started.
 */
async function superviseRun(
  run: StartedRun,
  say: (line: string) => void,
  proxy: StartedProxy | undefined,
): Promise<never> {
  const stoppedBecause = proxyWatch(proxy, run.child);
  const forward: [Deno.Signal, () => void][] = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((sig) => [
    sig,
    () => {
      try {
        run.child.kill(sig);
      } catch {
        // ended meanwhile
      }
    },
  ]);
  for (const [sig, fn] of forward) Deno.addSignalListener(sig, fn);
  let code = 1;
  try {
    code = (await run.child.status).code;
    run.kept?.close(); // the runtime, its one client, has ended
    if (proxy) {
      // it ends by itself once the runtime has gone; ended here so it is not left for the walk
      // below, which a child of this process still running would otherwise cost
      proxy.kill();
      await proxy.ended;
    }
    // the runtime ends its own orphans; a runtime killed outright left them to this process
    if (hasChildren()) {
      const { endMembers } = await import("../proc/tree.ts"); // loaded only then: start-up
      await endMembers(() => ({ root: Deno.pid }), 500);
    }
    sayQuarantine(runSweep(run.plan), say, "the confined run");
    sweepDone(run.note);
    const why = stoppedBecause();
    if (why !== undefined) {
      say(`error: ${why}`);
      code = 1;
    }
  } catch (e) {
    say(`[warn] agent-block: --sandbox: the sweep after the run failed: ${(e as Error).message}`);
    if (code === 0) code = 1;
  }
  Deno.exit(code);
}

/**
 * True unless `/proc` shows this process has no child left (any thread's): the cheap answer for a
 * run that ended its own processes, before the walk of every process `endMembers` makes.
 */
function hasChildren(): boolean {
  try {
    for (const t of Deno.readDirSync(`/proc/${Deno.pid}/task`)) {
      if (Deno.readTextFileSync(`/proc/${Deno.pid}/task/${t.name}/children`).trim() !== "") return true;
    }
    return false;
  } catch {
    return true; // no such file here: ask endMembers
  }
}

/** Who a sweep done for a killed launcher names, in its lines. */
const EARLIER = "an earlier confined run, whose launcher was killed before its sweep";

/** The write grants the sweep walks or checks: the directories, devices aside. */
function sweptDirs(policy: SandboxPolicy) {
  return policy.writable.filter((w) => w.dir && w.source !== "device");
}

/** The sweep a run confined by `policy` gets, starting now (`git_sweep.ts`'s rule). */
function sweepPlan(policy: SandboxPolicy): SweepPlan {
  const dirs = sweptDirs(policy);
  const whole = dirs.filter((w) => w.source !== "tmp").map((w) => w.path);
  const roots = whole.filter((r) => !whole.some((o) => o !== r && r.startsWith(o + "/")));
  const shared = dirs.filter((w) => w.source === "tmp").map((w) => w.path);
  return {
    since: Date.now(),
    roots,
    topOnly: [...shared, ...between(shared, roots)],
    // the repositories the mounts protect, or (AGENT_BLOCK_SANDBOX_GIT_RW) the same ones left writable
    skip: policy.gitRw ? repositoryDirs(policy.project, policy.writable) : policy.gitDirs,
    runId: crypto.randomUUID().slice(0, 8),
  };
}

/**
 * Does, outside any sandbox, the sweeps that launchers on `project` (absolute) were killed
 * before doing (`pendingSweeps`), with the grants a `--sandbox` run of it under `settings` would
 * have, and says each quarantine on `say`. For the edge (`src/cli/environment.ts`), before it
 * reads the project's `.env`, when `sweep_notes.ts`'s `leftoverSweep` says one is owed: the next
 * run on the project, confined or not, must not load what the killed run planted.
 * @throws AgentBlockError when the grants cannot be resolved (the sweep cannot be done, and the
 *   `.env` it would check must not be read meanwhile)
 */
export function sweepLeftovers(
  settings: SandboxSettings,
  project: string,
  say: (line: string) => void,
): void {
  let policy: SandboxPolicy;
  try {
    policy = resolvePolicy(sandboxRequest(settings, project));
  } catch (e) {
    throw new AgentBlockError(
      `${
        join(settings.home, SWEEPS_DIR)
      } notes a sweep of ${project} that a killed sandbox launcher left undone, ` +
        `and it cannot be done now (${
          (e as Error).message
        }); check ${project} for a .env and for repositories ` +
        `(.git) the confined run may have planted, then remove the notes there`,
    );
  }
  const homeGrant = policy.writable.find((w) => w.source === "home")?.path;
  const done = pendingSweeps(
    join(settings.home, SWEEPS_DIR),
    sweepPlan(policy),
    configCandidates(policy.project, homeGrant),
  );
  sayQuarantine(done, say, EARLIER);
}

/** Says on stderr what a sweep quarantined (one line each, with how to restore it), and what it could not. */
function sayQuarantine(r: SweepResult, say: (line: string) => void, who: string): void {
  for (const q of r.quarantined) {
    say(
      q.kind === "config"
        ? `[warn] agent-block: --sandbox: quarantined ${q.path} as ${q.to}: ${who} created or changed it, and ` +
          `agent-block reads it as configuration or code outside the sandbox (a .env sets model endpoints and ` +
          `keys for later runs); review it, then rename it back (mv '${q.to}' '${q.path}')`
        : `[warn] agent-block: --sandbox: quarantined ${q.path} as ${q.to}: ${who} created or changed this ` +
          `repository, whose configuration or hooks git would run outside the sandbox; review it, then rename it ` +
          `back (a directory's HEAD inside it too)`,
    );
  }
  const replaced = r.replaced ?? [];
  // the topmost of what was replaced: what lay below it went with it
  for (const p of replaced.filter((p) => !replaced.some((q) => p.startsWith(q + "/")))) {
    say(
      `[warn] agent-block: --sandbox: ${p} is not what it was when ${who} started: the run moved or replaced it ` +
        `(or a directory above it), so what is there now was checked as new; look for the original nearby`,
    );
  }
  for (const f of r.failed) {
    say(
      `[warn] agent-block: --sandbox: cannot check or quarantine ${f.path} (${f.why}) after ${who}: do not ` +
        `run git or agent-block there before checking it for a .git, a repository's config and hooks, or a .env`,
    );
  }
}

/**
 * The MCP token store of `home` (`mcpAuthDir`, created by the launcher with the code tiers) and
 * whether it holds logins; undefined when it cannot be had (an unwritable home grants nothing).
 */
function tokenStore(home: string): { path: string; logins: boolean } | undefined {
  const dir = mcpAuthDir(home);
  try {
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
  config = "read-only",
  net?: NetPlan,
): string {
  const writes = policy.writable.map((w) => w.path).join(", ");
  const network = net?.mode === "allow-list"
    ? `; network: allow-list through the proxy (${net.allow.map(showEntry).join(", ") || "no hosts"})`
    : "";
  return `agent-block: sandbox on (Landlock ABI ${plan.abi}${
    seccomp ? ", seccomp" : ""
  }): writes only to ${writes}; ` +
    `TCP ${policy.tcp ? "allowed" : "denied"}; io_uring ${seccomp ? "denied" : "NOT denied"}; .git ${git}; ` +
    `agent-block config ${config}; no capabilities${network}`;
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
