/**
 * Process tags: the mark every child of a run carries in its environment, so that a process
 * which has left its process group and its parent (a daemon that double-forked and called
 * `setsid`) is still known as the run's, wherever it was re-parented.
 *
 * Owns the format and the reading. `AGENT_BLOCK_PROC_TAGS` is a space-separated list of tags
 * `<registry>.<n>`: `<registry>` is 16 random hex digits per `ProcessGroups` (one per run), `<n>`
 * counts its spawns. A child gets the tags of the environment it starts from plus its own, so
 * nested runs stack: an `agent-block mcp` run child carries the server's tag, and that run's
 * `sh.exec` children carry both; each level finds every process below it. A process is read by
 * `/proc/<pid>/environ` (Linux; the environment it was exec'd with).
 *
 * Invariants: a tag never matches a prefix of another registry's (the prefix ends in `.`); at
 * most `MAX_TAGS` are kept (the innermost), and inherited tokens not of the format are dropped.
 * What cannot be guaranteed: a process that clears or replaces its environment (`env -i`, a
 * re-exec with a fresh one, `setproctitle` overwriting it) loses its tags; `reaper.ts` covers
 * that case for the CLI, where every orphan comes back to the host.
 */

/** The variable holding a child's tags. */
export const PROC_TAGS_VAR = "AGENT_BLOCK_PROC_TAGS";
const TAG = /^[0-9a-f]{16}\.\d{1,15}$/;
const MAX_TAGS = 16;
const NEEDLE = new TextEncoder().encode(PROC_TAGS_VAR + "=");

/** A fresh registry prefix (16 random hex digits). */
export function newRegistryId(): string {
  const b = crypto.getRandomValues(new Uint8Array(8));
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

/** The variable's value for a child: the valid inherited tags, then `own`. */
export function tagsValue(inherited: string | undefined, own: string): string {
  const kept = (inherited ?? "").split(" ").filter((t) => TAG.test(t));
  kept.push(own);
  return kept.slice(-MAX_TAGS).join(" ");
}

/** True when `tags` holds `tag`, or (for `want` ending in `.`, a registry prefix) any of its tags. */
export function hasTag(tags: readonly string[], want: string): boolean {
  return want.endsWith(".") ? tags.some((t) => t.startsWith(want)) : tags.includes(want);
}

/**
 * The tags process `pid` was started with; `[]` when it has none or its environment cannot be
 * read (gone, another user's, not Linux).
 */
export function processTags(pid: number): string[] {
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(`/proc/${pid}/environ`);
  } catch {
    return [];
  }
  const at = indexOfEntry(bytes);
  if (at < 0) return [];
  let end = bytes.indexOf(0, at);
  if (end < 0) end = bytes.length;
  return new TextDecoder().decode(bytes.subarray(at + NEEDLE.length, end)).split(" ").filter(Boolean);
}

/** Offset of the `AGENT_BLOCK_PROC_TAGS=` entry in a NUL-separated environment, or -1. */
function indexOfEntry(bytes: Uint8Array): number {
  let from = 0;
  while (from < bytes.length) {
    const at = bytes.indexOf(NEEDLE[0], from);
    if (at < 0) return -1;
    if ((at === 0 || bytes[at - 1] === 0) && NEEDLE.every((c, i) => bytes[at + i] === c)) return at;
    from = at + 1;
  }
  return -1;
}
