/**
 * Command-line parsing for the CLI's subcommands, on `node:util`'s `parseArgs`.
 *
 * Owns the flag grammar every subcommand shares (`--name value`, `--name=value`, `-n value`,
 * `-nvalue` and `-n=value` — the value after the `=`, as clap reads it, never `=value` —, boolean
 * and repeatable flags, `--` ending the options, positionals where a command allows them)
 * and the one error rule: anything `parseArgs` rejects — an unknown flag, a missing value, a value
 * given to a boolean, a positional where none is allowed — becomes a `UsageError` (exit 2) whose
 * message names the flag (prefixed with the subcommand, `knl: …`, when the caller names one; a
 * boolean short flag written with a value, `-h=1`, is refused the same way; the error carries
 * the command, so the report points at that command's own `--help`),
 * and an unknown `--flag` close to a known one (`didYouMean`) adds `(did you mean '--known'?)`.
 * Every subcommand parses its flags here.
 *
 * `didYouMean` (`src/util/spelling.ts`, the one spelling helper: flags, subcommands, block names,
 * `job.toml` keys) is re-exported here for the CLI's modules.
 */
import { parseArgs } from "node:util";
import { UsageError } from "../errors.ts";
import { didYouMean } from "../util/spelling.ts";

export { didYouMean };

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
  const prefix = opts.command ? `${opts.command}: ` : "";
  try {
    const r = parseArgs({
      args: shortValues(argv, options),
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
    throw new UsageError(prefix + message, opts.command);
  }
}

/**
 * `argv` with every short flag that carries its value in the same argument (`-cfoo`, `-c=foo`,
 * `-Vc=foo`) rewritten to `--long=value`, the value after an `=` (clap's reading; node's parseArgs
 * would keep the `=` in it). `--long=` keeps a value that starts with `-` a value. A boolean short
 * flag followed by `=` is refused naming it. The argument after a string flag given without its
 * value is that value and left alone, and so is everything after `--`.
 */
function shortValues(argv: string[], options: Record<string, OptionSpec>): string[] {
  const byShort = new Map<string, [string, OptionSpec]>();
  for (const [long, spec] of Object.entries(options)) if (spec.short) byShort.set(spec.short, [long, spec]);
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i];
    if (tok === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (tok.startsWith("--")) {
      out.push(tok);
      if (!tok.includes("=") && options[tok.slice(2)]?.type === "string" && i + 1 < argv.length) {
        out.push(argv[++i]); // its value, whatever it looks like
      }
      continue;
    }
    if (!tok.startsWith("-") || tok.length < 2) {
      out.push(tok);
      continue;
    }
    // A short group: booleans, then at most one string flag taking the rest (or the next argument).
    const expanded: string[] = [];
    let takesNext = false;
    let known = true;
    for (let j = 1; j < tok.length; j++) {
      const hit = byShort.get(tok[j]);
      if (!hit) {
        known = false; // left to parseArgs, which names it
        break;
      }
      const [long, spec] = hit;
      const rest = tok.slice(j + 1);
      if (spec.type === "boolean") {
        if (rest.startsWith("=")) {
          throw new UsageError(`-${tok[j]} (--${long}) takes no value, got '${tok}'`); // prefixed below
        }
        expanded.push(`-${tok[j]}`);
        continue;
      }
      if (rest === "") takesNext = true;
      expanded.push(rest === "" ? `-${tok[j]}` : `--${long}=${rest.startsWith("=") ? rest.slice(1) : rest}`);
      break;
    }
    if (!known) {
      out.push(tok);
      continue;
    }
    out.push(...expanded);
    if (takesNext && i + 1 < argv.length) out.push(argv[++i]);
  }
  return out;
}
