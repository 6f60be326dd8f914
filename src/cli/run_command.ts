/**
 * `agent-block [-s FILE | -b NAME] ...`: run one block and exit.
 *
 * Owns flag parsing for the run path and the I/O around the settings: loading `<project>/.env`
 * (through the edge, `environment.ts`) and the `--config` file, then handing them to the pure
 * layering (`src/config/settings.ts`: the file, then the environment for knobs that have a
 * variable, then flags — the later winning); mapping the run's outcome to the exit code, writing
 * `--result` atomically (relative to the process working directory; `-` is stdout; a path whose
 * directory is missing, or that names a directory, is an error before the run starts) when the
 * script returned and removing a file an earlier run left there when it did not (a raise, a defer, an exit, a stop,
 * a run that never started: the file is the value of THIS run or absent); handing a sandboxed run
 * (`--sandbox`, `AGENT_BLOCK_SANDBOX`) to the launcher before anything runs (`sandbox_launch.ts`
 * and `src/sandbox/`, loaded only then: it re-executes the process confined,
 * `--sandbox-stage=runtime`, or fails closed with exit 1); and turning SIGINT/SIGTERM
 * into a stop that ends the run's process groups (exit 130). The process asks to adopt orphans
 * (`src/proc/reaper.ts`: it becomes a child subreaper at its first spawn) and, once the run has
 * ended, ends whatever is still below it.
 * `--progress` and `--events` become observers of the run (`watch.ts`, imported only when one
 * is given); `--outcome`'s writer (`outcome_file.ts`) is imported only when the flag is given. The standard `OTEL_*` variables of the run's environment become its telemetry
 * settings, and `TRACEPARENT` (a W3C header; an invalid one is ignored) the parent of its span
 * (`src/obs/otel/settings.ts`); the run flushes its spans before it reports, SIGTERM included.
 *
 * The run itself goes through the embedding SDK, like any embedder's: flags → `BlockConfig` →
 * `runConfig` → the outcome → the exit code. The CLI is a consumer of that API, not a sibling.
 */
import { onStopSignals } from "./stop_signals.ts";
import { agentBlockHome, settingsFromEnv } from "../config/env_settings.ts";
import { dirname, resolve } from "node:path";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { didYouMean } from "./args.ts";
import { isDir, writeAtomic, writeTarget } from "../util/fs.ts";
import { parseRunArgs, type RunSettings, sandboxWanted } from "./run_args.ts";
import type { NetBridge, RunStage } from "./sandbox_launch.ts";
import type { SeenIds } from "../clients/mesh/seen_ids.ts";
import { blockRoots, findBlock, scanRegistry, unknownBlockText } from "../blocks/registry.ts";
import { BlockConfig } from "../sdk/config.ts";
import { ScriptSource } from "../sdk/sources.ts";
import { runConfig } from "../sdk/run_block.ts";
import type { RunObserver, RunRequest } from "../runner/runner.ts";
import { fanOut } from "../obs/run_events.ts";
import { InProcessRunner } from "../runner/in_process.ts";
import { exitCodeOf, type Outcome } from "../outcome.ts";
import { writeStderr, writeStdout } from "../obs/log.ts";
import { COMMIT, VERSION } from "../version.ts";
import { LUA_VERSION, preloadLua } from "../lua/wasm.ts";
import { adoptOrphans, endOrphans } from "../proc/reaper.ts";
import { formatTraceparent, parseTraceparent, telemetryFromEnv } from "../obs/otel/settings.ts";

