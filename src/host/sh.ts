/**
 * `sh.exec` / `sh.kill`: shell commands as process groups of the run.
 *
 * Owns the command contract of the seed README:
 * - `sh.exec(cmd [, opts])` runs `/bin/sh -c cmd` through `run.procs` (own session and process
 *   group, credentials removed from the environment, `opts.env` applied after the removal), in
 *   `opts.cwd` (default: the project root; a relative `cwd` is taken from the project root), with `opts.stdin` written to its standard input
 *   (otherwise /dev/null). It yields the calling task until the command ends.
 * - stdout and stderr are read concurrently from the start, so a command filling both pipes
 *   never stalls. Once the leader has exited, the pipes get `DRAIN_MS` to reach end-of-file; if
 *   a background process of the command still holds them (`daemon &` without a redirection),
 *   the call does not hang: the command's process group is SIGKILLed, which closes the pipes,
 *   and the output written so far is returned (if a process that detached from the group still
 *   holds them after another `DRAIN_MS`, the command's whole tree is SIGKILLed). A background
 *   process meant to outlive the command must redirect its output (`daemon > log 2>&1 &`); it
 *   then lives until the run ends.
 * - `opts.timeout` (seconds, default 30): when it passes, the command's WHOLE tree gets SIGKILL
 *   (its group, its descendants, and what it detached: `src/proc/tree.ts`) and the result says
 *   `timed_out = true`.
 * - `sh.kill(label)` ends the tree started with `opts.label = label`: SIGTERM, then SIGKILL
 *   after twice the task grace if anything of it is left. It answers at once (true if there was
 *   such a group); the awaiting `sh.exec` returns with `killed = true`.
 * - Cancelling the awaiting task does not end the command (the seed's rule: `sh.kill` is the way);
 *   every process the command started, detached or not, ends with the run.
 *
 * - `opts.max_output_bytes` (default 64 MiB, as `http.request`'s `max_body_bytes`): each of stdout
 *   and stderr keeps at most that many bytes; the rest is read and dropped (the command runs on
 *   as it would, never blocked on a full pipe), and the result says `truncated = true` with
 *   `stdout_truncated` / `stderr_truncated`. Without it `yes` gathered 926 MB in 8 s.
 *
 * Result: `{ ok, code, stdout, stderr }` — `ok` is true when the command ran and exited by
 * itself, whatever its code (test `code == 0` for success). Otherwise `ok = false` and `error`
 * says why, beside `signal` (a signalled command, `code` then nil), `timed_out = true` or
 * `killed = true`. Output is the exact bytes (a Lua string). Truncation does not change `ok`.
 *
 * A traced run (`run.trace`) gets a span `sh.exec` per command, with its exit code.
 */
import { resolve } from "node:path";
import type { LuaEngine } from "../lua/engine.ts";
import { type Args, LuaArgError, optField } from "../lua/args.ts";
import { luaTypeName } from "../json/values.ts";
import type { RunContext } from "./context.ts";
import type { ManagedProcess } from "../proc/group.ts";

/** How long pipes may stay open after the leader exited before reading stops. */
const DRAIN_MS = 250;
const DEFAULT_TIMEOUT_S = 30;
/** Default `max_output_bytes`, per stream: 64 MiB (as `http.request`'s `max_body_bytes`). */
export const DEFAULT_MAX_OUTPUT_BYTES = 64 << 20;
/** Beyond this, setTimeout misbehaves; such a timeout means "none". */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Options of one `sh.exec`, validated. */
interface ExecOptions {
  cwd: string;
  timeoutMs: number;
  stdin?: string | Uint8Array;
  env: Record<string, string>;
  label?: string;
  maxOutputBytes: number;
}

