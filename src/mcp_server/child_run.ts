/**
 * One `run_block` call: the block runs in an agent-block process of its own, and this module
 * turns how that process ended into a `BlockRunResult`.
 *
 * Owns the child's command line and its files. The child is this same program
 * (`src/proc/self.ts`) started as
 * `-s <block path> -p <project> --config <tmp>/run.json --result <tmp>/result`, where the config
 * file carries `prompt` and `context` — what ONE run is never goes through the environment, and
 * the caller's text not through argv either (no length limit, nothing shown in `ps`). The child starts through
 * `ProcessGroups.spawn`, so it leads a process group of its own and does not inherit the
 * server's credentials; it loads `<project>/.env` itself like any run.
 *
 * Invariants:
 * - The child's stdout and stderr are both forwarded, line by line and prefixed with the block
 *   name, to the server's stderr sink: nothing a block prints reaches the server's stdout, which
 *   belongs to the protocol. Once the child has exited, its output gets `DRAIN_MS` to end; a
 *   process it left behind holding the pipes does not hold the answer.
 * - A timeout, an abort (the client cancelled) or the server shutting down ends the child's
 *   whole process tree (`endTree`: SIGTERM to its group; after the grace period SIGKILL to its
 *   group and to every group its descendants lead); the result then says which one happened,
 *   never a value.
 * - The temporary directory holding the config and result files is removed whatever happened.
 * - How the child ended maps to exactly one result kind: exit 0 → `returned` (the result file's
 *   text, empty when the block returned nothing); 75 → `deferred` (reason from the child's
 *   `deferred:` line); 1 with an `error:` line → `failed` (the error text); anything else →
 *   `exited` with the code and the tail of stderr.
 */
import { join } from "node:path";
import type { BlockEntry } from "../blocks/registry.ts";
import type { ManagedProcess, ProcessGroups } from "../proc/group.ts";
import { selfCommand, type SelfLaunch, selfLaunch } from "../proc/self.ts";
import { endTree } from "../proc/tree.ts";

/** How one child run ended. */
export type BlockRunResult =
  | { kind: "returned"; text: string }
  | { kind: "failed"; message: string }
  | { kind: "deferred"; reason: string }
  | { kind: "exited"; code: number; stderrTail: string }
  | { kind: "timeout"; seconds: number }
  | { kind: "cancelled" }
  | { kind: "stopped" }
  | { kind: "spawn_failed"; message: string };

/** What a child run needs. */
export interface ChildRunOptions {
  block: BlockEntry;
  /** Absolute project root; the child's `--project` and working directory. */
  projectRoot: string;
  prompt?: string;
  context?: string;
  /** Wall-clock limit of the run, ms. */
  timeoutMs: number;
  /** Aborted when the client cancels the request. */
  signal?: AbortSignal;
  /** Aborted when the server shuts down. */
  stopping?: AbortSignal;
  /** Grace between SIGTERM and SIGKILL when a run is ended, ms (default 2000). */
  graceMs?: number;
  procs: ProcessGroups;
  /** Where the child's output goes (the server's stderr). */
  stderr: (bytes: Uint8Array) => void;
  /** How to start agent-block (default: this program). */
  launch?: SelfLaunch;
  /** Extra environment for the child (applied after credential removal). */
  env?: Record<string, string>;
  /** Called with the child's pid once it runs (for logs and tests). */
  onStart?: (pid: number) => void;
}

const enc = new TextEncoder();
const STDERR_KEEP = 64 * 1024;
const LINE_MAX = 16 * 1024;
/** How long the output may keep flowing after the run's process exited, ms. */
const DRAIN_MS = 2000;

/** A stream being forwarded: `done` settles at its end; `cancel` stops reading early. */
interface Forwarding {
  done: Promise<void>;
  cancel(): void;
}

/** Forwards a stream line by line with a prefix, keeping the last `keep` bytes of text. */
function forward(
  stream: ReadableStream<Uint8Array>,
  prefix: string,
  sink: (bytes: Uint8Array) => void,
  keep?: { text: string },
): Forwarding {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let pending = "";
  const emit = (line: string) => sink(enc.encode(prefix + line + "\n"));
  const take = (text: string) => {
    if (keep) {
      keep.text += text;
      if (keep.text.length > STDERR_KEEP * 2) keep.text = keep.text.slice(-STDERR_KEEP);
    }
    pending += text;
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      emit(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
    // A block printing without newlines must not grow this buffer without bound.
    if (pending.length > LINE_MAX) {
      emit(pending);
      pending = "";
    }
  };
  const done = (async () => {
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        take(dec.decode(value, { stream: true }));
      }
    } catch { /* cancelled, or the pipe broke: keep what arrived */ }
    take(dec.decode());
    if (pending.length) emit(pending);
  })();
  return { done, cancel: () => void reader.cancel().catch(() => undefined) };
}