export const RUN_HELP = `agent-block ${VERSION} — run one Lua block, then exit

Usage:
  agent-block (-s FILE | -b NAME) [options]
  agent-block <command> [options]     (test, knl, blocks, types, mcp, a2a, flow, serve,
                                       worker, vendor; see <command> --help)

Options:
  -s, --script FILE        Lua script to run (- reads it from stdin)
  -b, --block NAME         registered block to run (see "Blocks and libraries" in the README)
  -p, --project DIR        project root: .env, lib/ and blocks/ tiers, databases, and the
                           run's working directory (default .)
      --cwd DIR            the run's working directory instead of the project root: what the
                           block's relative paths resolve against (io.open, std.fs, ...)
      --prompt TEXT        sets _PROMPT
  -c, --context TEXT       sets _CONTEXT
      --config FILE        JSON file: prompt, context, result, labels, limits, ... (lowest layer)
      --result FILE        write the value the script returns here (only if it returns;
                           otherwise a file already there is removed; - for stdout)
      --outcome FILE       write how the run ended here as JSON (whatever the outcome;
                           - for stdout)
      --label K=V          label the run (repeatable)
      --cpu-limit SECS     bound the Lua CPU time        (env AGENT_BLOCK_CPU_LIMIT_SECS)
      --memory-limit MB    bound the Lua heap            (env AGENT_BLOCK_MEMORY_LIMIT_MB)
      --mcp-timeout-secs N timeout of every MCP request  (env AGENT_BLOCK_MCP_TIMEOUT_SECS, default 30)
      --progress           one line per step on stderr: model turns, tool calls, MCP, the end
                           (env AGENT_BLOCK_PROGRESS=1)
      --events FILE        stream the run's events as JSON Lines as they happen: kernel rows
                           (as "knl export --as events"), MCP calls, sessions, artifacts, and
                           last the end with the outcome (- for stderr)
      --relay URL          join the mesh: nats://host:4222[,nats://...] (a NATS server or
                           cluster) or ws(s)://host:port/ws (an agent-mesh relay)
      --secret-key HEX     mesh identity, 64 hex characters (env AGENT_BLOCK_MESH_SECRET_KEY,
                           also from .env; default: a random key, new every run)
      --nats-creds FILE    a NATS relay's .creds file      (env AGENT_BLOCK_NATS_CREDS)
      --nats-nkey FILE     a NATS relay's nkey seed file   (env AGENT_BLOCK_NATS_NKEY)
      --nats-token-file FILE  a NATS relay's token file    (env AGENT_BLOCK_NATS_TOKEN_FILE)
      --nats-tls-ca FILE   the CA (PEM) of a NATS relay    (env AGENT_BLOCK_NATS_TLS_CA; TLS required)
      --request FILE       run the request in FILE (JSON, as the child runner writes it: the
                           whole run; only --result, --outcome, --events, --progress,
                           --sandbox and --sandbox-net may stand beside it)
      --sandbox            confine the run (Linux: Landlock, seccomp; see "Sandbox mode" in the
                           README; also AGENT_BLOCK_SANDBOX=1)
      --sandbox-net MODE   the sandbox's network: open (default), off (no TCP) or
                           allow-list (only AGENT_BLOCK_SANDBOX_NET_ALLOW's hosts and the
                           configured ones, through a proxy; also AGENT_BLOCK_SANDBOX_NET)
  -V, --version            print agent-block's version and commit, Deno's and Lua's
  -h, --help               print this help

Exit codes: 0 ran and returned; 75 job.defer(); 1 raised or never ran; 2 bad command line;
130 interrupted (SIGINT/SIGTERM).

Examples:
  echo 'return "hello from " .. std.env.project_root()' | agent-block -s - --result hello.txt
  agent-block -s my_agent.lua --prompt "Summarise the README" --label job=nightly
  agent-block -b hello_agent          (in the agent-block checkout: its blocks/hello_agent.lua)
`;

export { parseRunArgs, type RunSettings };

/** Writes the result file atomically (`-`: to stdout); a failure names it. */
function writeResult(path: string, cwd: string, data: Uint8Array): void {
  if (path === "-") return writeStdout(data);
  try {
    writeAtomic(resolve(cwd, path), data);
  } catch (e) {
    throw new AgentBlockError(`cannot write result file ${path}: ${(e as Error).message}`);
  }
}