function readOptions(a: Args, run: RunContext): ExecOptions {
  const opts = a.optTable(2, "opts");
  const field = <T>(k: string, kind: "string" | "number" | "table") =>
    optField<T>(a, 2, "opts", opts, k, kind);
  const cwd = resolve(run.projectRoot, field<string>("cwd", "string") ?? ".");
  const timeout = field<number>("timeout", "number") ?? DEFAULT_TIMEOUT_S;
  if (!(timeout > 0)) {
    throw new LuaArgError(
      `sh.exec: argument 2 (opts) field 'timeout' must be a positive number, got ${timeout}`,
    );
  }
  let stdin: string | Uint8Array | undefined;
  if (opts?.stdin !== undefined) {
    if (typeof opts.stdin !== "string" && !(opts.stdin instanceof Uint8Array)) {
      throw new LuaArgError(
        `sh.exec: argument 2 (opts) field 'stdin' must be a string, got ${luaTypeName(opts.stdin)}`,
      );
    }
    stdin = opts.stdin;
  }
  const env: Record<string, string> = {};
  const envTable = field<Record<string, unknown>>("env", "table");
  for (const [k, v] of Object.entries(envTable ?? {})) {
    if (typeof v !== "string") {
      throw new LuaArgError(
        `sh.exec: argument 2 (opts) field 'env' value of '${k}' must be a string, got ${luaTypeName(v)}`,
      );
    }
    env[k] = v;
  }
  const label = field<string>("label", "string");
  const maxOutputBytes = field<number>("max_output_bytes", "number") ?? DEFAULT_MAX_OUTPUT_BYTES;
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes <= 0) {
    throw new LuaArgError(
      `sh.exec: argument 2 (opts) field 'max_output_bytes' must be a positive whole number, got ${maxOutputBytes}`,
    );
  }
  return { cwd, timeoutMs: timeout * 1000, stdin, env, label, maxOutputBytes };
}

/** One stream's output: at most `max` bytes kept; `truncated` once more came. */
interface Gathered {
  bytes: Uint8Array;
  truncated: boolean;
}

/**
 * Reads `stream` to its end, keeping the first `max` bytes and dropping the rest (read all the
 * same, so the writer is never blocked on a full pipe).
 */
async function gather(stream: ReadableStream<Uint8Array>, max: number): Promise<Gathered> {
  const parts: Uint8Array[] = [];
  let kept = 0;
  let truncated = false;
  for await (const chunk of stream) {
    if (kept >= max) {
      truncated ||= chunk.length > 0;
      continue;
    }
    const take = Math.min(chunk.length, max - kept);
    parts.push(take === chunk.length ? chunk : chunk.slice(0, take));
    kept += take;
    if (take < chunk.length) truncated = true;
  }
  if (parts.length === 1) return { bytes: parts[0], truncated };
  const bytes = new Uint8Array(kept);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, truncated };
}

async function feed(proc: ManagedProcess, data: string | Uint8Array): Promise<void> {
  const w = proc.child.stdin.getWriter();
  try {
    await w.write(typeof data === "string" ? new TextEncoder().encode(data) : data);
    await w.close();
  } catch {
    // The command closed its stdin early (`true`, `head -c1`): what it did not read is dropped.
    w.abort().catch(() => undefined);
  }
}

