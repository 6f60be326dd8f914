/**
 * `agent-block mcp`: serve the registered blocks to an MCP client as the `run_block` tool.
 * (`mcp login|logout|auth status`, the stored logins of remote servers, are handed to
 * `mcp_auth_command.ts`.)
 *
 * Owns the flags (`-p/--project`, `--block-dir` (repeatable), `--http HOST:PORT`,
 * `--token-file F`, `--session-idle-secs SECS`, `--run-timeout SECS`, `--progress-secs SECS`,
 * `--serve-url URL`: the job tools, `src/mcp_server/job_tools.ts`; `--expose blocks` (or the
 * project's `AGENT_BLOCK_MCP_EXPOSE=blocks`): declared blocks served natively,
 * `src/mcp_server/declared.ts`, run in this process unless sandboxed; `--sandbox`: every run is
 * started with `--sandbox`, as it is when `AGENT_BLOCK_SANDBOX` asks, and the kernel is checked
 * at start so that a server whose runs would all fail closed does not start), loading
 * `<project>/.env` (the host's configuration, e.g. `AGENT_BLOCK_HOME`), and the server's lifetime: it serves until the client closes stdin
 * (stdio) or the process gets SIGINT/SIGTERM, then ends every run still going (each run's whole
 * process tree), waits for them, and exits 0. The serving logic itself lives in `src/mcp_server/`;
 * the runs go through the child runner (`src/runner/child.ts`), one process each; the steps of
 * `run_flow` go through an in-process runner, or under `--sandbox` through the same confined
 * child runner as every run (a step is then an agent-block process of its own).
 *
 * This is the server's edge: the environment is resolved here once (`edgeEnvironment`: the
 * process's, with the project's `.env` layered in) and handed to every run; each child loses the
 * host's credentials on the way (the process layer) and loads its project's `.env` itself.
 *
 * stdout is the protocol's in stdio mode: this command writes nothing there but `--help`.
 */
import { onStopSignals, shutdownAfterRuns } from "./stop_signals.ts";
import { childRunServer, endServer } from "./child_run_server.ts";
import { flowPaths, settingsFromEnv, storePathsFromEnv } from "../config/env_settings.ts";
import { telemetryFromEnv } from "../obs/otel/settings.ts";
import { parseFlags } from "./args.ts";
import { join, resolve } from "node:path";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { edgeEnvironment, edgeEnvironmentWithoutHostCredentials, edgeProcessEnv } from "./environment.ts";
import { agentBlockHome, sandboxRequested, sandboxSettingsFromEnv } from "../config/env_settings.ts";
import { writeStderr, writeStdout } from "../obs/log.ts";
import {
  type BlockServerOptions,
  createBlockServer,
  currentBlocks,
  resourcePaths,
} from "../mcp_server/server.ts";
import { CallRecorder } from "../mcp_server/call_record.ts";
import { InProcessRunner } from "../runner/in_process.ts";
import { serveStdioUntilClosed } from "../mcp_server/stdio.ts";
import { parseListenAddress, readTokenFile, serveHttp } from "../mcp_server/http.ts";
import { RegistryWatcher } from "../mcp_server/watch.ts";
import { CallTable } from "../mcp_server/call_session.ts";
import { VERSION } from "../version.ts";