/**
 * Before the run starts: a `--result` / `--outcome` path (`flag` names which) that could not be
 * written once the run's work is done — its directory missing, or the path naming a directory,
 * a socket, a link to nothing (`writeTarget`) — is an error now. `-` (stdout) always can be.
 */
function checkOutputPath(flag: string, path: string | undefined, cwd: string): void {
  if (path === undefined || path === "-") return;
  const abs = resolve(cwd, path);
  const dir = dirname(abs);
  if (!isDir(dir)) {
    throw new AgentBlockError(`${flag} ${path}: the directory ${dir} does not exist (nothing was run)`);
  }
  try {
    writeTarget(abs);
  } catch (e) {
    throw new AgentBlockError(
      `${flag} ${path}: cannot be written: ${(e as Error).message} (nothing was run)`,
    );
  }
}

/**
 * Removes a result file an earlier run left (this run did not return, so it has no value); a
 * failure to remove one that is there names it — a stale value must not pass for this run's.
 * Only a regular file or a symbolic link (the link, not what it names) is removed: a directory,
 * a device or a FIFO is no earlier value (no run could have left one) and is left alone.
 */
function removeStaleResult(path: string, cwd: string): void {
  if (path === "-") return;
  const abs = resolve(cwd, path);
  try {
    const info = Deno.lstatSync(abs);
    if (!info.isFile && !info.isSymlink) return;
    Deno.removeSync(abs);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw new AgentBlockError(
      `cannot remove the result file ${path} an earlier run left (this run returned no value): ${
        (e as Error).message
      }`,
    );
  }
}

const enc = new TextEncoder();
function say(line: string): void {
  writeStderr(enc.encode(line.endsWith("\n") ? line : line + "\n"));
}

/**
 * Reports an outcome on stderr (and writes the result file, or removes a stale one when the
 * script did not return); returns its exit code.
 */
export function reportOutcome(outcome: Outcome, resultPath: string | undefined, cwd: string): number {
  switch (outcome.status) {
    case "returned": {
      if (resultPath !== undefined) {
        const r = outcome.value;
        writeResult(
          resultPath,
          cwd,
          r === undefined ? new Uint8Array() : typeof r === "string" ? enc.encode(r) : r,
        );
      }
      break;
    }
    case "deferred":
      say(`deferred: ${outcome.reason}`);
      break;
    case "cancelled":
      say(`stopped: ${outcome.reason}`);
      break;
    case "timed_out":
      say(`timed out after ${outcome.seconds} s`);
      break;
    case "raised":
      say(`error: ${outcome.message}`);
      if (outcome.traceback) say(outcome.traceback);
      break;
  }
  // After the report: a file that cannot be removed is a second error, not a substitute for the first.
  if (outcome.status !== "returned" && resultPath !== undefined) removeStaleResult(resultPath, cwd);
  return exitCodeOf(outcome);
}

/**
 * What `--version` prints: agent-block's version, the commit a release was built from (`none`
 * from a checkout), then Deno's and Lua's versions (no engine is started).
 */
export function versionText(): string {
  const commit = COMMIT ?? "none (not a release build)";
  return `agent-block ${VERSION}\ncommit ${commit}\nDeno ${Deno.version.deno}\n${LUA_VERSION}\n`;
}

/** The grace before SIGKILL for processes the run left behind (`AGENT_BLOCK_TASK_GRACE_MS`). */
function orphanGraceMs(env: Record<string, string>): number {
  try {
    return settingsFromEnv(env).taskGraceMs ?? 1000;
  } catch {
    return 1000; // the run itself reported the bad value
  }
}

/** The name a script read from stdin (`-s -`) runs under: its chunk name, `_SCRIPT_NAME`. */
const STDIN_SCRIPT = "stdin";