/** Installs `sh.exec` and `sh.kill`. */
export function installSh(engine: LuaEngine, run: RunContext): void {
  /** Groups ended by `sh.kill`, so their `sh.exec` can say `killed = true`. */
  const killedByUser = new WeakSet<ManagedProcess>();

  const exec = async (a: Args): Promise<Record<string, unknown>> => {
    const cmd = a.string(1, "cmd");
    const o = readOptions(a, run);
    if (o.label !== undefined && run.procs.byLabel(o.label)) {
      throw new Error(`sh.exec: label '${o.label}' is already used by a running command`);
    }
    try {
      if (!Deno.statSync(o.cwd).isDirectory) {
        return { ok: false, error: `sh.exec: cwd ${o.cwd} is not a directory` };
      }
    } catch {
      return { ok: false, error: `sh.exec: cwd ${o.cwd} does not exist` };
    }
    let proc: ManagedProcess;
    try {
      proc = run.procs.spawn({
        cmd: ["/bin/sh", "-c", cmd],
        cwd: o.cwd,
        env: o.env,
        stdin: o.stdin !== undefined ? "piped" : "null",
        stdout: "piped",
        stderr: "piped",
        label: o.label,
      });
    } catch (e) {
      return { ok: false, error: `sh.exec: cannot start /bin/sh: ${(e as Error).message}` };
    }
    if (o.stdin !== undefined) feed(proc, o.stdin);

    let timedOut = false;
    const timer = o.timeoutMs <= MAX_TIMER_MS
      ? setTimeout(() => {
        timedOut = true;
        proc.kill().catch(() => undefined);
      }, o.timeoutMs)
      : undefined;
    // Both pipes are read to the end concurrently (in Deno's runtime, the cheapest way). If a
    // process of the group still holds them DRAIN_MS after the leader exited, the group is
    // ended: that is what closes the pipes, and output() then holds everything written.
    const output = Promise.all([
      gather(proc.child.stdout, o.maxOutputBytes),
      gather(proc.child.stderr, o.maxOutputBytes),
      proc.status,
    ]);
    let settled = false;
    let drainTimer: ReturnType<typeof setTimeout> | undefined;
    const drained = proc.status.then(() =>
      new Promise<"drain">((r) => {
        if (!settled) drainTimer = setTimeout(() => r("drain"), DRAIN_MS);
      })
    );
    if ((await Promise.race([output, drained])) === "drain") {
      run.log.debug(`sh.exec: pipes still open ${DRAIN_MS} ms after the command exited; ending its group`);
      await proc.killGroup();
      // Still open: a process that detached from the group (setsid) holds them; end the tree.
      let held: ReturnType<typeof setTimeout> | undefined;
      const stillOpen = new Promise<"open">((r) => held = setTimeout(() => r("open"), DRAIN_MS));
      if ((await Promise.race([output, stillOpen])) === "open") {
        run.log.debug(`sh.exec: a detached process still holds the pipes; ending the command's tree`);
        await proc.kill();
      }
      clearTimeout(held);
    }
    const [stdout, stderr, status] = await output;
    settled = true;
    clearTimeout(drainTimer);
    clearTimeout(timer);

    const result: Record<string, unknown> = {
      ok: true,
      code: status.signal ? undefined : status.code,
      stdout: stdout.bytes,
      stderr: stderr.bytes,
    };
    if (status.signal) result.signal = status.signal;
    if (stdout.truncated || stderr.truncated) {
      result.truncated = true;
      if (stdout.truncated) result.stdout_truncated = true;
      if (stderr.truncated) result.stderr_truncated = true;
    }
    if (timedOut) {
      Object.assign(result, {
        ok: false,
        timed_out: true,
        error: `sh.exec: timed out after ${o.timeoutMs / 1000} s (process group killed)`,
      });
    } else if (killedByUser.has(proc)) {
      Object.assign(result, { ok: false, killed: true, error: `sh.exec: killed by sh.kill('${o.label}')` });
    } else if (status.signal) {
      Object.assign(result, { ok: false, error: `sh.exec: terminated by ${status.signal}` });
    }
    return result;
  };
  const trace = run.trace;
  engine.define("sh.exec", {
    async: !trace ? exec : async (a: Args) => {
      // A traced run: one span per command (its exit code; the command line only with content capture).
      const span = trace.start("sh.exec", "internal", {
        "process.executable.name": "sh",
        "process.command_line": trace.captureContent ? run.secrets.scrub(String(a.at(1))) : undefined,
      });
      try {
        const r = await exec(a);
        span.set({ "process.exit.code": typeof r.code === "number" ? r.code : undefined });
        if (r.ok !== true) {
          span.fail(r.timed_out ? "timeout" : r.killed ? "killed" : "sh_error", String(r.error));
        }
        return r;
      } catch (e) {
        span.fail("sh_error", run.secrets.scrub(String((e as Error)?.message ?? e)));
        throw e;
      } finally {
        span.end();
      }
    },
  });

  engine.define("sh.kill", {
    sync: (a) => {
      const label = a.string(1, "label");
      const proc = run.procs.byLabel(label);
      if (!proc) return false;
      killedByUser.add(proc);
      proc.terminate(2 * run.procs.graceMs).catch((e) => run.log.warn(`sh.kill('${label}'): ${e}`));
      return true;
    },
  });
}
