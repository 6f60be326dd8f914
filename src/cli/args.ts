/**
 * A small command-line parser for the CLI's subcommands.
 *
 * Owns the flag grammar every subcommand shares: `--name value`, `--name=value`, `-n value`,
 * `-nvalue`, boolean flags (`--help`, `-h`), repeatable flags, `--` ending the options, and
 * positionals where a command allows them. Anything else — an unknown flag, a missing value, a
 * value given to a boolean, a positional where none is allowed — throws `UsageError` (exit 2)
 * naming the flag.
 *
 * Why not `node:util`'s `parseArgs`: loading Deno's `node:util` costs more start-up time than the
 * whole of this file does, on every run; the run path starts a process per block.
 */
import { UsageError } from "../errors.ts";

/** One option: its value kind, optional one-letter alias, and whether it may repeat. */
export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
}

/** Parsed values: strings, booleans, or arrays of strings for `multiple` options. */
export type ParsedValues = Record<string, string | boolean | string[] | undefined>;

/** Parses `argv` against `options`. */
export function parseFlags(
  argv: string[],
  options: Record<string, OptionSpec>,
  opts: { allowPositionals?: boolean } = {},
): { values: ParsedValues; positionals: string[] } {
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(options)) if (spec.short) byShort.set(spec.short, name);
  const values: ParsedValues = {};
  const positionals: string[] = [];
  const label = (name: string) => {
    const s = options[name].short;
    return s ? `-${s}, --${name}` : `--${name}`;
  };
  const store = (name: string, value: string | boolean) => {
    const spec = options[name];
    if (spec.multiple) {
      const list = (values[name] as string[] | undefined) ?? [];
      list.push(value as string);
      values[name] = list;
    } else values[name] = value;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
      inline = eq >= 0 ? arg.slice(eq + 1) : undefined;
      if (!(name in options)) throw new UsageError(`unknown option '--${name}'`);
    } else if (arg.startsWith("-") && arg.length > 1) {
      name = byShort.get(arg[1]);
      if (!name) throw new UsageError(`unknown option '-${arg[1]}'`);
      if (arg.length > 2) {
        if (options[name].type === "boolean") throw new UsageError(`option '${label(name)}' takes no value`);
        inline = arg.slice(2);
      }
    } else {
      if (!opts.allowPositionals) throw new UsageError(`unexpected argument '${arg}'`);
      positionals.push(arg);
      continue;
    }
    const spec = options[name];
    if (spec.type === "boolean") {
      if (inline !== undefined) throw new UsageError(`option '${label(name)}' takes no value`);
      store(name, true);
      continue;
    }
    if (inline === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith("-") && next.length > 1 && next !== "-")) {
        throw new UsageError(
          `option '${label(name)} <value>' needs a value (write --${name}=VALUE for one starting with '-')`,
        );
      }
      inline = next;
      i++;
    }
    store(name, inline);
  }
  return { values, positionals };
}
