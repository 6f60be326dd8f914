/**
 * Command-line parsing for the CLI's subcommands, on `node:util`'s `parseArgs`.
 *
 * Owns the flag grammar every subcommand shares (`--name value`, `--name=value`, `-n value`,
 * boolean and repeatable flags, `--` ending the options, positionals where a command allows them)
 * and the one error rule: anything `parseArgs` rejects — an unknown flag, a missing value, a value
 * given to a boolean, a positional where none is allowed — becomes a `UsageError` (exit 2) whose
 * message names the flag (prefixed with the subcommand, `knl: …`, when the caller names one),
 * and an unknown `--flag` close to a known one (`didYouMean`) adds `(did you mean '--known'?)`.
 * Every subcommand parses its flags here.
 *
 * `didYouMean` is the CLI's one spelling helper, shared by flags, subcommands (`main.ts`,
 * `knl_command.ts`) and block names (`run_command.ts`). It lives here, not in a module of its
 * own, because every one of its users already loads this module: the run path gains no import.
 */
import { parseArgs } from "node:util";
import { UsageError } from "../errors.ts";

/** One option: its value kind, optional one-letter alias, and whether it may repeat. */
export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
}

/** Parsed values: strings, booleans, or arrays of strings for `multiple` options. */
export type ParsedValues = Record<string, string | boolean | string[] | undefined>;

/** Parses `argv` against `options`; throws `UsageError` for anything that does not parse. */
export function parseFlags(
  argv: string[],
  options: Record<string, OptionSpec>,
  opts: { allowPositionals?: boolean; command?: string } = {},
): { values: ParsedValues; positionals: string[] } {
  try {
    const r = parseArgs({
      args: argv,
      options,
      strict: true,
      allowPositionals: opts.allowPositionals ?? false,
    });
    return { values: { ...r.values } as ParsedValues, positionals: r.positionals };
  } catch (e) {
    let message = (e as Error).message.replace(/\n/g, " ");
    const unknown = /^Unknown option '--([^'=]+)/.exec(message);
    if (unknown) {
      const near = didYouMean(unknown[1], Object.keys(options));
      if (near) message += ` (did you mean '--${near}'?)`;
    }
    throw new UsageError(opts.command ? `${opts.command}: ${message}` : message);
  }
}

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
