/**
 * `agent-block serve`: the job manager — runs a project's jobs on their schedule and serves the
 * HTTP API over them.
 *
 * Owns the flags (`-p/--project DIR`, `--bind HOST:PORT` (default `127.0.0.1:7788`; a host that
 * is not loopback is the explicit opt-in, behind the same token), `--tick DURATION` (default
 * `5s`), `--max-live N` (default 4)) and the manager's lifetime: mint or read the token, take
 * the project's lock (one manager per project: a second one exits 1 naming the first's pid),
 * open the record, listen (a port that cannot be bound exits 1 before any run is touched), then
 * read the record back and close the runs a dead manager of this project left (`lost`; the API
 * answers 503 `starting` meanwhile), tick until SIGINT/SIGTERM, then end every live run (each
 * `stopped`, its whole process tree ended), close the listener, the record and the lock, exit 0.
 * The scheduling, the record, the lock and the API live in `src/serve/`. With `--nats` (and the
 * credential flags of `nats_flags.ts`, or the same from its `--config FILE`) the manager connects
 * to the run queue after binding its port and before reading its record back (refused credentials exit 2; a stream of incompatible
 * settings exits 1, untouched), and every run goes to the queue (`src/serve/queue_dispatch.ts`).
 * `--start-on-tick-only` keeps the scheduling before issue 30 (the benchmark's baseline).
 *
 * This is the manager's edge: the runs start from the process environment as it is, the host's
 * credentials included (a key given to the manager's service unit reaches a scheduled
 * `agent.run`; each run strips them from its own children, as every run does) — the project's
 * `.env` is NOT layered in here (each run loads it itself, so it never enters the manager's
 * environment). The steps of flow jobs (`flow = ...`) are the exception: they run in this process
 * (an `InProcessRunner`) with the manager's environment as it is, as `agent-block flow run` runs
 * them, and never once the manager sandboxes its runs (`scheduler.ts`).
 */
import { onStopSignals, type StopSignal } from "./stop_signals.ts";
import { agentBlockHome } from "../config/env_settings.ts";
import {
  childEnvPolicyFromEnv,
  flowPaths,
  sandboxRequested,
  settingsFromEnv,
} from "../config/env_settings.ts";
import { telemetryFromEnv } from "../obs/otel/settings.ts";
import { join, resolve } from "node:path";
import { parseFlags } from "./args.ts";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { edgeCwd } from "./environment.ts";
import { writeStderr } from "../obs/log.ts";
import { ProcessGroups } from "../proc/group.ts";
import { ChildRunner } from "../runner/child.ts";
import { InProcessRunner } from "../runner/in_process.ts";
import { bindRefusal, isLoopback } from "../net/guard.ts";
import { allowedHostnames } from "../net/guard.ts";
import { parseDuration } from "../serve/job_file.ts";
import { recordPath, ServeRecord } from "../serve/record.ts";
import { ManagerLock } from "../serve/manager_lock.ts";
import { Scheduler } from "../serve/scheduler.ts";
import { apiHandler } from "../serve/api.ts";
import { loadOrMintToken } from "../serve/token.ts";
import { VERSION } from "../version.ts";
import { longTimeout, type LongTimer } from "../util/long_timer.ts";
import { connectQueue, NATS_FLAGS, NATS_FLAGS_HELP, type NatsSettings, natsSettings } from "./nats_flags.ts";
import { openRunQueue, RunQueueSetupError } from "../clients/nats/run_queue.ts";
import { QueueDispatch } from "../serve/queue_dispatch.ts";
import { basename } from "node:path";

export const SERVE_HELP = `agent-block ${VERSION} serve — run a project's jobs on their schedule

Usage:
  agent-block serve [-p DIR] [--bind 127.0.0.1:7788] [--tick 5s] [--max-live 4] [--nats URL | --config FILE]

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
      --start-on-tick-only  a run's end does not start the next due run (the scheduling before
                        issue 30; the benchmark's baseline)
${NATS_FLAGS_HELP}
                        with --nats every run goes to the NATS JetStream run queue and runs on
                        an 'agent-block worker' (queue from the job's job.toml, default 'default')
  -h, --help            print this help
`;

/** Parsed `serve` flags. */
export interface ServeSettings {
  project: string;
  hostname: string;
  port: number;
  tickMs: number;
  maxLive: number;
  /** `--nats` and its credentials: runs go to the run queue. */
  nats?: NatsSettings;
  /** `--start-on-tick-only`: the benchmark's baseline (a freed slot waits for the next tick). */
  startOnTickOnly: boolean;
}

