/**
 * `agent-block serve`: the job manager — runs a project's jobs on their schedule and serves the
 * HTTP API over them.
 *
 * Owns the flags (`-p/--project DIR`, `--bind HOST:PORT` (default `127.0.0.1:7788`; a host that
 * is not loopback is the explicit opt-in, behind the same token), `--tick DURATION` (default
 * `5s`), `--max-live N` (default 4)) and the manager's lifetime: open the record and close the
 * runs a dead manager left (`lost`), mint or read the token, listen, tick until SIGINT/SIGTERM,
 * then end every live run (each `stopped`, its whole process tree ended), close the listener and
 * the record, exit 0. The scheduling, the record and the API live in `src/serve/`.
 *
 * This is the manager's edge: the runs start from the process environment as it is — the
 * project's `.env` is NOT layered in here (each run loads it itself, so it never enters the
 * manager's environment) — minus the host's credentials (the process layer's rule).
 */
import { telemetryFromEnv } from "../obs/otel/settings.ts";
import { join, resolve } from "node:path";
import { parseFlags } from "./args.ts";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { edgeCwd } from "./environment.ts";
import { writeStderr } from "../obs/log.ts";
import { ProcessGroups } from "../proc/group.ts";
import { agentBlockHome } from "../home.ts";
import { ChildRunner } from "../runner/child.ts";
import { bindRefusal, isLoopback } from "../net/guard.ts";
import { allowedHostnames } from "../net/guard.ts";
import { parseDuration } from "../serve/job_file.ts";
import { recordPath, ServeRecord } from "../serve/record.ts";
import { Scheduler } from "../serve/scheduler.ts";
import { apiHandler } from "../serve/api.ts";
import { loadOrMintToken } from "../serve/token.ts";
import { VERSION } from "../version.ts";

export const SERVE_HELP = `agent-block ${VERSION} serve — run a project's jobs on their schedule

Usage:
  agent-block serve [-p DIR] [--bind 127.0.0.1:7788] [--tick 5s] [--max-live 4]

A block with a job.toml beside it (blocks/<name>/job.toml, or blocks/<name>.job.toml beside
<name>.lua) is a job: every = "2m" (since the previous run ended; omitted: on request only),
timeout = "10m", prompt, context, sandbox = true (the run gets --sandbox). Each run is
agent-block -s <block> in a process of its own.
The record is ~/.agent-block/serve.sqlite; the API (GET /jobs, GET /runs, GET /runs/<id>,
POST /jobs/<name>/runs, DELETE /runs/<id>, GET /metrics) wants the bearer token of
~/.agent-block/serve.token (minted on first start); GET / is a dashboard page that asks for it.

Options:
  -p, --project DIR     project root (default .)
      --bind HOST:PORT  listen address (default 127.0.0.1:7788; PORT 0 picks a free port;
                        a host that is not loopback is an explicit opt-in)
      --tick DURATION   how often due runs are started and job files rescanned (default 5s)
      --max-live N      at most N runs at once (default 4)
  -h, --help            print this help
`;

/** Parsed `serve` flags. */
export interface ServeSettings {
  project: string;
  hostname: string;
  port: number;
  tickMs: number;
  maxLive: number;
}

/** Parses the flags of `agent-block serve`. */
export function parseServeArgs(argv: string[]): ServeSettings | "help" {
  const { values: v } = parseFlags(argv, {
    project: { type: "string", short: "p" },
    bind: { type: "string" },
    tick: { type: "string" },
    "max-live": { type: "string" },
    help: { type: "boolean", short: "h" },
  }, { command: "serve" });
  if (v.help) return "help";
  const bind = (v.bind as string | undefined) ?? "127.0.0.1:7788";
  const m = /^(\[[^\]]+\]|[^:\[\]]+):(\d{1,5})$/.exec(bind.trim());
  if (!m || Number(m[2]) > 65535) {
    throw new UsageError(`serve: --bind must be HOST:PORT (e.g. 127.0.0.1:7788), got '${bind}'`);
  }
  const hostname = m[1].replace(/^\[|\]$/g, "");
  // Any --bind given is the caller's explicit choice; the guard's rule still names the default.
  const refused = bindRefusal(hostname, { allowNonLoopback: v.bind !== undefined });
  if (refused) throw new UsageError(`serve: ${refused}`);
  const tickRaw = (v.tick as string | undefined) ?? "5s";
  const tickMs = parseDuration(tickRaw);
  if (tickMs === undefined) {
    throw new UsageError(`serve: --tick must be a duration such as 5s, 500ms or 1m, got '${tickRaw}'`);
  }
  const liveRaw = (v["max-live"] as string | undefined) ?? "4";
  if (!/^\d+$/.test(liveRaw) || Number(liveRaw) < 1) {
    throw new UsageError(`serve: --max-live must be a whole number of at least 1, got '${liveRaw}'`);
  }
  return {
    project: (v.project as string | undefined) ?? ".",
    hostname,
    port: Number(m[2]),
    tickMs,
    maxLive: Number(liveRaw),
  };
}

