/**
 * Entry of the CLI: picks the subcommand and turns typed errors into exit codes.
 *
 * Owns the dispatch table (`test`, `knl`, `mcp`, `vendor`, `blocks`, `types`, `serve`, `flow`, `worker`, `a2a`, each loaded on first use; a
 * first argument that is a flag is the run path, and any other word — the run path takes no
 * positional arguments — an unknown command, with a "did you mean" when one is close) and the
 * last-resort error report: an `AgentBlockError` prints `error: <message>`
 * and exits with its code; a usage error adds a hint — the `--help` of the command it names, else
 * the top-level one — and exits 2; an unexpected exception is a
 * bug, printed with its stack, exit 1.
 */
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { writeStderr } from "../obs/log.ts";
import { runCommand } from "./run_command.ts";
import { didYouMean } from "./args.ts";

/** A subcommand: runs with its arguments and returns the exit code. */
export type Subcommand = (argv: string[]) => Promise<number>;

/**
 * Subcommands by name: the function itself, or `{ load }` importing its module on first use.
 * Prefer `{ load }`: the run path starts one process per block, and a statically imported
 * subcommand (with its SDKs) is loaded by every one of them. deno.json sets
 * `"unstable": ["lazy-dynamic-imports"]`, so `deno run` leaves them unread until called; for the
 * same reason `deno compile` embeds them only as compile roots: each lazily loaded module is
 * listed in deno.json's `compile.include` (tests/compile_test.ts checks the list).
 */
export const SUBCOMMANDS: Record<string, Subcommand | { load: () => Promise<Subcommand> }> = {
  test: { load: async () => (await import("./test_command.ts")).testCommand },
  knl: { load: async () => (await import("./knl_command.ts")).knlCommand },
  mcp: { load: async () => (await import("./mcp_command.ts")).mcpCommand },
  vendor: { load: async () => (await import("./vendor_command.ts")).vendorCommand },
  blocks: { load: async () => (await import("./blocks_command.ts")).blocksCommand },
  types: { load: async () => (await import("./types_command.ts")).typesCommand },
  serve: { load: async () => (await import("./serve_command.ts")).serveCommand },
  flow: { load: async () => (await import("./flow_command.ts")).flowCommand },
  worker: { load: async () => (await import("./worker_command.ts")).workerCommand },
  a2a: { load: async () => (await import("./a2a_command.ts")).a2aCommand },
};

/** The error for a first argument that is neither a flag nor a command. */
function unknownCommand(word: string): UsageError {
  const names = Object.keys(SUBCOMMANDS);
  const near = didYouMean(word, names);
  return new UsageError(
    near
      ? `unknown command '${word}' (did you mean '${near}'?)`
      : `unknown command '${word}'; the commands are ${names.join(", ")}, and a run takes -s FILE or -b NAME`,
  );
}

/** Runs the CLI with `argv` (without the program name) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const enc = new TextEncoder();
  try {
    const first = argv[0];
    // A stage of the sandbox launch (the launcher's own re-execution; src/sandbox/stage.ts).
    if (first?.startsWith("--sandbox-stage=")) {
      const { enterRuntime, parseStage } = await import("../sandbox/stage.ts");
      const stage = parseStage(first);
      if (stage === "runtime") enterRuntime();
      return await runCommand(argv.slice(1), stage);
    }
    const entry = first !== undefined && Object.hasOwn(SUBCOMMANDS, first) ? SUBCOMMANDS[first] : undefined;
    if (!entry) {
      if (first !== undefined && !first.startsWith("-")) throw unknownCommand(first);
      return await runCommand(argv);
    }
    const sub = typeof entry === "function" ? entry : await entry.load();
    return await sub(argv.slice(1));
  } catch (e) {
    if (e instanceof UsageError) {
      const help = e.command ? `agent-block ${e.command} --help` : "agent-block --help";
      writeStderr(enc.encode(`error: ${e.message}\n(run ${help} for usage)\n`));
      return EXIT.USAGE;
    }
    if (e instanceof AgentBlockError) {
      writeStderr(enc.encode(`error: ${e.message}\n`));
      return e.exitCode;
    }
    writeStderr(enc.encode(`error: internal failure: ${(e as Error)?.stack ?? e}\n`));
    return EXIT.FAILED;
  }
}
