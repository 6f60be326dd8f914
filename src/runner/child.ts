/**
 * The child-process `BlockRunner`: each run is an agent-block process of its own, which says how
 * it ended in its `--outcome` file.
 *
 * Owns the child's command line and its files. The child is this same program
 * (`src/proc/self.ts`) started as
 * `-s <script> -p <project> --config <tmp>/run.json --outcome <tmp>/outcome.json` (and
 * `--result FILE` when the caller's `ChildRunExtras` asks for it, and `--sandbox` when the
 * runner, the run's extras or the request's environment (`AGENT_BLOCK_SANDBOX`) asks for the
 * sandbox: the report's `sandboxed` says so, and is true — a child given `--sandbox` runs
 * confined or not at all, `src/sandbox/`), where the
 * config file carries `prompt`, `context` and `labels` — what ONE run is never goes through the
 * environment, and the caller's text not through argv either (no length limit, nothing shown in
 * `ps`). The child starts through `ProcessGroups.spawn`, so it leads a process group of its own,
 * with the request's environment minus the host's credentials (whole, credentials included, when
 * the owner says `passCredentials`: `serve`); it loads its project's `.env` itself like any run.
 *
 * Invariants:
 * - How the run ended comes from the outcome file (`outcome_json.ts`), never from what the child
 *   printed: a block writing `error: ...` to stderr and returning is `returned`. Only the runner's
 *   own decisions override the file: its timeout (`timed_out`), the request's `signal` (`stopped`,
 *   reason "cancelled") and the runner's `stopping` signal or a group ended from outside
 *   (`stopped`, `stopReason`). A child that ended without writing the file (killed outright,
 *   crashed, bad arguments) is `failed`, saying so with its exit code and the end of its stderr;
 *   a malformed file is `failed` naming the file and the field.
 * - The child's stdout and stderr are both forwarded, line by line and prefixed with the run's
 *   name, to the runner's `stderr` sink (nothing a block prints reaches the host's stdout, which
 *   may belong to a protocol); the stderr tail is kept for the report. Once the child has
 *   exited its output gets `DRAIN_MS` to end: a process it left behind holding the pipes does
 *   not hold the answer.
 * - Ending a run ends the child's whole process tree (`endTree`: SIGTERM to its group, so the
 *   child ends its run's processes itself; after the grace period SIGKILL to the child, its
 *   descendants and every process carrying its tag — a daemon its block detached included).
 *   Whatever of the tree outlives the child (a child killed from outside) is ended when it exits.
 * - The temporary directory is removed whatever happened.
 */
import { isAbsolute, join, resolve } from "node:path";
import type { Outcome, RaisedCode } from "../outcome.ts";
import type { ManagedProcess, ProcessGroups } from "../proc/group.ts";
import { selfCommand, type SelfLaunch, selfLaunch } from "../proc/self.ts";
import { endTree } from "../proc/tree.ts";
import { forwardLines, type Kept, tailLines } from "./forward.ts";
import { OutcomeFileError, readOutcomeFile } from "./outcome_json.ts";
import { type BlockRunner, type RunHooks, runName, type RunReport, type RunRequest } from "./runner.ts";
import { sandboxRequested } from "../config/settings.ts";
import { longTimeout } from "../util/long_timer.ts";

/** What a child runner fixes for all its runs. */
export interface ChildRunnerOptions {
  /** The registry the children's process groups live in. */
  procs: ProcessGroups;
  /** Where the children's output goes (e.g. the server's stderr). */
  stderr: (bytes: Uint8Array) => void;
  /** How to start agent-block (default: this program). */
  launch?: SelfLaunch;
  /** Grace between SIGTERM and SIGKILL when a run is ended, ms (default 2000). */
  graceMs?: number;
  /** Aborted when the runner's owner shuts down: every run still going is ended, `stopped`. */
  stopping?: AbortSignal;
  /** The `stopped` reason for a run ended by `stopping` (default "the runner is shutting down"). */
  stopReason?: string;
  /** Every run gets `--sandbox` (`agent-block mcp --sandbox`). */
  sandbox?: boolean;
  /**
   * Every run gets the request's environment whole, the host's credentials included (`serve`:
   * a run inherits the manager's environment, and strips credentials from its own children as
   * every run does). Default false: the credentials are removed (`agent-block mcp`).
   */
  passCredentials?: boolean;
}

