/**
 * `agent-block worker`: runs queued runs of `serve --nats` on this machine.
 *
 * Owns the flags (`--nats URL[,URL…]`, the credential flags and `--config FILE` of
 * `nats_flags.ts`, `--queue NAME` (repeatable; default `default`), `--max-live N` (default 4),
 * `--ack-wait DURATION` (default 30s: the consumers' `AckWait` when this worker creates them),
 * `-p/--project DIR` (repeatable, at least one: the projects whose blocks it runs)) and the worker's lifetime: connect (refused
 * credentials exit 2), ensure the queue's stream, buckets and consumers (an incompatible existing
 * stream exits 1 naming it, untouched), pull and run (`src/serve/worker.ts`) until SIGINT/SIGTERM,
 * then drain: the live runs are ended and handed back to the queue, and the worker exits 0.
 *
 * This is the worker's edge: its runs start from its process environment (the host's credentials
 * included, as under `serve`), each loading its project's `.env` itself; flow jobs' steps run in
 * this process.
 */
import { onStopSignals } from "./stop_signals.ts";
import { agentBlockHome } from "../config/env_settings.ts";
import {
  childEnvPolicyFromEnv,
  flowPaths,
  sandboxRequested,
  settingsFromEnv,
  storePathsFromEnv,
} from "../config/env_settings.ts";
import { basename, resolve } from "node:path";
import { parseFlags } from "./args.ts";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { edgeCwd } from "./environment.ts";
import { writeStderr } from "../obs/log.ts";
import { ProcessGroups } from "../proc/group.ts";
import { ChildRunner } from "../runner/child.ts";
import { InProcessRunner } from "../runner/in_process.ts";
import { parseDuration } from "../serve/job_file.ts";
import { QueueWorker } from "../serve/worker.ts";
import { DEFAULT_ACK_WAIT_MS, openRunQueue, RunQueueSetupError } from "../clients/nats/run_queue.ts";
import { connectQueue, NATS_FLAGS, NATS_FLAGS_HELP, natsSettings } from "./nats_flags.ts";
import { VERSION } from "../version.ts";
import { leftoverSweep } from "../sandbox/sweep_notes.ts";

export const WORKER_HELP = `agent-block ${VERSION} worker — run the queued runs of 'serve --nats'

Usage:
  agent-block worker --nats URL [--queue NAME]... [--max-live 4] -p DIR...
  agent-block worker --config worker.json [--queue NAME]... -p DIR...

Pulls runs from the NATS JetStream work queue (stream AGENT_BLOCK_RUNS, one durable consumer
per queue), at most --max-live at once, and runs each as the job's block of its own copy of the
project (a -p DIR; its id is 'project' in the job's job.toml, else the directory's name). No code
travels over the queue. State goes to the KV bucket AGENT_BLOCK_RUN_STATE. SIGTERM hands the
live runs back to the queue and exits.

Options:
${NATS_FLAGS_HELP}
      --queue NAME      a queue to pull from (repeatable; default: default)
      --max-live N      at most N runs at once (default 4)
      --ack-wait DURATION  AckWait of the consumers this worker creates (default 30s)
  -p, --project DIR     a project whose jobs this worker runs (repeatable, at least one)
  -h, --help            print this help
`;

const enc = new TextEncoder();
const say = (line: string) => writeStderr(enc.encode(`agent-block worker: ${line}\n`));