const enc = new TextEncoder();
const say = (line: string) => writeStderr(enc.encode(`agent-block serve: ${line}\n`));

/** Runs `agent-block serve`; returns the exit code. */
export async function serveCommand(argv: string[]): Promise<number> {
  const s = parseServeArgs(argv);
  if (s === "help") {
    Deno.stdout.writeSync(enc.encode(SERVE_HELP));
    return EXIT.OK;
  }
  const cwd = edgeCwd();
  let projectRoot: string;
  try {
    projectRoot = Deno.realPathSync(resolve(cwd, s.project));
    if (!Deno.statSync(projectRoot).isDirectory) throw new Error("not a directory");
  } catch {
    throw new AgentBlockError(`serve: project directory ${s.project} does not exist`);
  }
  const env = Deno.env.toObject();
  const home = agentBlockHome(env, cwd);
  const { token, minted } = loadOrMintToken(join(home, "serve.token"));
  if (minted) say(`minted the API token in ${join(home, "serve.token")}`);

  const record = new ServeRecord(recordPath(home), { project: projectRoot, pid: Deno.pid });
  const past = record.load();
  for (const r of past) {
    if (r.state !== "running") continue;
    Object.assign(r, await record.closeLost(r, 1000));
    say(`run ${r.run_id} of job ${r.job} was left running by a manager that stopped: closed as lost`);
  }

  const procs = new ProcessGroups(1000, env, { warn: (m) => say(`warning: ${m}`) });
  const stop = new AbortController();
  const runner = new ChildRunner({
    procs,
    stderr: writeStderr,
    stopping: stop.signal,
    stopReason: "the manager is stopping",
  });
  const scheduler = new Scheduler(
    {
      projectRoot,
      home,
      env,
      telemetry: telemetryFromEnv(env),
      record,
      runner,
      maxLive: s.maxLive,
      log: say,
    },
    past,
  );

  const policy = { allowedHosts: allowedHostnames(s.hostname), token };
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve(
      { hostname: s.hostname, port: s.port, onListen: () => undefined },
      apiHandler(scheduler, policy, say),
    );
  } catch (e) {
    record.close();
    throw new AgentBlockError(`serve: cannot listen on ${s.hostname}:${s.port}: ${(e as Error).message}`);
  }
  const a = server.addr;
  const host = a.hostname.includes(":") ? `[${a.hostname}]` : a.hostname;
  // The one line a launcher reads to find the manager.
  say(`listening on http://${host}:${a.port}${isLoopback(a.hostname) ? "" : " (not loopback: token only)"}`);
  say(`project ${projectRoot}, tick ${s.tickMs} ms, at most ${s.maxLive} live run(s)`);

  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    if (stop.signal.aborted) return;
    try {
      scheduler.tick();
    } catch (e) {
      say(`tick failed: ${(e as Error)?.stack ?? e}`);
    }
    timer = setTimeout(tick, s.tickMs);
  };
  const stopped = new Promise<string>((resolveStop) => {
    const fns = (["SIGINT", "SIGTERM"] as const).map((sig) => {
      const fn = () => resolveStop(sig);
      Deno.addSignalListener(sig, fn);
      return [sig, fn] as const;
    });
    stop.signal.addEventListener("abort", () => {
      for (const [sig, fn] of fns) Deno.removeSignalListener(sig, fn);
    }, { once: true });
  });
  tick();
  const why = await stopped;
  say(`received ${why}: ending the live runs`);
  clearTimeout(timer);
  stop.abort(`received ${why}`);
  await scheduler.drain();
  await procs.endAll();
  await server.shutdown();
  record.close();
  say("stopped");
  return EXIT.OK;
}
