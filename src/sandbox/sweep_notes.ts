/**
 * The home's notes of the sweeps sandbox launchers owe (`<home>/sandbox-sweeps/`), as far as a
 * process that is not a launcher needs them: whether a launcher killed outright left a sweep of a
 * given project undone (`leftoverSweep`).
 *
 * Why a module of its own: every CLI command that reads a project's `.env` asks first
 * (`src/cli/environment.ts`), confined or not, because a run whose launcher was killed before its
 * sweep may have planted that `.env` (or a repository's hooks) for the next unconfined run to
 * load. The question costs one `readDir` of a directory that is usually empty (plus one `/proc`
 * read and one small file read per note in it), so it must not load the launcher, the policy or
 * the sweep (`launcher.ts`, `policy.ts`, `git_sweep.ts`): the caller imports those only when the
 * answer is yes.
 *
 * A note is `<pid>-<start>.json` (`processKey`: the launcher's pid and its start time in clock
 * ticks, so a reused pid is not taken for the launcher), written by `git_sweep.ts`'s
 * `recordPending` before the run starts and emptied once its sweep is done. A note whose launcher
 * still runs is that launcher's business; an empty one is done.
 */
import { join } from "node:path";
import { startTicks } from "../proc/tree.ts";

/** The home's directory of sweep notes (read-only to a confined run). */
export const SWEEPS_DIR = "sandbox-sweeps";

/** A process's identity that outlives nothing: its pid and its start (`startTicks`); undefined once gone. */
export function processKey(pid: number): string | undefined {
  const start = startTicks(pid);
  return start === undefined ? undefined : `${pid}-${start}`;
}

/**
 * True when `name` is a note's (`<pid>-<start>.json`, its launcher's `processKey`) and that
 * launcher is gone: the note's sweep may be owed. False for other names and live launchers.
 */
export function launcherGone(name: string): boolean {
  const m = /^(\d+)-(\d+)\.json$/.exec(name);
  return m !== null && processKey(Number(m[1])) !== `${m[1]}-${m[2]}`;
}

/**
 * True when `home`'s notes hold an undone sweep of `project` (an absolute path): a non-empty
 * note whose launcher is gone and whose first root (the project it confined) is `project` or
 * its real path. Never throws: a notes directory that cannot be read holds nothing to go by.
 */
export function leftoverSweep(home: string, project: string): boolean {
  const dir = join(home, SWEEPS_DIR);
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return false;
  }
  let real: string | undefined;
  for (const e of entries) {
    if (!e.isFile || !launcherGone(e.name)) continue; // not a note, or its launcher still runs
    let roots: unknown;
    try {
      const text = Deno.readTextFileSync(join(dir, e.name));
      if (text === "") continue; // done
      roots = (JSON.parse(text) as { roots?: unknown }).roots;
    } catch {
      continue; // unreadable or torn: the sweep that reads it says so
    }
    const first = Array.isArray(roots) ? roots[0] : undefined;
    if (first === project) return true;
    if (real === undefined) {
      try {
        real = Deno.realPathSync(project);
      } catch {
        real = project;
      }
    }
    if (first === real) return true;
  }
  return false;
}
