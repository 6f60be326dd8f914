/**
 * What the CLI's servers of child runs (`agent-block mcp`, `agent-block a2a serve`) set up alike
 * from their edge: a logger scrubbed of the host's credentials (the level from the environment,
 * the environment's and `.env`'s warnings said first), the process groups their runs live in,
 * the stop signal every run hears, the set of runs in flight, and the `ChildRunner` that starts
 * each run as a process of its own (confined when the server was started with `--sandbox`).
 *
 * `endServer` is their common last step: stop every run, wait for each to settle, end what is
 * left of their process groups. Why one module: the two servers differ in protocol only, and a
 * fix to how their runs are started or ended (a grace period, a credential scrub) must reach both.
 */
import { childEnvPolicyFromEnv, logLevelFromEnv } from "../config/env_settings.ts";
import { Logger, writeStderr } from "../obs/log.ts";
import { Secrets } from "../obs/secrets.ts";
import { ProcessGroups } from "../proc/group.ts";
import { ChildRunner } from "../runner/child.ts";

/** A server's shared parts (see the module header). */
export interface ChildRunServer {
  /** The server's logger (the host's credentials scrubbed). */
  log: Logger;
  procs: ProcessGroups;
  /** Aborted when the server stops: every run hears it. */
  stop: AbortController;
  /** The runs in flight (each settles when its run has ended). */
  runs: Set<Promise<unknown>>;
  runner: ChildRunner;
}

/**
 * The shared parts of the server `name` (`agent-block mcp`), from the edge's environment `env`
 * (the process's, `.env` layered in) and its `warnings`; `sandbox` confines every child run.
 */
export function childRunServer(
  name: string,
  env: Record<string, string>,
  warnings: readonly string[],
  sandbox: boolean | undefined,
): ChildRunServer {
  // The server's own log lines (a child run's failure, a client's request) are scrubbed of the
  // host's credentials like a run's.
  const secrets = Secrets.fromEnv({ get: (k) => env[k] });
  const logLevel = logLevelFromEnv(env);
  const log = new Logger(name, logLevel.level ?? "info", undefined, (m) => secrets.scrub(m));
  for (const w of logLevel.warnings) log.warn(w);
  for (const w of warnings) log.warn(w);
  const procs = new ProcessGroups(1000, env, {
    warn: (m) => log.warn(m),
    childEnv: childEnvPolicyFromEnv(env),
  });
  const stop = new AbortController();
  const runner = new ChildRunner({
    procs,
    stderr: writeStderr,
    stopping: stop.signal,
    stopReason: "the server is shutting down",
    sandbox,
  });
  return { log, procs, stop, runs: new Set(), runner };
}

/** The server's last step: every run stopped and settled, what is left of their groups ended. */
export async function endServer(s: ChildRunServer): Promise<void> {
  s.stop.abort("the server is stopping");
  await Promise.allSettled([...s.runs]);
  await s.procs.endAll();
}
