/**
 * `agent-block [-s FILE | -b NAME] ...`: run one block and exit.
 *
 * Owns flag parsing for the run path, the three configuration layers (the `--config` file, then
 * the environment for knobs that have a variable, then flags — the later winning), loading
 * `<project>/.env`, mapping the run's outcome to the exit code, writing `--result` atomically,
 * and turning SIGINT/SIGTERM into a stop that ends the run's process groups (exit 130).
 *
 * Knobs with an environment variable: `AGENT_BLOCK_CPU_LIMIT_SECS`, `AGENT_BLOCK_MEMORY_LIMIT_MB`,
 * `AGENT_BLOCK_MCP_TIMEOUT_SECS`. `--prompt`, `--context` and `--result` have none: they are what
 * ONE run is, and an inherited variable would hand a child run its parent's prompt and result file.
 */
import { dirname, join, resolve } from "node:path";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { parseFlags } from "./args.ts";
import { readRunConfig, type RunConfig } from "../config/run_config.ts";
import { edgeEnvironment } from "./environment.ts";
import { blockRoots, findBlock, scanBlocks } from "../blocks/registry.ts";
import { runBlock } from "../runtime/run.ts";
import { exitCodeOf, type Outcome } from "../outcome.ts";
import { agentBlockHome } from "../home.ts";
import { writeStderr } from "../obs/log.ts";
import { VERSION } from "../version.ts";
import { preloadLua } from "../lua/wasm.ts";
import { writeOutcomeFile } from "./outcome_file.ts";

export const RUN_HELP = `agent-block ${VERSION} — run one Lua block, then exit

Usage:
  agent-block (-s FILE | -b NAME) [options]
  agent-block <command> [options]     (test, mcp, vendor, knl; see <command> --help)

Options:
  -s, --script FILE        Lua script to run
  -b, --block NAME         registered block to run (see "Blocks and libraries" in the README)
  -p, --project DIR        project root: .env, lib/ and blocks/ tiers, databases (default .)
      --prompt TEXT        sets _PROMPT
  -c, --context TEXT       sets _CONTEXT
      --config FILE        JSON file: prompt, context, result, labels, limits (lowest layer)
      --result FILE        write the value the script returns here (only if it returns)
      --outcome FILE       write how the run ended here as JSON (whatever the outcome)
      --label K=V          label the run (repeatable)
      --cpu-limit SECS     bound the Lua CPU time        (env AGENT_BLOCK_CPU_LIMIT_SECS)
      --memory-limit MB    bound the Lua heap            (env AGENT_BLOCK_MEMORY_LIMIT_MB)
      --mcp-timeout-secs N timeout of every MCP request  (env AGENT_BLOCK_MCP_TIMEOUT_SECS, default 30)
  -V, --version            print the version
  -h, --help               print this help

Exit codes: 0 ran and returned; 75 job.defer(); 1 raised or never ran; 2 bad command line;
130 interrupted (SIGINT/SIGTERM).
`;

/** Fully layered settings of one run. */
export interface RunSettings {
  script?: string;
  block?: string;
  project: string;
  prompt?: string;
  context?: string;
  result?: string;
  /** `--outcome FILE`: where the run's outcome is written as JSON. */
  outcome?: string;
  labels: Record<string, string>;
  cpuLimitSecs?: number;
  memoryLimitMb?: number;
  mcpTimeoutSecs: number;
  /** The run's environment: the process's with the project's `.env` layered in. */
  env: Record<string, string>;
  /** The process working directory. */
  cwd: string;
}

