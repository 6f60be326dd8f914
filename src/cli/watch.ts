/**
 * Watching a run from the command line: `--progress` and `--events FILE|-` as observers of the
 * run's event seam (`src/obs/run_events.ts`).
 *
 * Owns where the two go: progress lines to stderr (`progress.ts`), never stdout; the
 * JSON Lines stream (`src/obs/events_jsonl.ts`) to a file — created or truncated before the run
 * starts, relative to the process working directory like `--result`, each commit written as it
 * happens so `tail -f` follows the run — or with `-` to stderr. A file that cannot be opened is
 * an error naming it (exit 1) before anything runs; a write failing later detaches the stream
 * with one warning and the run goes on (its kernel record is whole either way: `knl export`).
 *
 * Loaded only when one of the two is asked for: the run path imports it dynamically (it is in
 * deno.json's `compile.include`).
 */
import { resolve } from "node:path";
import { AgentBlockError } from "../errors.ts";
import { writeStderr } from "../obs/log.ts";
import type { RunObserver } from "../obs/run_events.ts";
import { ProgressReporter } from "./progress.ts";
import { eventsJsonl } from "../obs/events_jsonl.ts";

/** The observers a run gets from its flags, and how to let go of what they hold. */
export interface Watch {
  /** In order: the events stream, then progress. */
  observers: RunObserver[];
  /** Closes the events file (call when the run is over). */
  close(): void;
}

const enc = new TextEncoder();

/** Opens what `--progress` / `--events` ask for; throws naming the file it cannot open. */
export function openWatch(opts: { progress: boolean; events?: string; cwd: string }): Watch {
  const observers: RunObserver[] = [];
  let file: Deno.FsFile | undefined;
  if (opts.events === "-") {
    observers.push(eventsJsonl(writeStderr));
  } else if (opts.events !== undefined) {
    try {
      file = Deno.openSync(resolve(opts.cwd, opts.events), { write: true, create: true, truncate: true });
    } catch (e) {
      throw new AgentBlockError(`cannot open events file ${opts.events}: ${(e as Error).message}`);
    }
    const f = file;
    observers.push(eventsJsonl((bytes) => {
      let off = 0;
      try {
        while (off < bytes.length) off += f.writeSync(bytes.subarray(off));
      } catch (e) {
        throw new Error(`cannot write events file ${opts.events}: ${(e as Error).message}`);
      }
    }));
  }
  if (opts.progress) {
    observers.push(new ProgressReporter((line) => writeStderr(enc.encode(line + "\n"))).observe);
  }
  return {
    observers,
    close() {
      file?.close();
      file = undefined;
    },
  };
}