/**
 * All of stdin (`-s -`). The reader's lock is released after: what the script's `io.read` then
 * reads is the end of the stream.
 */
async function readStdin(): Promise<Uint8Array> {
  const reader = Deno.stdin.readable.getReader();
  const parts: Uint8Array[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Refuses a directory that is not there (`what` names it), before a block is looked up in it. */
function mustBeDirectory(path: string, what: string): void {
  let isDir = false;
  try {
    isDir = Deno.statSync(path).isDirectory;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw new AgentBlockError(`${what}: ${(e as Error).message}`);
    throw new AgentBlockError(`${what} does not exist`);
  }
  if (!isDir) throw new AgentBlockError(`${what} is not a directory`);
}

/** The script of the block `name`, or the unknown-block error listing what is there. */
function blockPath(s: RunSettings, name: string): string {
  const roots = blockRoots(s.projectRoot, agentBlockHome(s.env, s.cwd));
  const b = findBlock(roots, name);
  if (b) return b.path;
  const near = didYouMean(name, scanRegistry(roots).blocks.map((x) => x.name));
  throw new AgentBlockError(unknownBlockText(name, roots, { near }));
}

/**
 * Runs the run command; returns the exit code.
 * @param stage set when this process is a stage of the sandbox launch (`--sandbox-stage=…`)
 */
export async function runCommand(argv: string[], stage?: RunStage): Promise<number> {
  preloadLua(); // overlap the wasm compile with the work below
  const s = await parseRunArgs(argv, stage !== undefined); // a stage after the launch: its launcher said the warnings
  if (s === "help") {
    writeStdout(enc.encode(RUN_HELP));
    return EXIT.OK;
  }
  if (s === "version") {
    writeStdout(enc.encode(versionText()));
    return EXIT.OK;
  }
  let script: ScriptSource | undefined;
  try {
    // Before anything runs: where the run's value and outcome go can be written.
    checkOutputPath("--result", s.result, s.cwd);
    checkOutputPath("--outcome", s.outcome, s.cwd);
    if (s.sandboxNet !== undefined && stage === undefined && !sandboxWanted(s)) {
      throw new UsageError(`--sandbox-net ${s.sandboxNet} needs --sandbox (or AGENT_BLOCK_SANDBOX)`);
    }
    // Before anything runs: a requested sandbox is applied, or the run fails closed.
    if (stage !== "runtime" && (stage === "userns" || sandboxWanted(s))) {
      await (await import("./sandbox_launch.ts")).launchRun(argv, s, stage);
    }
    mustBeDirectory(s.projectRoot, `project directory ${s.project}`);
    if (s.runCwd !== s.projectRoot) mustBeDirectory(s.runCwd, `--cwd ${s.runCwd}`);
    // the caller's path: against the process working directory, not the run's (a request names its own)
    script = s.request !== undefined
      ? undefined
      : s.block !== undefined
      ? ScriptSource.path(blockPath(s, s.block))
      : s.script === "-"
      ? ScriptSource.inline(await readStdin(), STDIN_SCRIPT)
      : ScriptSource.path(resolve(s.cwd, s.script!));
  } catch (e) {
    // The run never started: it has no value, so an earlier run's must not stand for it.
    try {
      if (s.result !== undefined) removeStaleResult(s.result, s.cwd);
    } catch (e2) {
      say(`error: ${(e2 as Error).message}`); // the second error; the first is what ends the run
    }
    throw e;
  }
  // The confined runtime's entry (loaded only there: an unconfined run does not load the launch):
  // under the network allow-list the bridge to the proxy, under a NATS relay the launcher's replay
  // memory, both before any Lua or child.
  const confined = stage === "runtime" ? await import("./sandbox_launch.ts") : undefined;
  const net = confined ? await confined.startNetBridge() : undefined;
  const meshSeenIds = confined ? await confined.connectSeenStore() : undefined;
  // watching the run: loaded only when asked for (start-up of the run path)
  const watch = s.progress || s.events !== undefined
    ? await (await import("./watch.ts")).openWatch({ progress: s.progress, events: s.events, cwd: s.cwd })
    : undefined;
  const stop = new AbortController();
  using _signals = onStopSignals((sig) => stop.abort(`received ${sig}`));
  // One run per process: every orphan of its children is the run's (src/proc/reaper.ts).
  adoptOrphans((m) => say(`[warn] agent-block: ${m}`));
  try {
    let outcome: Outcome;
    try {
      outcome = s.request !== undefined
        ? await runRequest(s, s.request, stop.signal, watch?.observers ?? [], net, meshSeenIds)
        : await runFlagged(s, script!, stop.signal, watch?.observers ?? [], net, meshSeenIds);
    } finally {
      // What escaped the run's own ending (a daemon that detached and cleared its environment).
      await endOrphans(orphanGraceMs(s.env));
    }
    // loaded only for a run that asked (--outcome): a compile root in deno.json's compile.include
    if (s.outcome !== undefined) {
      (await import("./outcome_file.ts")).writeOutcomeFile(s.outcome, outcome, s.cwd);
    }
    return reportOutcome(outcome, s.result, s.cwd);
  } finally {
    await watch?.close();
  }
}

/** A run from flags: flags → `BlockConfig` → the SDK's `runConfig`, like any embedder's. */
async function runFlagged(
  s: RunSettings,
  script: ScriptSource,
  signal: AbortSignal,
  observers: readonly RunObserver[],
  net: NetBridge | undefined,
  meshSeenIds: SeenIds | undefined,
): Promise<Outcome> {
  const config = BlockConfig.builder(script, s.projectRoot)
    .env(s.env)
    .cwd(s.runCwd)
    .labels(s.labels)
    .limits({ cpuSeconds: s.cpuLimitSecs, memoryMb: s.memoryLimitMb })
    .mcpRpcTimeoutMs(s.mcpTimeoutSecs * 1000)
    .signal(signal);
  if (s.relay !== undefined) config.relay(s.relay);
  if (s.secretKey !== undefined) config.secretKey(s.secretKey);
  if (s.prompt !== undefined) config.prompt(s.prompt);
  if (s.context !== undefined) config.context(s.context);
  for (const o of observers) config.observe(o);
  // OpenTelemetry: the standard variables are read here, at the edge, and travel typed.
  config.telemetry(telemetryFromEnv(s.env));
  const parent = parseTraceparent(s.env.TRACEPARENT);
  if (parent) config.traceparent(formatTraceparent(parent.traceId, parent.spanId, parent.sampled));
  const report = await runConfig(
    config.build(),
    { env: () => s.env, cwd: () => s.cwd },
    (handles) =>
      new InProcessRunner({
        envSettings: settingsFromEnv,
        ...handles,
        netDenials: net?.denials,
        netProxy: net?.proxy,
        meshSeenIds,
      }),
  );
  return report.outcome;
}

/**
 * A run from `--request FILE` (what the child runner starts): the request as sent, in the
 * environment this process was given with the project's `.env` layered in, in this process
 * (confined already when it asked for the sandbox: this is the sandbox's runtime stage then).
 */
async function runRequest(
  s: RunSettings,
  request: RunRequest,
  signal: AbortSignal,
  observers: readonly RunObserver[],
  net: NetBridge | undefined,
  meshSeenIds: SeenIds | undefined,
): Promise<Outcome> {
  const observe = fanOut(observers, (m) => say(`[warn] agent-block: ${m}`));
  const report = await new InProcessRunner({
    envSettings: settingsFromEnv,
    netDenials: net?.denials,
    netProxy: net?.proxy,
    meshSeenIds,
  }).run(
    { ...request, env: s.env, cwd: s.runCwd, sandbox: undefined },
    { signal, observe },
  );
  return report.outcome;
}