/** What one child run adds to its request (the child runner's own knobs). */
export interface ChildRunExtras {
  /** `--result FILE` for the child (absolute): the returned value is written there too. */
  resultPath?: string;
  /** This run gets `--sandbox` (a serve job's `sandbox = true`). */
  sandbox?: boolean;
}

/** A child run's report: the outcome, and the end of what the child wrote to stderr. */
export interface ChildRunReport extends RunReport {
  /** The last lines of the child's stderr ("" when it wrote nothing or never started). */
  stderrTail: string;
  /** The child was started with `--sandbox` (it ran confined, or failed before running). */
  sandboxed: boolean;
}

/** How long the output may keep flowing after the run's process exited, ms. */
const DRAIN_MS = 2000;

/** Why the runner ended a run itself. */
type EndedBy = "timeout" | "cancelled" | "stopping";

/** A run that failed in the runner (`config`: it never started) or died without an outcome (`script`). */
function failed(message: string, code: RaisedCode = "config"): Outcome {
  return { status: "raised", code, message, traceback: "" };
}

/** Runs blocks in child agent-block processes. */
export class ChildRunner implements BlockRunner<ChildRunReport> {
  /**
   * A runner with `options` for every run.
   * @param options process registry, output sink, launch and shutdown signal
   */
  constructor(private readonly options: ChildRunnerOptions) {}

  /** Runs `request` in a child process to its outcome. */
  async run(request: RunRequest, hooks?: RunHooks, extras: ChildRunExtras = {}): Promise<ChildRunReport> {
    const sandboxed = this.options.sandbox === true || extras.sandbox === true ||
      sandboxRequested(request.env.AGENT_BLOCK_SANDBOX);
    const none = (outcome: Outcome): ChildRunReport => ({ outcome, stderrTail: "", sandboxed });
    if (request.signal?.aborted) return none({ status: "cancelled", reason: "cancelled" });
    if (this.options.stopping?.aborted) return none({ status: "cancelled", reason: this.#stopReason });
    if (!("path" in request.script)) {
      return none(failed("the child runner runs script files; inline source runs in process"));
    }
    if (request.cwd !== undefined && !isAbsolute(request.cwd)) {
      return none(failed(`the run's working directory must be absolute, got '${request.cwd}'`));
    }
    if (request.cwd === undefined && !isAbsolute(request.projectRoot)) {
      return none(failed(`the project root must be absolute without a cwd, got '${request.projectRoot}'`));
    }
    const cwd = request.cwd ?? request.projectRoot;
    let dir: string;
    try {
      // A sandboxed child may write only /tmp of the temporary places (whatever TMPDIR says).
      dir = await Deno.makeTempDir({ prefix: "ab_run_", ...(sandboxed ? { dir: "/tmp" } : {}) });
    } catch (e) {
      return none(failed(`cannot create the run's temporary directory: ${(e as Error).message}`));
    }
    try {
      return {
        ...await this.#runIn(dir, cwd, request.script.path, request, hooks, extras, sandboxed),
        sandboxed,
      };
    } catch (e) {
      return none(failed(`internal failure running the block in a child: ${(e as Error)?.message ?? e}`));
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => undefined);
    }
  }

  get #stopReason(): string {
    return this.options.stopReason ?? "the runner is shutting down";
  }

