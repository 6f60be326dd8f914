/**
 * Watching a run from the command line: `--progress` and `--events FILE|-` as observers of the
 * run's event stream (`src/runner/runner.ts`, `RunEvent`).
 *
 * Owns where the two go: progress lines to stderr (`progress.ts`), never stdout; the whole
 * `RunEvent` stream as JSON Lines (`src/runner/event_json.ts`: kernel transactions, MCP connects
 * and calls, sessions, artifacts, the `end` with the outcome) to a file — created or truncated
 * before the run starts, relative to the process working directory like `--result`, each event
 * written as it happens so `tail -f` follows the run — or with `-` to stderr, or to a Unix
 * socket that is listening there (the child runner's, `src/runner/child.ts`: the path is a
 * socket, so it is connected to rather than replaced). A file or socket that cannot be opened is
 * an error naming it (exit 1) before anything runs; a write failing later detaches the stream
 * with one warning and the run goes on (its kernel record is whole either way: `knl export`).
 *
 * Invariant: writes to a socket are queued in order and `close()` waits for them, so the `end`
 * line has been handed to the socket before the process exits.
 *
 * Loaded only when one of the two is asked for: the run path imports it dynamically (it is in
 * deno.json's `compile.include`).
 */
import { resolve } from "node:path";
import { AgentBlockError } from "../errors.ts";
import { writeStderr } from "../obs/log.ts";
import type { RunEvent, RunObserver } from "../runner/runner.ts";
import { ProgressReporter } from "./progress.ts";
import { eventLine } from "../runner/event_json.ts";

/** The observers a run gets from its flags, and how to let go of what they hold. */
export interface Watch {
  /** In order: the events stream, then progress. */
  observers: RunObserver[];
  /** Flushes and closes the events file or socket (call when the run is over). */
  close(): Promise<void>;
}

const enc = new TextEncoder();

/** An observer writing each event as one JSON line to `sink`. */
export function eventsJsonl(sink: (bytes: Uint8Array) => void): RunObserver {
  return (e: RunEvent) => sink(enc.encode(eventLine(e)));
}

/** A sink on a connected socket: writes queued in order; `flush` waits for them. */
function socketSink(conn: Deno.Conn, name: string) {
  let queue: Promise<void> = Promise.resolve();
  let failed: Error | undefined;
  return {
    write(bytes: Uint8Array) {
      if (failed) throw failed;
      queue = queue.then(async () => {
        if (failed) return;
        try {
          let off = 0;
          while (off < bytes.length) off += await conn.write(bytes.subarray(off));
        } catch (e) {
          failed = new Error(`cannot write events socket ${name}: ${(e as Error).message}`);
          writeStderr(enc.encode(`[warn] agent-block: ${failed.message}\n`));
        }
      });
    },
    flush: () => queue,
  };
}

/** Opens what `--progress` / `--events` ask for; throws naming the file it cannot open. */
export async function openWatch(opts: { progress: boolean; events?: string; cwd: string }): Promise<Watch> {
  const observers: RunObserver[] = [];
  let file: Deno.FsFile | undefined;
  let conn: Deno.Conn | undefined;
  let flush = () => Promise.resolve();
  if (opts.events === "-") {
    observers.push(eventsJsonl(writeStderr));
  } else if (opts.events !== undefined) {
    const path = resolve(opts.cwd, opts.events);
    let isSocket = false;
    try {
      isSocket = Deno.statSync(path).isSocket === true;
    } catch { /* not there: a file to create */ }
    if (isSocket) {
      try {
        conn = await Deno.connect({ transport: "unix", path });
      } catch (e) {
        throw new AgentBlockError(`cannot connect to events socket ${opts.events}: ${(e as Error).message}`);
      }
      const sink = socketSink(conn, opts.events);
      flush = sink.flush;
      observers.push(eventsJsonl(sink.write));
    } else {
      try {
        file = Deno.openSync(path, { write: true, create: true, truncate: true });
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
  }
  if (opts.progress) {
    observers.push(new ProgressReporter((line) => writeStderr(enc.encode(line + "\n"))).observe);
  }
  return {
    observers,
    async close() {
      file?.close();
      file = undefined;
      await flush();
      try {
        conn?.close();
      } catch { /* closed already */ }
      conn = undefined;
    },
  };
}
