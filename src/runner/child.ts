/**
 * The child-process `BlockRunner`: each run is an agent-block process of its own, which reads
 * its request from a file and tells its events back over a socket, live.
 *
 * Layer: runner. Owns the child's command line, its files and its event channel. The child is
 * this same program (`src/proc/self.ts`: from source it uses `node_modules` as laid out, so the
 * runner lays the packages out first, once per process) started as
 * `--request <tmp>/request.json --events <tmp>/events.sock` (and `--sandbox` when the runner or
 * the request asks for the sandbox — the edge that made the runner read its environment's
 * `AGENT_BLOCK_SANDBOX` into `sandbox`, and a child whose environment asks confines itself at its
 * own edge: the report's `sandboxed` says so, and is true — a child given `--sandbox` runs confined or not at
 * all, `src/sandbox/`). The request file is `request_json.ts`'s form (nothing of one run goes
 * through argv or the environment: no length limit, nothing shown in `ps`), written mode 0600
 * in the run's private temporary directory, without the host's credential variables; the child starts through `ProcessGroups.spawn`, so it leads a
 * process group of its own, with the request's environment minus the host's credentials, and it
 * loads its project's `.env` itself like any run. The child connects to the runner's Unix socket
 * and writes its `RunEvent`s there as JSON Lines (`event_json.ts`, what `--events` writes), each
 * as it happens; the runner hands them to `hooks.observe` as they arrive.
 *
 * Invariants:
 * - How the run ended is the child's `end` event, never what it printed: a block writing
 *   `error: ...` to stderr and returning is `returned`. Only the runner's own decisions override
 *   it: its timeout (`timed_out`), the signal (`cancelled`, reason "cancelled") and the runner's
 *   `stopping` signal or a group ended from outside (`cancelled`, `stopReason`). A child that
 *   ended without an `end` (killed outright, crashed, bad arguments) is `raised` with code
 *   `script`, saying so with its exit code and the end of its stderr, after the events it sent;
 *   a malformed event line is `raised` naming the line and the field.
 * - Exactly one `end` reaches `hooks.observe`, the runner's own, last; the child's events before
 *   it arrive in the child's order.
 * - Only the first connection to the socket is the child's: the child connects before its block
 *   runs, and any later connection (a process of the block that found the socket) is closed
 *   unread, so a block cannot forge its run's events.
 * - The child's stdout and stderr are both forwarded, line by line and prefixed with the run's
 *   name, to the runner's `stderr` sink (nothing a block prints reaches the host's stdout, which
 *   may belong to a protocol); the stderr tail is kept for the report. Once the child has
 *   exited its output and events get `DRAIN_MS` to end: a process it left behind holding the
 *   pipes does not hold the answer. Its event socket is its own (close-on-exec), so the events
 *   are read to their end after it exited, however slowly a starved host reads them.
 * - Ending a run ends the child's whole process tree (`endTree`: SIGTERM to its group, so the
 *   child ends its run's processes itself; after the grace period SIGKILL to the child, its
 *   descendants and every process carrying its tag — a daemon its block detached included).
 *   Whatever of the tree outlives the child (a child killed from outside) is ended when it exits.
 * - The temporary directory is removed whatever happened.
 */
import { isAbsolute, join } from "node:path";
import type { Outcome, RaisedCode } from "../outcome.ts";
import type { ManagedProcess, ProcessGroups } from "../proc/group.ts";
import { HOST_CREDENTIALS } from "../proc/child_env.ts";
import { layOutPackages, selfCommand, type SelfLaunch, selfLaunch } from "../proc/self.ts";
import { endTree } from "../proc/tree.ts";
import { fanOut, type RunEvent } from "../obs/run_events.ts";
import { forwardLines, type Kept, tailLines } from "./forward.ts";
import { EventLineReader } from "./event_json.ts";
import { requestToJson } from "./request_json.ts";
import {
  type BlockRunner,
  cancelSignal,
  ReportFold,
  type RunHooks,
  runName,
  type RunReport,
  type RunRequest,
} from "./runner.ts";
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
  /** Aborted when the runner's owner shuts down: every run still going is ended, `cancelled`. */
  stopping?: AbortSignal;
  /** The `cancelled` reason for a run ended by `stopping` (default "the runner is shutting down"). */
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

/** A child run's report: the outcome, and the end of what the child wrote to stderr. */
export interface ChildRunReport extends RunReport {
  /** The last lines of the child's stderr ("" when it wrote nothing or never started). */
  stderrTail: string;
  /** The child was started with `--sandbox` (it ran confined, or failed before running). */
  sandboxed: boolean;
}

