/**
 * Command-line parsing for the CLI's subcommands, on `node:util`'s `parseArgs`.
 *
 * Owns the flag grammar every subcommand shares (`--name value`, `--name=value`, `-n value`,
 * boolean and repeatable flags, `--` ending the options, positionals where a command allows them)
 * and the one error rule: anything `parseArgs` rejects — an unknown flag, a missing value, a value
 * given to a boolean, a positional where none is allowed — becomes a `UsageError` (exit 2) whose
 * message names the flag (prefixed with the subcommand, `knl: …`, when the caller names one).
 * Every subcommand parses its flags here.
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
    const message = (e as Error).message.replace(/\n/g, " ");
    throw new UsageError(opts.command ? `${opts.command}: ${message}` : message);
  }
}