/**
 * The error text of a failed run from the child's stderr: from the last `error: ` line (the run
 * path reports its failure last) up to the traceback (or the end). Undefined when there is no such line.
 */
export function errorTextOf(stderr: string): string | undefined {
  const lines = stderr.split(/\r?\n/);
  const start = lines.findLastIndex((l) => l.startsWith("error: "));
  if (start < 0) return undefined;
  const out = [lines[start].slice("error: ".length)];
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i];
    if (l.startsWith("stack traceback:") || l.startsWith("[") || l === "") break;
    out.push(l);
  }
  return out.join("\n");
}

/** The reason of a deferred run from the child's stderr (`deferred: <reason>`). */
export function deferReasonOf(stderr: string): string | undefined {
  const line = stderr.split(/\r?\n/).find((l) => l.startsWith("deferred: "));
  return line?.slice("deferred: ".length);
}

function tail(text: string, lines = 20): string {
  return text.split(/\r?\n/).filter((l) => l.length).slice(-lines).join("\n");
}

/** Runs `opts.block` in a child agent-block process and says how it ended. */
export async function runBlockInChild(opts: ChildRunOptions): Promise<BlockRunResult> {
  if (opts.signal?.aborted) return { kind: "cancelled" };
  const dir = await Deno.makeTempDir({ prefix: "ab_mcp_run_" });
  const resultPath = join(dir, "result");
  const configPath = join(dir, "run.json");
  const config: Record<string, string> = {};
  if (opts.prompt !== undefined) config.prompt = opts.prompt;
  if (opts.context !== undefined) config.context = opts.context;
  let proc: ManagedProcess | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  let onStop: (() => void) | undefined;
  try {
    await Deno.writeTextFile(configPath, JSON.stringify(config));
    const cmd = selfCommand(
      ["-s", opts.block.path, "-p", opts.projectRoot, "--config", configPath, "--result", resultPath],
      opts.launch ?? selfLaunch(),
    );
    try {
      proc = opts.procs.spawn({
        cmd,
        cwd: opts.projectRoot,
        env: opts.env,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        label: `run_block:${opts.block.name}`,
      });
    } catch (e) {
      return {
        kind: "spawn_failed",
        message: `cannot start agent-block (${cmd[0]}): ${(e as Error).message}`,
      };
    }
    const p = proc;
    opts.onStart?.(p.pid);
    let why: "timeout" | "cancelled" | "stopped" | undefined;
    const end = (reason: "timeout" | "cancelled" | "stopped") => {
      if (why) return;
      why = reason;
      endTree(p, opts.graceMs ?? 2000).catch(() => undefined);
    };
    timer = setTimeout(() => end("timeout"), opts.timeoutMs);
    onAbort = () => end("cancelled");
    onStop = () => end("stopped");
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    opts.stopping?.addEventListener("abort", onStop, { once: true });
    if (opts.stopping?.aborted) end("stopped");

    const prefix = `[block ${opts.block.name}] `;
    const kept = { text: "" };
    const outputs = [
      forward(p.child.stdout, prefix, opts.stderr),
      forward(p.child.stderr, prefix, opts.stderr, kept),
    ];
    const status = await p.status;
    // A process the run left behind in a session of its own may still hold the pipes open: give
    // the output a moment to drain, then stop reading rather than wait for that process.
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
    // The leader is gone; make sure nothing of its group lingers (a grandchild holding on).
    if (p.groupAlive()) await p.terminate();
    if (why === "timeout") return { kind: "timeout", seconds: opts.timeoutMs / 1000 };
    if (why === "cancelled") return { kind: "cancelled" };
    // Ended from outside this call: the server is shutting down.
    if (why === "stopped" || p.endedBy !== undefined) return { kind: "stopped" };
    switch (status.code) {
      case 0: {
        let text = "";
        try {
          text = new TextDecoder().decode(await Deno.readFile(resultPath));
        } catch (e) {
          if (!(e instanceof Deno.errors.NotFound)) throw e;
        }
        return { kind: "returned", text };
      }
      case 75:
        return { kind: "deferred", reason: deferReasonOf(kept.text) ?? "(no reason given)" };
      case 1: {
        const message = errorTextOf(kept.text);
        if (message !== undefined) return { kind: "failed", message };
        return { kind: "exited", code: 1, stderrTail: tail(kept.text) };
      }
      default:
        return { kind: "exited", code: status.code, stderrTail: tail(kept.text) };
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
    if (onStop) opts.stopping?.removeEventListener("abort", onStop);
    await Deno.remove(dir, { recursive: true }).catch(() => undefined);
  }
}
