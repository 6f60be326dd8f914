/**
 * `--outcome FILE`: the CLI writes how the run ended, as JSON, for a caller that must know.
 *
 * Owns writing the file: the JSON form itself is `src/runner/outcome_json.ts` (with its parser,
 * which the child runner uses to read this file back). Unlike `--result`, the file is written
 * for every outcome — returned, deferred, exited, failed, stopped — so a caller never has to
 * guess from the exit code or from text on stderr.
 *
 * Invariant: the file appears whole or not at all (`writeAtomic`: a temporary file in the same
 * directory, fsynced, then a rename), so a reader that sees it sees the complete outcome; a
 * relative path resolves against the run's working directory; `-` is stdout (after whatever the
 * run printed). A failure to write is an `AgentBlockError` naming the file.
 */
import { resolve } from "node:path";
import { AgentBlockError } from "../errors.ts";
import type { Outcome } from "../outcome.ts";
import { outcomeToJson } from "../runner/outcome_json.ts";
import { writeAtomic } from "../util/fs.ts";
import { writeStdout } from "../obs/log.ts";

/** Writes `outcome` to `path` (relative to `cwd`) atomically; `-` writes it to stdout. */
export function writeOutcomeFile(path: string, outcome: Outcome, cwd: string): void {
  if (path === "-") return writeStdout(new TextEncoder().encode(outcomeToJson(outcome)));
  try {
    writeAtomic(resolve(cwd, path), outcomeToJson(outcome));
  } catch (e) {
    throw new AgentBlockError(`cannot write outcome file ${path}: ${(e as Error).message}`);
  }
}