/** How long the output may keep flowing after the run's process exited, ms. */
const DRAIN_MS = 2000;

/**
 * How long the child's events may keep arriving after it exited, ms: no process but the child
 * holds its end of the socket, so this bound is reached only by a fault, never by a slow host
 * (a busy machine once took over `DRAIN_MS` to read an `end` that was already sent).
 */
const EVENTS_DRAIN_MS = 60_000;

/** Waits for `streams` to end; past `ms`, calls `cancel` and waits for them to settle. */
async function drainWithin(streams: Promise<unknown>[], ms: number, cancel: () => void): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const drained = await Promise.race([
    Promise.all(streams).then(() => true),
    new Promise<false>((r) => timer = setTimeout(() => r(false), ms)),
  ]);
  clearTimeout(timer);
  if (!drained) {
    cancel();
    await Promise.all(streams);
  }
}

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

  /** Runs `request` in a child process to its report; `hooks.observe` sees its events live. */
  async run(request: RunRequest, hooks?: RunHooks): Promise<ChildRunReport> {
    const started = performance.now();
    const sandboxed = this.options.sandbox === true || request.sandbox === true;
    const fold = new ReportFold();
    const observe = fanOut(
      hooks?.observe ? [fold.observe, hooks.observe] : [fold.observe],
      (m) => this.options.stderr(new TextEncoder().encode(`[warn] agent-block: ${m}\n`)),
    )!;
    const end = (outcome: Outcome, stderrTail = ""): ChildRunReport => {
      observe({ type: "end", outcome, ms: performance.now() - started });
      return { ...fold.report(outcome), stderrTail, sandboxed };
    };
    const signal = cancelSignal(request, hooks);
    if (signal?.aborted) return end({ status: "cancelled", reason: "cancelled" });
    if (this.options.stopping?.aborted) return end({ status: "cancelled", reason: this.#stopReason });
    if (request.cwd !== undefined && !isAbsolute(request.cwd)) {
      return end(failed(`the run's working directory must be absolute, got '${request.cwd}'`));
    }
    if (request.cwd === undefined && !isAbsolute(request.projectRoot)) {
      return end(failed(`the project root must be absolute without a cwd, got '${request.projectRoot}'`));
    }
    const cwd = request.cwd ?? request.projectRoot;
    let text: string;
    try {
      const env = { ...request.env };
      for (const k of HOST_CREDENTIALS) delete env[k];
      // the mesh key the edge read is a host credential too: the child does not get it
      const settings = request.settings?.mesh?.secretKey !== undefined
        ? { ...request.settings, mesh: { ...request.settings.mesh, secretKey: undefined } }
        : request.settings;
      text = requestToJson({ ...request, env, cwd, settings, sandbox: sandboxed || undefined });
    } catch (e) {
      return end(failed(`the request cannot be sent to a child: ${(e as Error).message}`));
    }
    const launch = this.options.launch ?? selfLaunch();
    try {
      await layOutPackages(launch); // the child uses node_modules as it is (src/proc/self.ts)
    } catch (e) {
      return end(failed(`cannot lay out the packages a child run needs: ${(e as Error).message}`));
    }
    let dir: string;
    try {
      // A sandboxed child may write only /tmp of the temporary places (whatever TMPDIR says).
      dir = await Deno.makeTempDir({ prefix: "ab_run_", ...(sandboxed ? { dir: "/tmp" } : {}) });
    } catch (e) {
      return end(failed(`cannot create the run's temporary directory: ${(e as Error).message}`));
    }
    try {
      const r = await this.#runIn(dir, cwd, text, request, signal, hooks, observe, sandboxed, launch);
      return end(r.outcome, r.stderrTail);
    } catch (e) {
      return end(failed(`internal failure running the block in a child: ${(e as Error)?.message ?? e}`));
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
    requestText: string,
    request: RunRequest,
    signal: AbortSignal | undefined,
    hooks: RunHooks | undefined,
    observe: (e: RunEvent) => void,
    sandboxed: boolean,
    launch: SelfLaunch,
  ): Promise<{ outcome: Outcome; stderrTail: string }> {
    const requestPath = join(dir, "request.json");
    const socketPath = join(dir, "events.sock");
    await Deno.writeTextFile(requestPath, requestText, { mode: 0o600 });
    const listener = Deno.listen({ transport: "unix", path: socketPath });
    // The child's events: the first connection only; its `end` is kept for the runner's own.
    let childEnd: Outcome | undefined;
    let reader: EventLineReader | undefined;
    const accepting = (async () => {
      try {
        const conn = await listener.accept();
        reader = new EventLineReader(conn.readable, "the child's events", (e) => {
          if (e.type === "end") childEnd = e.outcome;
          else if (childEnd === undefined) observe(e);
        });
        // Later connections are not the child's: closed unread.
        for await (const other of listener) other.close();
      } catch { /* the listener was closed */ }
    })();
    const closeListener = () => {
      try {
        listener.close();
      } catch { /* closed already */ }
    };
    const cmd = selfCommand(
      ["--request", requestPath, "--events", socketPath, ...(sandboxed ? ["--sandbox"] : [])],
      launch,
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
      closeListener();
      await accepting;
      return {
        outcome: failed(`cannot start agent-block (${cmd[0]}): ${(e as Error).message}`),
        stderrTail: "",
      };
    }
    const p = proc;
    hooks?.onStart?.({ pid: p.pid, tag: p.tag });

    let endedBy: EndedBy | undefined;
    const endRun = (why: EndedBy) => {
      if (endedBy) return;
      endedBy = why;
      endTree(p, this.options.graceMs ?? 2000).catch(() => undefined);
    };
    // any length: a `timeout = "30d"` past the host timer's range is a chain of timers
    const timer = request.timeoutMs !== undefined
      ? longTimeout(() => endRun("timeout"), request.timeoutMs)
      : undefined;
    const onCancel = () => endRun("cancelled");
    const onStopping = () => endRun("stopping");
    signal?.addEventListener("abort", onCancel, { once: true });
    this.options.stopping?.addEventListener("abort", onStopping, { once: true });
    try {
      if (this.options.stopping?.aborted) endRun("stopping");
      const prefix = `[block ${name}] `;
      const kept: Kept = { text: "" };
      const outputs = [
        forwardLines(p.child.stdout, prefix, this.options.stderr),
        forwardLines(p.child.stderr, prefix, this.options.stderr, kept),
      ];
      const status = await p.status;
      // Read before this call ends a leftover of the group itself (which marks it ended too).
      const endedOutside = p.endedBy !== undefined;
      // No connection after the child is gone: stop listening (a pending accept settles).
      closeListener();
      await accepting.catch(() => undefined);
      // A process the run left behind in a session of its own may still hold the pipes open:
      // give the output a moment to drain, then stop reading rather than wait for it. The event
      // socket is the child's alone (close-on-exec), so it ends with the child: it is read to
      // its end however long a starved host takes, bounded only against a runtime bug.
      const r = reader;
      await Promise.all([
        drainWithin(outputs.map((o) => o.done), DRAIN_MS, () => outputs.forEach((o) => o.cancel())),
        r ? drainWithin([r.done], EVENTS_DRAIN_MS, () => r.cancel()) : undefined,
      ]);
      // The leader is gone; make sure nothing of its tree lingers (a grandchild holding on, a
      // daemon of a child that was killed before it could end its run's processes).
      if (p.leftovers()) await p.terminate();
      const stderrTail = tailLines(kept.text);
      const why = endedBy ?? (endedOutside ? "stopping" : undefined);
      if (why === "timeout") {
        return { outcome: { status: "timed_out", seconds: request.timeoutMs! / 1000 }, stderrTail };
      }
      if (why === "cancelled") return { outcome: { status: "cancelled", reason: "cancelled" }, stderrTail };
      // Ended by the owner's shutdown, or its group ended from outside this call (`endAll`).
      if (why === "stopping") {
        return { outcome: { status: "cancelled", reason: this.#stopReason }, stderrTail };
      }
      if (reader?.error) {
        return {
          outcome: failed(`the child's event stream is malformed: ${reader.error.message}`),
          stderrTail,
        };
      }
      if (childEnd) return { outcome: childEnd, stderrTail };
      const how = `exit code ${status.code}${status.signal ? `, signal ${status.signal}` : ""}`;
      return {
        outcome: failed(
          `the run ended without an outcome (${how})` +
            (stderrTail ? `; the end of its stderr:\n${stderrTail}` : "; it wrote nothing to stderr"),
          "script",
        ),
        stderrTail,
      };
    } finally {
      timer?.clear();
      closeListener();
      signal?.removeEventListener("abort", onCancel);
      this.options.stopping?.removeEventListener("abort", onStopping);
    }
  }
}
