/**
 * The one spelling helper: which known word an unknown one most likely misspells, for the
 * "did you mean" of a flag, a subcommand, a block name or a `job.toml` key.
 *
 * Pure and dependency-free, so every layer that answers a misspelling (the CLI, `serve`'s job
 * files) uses the same rule.
 */

/**
 * The candidate `word` is most likely a misspelling of, or undefined when none is close: the
 * fewest edits (insert, delete, substitute, swap two neighbours; case ignored), at most 1 for a
 * word of up to 4 characters, 2 up to 8, else 3 — and fewer than the word's length, so that a
 * short word is not "corrected" into an unrelated one. Ties go to the earlier candidate.
 */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  const limit = Math.min(w.length <= 4 ? 1 : w.length <= 8 ? 2 : 3, w.length - 1);
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (c !== word && d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal-string-alignment distance: Levenshtein plus the swap of two adjacent characters. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push([i]);
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        rows[0].push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, rows[i - 2][j - 2] + 1);
      }
      rows[i].push(d);
    }
  }
  return rows[a.length][b.length];
}