function positiveNumber(flag: string, raw: string, integer = false): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} must be a positive ${integer ? "integer" : "number"}, got '${raw}'`);
  }
  return n;
}

function envNumber(env: Record<string, string>, name: string, integer = false): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new AgentBlockError(`${name} must be a positive ${integer ? "integer" : "number"}, got '${raw}'`);
  }
  return n;
}

/** Parses run flags and layers them over the config file and the environment. */
export function parseRunArgs(argv: string[]): RunSettings | "help" | "version" {
  const parsed = parseFlags(argv, {
    script: { type: "string", short: "s" },
    block: { type: "string", short: "b" },
    project: { type: "string", short: "p" },
    prompt: { type: "string" },
    context: { type: "string", short: "c" },
    config: { type: "string" },
    result: { type: "string" },
    outcome: { type: "string" },
    label: { type: "string", multiple: true },
    "cpu-limit": { type: "string" },
    "memory-limit": { type: "string" },
    "mcp-timeout-secs": { type: "string" },
    version: { type: "boolean", short: "V" },
    help: { type: "boolean", short: "h" },
  });
  const v = parsed.values as {
    [flag: string]: string | undefined;
  } & { label?: string[]; help?: true; version?: true };
  if (v.help) return "help";
  if (v.version) return "version";
  const flagLabels: Record<string, string> = {};
  for (const l of v.label ?? []) {
    const eq = l.indexOf("=");
    if (eq <= 0) throw new UsageError(`--label must be KEY=VALUE, got '${l}'`);
    flagLabels[l.slice(0, eq)] = l.slice(eq + 1);
  }
  const cpu = v["cpu-limit"] !== undefined ? positiveNumber("--cpu-limit", v["cpu-limit"]) : undefined;
  const mem = v["memory-limit"] !== undefined
    ? positiveNumber("--memory-limit", v["memory-limit"])
    : undefined;
  const mcpT = v["mcp-timeout-secs"] !== undefined
    ? positiveNumber("--mcp-timeout-secs", v["mcp-timeout-secs"], true)
    : undefined;

  if (v.script !== undefined && v.block !== undefined) {
    throw new AgentBlockError("--script and --block contradict each other: name one script to run");
  }
  if (v.script === undefined && v.block === undefined) {
    throw new UsageError("nothing to run: pass --script FILE or --block NAME (see --help)");
  }
  const project = v.project ?? ".";
  // .env is the host half's config: layered in before the environment layer is read.
  const edge = edgeEnvironment(project);
  for (const w of edge.warnings) {
    writeStderr(new TextEncoder().encode(`[warn] agent-block: ${w}\n`));
  }
  const env = edge.env;
  const cfg: RunConfig = v.config !== undefined ? readRunConfig(v.config) : {};
  return {
    script: v.script,
    block: v.block,
    project,
    prompt: v.prompt ?? cfg.prompt,
    context: v.context ?? cfg.context,
    result: v.result ?? cfg.result,
    outcome: v.outcome ?? cfg.outcome,
    labels: { ...(cfg.labels ?? {}), ...flagLabels },
    cpuLimitSecs: cpu ?? envNumber(env, "AGENT_BLOCK_CPU_LIMIT_SECS") ?? cfg.cpu_limit_secs,
    memoryLimitMb: mem ?? envNumber(env, "AGENT_BLOCK_MEMORY_LIMIT_MB") ?? cfg.memory_limit_mb,
    mcpTimeoutSecs: mcpT ?? envNumber(env, "AGENT_BLOCK_MCP_TIMEOUT_SECS", true) ?? cfg.mcp_timeout_secs ??
      30,
    env,
    cwd: edge.cwd,
  };
}

/** Writes `data` to `path` atomically (temporary file in the same directory, then rename). */
export function writeAtomic(path: string, data: Uint8Array): void {
  const abs = resolve(path);
  const tmp = join(dirname(abs), `.${crypto.randomUUID()}.tmp`);
  try {
    Deno.writeFileSync(tmp, data);
    Deno.renameSync(tmp, abs);
  } catch (e) {
    try {
      Deno.removeSync(tmp);
    } catch { /* nothing to remove */ }
    throw new AgentBlockError(`cannot write result file ${path}: ${(e as Error).message}`);
  }
}

const enc = new TextEncoder();
function say(line: string): void {
  writeStderr(enc.encode(line.endsWith("\n") ? line : line + "\n"));
}

/** Reports an outcome on stderr (and writes the result file); returns its exit code. */
export function reportOutcome(outcome: Outcome, resultPath?: string): number {
  switch (outcome.status) {
    case "returned": {
      if (resultPath !== undefined) {
        const r = outcome.value;
        writeAtomic(
          resultPath,
          r === undefined ? new Uint8Array() : typeof r === "string" ? enc.encode(r) : r,
        );
      }
      break;
    }
    case "deferred":
      say(`deferred: ${outcome.reason}`);
      break;
    case "stopped":
      say(`stopped: ${outcome.reason}`);
      break;
    case "timed_out":
      say(`timed out after ${outcome.seconds} s`);
      break;
    case "failed":
      say(`error: ${outcome.message}`);
      if (outcome.traceback) say(outcome.traceback);
      break;
  }
  return exitCodeOf(outcome);
}

/** Runs the run command; returns the exit code. */
export async function runCommand(argv: string[]): Promise<number> {
  preloadLua(); // overlap the wasm compile with the work below
  const s = parseRunArgs(argv);
  if (s === "help") {
    Deno.stdout.writeSync(enc.encode(RUN_HELP));
    return EXIT.OK;
  }
  if (s === "version") {
    Deno.stdout.writeSync(enc.encode(`agent-block ${VERSION}\n`));
    return EXIT.OK;
  }
  let scriptPath = s.script;
  if (s.block !== undefined) {
    const roots = blockRoots(resolve(s.cwd, s.project), agentBlockHome(s.env, s.cwd));
    const b = findBlock(roots, s.block);
    if (!b) {
      const known = scanBlocks(roots).map((x) => x.name);
      throw new AgentBlockError(
        `unknown block '${s.block}'; known blocks: ${known.length ? known.join(", ") : "(none)"} ` +
          `(searched ${roots.map((r) => r.dir).join(", ")})`,
      );
    }
    scriptPath = b.path;
  }
  const stop = new AbortController();
  const onSignal = (sig: string) => () => stop.abort(`received ${sig}`);
  const listeners: [Deno.Signal, () => void][] = [["SIGINT", onSignal("SIGINT")], [
    "SIGTERM",
    onSignal("SIGTERM"),
  ]];
  for (const [sig, fn] of listeners) Deno.addSignalListener(sig, fn);
  try {
    const outcome = await runBlock({
      script: { path: scriptPath! },
      projectRoot: s.project,
      env: s.env,
      cwd: s.cwd,
      prompt: s.prompt,
      context: s.context,
      labels: s.labels,
      limits: {
        cpuSeconds: s.cpuLimitSecs,
        memoryBytes: s.memoryLimitMb ? Math.round(s.memoryLimitMb * 1024 * 1024) : undefined,
      },
      signal: stop.signal,
      mcpTimeoutSecs: s.mcpTimeoutSecs,
    });
    if (s.outcome !== undefined) writeOutcomeFile(s.outcome, outcome, s.cwd);
    return reportOutcome(outcome, s.result);
  } finally {
    for (const [sig, fn] of listeners) Deno.removeSignalListener(sig, fn);
  }
}
