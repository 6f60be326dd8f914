/**
 * The watchdog of one run: the count hook every Lua thread of the run carries, and what it
 * enforces — the CPU limit, the end of the run after `os.exit`, and regular returns to the JS
 * event loop so that signals, timers and cancels are seen while Lua computes.
 *
 * Why a return to the event loop: a Lua run is one synchronous wasm call (`lua_resume`) between
 * two host waits. While it lasts, no JS callback runs — not a signal listener, not a timer, not an
 * embedder's abort — so a block that computes without waiting for the host could not be stopped.
 * The hook (every `HOOK_COUNT` instructions) therefore yields the running coroutine once
 * `PREEMPT_MS` have passed since the drive last returned to the event loop. The yield has no
 * values; the runtime's transparent coroutines pass it up to the scheduler like a host request
 * (src/lua/runtime.lua), the scheduler suspends towards the host, and the driver awaits one
 * macrotask before resuming — the stop requested meanwhile ends the drive there.
 *
 * Where Lua cannot yield (inside a C call that called Lua: a `__tostring`, a message handler, a
 * `__index` reached from a library function), the hook is called every `SEEK_COUNT` instructions
 * until the run reaches a point where it can, and yields there. A stretch without such a point that lasts
 * `UNINTERRUPTIBLE_MS` ends the run (`RunAborted`): nothing else could end it.
 *
 * Invariants:
 * - Every Lua thread of a run has the hook: `lua_newthread` copies the creating thread's hook, so
 *   coroutines a block creates carry it, and the block has no `debug.sethook` to remove it (the
 *   prelude keeps only `debug.traceback` and `debug.getinfo`).
 * - A task thread is never preempted while it runs the scheduler's own code (`runtime.lua`):
 *   its updates of the ready queue span several statements, and other tasks would run between
 *   them. The hook looks again `SEEK_COUNT` instructions later (the script's code by then).
 * - `preempted` is true exactly while a preemption yield travels up to the driver; the driver
 *   clears it (`visitedLoop`). Runtime code that cannot pass it up clears it (`blocked`).
 * - Once the run is exiting (`os.exit`, `job.defer`), the hook raises `EXIT` at every instruction
 *   of any thread but the driver: no Lua of the block runs on (the scheduler's own wind-down runs
 *   on the driver thread).
 * - `RunAborted` is a JS exception thrown through the wasm frames on purpose: Lua cannot catch
 *   it, and the engine is discarded afterwards.
 * - Limits are measured in wall time of the slices spent inside Lua (not in host waits). The
 *   bound on a stretch that cannot be interrupted also needs the process to have spent that much
 *   CPU time since the stretch was seen to be long: a process a loaded machine did not schedule
 *   is not running away.
 */
import process from "node:process";
import { LUA_MASKCOUNT, type LuaApi } from "./capi.ts";

/** Lua instructions between two calls of the hook. */
export const HOOK_COUNT = 10_000;
/** Lua time after which the run returns to the event loop (at the next point where it can). */
export const PREEMPT_MS = 100;
/** Instructions between two hook calls while looking for a point where the run can yield. */
export const SEEK_COUNT = 100;
/** Longest stretch without a point where the run can return to the event loop. */
export const UNINTERRUPTIBLE_MS = 1000;

/** Ends the run from inside Lua; Lua cannot catch it (see the module doc). */
export class RunAborted extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RunAborted";
  }
}

/** The message of a run ended by a stretch that could not be interrupted. */
export function uninterruptibleMessage(what: string): string {
  return `${what} ran for more than ${UNINTERRUPTIBLE_MS / 1000} s without a point where the run can be ` +
    `interrupted (Lua called from inside a C function — a __tostring, an error handler, a __index reached ` +
    `from a library function — cannot yield): nothing else could have ended it`;
}

/** The watchdog of one engine's run. */
export class Watchdog {
  /** A preemption yield is on its way up to the driver. */
  preempted = false;
  /** The run is ending (`os.exit` / `job.defer`). */
  exiting = false;
  /** Lua time used so far, ms. */
  cpuUsedMs = 0;
  #sliceStart = 0;
  #loopAt = 0;
  /** Process CPU time (ms) when the current stretch was first seen to be long. */
  #cpuAtLong: number | undefined;
  #driver = 0;
  readonly #api: LuaApi;
  readonly #hookPtr: number;
  readonly #limitMs: number | undefined;
  readonly #schedulerChunk: string;
  readonly #preemptMs: number;

