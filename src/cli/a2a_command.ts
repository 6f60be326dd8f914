/**
 * `agent-block a2a serve`: the project's blocks as one A2A 1.0 agent (a skill per block).
 *
 * Owns the flags (`-p/--project`, `--block-dir` (repeatable), `--bind HOST:PORT` (loopback only,
 * default `127.0.0.1:7790`; port 0 picks one), `--token-file F`, `--run-timeout SECS`,
 * `--sandbox`: every run confined, checked at start as `agent-block mcp` does), loading the
 * project's `.env` at this edge, and the server's lifetime: it serves until SIGINT/SIGTERM, then
 * ends every run still going (each run's process tree), waits for them, and exits 0. The serving
 * logic lives in `src/a2a_server/`; every run goes through the child runner, one process each.
 *
 * The one line a launcher reads to find the server goes to stderr:
 * `agent-block a2a: listening on http://127.0.0.1:PORT`.
 */
import { onStopSignals, shutdownAfterRuns } from "./stop_signals.ts";
import { childRunServer, endServer } from "./child_run_server.ts";
import { agentBlockHome } from "../config/env_settings.ts";
import { parseFlags } from "./args.ts";
import { resolve } from "node:path";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { edgeEnvironment, edgeProcessEnv } from "./environment.ts";
import { sandboxRequested, sandboxSettingsFromEnv } from "../config/env_settings.ts";
import { writeStderr, writeStdout } from "../obs/log.ts";
import { blockRoots, scanBlocks } from "../blocks/registry.ts";
import { parseListenAddress, readTokenFile } from "../mcp_server/http.ts";
import { VERSION } from "../version.ts";

export const A2A_HELP = `agent-block ${VERSION} a2a — serve the registered blocks as an A2A agent

Usage:
  agent-block a2a serve [-p DIR] [--block-dir DIR]... [--bind 127.0.0.1:PORT]
                        [--token-file F] [--run-timeout SECS] [--sandbox]

Serves one A2A 1.0 agent whose skills are the blocks in <project>/.agent-block/blocks/,
<project>/blocks/, $AGENT_BLOCK_HOME/blocks/ and every --block-dir. A message runs the block
named by message.metadata.skill (or the only block) in a process of its own, with the message's
text as _PROMPT; the run's events stream as task status updates and its value is the artifact
"result". Cancelling the task ends the run.

  GET  /.well-known/agent-card.json   the agent card
  POST /a2a/jsonrpc                   JSON-RPC binding
       /a2a/rest/...                  HTTP+JSON binding

Options:
  -p, --project DIR      project root (default .)
      --block-dir DIR    another directory of blocks (repeatable)
      --bind HOST:PORT   listen address, loopback only (default 127.0.0.1:7790; port 0 picks one)
      --token-file FILE  require "Authorization: Bearer <token in FILE>" on every request
      --run-timeout SECS limit of one run (default 600)
      --sandbox          run every block under --sandbox (Linux; also AGENT_BLOCK_SANDBOX=1)
  -h, --help             this text
`;

/** The parsed flags. */
export interface A2aServeSettings {
  project: string;
  blockDirs: string[];
  bind: string;
  tokenFile?: string;
  runTimeoutSecs: number;
  sandbox: boolean;
}

/** Parses `agent-block a2a serve`'s flags. */
export function parseA2aServeArgs(argv: string[]): A2aServeSettings | "help" {
  const parsed = parseFlags(argv, {
    project: { type: "string", short: "p" },
    "block-dir": { type: "string", multiple: true },
    bind: { type: "string" },
    "token-file": { type: "string" },
    "run-timeout": { type: "string" },
    sandbox: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  }, { command: "a2a serve" });
  const v = parsed.values as {
    project?: string;
    "block-dir"?: string[];
    bind?: string;
    "token-file"?: string;
    "run-timeout"?: string;
    sandbox?: boolean;
    help?: boolean;
  };
  if (v.help) return "help";
  let runTimeoutSecs = 600;
  if (v["run-timeout"] !== undefined) {
    const n = Number(v["run-timeout"]);
    if (!Number.isFinite(n) || n <= 0) {
      throw new UsageError(
        `a2a serve: --run-timeout must be a positive number of seconds, got '${v["run-timeout"]}'`,
      );
    }
    runTimeoutSecs = n;
  }
  return {
    project: v.project ?? ".",
    blockDirs: v["block-dir"] ?? [],
    bind: v.bind ?? "127.0.0.1:7790",
    tokenFile: v["token-file"],
    runTimeoutSecs,
    sandbox: v.sandbox === true,
  };
}

