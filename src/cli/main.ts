/**
 * Entry of the CLI: picks the subcommand and turns typed errors into exit codes.
 *
 * Owns the dispatch table (`test`, and later `mcp`, `vendor`, `knl`, `serve`; anything else is
 * the run path) and the last-resort error report: an `AgentBlockError` prints `error: <message>`
 * and exits with its code; a usage error adds a hint and exits 2; an unexpected exception is a
 * bug, printed with its stack, exit 1.
 */
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { writeStderr } from "../obs/log.ts";
import { runCommand } from "./run_command.ts";
import { testCommand } from "./test_command.ts";
import { mcpCommand } from "./mcp_command.ts";
import { vendorCommand } from "./vendor_command.ts";

/** Subcommands by name; each returns the exit code. */
export const SUBCOMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  test: testCommand,
  mcp: mcpCommand,
  vendor: (argv) => vendorCommand(argv),
};

/** Runs the CLI with `argv` (without the program name) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const enc = new TextEncoder();
  try {
    const sub = argv.length > 0 ? SUBCOMMANDS[argv[0]] : undefined;
    return sub ? await sub(argv.slice(1)) : await runCommand(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      writeStderr(enc.encode(`error: ${e.message}\n(run agent-block --help for usage)\n`));
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