/** Runs `agent-block worker`; returns the exit code. */
export async function workerCommand(argv: string[]): Promise<number> {
  const { values: v } = parseFlags(argv, {
    ...NATS_FLAGS,
    queue: { type: "string", multiple: true },
    "max-live": { type: "string" },
    "ack-wait": { type: "string" },
    project: { type: "string", short: "p", multiple: true },
    help: { type: "boolean", short: "h" },
  }, { command: "worker" });
  if (v.help) {
    Deno.stdout.writeSync(enc.encode(WORKER_HELP));
    return EXIT.OK;
  }
  const cwd = edgeCwd();
  const nats = natsSettings("worker", v, cwd);
  if (!nats) throw new UsageError("worker: --nats URL (or a --config file's 'nats') is required");
  const queues = (v.queue as string[] | undefined) ?? ["default"];
  for (const q of queues) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(q)) {
      throw new UsageError(`worker: --queue must match [A-Za-z0-9_-]{1,64}, got '${q}'`);
    }
  }
  const liveRaw = (v["max-live"] as string | undefined) ?? "4";
  if (!/^\d+$/.test(liveRaw) || Number(liveRaw) < 1) {
    throw new UsageError(`worker: --max-live must be a whole number of at least 1, got '${liveRaw}'`);
  }
  const ackRaw = v["ack-wait"] as string | undefined;
  const ackWaitMs = ackRaw === undefined ? DEFAULT_ACK_WAIT_MS : parseDuration(ackRaw);
  if (ackWaitMs === undefined) {
    throw new UsageError(`worker: --ack-wait must be a duration such as 30s, got '${ackRaw}'`);
  }
  const dirs = (v.project as string[] | undefined) ?? [];
  if (dirs.length === 0) {
    throw new UsageError("worker: give at least one -p DIR (the projects whose jobs it runs)");
  }
  const projects: string[] = [];
  for (const d of dirs) {
    try {
      const root = Deno.realPathSync(resolve(cwd, d));
      if (!Deno.statSync(root).isDirectory) throw new Error("not a directory");
      projects.push(root);
    } catch {
      throw new AgentBlockError(`worker: project directory ${d} does not exist`);
    }
  }
  const env = Deno.env.toObject();
  const home = agentBlockHome(env, cwd);
  const name = `${Deno.hostname()}:${Deno.pid}`;

  const nc = await connectQueue("worker", nats, `agent-block worker ${name}`);
  let handles;
  try {
    handles = await openRunQueue(nc);
  } catch (e) {
    await nc.close().catch(() => {});
    if (e instanceof RunQueueSetupError) throw new AgentBlockError(`worker: ${e.message}`);
    throw new AgentBlockError(
      `worker: cannot set up the run queue on ${nats.target.shown}: ${(e as Error).message}`,
    );
  }
  const procs = new ProcessGroups(1000, env, {
    warn: (m) => say(`warning: ${m}`),
    childEnv: childEnvPolicyFromEnv(env),
  });
  const stop = new AbortController();
  const runner = new ChildRunner({
    procs,
    stderr: writeStderr,
    passCredentials: true,
    sandbox: sandboxRequested(env.AGENT_BLOCK_SANDBOX) || undefined, // the worker's runs get its environment
  });
  const worker = new QueueWorker({
    handles,
    queues,
    maxLive: Number(liveRaw),
    ackWaitMs,
    projects,
    home,
    env,
    knlPathOf: (e) => storePathsFromEnv(e).kernel,
    sweepOwed: (root) => leftoverSweep(home, root),
    flowPaths,
    runner,
    flowRunner: new InProcessRunner({
      envSettings: settingsFromEnv,
      stdout: writeStderr,
      stderr: writeStderr,
    }),
    name,
    log: say,
  });
  using _signals = onStopSignals((sig) => stop.abort(sig));
  (async () => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect") say(`disconnected from ${nats.target.shown}; reconnecting`);
      else if (s.type === "reconnect") say(`reconnected to ${nats.target.shown}`);
    }
  })().catch(() => undefined);
  let failed: unknown;
  const serving = worker.serve(stop.signal).catch((e) => {
    failed = e;
    stop.abort("failed");
  });
  // The one line a launcher reads to know the worker pulls.
  say(
    `pulling ${queues.join(", ")} from ${nats.target.shown}, at most ${liveRaw} live run(s), ` +
      `projects ${projects.map((p) => basename(p)).join(", ")}`,
  );
  await serving;
  await procs.endAll();
  await nc.drain().catch(() => nc.close());
  if (failed) {
    if (failed instanceof RunQueueSetupError) throw new AgentBlockError(`worker: ${failed.message}`);
    throw failed;
  }
  say("stopped");
  return EXIT.OK;
}