/** Parses the flags of `agent-block serve`. */
export function parseServeArgs(argv: string[], cwd = "."): ServeSettings | "help" {
  const { values: v } = parseFlags(argv, {
    ...NATS_FLAGS,
    project: { type: "string", short: "p" },
    bind: { type: "string" },
    tick: { type: "string" },
    "max-live": { type: "string" },
    "start-on-tick-only": { type: "boolean" },
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
    nats: natsSettings("serve", v, cwd),
    startOnTickOnly: v["start-on-tick-only"] === true,
  };
}

/** What the API answers before the manager has read its record back (a moment at start). */
function starting(): Response {
  return Response.json({ error: "starting", message: "the manager is reading its record back" }, {
    status: 503,
    headers: { "retry-after": "1" },
  });
}

const enc = new TextEncoder();
const say = (line: string) => writeStderr(enc.encode(`agent-block serve: ${line}\n`));

/** Runs `agent-block serve`; returns the exit code. */
export async function serveCommand(argv: string[]): Promise<number> {
  const cwd = edgeCwd();
  const s = parseServeArgs(argv, cwd);
  if (s === "help") {
    Deno.stdout.writeSync(enc.encode(SERVE_HELP));
    return EXIT.OK;
  }
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

  // One manager per project (the lock proves no other one of it is alive); the record is shared
  // with managers of other projects, whose runs this one never touches.
  const record = new ServeRecord(recordPath(home), { project: projectRoot, pid: Deno.pid });
  let lock: ManagerLock;
  try {
    lock = ManagerLock.take(home, {
      pid: Deno.pid,
      project: projectRoot,
      session: record.session,
      started_ms: Date.now(),
    });
  } catch (e) {
    record.close();
    throw e;
  }

  const procs = new ProcessGroups(1000, env, {
    warn: (m) => say(`warning: ${m}`),
    childEnv: childEnvPolicyFromEnv(env),
  });
  const stop = new AbortController();
  const runner = new ChildRunner({
    procs,
    stderr: writeStderr,
    stopping: stop.signal,
    stopReason: "the manager is stopping",
    passCredentials: true,
  });

  // Listen first: a manager that cannot bind its port exits before it has touched any run. The
  // API answers 503 until the record has been read back and the lost runs closed.
  const policy = { allowedHosts: allowedHostnames(s.hostname), token };
  const api: { handle?: (req: Request) => Promise<Response> } = {};
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve(
      { hostname: s.hostname, port: s.port, onListen: () => undefined },
      (req) => api.handle ? api.handle(req) : Promise.resolve(starting()),
    );
  } catch (e) {
    lock.release();
    record.close();
    throw new AgentBlockError(`serve: cannot listen on ${s.hostname}:${s.port}: ${(e as Error).message}`);
  }
  // Under --nats the runs go to the queue: connect and set it up before any run is touched.
  let queue: QueueDispatch | undefined;
  let closeQueue = async () => {};
  if (s.nats) {
    const nats = s.nats;
    try {
      const nc = await connectQueue("serve", nats, `agent-block serve ${Deno.hostname()}:${Deno.pid}`);
      closeQueue = async () => await nc.drain().catch(() => nc.close());
      try {
        const handles = await openRunQueue(nc, { slots: true });
        queue = new QueueDispatch({
          handles,
          projectRoot,
          defaultProject: basename(projectRoot),
          stopping: stop.signal,
          log: say,
        });
      } catch (e) {
        await closeQueue();
        if (e instanceof RunQueueSetupError) throw new AgentBlockError(`serve: ${e.message}`);
        throw new AgentBlockError(
          `serve: cannot set up the run queue on ${nats.target.shown}: ${(e as Error).message}`,
        );
      }
      (async () => {
        for await (const st of nc.status()) {
          if (st.type === "disconnect") say(`disconnected from ${nats.target.shown}; reconnecting`);
          else if (st.type === "reconnect") say(`reconnected to ${nats.target.shown}`);
        }
      })().catch(() => undefined);
    } catch (e) {
      await server.shutdown();
      lock.release();
      record.close();
      throw e;
    }
  }
  const past = record.load(projectRoot);
  for (const r of past) {
    // under --nats a run left running goes on on its worker: the scheduler follows it again
    if (r.state !== "running" || queue) continue;
    Object.assign(r, await record.closeLost(r, 1000));
    say(`run ${r.run_id} of job ${r.job} was left running by a manager that stopped: closed as lost`);
  }
  const scheduler = new Scheduler(
    {
      projectRoot,
      home,
      env,
      flowPaths,
      telemetry: telemetryFromEnv(env),
      record,
      runner,
      // flow jobs' steps run in this process (src/serve/flow_job.ts); their output goes to its stderr
      flowRunner: new InProcessRunner({
        envSettings: settingsFromEnv,
        stdout: writeStderr,
        stderr: writeStderr,
      }),
      maxLive: s.maxLive,
      log: say,
      sandboxedBefore: record.sandboxedBefore(projectRoot),
      sandbox: sandboxRequested(env.AGENT_BLOCK_SANDBOX),
      queue,
      startOnTickOnly: s.startOnTickOnly,
    },
    past,
  );
  api.handle = apiHandler(scheduler, policy, say);
  const a = server.addr;
  const host = a.hostname.includes(":") ? `[${a.hostname}]` : a.hostname;
  // The one line a launcher reads to find the manager.
  say(`listening on http://${host}:${a.port}${isLoopback(a.hostname) ? "" : " (not loopback: token only)"}`);
  say(
    `project ${projectRoot}, tick ${s.tickMs} ms, at most ${s.maxLive} live run(s)` +
      (s.nats ? `, runs through the NATS run queue on ${s.nats.target.shown}` : ""),
  );

  let timer: LongTimer | undefined;
  const tick = () => {
    if (stop.signal.aborted) return;
    try {
      scheduler.tick();
    } catch (e) {
      say(`tick failed: ${(e as Error)?.stack ?? e}`);
    }
    timer = longTimeout(tick, s.tickMs); // a --tick past the host timer's range still waits
  };
  let heard!: (sig: StopSignal) => void;
  const stopped = new Promise<StopSignal>((r) => heard = r);
  let why: StopSignal;
  {
    using _signals = onStopSignals(heard);
    tick();
    why = await stopped;
  }
  say(`received ${why}: ending the live runs`);
  timer?.clear();
  stop.abort(`received ${why}`);
  await scheduler.drain();
  await procs.endAll();
  await closeQueue();
  await server.shutdown();
  record.close();
  lock.release();
  say("stopped");
  return EXIT.OK;
}
