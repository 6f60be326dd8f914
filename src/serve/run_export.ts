/**
 * A queued run's kernel record, for the results object store: the `agent-block knl export --as
 * events` lines of every session the run opened, read on the worker that ran it.
 *
 * Owns reading them: the project's kernel database as a run of that project finds it (the
 * worker's environment with the project's `.env` layered under it, its `AGENT_BLOCK_KNL_PATH`
 * read by the edge's `knlPathOf`), each session exported in `events` shape and each line masked of the host's
 * credentials as `knl export` masks them.
 *
 * Invariant: never throws — a run whose record cannot be read (no database, an in-memory one, a
 * session missing) has no export, and the reason is returned for the worker's log. A project
 * whose `.env` may have been planted — a sandbox launcher was killed outright before its sweep
 * (the edge's `sweepOwed`: `src/sandbox/sweep_notes.ts`) — is not read either: the next run of
 * the project sweeps first.
 */
import { join } from "node:path";
import { layerDotenv, readDotenv } from "../config/dotenv.ts";
import { defaultStorePath } from "../knl/paths.ts";
import { openExistingStore } from "../knl/store.ts";
import { exportLine, exportSession } from "../knl/export.ts";
import { Secrets } from "../obs/secrets.ts";

/** The export of `sessions` from `projectRoot`'s kernel, or why there is none. */
export function runKernelExport(
  projectRoot: string,
  env: Readonly<Record<string, string>>,
  sessions: readonly string[],
  knlPathOf: (env: Readonly<Record<string, string>>) => string | undefined = () => undefined,
  sweepOwed: (projectRoot: string) => boolean = () => false,
): { text: string } | { why: string } {
  if (sessions.length === 0) return { why: "the run opened no kernel session" };
  if (sweepOwed(projectRoot)) {
    return {
      why: "a sandbox launcher of the project was killed before its sweep: its .env is not read until then",
    };
  }
  try {
    const merged = layerDotenv(env, readDotenv(join(projectRoot, ".env")).vars);
    const store = openExistingStore(defaultStorePath(projectRoot, knlPathOf(merged)));
    const secrets = Secrets.fromEnv({ get: (k) => merged[k] });
    const lines: string[] = [];
    for (const id of sessions) {
      for (const r of exportSession(store, id, "events")) lines.push(secrets.maskJson(exportLine(r)));
    }
    return { text: lines.join("\n") + "\n" };
  } catch (e) {
    return { why: (e as Error).message };
  }
}
