/**
 * The runtime's side of the sandbox launch: the hidden stage flag and what a stage may assume.
 *
 * The launcher (`launcher.ts`) starts agent-block again with `--sandbox-stage=<stage>` as the
 * first argument: `runtime` (or `runtime-no-tcp`) for the confined runtime, `userns` for a
 * second launcher inside a fresh user and mount namespace. `src/cli/main.ts` recognises the
 * prefix and loads this module only then (the normal start-up path imports nothing of the
 * sandbox).
 *
 * Invariant: a process that says it is the confined runtime must be confined. `enterRuntime`
 * checks what `/proc/self/status` shows of the boundary (`NoNewPrivs: 1`, and `Seccomp: 2` where
 * the filter is installed), so the flag typed by hand does not run a block unconfined. (A process
 * under some other seccomp sandbox with no-new-privs passes the check; the flag is still no way
 * out for a block, whose children inherit its boundary whatever they are started with.)
 */
import { AgentBlockError } from "../errors.ts";
import { archInfo } from "./sys.ts";

/** The hidden flag's prefix (followed by the stage). */
export const STAGE_FLAG = "--sandbox-stage=";

/** The stages. */
export type SandboxStage = "runtime" | "userns";

/** The stage `arg` names, or an error for one this build does not know. */
export function parseStage(arg: string): SandboxStage {
  const s = arg.slice(STAGE_FLAG.length);
  if (s === "runtime" || s === "userns") return s;
  throw new AgentBlockError(`${arg}: unknown sandbox stage (the flag is agent-block's own)`);
}

/**
 * Checks this process is confined; throws `AgentBlockError` when it is not.
 * @param status the text of `/proc/self/status` (default: read it)
 */
export function enterRuntime(status?: string): void {
  const text = status ?? Deno.readTextFileSync("/proc/self/status");
  const field = (name: string) => new RegExp(`^${name}:\\s*(\\d+)`, "m").exec(text)?.[1];
  const confined = field("NoNewPrivs") === "1" && (archInfo() === undefined || field("Seccomp") === "2");
  if (!confined) {
    throw new AgentBlockError(
      `${STAGE_FLAG}runtime is agent-block's own flag for its confined runtime, and this process is not ` +
        `confined: use --sandbox`,
    );
  }
}