export const MCP_HELP = `agent-block ${VERSION} mcp — serve the registered blocks over MCP

Usage:
  agent-block mcp [-p DIR] [--block-dir DIR]... [--http 127.0.0.1:PORT [--token-file F]]
                  [--run-timeout SECS] [--progress-secs SECS] [--session-idle-secs SECS]
                  [--serve-url http://127.0.0.1:7788] [--sandbox] [--expose blocks]
  agent-block mcp login URL | logout URL | auth status   (stored logins of remote
                  MCP servers; agent-block mcp login --help)

Serves one tool, run_block {block, prompt?, context?}, where block is one of the blocks in
<project>/.agent-block/blocks/, <project>/blocks/, $AGENT_BLOCK_HOME/blocks/ and every
--block-dir (nearer first; re-scanned on every request). Each call runs the block in an
agent-block process of its own. Resources: agent-block://guide, agent-block://blocks,
agent-block://blocks/<name>.

Options:
  -p, --project DIR        project root (default .)
      --block-dir DIR      another directory of blocks (repeatable)
      --http HOST:PORT     serve Streamable HTTP on a loopback address instead of stdio
                           (PORT 0 picks a free port; the URL is printed on stderr)
      --token-file FILE    with --http: require "Authorization: Bearer <token in FILE>"
      --session-idle-secs SECS
                           with --http: close a 2025-era session idle for SECS seconds
                           (default 1800); when all 64 are taken, a new client evicts the
                           session idle longest
      --run-timeout SECS   stop a run after SECS seconds (default 600)
      --serve-url URL      add the job tools (jobs_list, runs_list, run_get, job_run, run_stop)
                           calling the agent-block serve at URL with $AGENT_BLOCK_HOME/serve.token
      --progress-secs SECS while a run goes on, send a progress notification every SECS
                           seconds to calls that asked for progress (default 10; 0: never)
      --sandbox            run every block under --sandbox (Linux; also AGENT_BLOCK_SANDBOX=1)
      --expose blocks      also serve each block whose header declares ---@tool NAME,
                           ---@resource URI or ---@prompt NAME as that tool, resource or
                           prompt, in this process (a process each under --sandbox); also
                           AGENT_BLOCK_MCP_EXPOSE=blocks (e.g. in the project's .env)
  -h, --help               print this help

stdout carries the protocol only; logs and anything a block prints go to stderr.

Example (an MCP client's server entry):
  {"command": "agent-block", "args": ["mcp", "-p", "/home/me/work/site"]}
`;

/** Parsed `mcp` flags. */
export interface McpSettings {
  project: string;
  blockDirs: string[];
  http?: string;
  tokenFile?: string;
  runTimeoutSecs: number;
  progressSecs: number;
  /** `--session-idle-secs`, when given. */
  sessionIdleSecs?: number;
  /** `--serve-url`: the job manager whose job tools are added. */
  serveUrl?: string;
  /** `--sandbox`: every run is sandboxed. */
  sandbox: boolean;
  /** `--expose blocks`: serve declared blocks natively (absent: the project's setting decides). */
  expose?: "blocks" | "run_block";
}

/** What `--expose` or `AGENT_BLOCK_MCP_EXPOSE` asks for (`where` names the source in an error). */
export function exposeOf(raw: string | undefined, where: string): "blocks" | "run_block" | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const v = raw.trim();
  if (v === "blocks" || v === "run_block") return v;
  throw new UsageError(
    `mcp: ${where} must be 'blocks' (serve declared blocks natively) or 'run_block', got '${raw}'`,
  );
}

/** Parses the flags of `agent-block mcp`. */
export function parseMcpArgs(argv: string[]): McpSettings | "help" {
  const parsed = parseFlags(argv, {
    project: { type: "string", short: "p" },
    "block-dir": { type: "string", multiple: true },
    http: { type: "string" },
    "token-file": { type: "string" },
    "run-timeout": { type: "string" },
    "progress-secs": { type: "string" },
    "session-idle-secs": { type: "string" },
    "serve-url": { type: "string" },
    sandbox: { type: "boolean" },
    expose: { type: "string" },
    help: { type: "boolean", short: "h" },
  }, { command: "mcp" });
  const v = parsed.values as {
    project?: string;
    "block-dir"?: string[];
    http?: string;
    "token-file"?: string;
    "run-timeout"?: string;
    "progress-secs"?: string;
    "session-idle-secs"?: string;
    "serve-url"?: string;
    sandbox?: boolean;
    expose?: string;
    help?: boolean;
  };
  if (v.help) return "help";
  if (v["token-file"] !== undefined && v.http === undefined) {
    throw new UsageError("mcp: --token-file needs --http (a stdio server has no one to authenticate)");
  }
  let runTimeoutSecs = 600;
  if (v["run-timeout"] !== undefined) {
    const n = Number(v["run-timeout"]);
    if (!Number.isFinite(n) || n <= 0) {
      throw new UsageError(
        `mcp: --run-timeout must be a positive number of seconds, got '${v["run-timeout"]}'`,
      );
    }
    runTimeoutSecs = n;
  }
  let progressSecs = 10;
  if (v["progress-secs"] !== undefined) {
    const n = Number(v["progress-secs"]);
    if (!Number.isFinite(n) || n < 0) {
      throw new UsageError(
        `mcp: --progress-secs must be a number of seconds (0 turns it off), got '${v["progress-secs"]}'`,
      );
    }
    progressSecs = n;
  }
  let sessionIdleSecs: number | undefined;
  if (v["session-idle-secs"] !== undefined) {
    if (v.http === undefined) {
      throw new UsageError("mcp: --session-idle-secs needs --http (a stdio server has one session)");
    }
    const n = Number(v["session-idle-secs"]);
    if (!Number.isFinite(n) || n <= 0) {
      throw new UsageError(
        `mcp: --session-idle-secs must be a positive number of seconds, got '${v["session-idle-secs"]}'`,
      );
    }
    sessionIdleSecs = n;
  }
  return {
    project: v.project ?? ".",
    blockDirs: v["block-dir"] ?? [],
    http: v.http,
    tokenFile: v["token-file"],
    runTimeoutSecs,
    progressSecs,
    sessionIdleSecs,
    serveUrl: serveUrlOf(v["serve-url"]),
    sandbox: v.sandbox === true,
    expose: exposeOf(v.expose, "--expose"),
  };
}