/** Runs `agent-block a2a ...`; returns the exit code. */
export async function a2aCommand(argv: string[]): Promise<number> {
  if (argv[0] === "-h" || argv[0] === "--help" || argv.length === 0) {
    writeStdout(new TextEncoder().encode(A2A_HELP));
    return argv.length === 0 ? EXIT.USAGE : EXIT.OK;
  }
  if (argv[0] !== "serve") throw new UsageError(`a2a: unknown subcommand '${argv[0]}' (the one is 'serve')`);
  const s = parseA2aServeArgs(argv.slice(1));
  if (s === "help") {
    writeStdout(new TextEncoder().encode(A2A_HELP));
    return EXIT.OK;
  }
  let addr;
  try {
    addr = parseListenAddress(s.bind);
  } catch (e) {
    throw new UsageError(`a2a serve: ${(e as Error).message.replace(/^--http/, "--bind")}`);
  }
  const token = s.tokenFile !== undefined ? readTokenFile(s.tokenFile) : undefined;
  let projectRoot: string;
  try {
    projectRoot = Deno.realPathSync(s.project);
    if (!Deno.statSync(projectRoot).isDirectory) throw new Error("not a directory");
  } catch {
    throw new AgentBlockError(`a2a serve: project directory ${s.project} does not exist`);
  }
  const blockDirs = s.blockDirs.map((d) => resolve(d));
  for (const d of blockDirs) {
    try {
      if (!Deno.statSync(d).isDirectory) throw new Error();
    } catch {
      throw new AgentBlockError(`a2a serve: --block-dir ${d} is not a directory`);
    }
  }
  const edge = await edgeEnvironment(projectRoot);
  const sandbox = s.sandbox || sandboxRequested(edge.env.AGENT_BLOCK_SANDBOX);
  if (sandbox) {
    const { sandboxPreflight } = await import("../sandbox/launcher.ts");
    try {
      // the policy's source is the process environment, not the project's .env
      sandboxPreflight(sandboxSettingsFromEnv(edgeProcessEnv(), edge.cwd), projectRoot, edge.cwd);
    } catch (e) {
      throw new AgentBlockError(`a2a serve: ${(e as Error).message}`);
    }
  }
  const server = childRunServer("agent-block a2a", edge.env, edge.warnings, sandbox);
  const { log, stop, runs, runner } = server;
  const home = agentBlockHome(edge.env, edge.cwd);
  const { serveA2a } = await import("../a2a_server/http.ts");
  const serving = serveA2a({
    hostname: addr.hostname,
    port: addr.port,
    token,
    log,
    blocks: () => scanBlocks(blockRoots(projectRoot, home, blockDirs)),
    runner,
    projectRoot,
    env: edge.env,
    runTimeoutSecs: s.runTimeoutSecs,
    runs,
  });
  using _signals = onStopSignals((sig) => stop.abort(`received ${sig}`));
  try {
    writeStderr(new TextEncoder().encode(`agent-block a2a: listening on ${serving.url}\n`));
    log.info(
      `serving the blocks of ${projectRoot} as an A2A agent${token ? " (bearer token required)" : ""}` +
        (sandbox ? " (sandboxed runs)" : ""),
    );
    shutdownAfterRuns(stop.signal, runs, () => serving.shutdown());
    await serving.finished;
  } finally {
    await endServer(server);
  }
  return EXIT.OK;
}