  /**
   * A watchdog for one engine; `start` puts it to work.
   * @param api the raw API
   * @param hookPtr the shared hook function (it finds this watchdog through the engine)
   * @param opts the CPU limit, if any; the scheduler's chunk name (never preempted on a task
   * thread); the Lua time before a preemption (default `PREEMPT_MS`; tests set 0 to preempt
   * at every hook)
   */
  constructor(
    api: LuaApi,
    hookPtr: number,
    opts: { cpuSeconds?: number; schedulerChunk: string; preemptMs?: number },
  ) {
    this.#api = api;
    this.#schedulerChunk = opts.schedulerChunk;
    this.#preemptMs = opts.preemptMs ?? PREEMPT_MS;
    this.#hookPtr = hookPtr;
    this.#limitMs = opts.cpuSeconds ? opts.cpuSeconds * 1000 : undefined;
  }

  /** Puts the hook on the driver thread (every thread it creates inherits it). */
  start(driver: number): void {
    this.#driver = driver;
    this.#loopAt = performance.now();
    this.#api.sethook(driver, this.#hookPtr, LUA_MASKCOUNT, HOOK_COUNT);
  }

  /** The driver enters Lua. */
  sliceBegin(): void {
    this.#sliceStart = performance.now();
  }

  /** The driver is back from Lua. */
  sliceEnd(): void {
    this.cpuUsedMs += performance.now() - this.#sliceStart;
  }

  /** The driver has let the event loop run. */
  visitedLoop(): void {
    this.preempted = false;
    this.#loopAt = performance.now();
    this.#cpuAtLong = undefined;
  }

  /**
   * Whether a stretch of `stretch` ms has gone past `UNINTERRUPTIBLE_MS`: in wall time, and in CPU
   * time the process spent since the stretch was first seen to be long (see the module doc).
   * Call it whenever a stretch is at least `PREEMPT_MS` long.
   */
  overBound(stretch: number): boolean {
    if (this.#cpuAtLong === undefined) {
      this.#cpuAtLong = cpuMs();
      return false;
    }
    if (stretch <= UNINTERRUPTIBLE_MS) return false;
    return cpuMs() - this.#cpuAtLong > UNINTERRUPTIBLE_MS - PREEMPT_MS;
  }

  /** Time since the drive last returned to the event loop, ms. */
  stretchMs(): number {
    return performance.now() - this.#loopAt;
  }

  /** Whether `L` is the driver thread (the scheduler's own). */
  isDriver(L: number): boolean {
    return L === this.#driver;
  }

  /** Raises `RunAborted` once the CPU limit is spent. */
  checkCpu(now: number): void {
    const limit = this.#limitMs;
    if (limit !== undefined && this.cpuUsedMs + (now - this.#sliceStart) > limit) {
      throw new RunAborted(`CPU limit exceeded: the script ran Lua code for more than ${limit / 1000} s`);
    }
  }

  /**
   * The count hook, on thread `L`. `raiseExit` raises `EXIT` in `L` (it does not return).
   */
  onHook(L: number, raiseExit: (L: number) => void): void {
    const api = this.#api;
    const now = performance.now();
    if (this.exiting && L !== this.#driver) {
      this.#setCount(L, 1);
      raiseExit(L);
      return;
    }
    this.checkCpu(now);
    const stretch = now - this.#loopAt;
    if (stretch < this.#preemptMs) {
      this.#setCount(L, HOOK_COUNT); // back from a stretch counted instruction by instruction
      return;
    }
    const over = this.overBound(stretch);
    if (api.isyieldable(L) && !this.#inScheduler(L)) {
      this.#setCount(L, HOOK_COUNT);
      this.preempted = true;
      api.m._lua_yieldk(L, 0, 0, 0); // a hook's yield: Lua yields once the hook returns
      return;
    }
    if (over) throw new RunAborted(uninterruptibleMessage("Lua"));
    this.#setCount(L, SEEK_COUNT); // yield soon after the first instruction where it can
  }

  /**
   * A preemption yield reached runtime code on thread `L` that cannot yield (a coroutine resumed
   * from inside a C call): the coroutine is resumed at once, and `L` yields soon after its first
   * instruction where it can.
   */
  blocked(L: number): void {
    this.preempted = false;
    if (this.overBound(this.stretchMs())) throw new RunAborted(uninterruptibleMessage("Lua"));
    this.#setCount(L, SEEK_COUNT);
  }

  /**
   * Whether a task thread `L` is running the scheduler's own code (the runtime chunk: a
   * `std.task.spawn` appending to the ready queue, a cancel updating the waiting set). A yield
   * there would let other tasks run between two statements of one update, which then read a
   * half-made queue; the hook looks again a few instructions later, in the script's code.
   * The driver thread is the scheduler itself: no task runs while it is suspended.
   */
  #inScheduler(L: number): boolean {
    return L !== this.#driver && this.#api.runningSource(L) === this.#schedulerChunk;
  }

  #setCount(L: number, count: number): void {
    if (this.#api.m._lua_gethookcount(L) !== count) {
      this.#api.sethook(L, this.#hookPtr, LUA_MASKCOUNT, count);
    }
  }
}

/** CPU time this process has used, ms. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