  async #runIn(
    dir: string,
    cwd: string,
    script: string,
    request: RunRequest,
    hooks: RunHooks | undefined,
    extras: ChildRunExtras,
    sandboxed: boolean,
  ): Promise<RunReport & { stderrTail: string }> {
    const outcomePath = join(dir, "outcome.json");
    const configPath = join(dir, "run.json");
    const config: Record<string, unknown> = {};
    if (request.prompt !== undefined) config.prompt = request.prompt;
    if (request.context !== undefined) config.context = request.context;
    if (request.labels !== undefined) config.labels = request.labels;
    await Deno.writeTextFile(configPath, JSON.stringify(config));
    const cmd = selfCommand(
      [
        "-s",
        resolve(cwd, script),
        "-p",
        resolve(cwd, request.projectRoot),
        "--config",
        configPath,
        "--outcome",
        outcomePath,
        ...(extras.resultPath !== undefined ? ["--result", extras.resultPath] : []),
        ...(sandboxed ? ["--sandbox"] : []),
      ],
      this.options.launch ?? selfLaunch(),
    );
    const name = runName(request);
    let proc: ManagedProcess;
    try {
      proc = this.options.procs.spawn({
        cmd,
        cwd,
        // The request's environment, minus the host's credentials (the process layer's rule)
        // unless the owner passes them on (the child is agent-block and strips them itself).
        baseEnv: request.env,
        wholeEnv: this.options.passCredentials === true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        label: `run:${name}`,
      });
    } catch (e) {
      return {
        outcome: failed(`cannot start agent-block (${cmd[0]}): ${(e as Error).message}`),
        stderrTail: "",
      };
    }
    const p = proc;
    hooks?.onStart?.({ pid: p.pid, tag: p.tag });

    let endedBy: EndedBy | undefined;
    const end = (why: EndedBy) => {
      if (endedBy) return;
      endedBy = why;
      endTree(p, this.options.graceMs ?? 2000).catch(() => undefined);
    };
    // any length: a `timeout = "30d"` past the host timer's range is a chain of timers
    const timer = request.timeoutMs !== undefined
      ? longTimeout(() => end("timeout"), request.timeoutMs)
      : undefined;
    const onCancel = () => end("cancelled");
    const onStopping = () => end("stopping");
    request.signal?.addEventListener("abort", onCancel, { once: true });
    this.options.stopping?.addEventListener("abort", onStopping, { once: true });
    try {
      if (this.options.stopping?.aborted) end("stopping");
      const prefix = `[block ${name}] `;
      const kept: Kept = { text: "" };
      const outputs = [
        forwardLines(p.child.stdout, prefix, this.options.stderr),
        forwardLines(p.child.stderr, prefix, this.options.stderr, kept),
      ];
      const status = await p.status;
      // Read before this call ends a leftover of the group itself (which marks it ended too).
      const endedOutside = p.endedBy !== undefined;
      // A process the run left behind in a session of its own may still hold the pipes open:
      // give the output a moment to drain, then stop reading rather than wait for it.
      let drainTimer: ReturnType<typeof setTimeout> | undefined;
      const drained = await Promise.race([
        Promise.all(outputs.map((o) => o.done)).then(() => true),
        new Promise<false>((r) => drainTimer = setTimeout(() => r(false), DRAIN_MS)),
      ]);
      clearTimeout(drainTimer);
      if (!drained) {
        for (const o of outputs) o.cancel();
        await Promise.all(outputs.map((o) => o.done));
      }
      // The leader is gone; make sure nothing of its tree lingers (a grandchild holding on, a
      // daemon of a child that was killed before it could end its run's processes).
      if (p.leftovers()) await p.terminate();
      const stderrTail = tailLines(kept.text);
      const outcome = await this.#outcome(
        endedBy ?? (endedOutside ? "stopping" : undefined),
        status,
        outcomePath,
        stderrTail,
        request,
      );
      return { outcome, stderrTail };
    } finally {
      timer?.clear();
      request.signal?.removeEventListener("abort", onCancel);
      this.options.stopping?.removeEventListener("abort", onStopping);
    }
  }

  async #outcome(
    endedBy: EndedBy | undefined,
    status: Deno.CommandStatus,
    outcomePath: string,
    stderrTail: string,
    request: RunRequest,
  ): Promise<Outcome> {
    if (endedBy === "timeout") return { status: "timed_out", seconds: request.timeoutMs! / 1000 };
    if (endedBy === "cancelled") return { status: "cancelled", reason: "cancelled" };
    // Ended by the owner's shutdown, or its group ended from outside this call (`endAll`).
    if (endedBy === "stopping") return { status: "cancelled", reason: this.#stopReason };
    let outcome: Outcome | undefined;
    try {
      outcome = await readOutcomeFile(outcomePath);
    } catch (e) {
      if (!(e instanceof OutcomeFileError)) throw e;
      return failed(`the run's outcome file is malformed: ${e.message}`);
    }
    if (outcome) return outcome;
    const how = `exit code ${status.code}${status.signal ? `, signal ${status.signal}` : ""}`;
    return failed(
      `the run ended without an outcome (${how})` +
        (stderrTail ? `; the end of its stderr:\n${stderrTail}` : "; it wrote nothing to stderr"),
      "script",
    );
  }
}