function serveUrlOf(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`mcp: --serve-url must be an http URL such as http://127.0.0.1:7788, got '${raw}'`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new UsageError(`mcp: --serve-url must be an http(s) URL, got '${raw}'`);
  }
  return raw;
}

/** Runs `agent-block mcp`; returns the exit code. */
export async function mcpCommand(argv: string[]): Promise<number> {
  if (argv[0] === "login" || argv[0] === "logout" || argv[0] === "auth") {
    return (await import("./mcp_auth_command.ts")).mcpAuthCommand(argv);
  }
  const s = parseMcpArgs(argv);
  if (s === "help") {
    writeStdout(new TextEncoder().encode(MCP_HELP));
    return EXIT.OK;
  }
  const addr = s.http !== undefined ? parseListenAddress(s.http) : undefined;
  const token = s.tokenFile !== undefined ? readTokenFile(s.tokenFile) : undefined;
  let projectRoot: string;
  try {
    projectRoot = Deno.realPathSync(s.project);
    if (!Deno.statSync(projectRoot).isDirectory) throw new Error("not a directory");
  } catch {
    throw new AgentBlockError(`mcp: project directory ${s.project} does not exist`);
  }
  const blockDirs = s.blockDirs.map((d) => resolve(d));
  for (const d of blockDirs) {
    try {
      if (!Deno.statSync(d).isDirectory) throw new Error();
    } catch {
      throw new AgentBlockError(`mcp: --block-dir ${d} is not a directory`);
    }
  }
  const edge = await edgeEnvironment(projectRoot);
  const sandbox = s.sandbox || sandboxRequested(edge.env.AGENT_BLOCK_SANDBOX);
  if (sandbox) {
    // Every run would fail closed where the sandbox cannot be had: fail at start instead.
    const { sandboxPreflight } = await import("../sandbox/launcher.ts");
    try {
      // the policy's source is the process environment, not the project's .env
      sandboxPreflight(sandboxSettingsFromEnv(edgeProcessEnv(), edge.cwd), projectRoot, edge.cwd);
    } catch (e) {
      throw new AgentBlockError(`mcp: ${(e as Error).message}`);
    }
  }
  const server = childRunServer("agent-block mcp", edge.env, edge.warnings, sandbox);
  const { log, stop, runs, runner } = server;
  // The project's setting (its .env) when the flag does not say.
  const expose = s.expose ?? exposeOf(edge.env.AGENT_BLOCK_MCP_EXPOSE, "AGENT_BLOCK_MCP_EXPOSE") ??
    "run_block";
  // Every served call is a kernel session in the project's log (src/mcp_server/call_record.ts).
  const record = new CallRecorder(projectRoot, storePathsFromEnv(edge.env).kernel, log);
  const opts: BlockServerOptions = {
    record,
    projectRoot,
    home: agentBlockHome(edge.env, edge.cwd),
    blockDirs,
    runTimeoutSecs: s.runTimeoutSecs,
    progressIntervalMs: s.progressSecs * 1000,
    log,
    runner,
    env: edge.env,
    telemetry: telemetryFromEnv(edge.env),
    runs,
    // Flow steps run in this process (their block source is wrapped: src/flows/step_runner.ts);
    // when every run must be confined (--sandbox), each step is a confined child run instead.
    flowRunner: sandbox
      ? runner
      : new InProcessRunner({ envSettings: settingsFromEnv, stdout: writeStderr, stderr: writeStderr }),
    flowPaths,
    jobs: s.serveUrl !== undefined
      ? { url: s.serveUrl, tokenFile: join(agentBlockHome(edge.env, edge.cwd), "serve.token") }
      : undefined,
  };
  if (expose === "blocks") {
    opts.declared = {
      projectRoot,
      // A declared call in this process gets what a child run would: no host credentials, the
      // project's .env layered in (sandboxed, the child runner strips them itself).
      env: sandbox ? edge.env : edgeEnvironmentWithoutHostCredentials(projectRoot),
      runTimeoutSecs: s.runTimeoutSecs,
      log,
      runner,
      // A declared call runs in this process, with its own mcp.client; what it prints goes to
      // stderr (stdout is the protocol's in stdio mode).
      inProcess: (modules) =>
        new InProcessRunner({
          envSettings: settingsFromEnv,
          modules,
          stdout: writeStderr,
          stderr: writeStderr,
        }),
      sandboxed: sandbox,
      calls: new CallTable(),
      record,
      runs,
      stopping: stop.signal,
    };
  }
  // A block whose header declares itself badly is left out: say so, with its file and line, at
  // start and whenever the registry changes.
  const reportDeclarations = () => {
    for (const b of currentBlocks(opts)) {
      if (b.declarationError && expose === "blocks") {
        log.warn(
          `${b.path}:${b.declarationError.line}: ${b.declarationError.message} (block '${b.name}' is not served)`,
        );
      }
    }
  };
  reportDeclarations();
  // Clients that cache the tool list hear when blocks come and go.
  const watcher = new RegistryWatcher(() => currentBlocks(opts), log);
  watcher.alsoNotify(reportDeclarations);
  watcher.start(1000);
  const factory = () => createBlockServer(opts);

  using _signals = onStopSignals((sig) => stop.abort(`received ${sig}`));
  try {
    const names = currentBlocks(opts).map((b) => b.name);
    if (addr) {
      const serving = serveHttp(factory, addr, {
        token,
        log,
        watcher,
        sessionIdleMs: s.sessionIdleSecs === undefined ? undefined : s.sessionIdleSecs * 1000,
        ...(expose === "blocks"
          ? { resourcePaths: (uri: string) => resourcePaths(opts, currentBlocks(opts), uri) }
          : {}),
      });
      // The one line a launcher reads to find the server (stderr: stdout is not ours to use).
      writeStderr(new TextEncoder().encode(`agent-block mcp: listening on ${serving.url}\n`));
      log.info(
        `serving ${names.length} block(s) from ${projectRoot}${token ? " (bearer token required)" : ""}` +
          (sandbox ? " (sandboxed runs)" : ""),
      );
      // The runs end first: a request waiting for its run would otherwise hold the shutdown.
      shutdownAfterRuns(stop.signal, runs, () => serving.shutdown());
      await serving.finished;
    } else {
      log.info(
        `serving ${names.length} block(s) from ${projectRoot} over stdio${
          sandbox ? " (sandboxed runs)" : ""
        }`,
      );
      await serveStdioUntilClosed(() => watcher.track(factory()), {
        log,
        stop: stop.signal,
        drain: () => Promise.allSettled([...runs]),
        ...(expose === "blocks"
          ? { resourcePaths: (uri: string) => resourcePaths(opts, currentBlocks(opts), uri) }
          : {}),
      });
    }
  } finally {
    watcher.stop();
    await endServer(server);
  }
  return EXIT.OK;
}
