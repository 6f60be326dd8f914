/**
 * The `.gitignore` agent-block writes into a project's `.agent-block/` directory when it first puts
 * local state there (the kernel log), so `git status` stays clean.
 *
 * Owns its content: the SQLite files and their `-wal` / `-shm` / `-journal` companions, and the
 * `.gitignore` itself — state, not source. What a user puts beside them (`lib/` overrides written
 * by `agent-block vendor`, `blocks/`) is not listed: theirs to track or not.
 *
 * Invariants: an existing file is never touched (created with `createNew`, so a user's own
 * `.gitignore` wins, and two runs racing write it once); its content is fixed, nothing of the run
 * goes into it; failing to write it (a read-only checkout) never fails the run.
 */
import { join } from "node:path";

/** What the written `.gitignore` says. */
export const STATE_GITIGNORE =
  `# Written by agent-block: its local state in this directory (the kernel log) is not for
# version control. Files you add here yourself (lib/, blocks/) are not listed.
.gitignore
*.sqlite
*.sqlite-wal
*.sqlite-shm
*.sqlite-journal
`;

/** Writes `dir/.gitignore` unless a file is already there; errors are swallowed on purpose (see above). */
export function ignoreLocalState(dir: string): void {
  try {
    Deno.writeTextFileSync(join(dir, ".gitignore"), STATE_GITIGNORE, { createNew: true });
  } catch {
    // there already, or not writable: either way the run goes on
  }
}
