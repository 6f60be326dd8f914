/**
 * One Lua engine for one run: the wasmoon state, the host functions installed into it, the
 * bridge that lets asynchronous TypeScript look synchronous to Lua, and the drive loop.
 *
 * Owns:
 * - registration of host functions (`define`): sync functions become C closures on one shared
 *   dispatcher; async functions become Lua closures over the runtime's `host_call`; raw
 *   functions get the stack itself;
 * - the operation table behind `host_call` (start / take / cancel, one AbortController each);
 * - calls from TypeScript into Lua (`callLua`): queued as tasks for the scheduler, never run
 *   on the JS stack, so they may make host calls themselves;
 * - the drive loop: `lua_resume` of the driver thread, awaiting one promise whenever the
 *   scheduler yields, until the main task ends;
 * - the effect hooks (`onBeforeEffect`): once a module signals `effectPending()`, its hooks run
 *   before the next host call that may act on the world — any asynchronous one not marked
 *   `deferCommit`, any synchronous one not marked `pure` (the kernel commits its deferred events
 *   there);
 * - CPU-time and memory limits, and the watchdog (src/lua/watchdog.ts) that enforces the CPU limit,
 *   ends the run's Lua after `os.exit` and returns to the event loop while Lua computes, so that a
 *   stop (SIGINT/SIGTERM, an embedder's cancel or timeout) is seen even then;
 * - host values pushed into a Lua heap that has a limit: a value the limit cannot hold fails the
 *   one host call it answers, with an error naming the limit, and the Lua state stays consistent
 *   (the push runs under a protected call, so an allocation failure unwinds to it).
 *
 * Invariants:
 * - Exactly one `await` per scheduler suspension; completions that land meanwhile are taken in
 *   one batch.
 * - A JS exception never unwinds through Lua frames from a host function: it is turned into a
 *   Lua error at the caller's line (`where(1)`) — a string, or for a `LuaErrorTable` a table
 *   with the runtime's error metatable (`R.ERROR_MT`), its message prefixed the same way. Only
 *   `RunAborted` (the watchdog: the CPU limit, a stretch that cannot be interrupted) is thrown
 *   through Lua on purpose, and the engine is discarded afterwards. A Lua error unwinding through
 *   a host function (emscripten's longjmp, thrown as `Infinity`) is never caught on the way.
 * - Once the run is exiting (`os.exit`, `job.defer`), no host function but the runtime's
 *   primitives runs: a call raises `EXIT` again, whatever Lua (a `__close`, a coroutine) makes it.
 * - String matching and `table.sort` with a comparator are the interruptible ones
 *   (src/lua/interruptible.lua, loaded right after the runtime; primitives in interruptible.ts).
 * - After `close()` nothing calls into the wasm state again, and pending `callLua` promises reject.
 */
import { LuaGlobal } from "wasmoon";
import { LUA_OK, LUA_REGISTRYINDEX, LUA_TSTRING, LUA_YIELD, type LuaApi } from "./capi.ts";
import { Converter, HeapLimitError, type ToJsOptions } from "./convert.ts";
import { Args } from "./args.ts";
import { stringifyJson } from "../json/codec.ts";
import { LuaErrorValue, LuaFunctionRef, LuaMulti } from "../json/values.ts";
import { sharedFactory } from "./wasm.ts";
import { PREEMPT_MS, RunAborted, Watchdog } from "./watchdog.ts";
import { precompiled } from "./precompiled.ts";
import runtimeSource from "./runtime.lua" with { type: "text" };
import interruptibleSource from "./interruptible.lua" with { type: "text" };
import { patternInfo, strBatch, strGsub, strSearch } from "./interruptible.ts";

/** Context handed to every host function call. */
export interface CallContext {
  /** The engine the call came from. */
  engine: LuaEngine;
  /** Aborted when the operation is cancelled (`task:cancel`, run end). Async functions only. */
  signal: AbortSignal;
}

/**
 * How a host function's arguments are read: `functions: "ref"` hands Lua functions over as
 * `LuaFunctionRef`s (else they are refused); `floats: "tagged"` hands integral floats (`3.0`) over
 * as `LuaFloat`s so a function that stores values can keep them floats (else they are numbers).
 */
export interface ArgOptions {
  /** Lua functions as `LuaFunctionRef` (`"ref"`) or refused (`"error"`, the default). */
  functions?: "ref" | "error";
  /** Integral floats as `LuaFloat` (`"tagged"`) or plain numbers (the default). */
  floats?: "plain" | "tagged";
}

/**
 * A host function, in one of three shapes. `pure: true` marks a synchronous function that acts
 * on nothing outside the run's own state (JSON codecs, the kernel's log, the scheduler): it does
 * not trigger the hooks of `onBeforeEffect`. `deferCommit: true` marks an asynchronous operation
 * that acts outside Lua but is harmless to repeat (a model request): it does not trigger them
 * either, so what they would commit is committed while it is in flight (by the kernel's commit
 * window) or before the next act. Every other host call may act on the world.
 */
export type HostFunction =
  | ({ sync: (args: Args, cx: CallContext) => unknown; pure?: boolean } & ArgOptions)
  | ({ async: (args: Args, cx: CallContext) => Promise<unknown>; deferCommit?: boolean } & ArgOptions)
  | { raw: (L: number, engine: LuaEngine) => number; pure?: boolean };

/** Limits that bound a runaway script. */
export interface EngineLimits {
  /** Lua CPU time (time spent running Lua, not waiting for the host), in seconds. */
  cpuSeconds?: number;
  /** Lua heap ceiling in bytes. */
  memoryBytes?: number;
  /**
   * Test seam: Lua time before the watchdog preempts (default `PREEMPT_MS`, 100 ms); 0 preempts
   * at every hook, so a test reaches every point where a preemption can land.
   */
  preemptMs?: number;
}

/** How the main chunk ended. */
export type DriveResult =
  | { kind: "returned"; values: unknown[] }
  | { kind: "error"; message: string; traceback: string; value: unknown }
  | { kind: "exit"; code: number; reason?: string }
  | { kind: "stopped"; reason: string };

/** A failure of a Lua callback invoked from TypeScript. */
export class LuaCallbackError extends Error {
  /**
   * A callback failure carrying the Lua error value and traceback.
   * @param message the Lua error as text (tables rendered as JSON)
   * @param value the Lua error value itself
   * @param luaTraceback the Lua traceback, runtime frames removed
   */
  constructor(message: string, readonly value: unknown, readonly luaTraceback?: string) {
    super(message);
    this.name = "LuaCallbackError";
  }
}

/**
 * A host failure raised into Lua as a table rather than a string: `{ message, ...fields }` with the
 * runtime's error metatable (`R.ERROR_MT`), so `tostring(e)` and the failed outcome read the
 * message while a script can branch on the fields (an MCP `code`, an LLM `status`). The message is
 * prefixed with the caller's position, as a string error's would be. Built on the error path only.
 */
export class LuaErrorTable extends Error {
  /**
   * @param message the text `tostring(e)` gives (without position)
   * @param fields the other fields of the table (JSON-like values; `message` is set from above)
   */
  constructor(message: string, readonly fields: Record<string, unknown>) {
    super(message);
    this.name = "LuaErrorTable";
  }
}

/** What `#pushProtected` pushes for a completion: its values table `{ n, true, results... }`. */
class CompletionValues {
  constructor(readonly value: unknown) {}
}
/** What `#pushProtected` pushes for a failed operation: its Lua error value. */
class PushedError {
  constructor(readonly error: unknown) {}
}
/** What `#pushProtected` pushes for a callback request: `{ call, args, reply }`. */
class CallRequestValue {
  constructor(readonly call: CallRequest) {}
}

function mib(bytes: number): string {
  const m = bytes / 1048576;
  return m >= 10 ? String(Math.round(m)) : m.toFixed(1);
}

/** ` (N MiB)` for a string or bytes value, else "". */
function sizeOf(v: unknown): string {
  const x = v instanceof CompletionValues ? v.value : v;
  if (typeof x === "string") return ` (${mib(x.length)} MiB)`;
  if (x instanceof Uint8Array) return ` (${mib(x.length)} MiB)`;
  return "";
}

/** Raised by a host function once the run is exiting: the dispatcher raises `EXIT` in Lua. */
class RunExiting extends Error {}

/** A JS value emscripten throws for a Lua longjmp (a Lua error unwinding through JS frames). */
function isLongjmp(e: unknown): boolean {
  return e === Infinity;
}

/** Lines of a Lua traceback that belong to the runtime, not to the user's code. */
const INTERNAL_FRAME = /^\s*(ab:[a-z_]+:|\[C\]: in (function|upvalue) '(xpcall|error)'|\[C\]: in \?$)/;

/** Removes runtime-internal frames from a Lua traceback. */
export function trimTraceback(tb: string): string {
  if (!tb) return "";
  const lines = tb.split("\n").filter((l) => !INTERNAL_FRAME.test(l))
    .map((l) => l.replace("in upvalue 'chunk'", "in main chunk"));
  return lines.length <= 1 ? "" : lines.join("\n");
}

interface Completion {
  id: number;
  /** The operation's name, for an error about its result. */
  op: string;
  ok: boolean;
  value: unknown;
}
interface CallRequest {
  fn: LuaFunctionRef;
  args: unknown[];
  reply: number;
}

const RUNTIME_CHUNK = "=ab:runtime";
const INTERRUPTIBLE_CHUNK = "=ab:interruptible";
let dispatcherInstalled: number | undefined;
let hookInstalled: number | undefined;
const engines = new Map<number, LuaEngine>(); // main lua_State -> engine, for the shared dispatcher

/**
 * A Lua engine. Create with `LuaEngine.create`, install host functions with `define`, load the
 * prelude with `exec`, run the main chunk with `runMain`, then `close`.
 */
export class LuaEngine {
  /** The raw C API of the shared wasm module. */
  readonly api: LuaApi;
  /** The engine's main `lua_State`. */
  readonly L: number;
  /** The value converter bound to this engine. */
  readonly converter: Converter;
  #global: LuaGlobal;
  #fns: HostFunction[] = [];
  #fnNames: string[] = [];
  #fnPure: boolean[] = [];
  #effectHooks: (() => void)[] = [];
  #effectPending = false;
  #ops = new Map<number, AbortController>();
  #opNames = new Map<number, string>();
  #opSeq = 0;
  #completions: Completion[] = [];
  #calls: CallRequest[] = [];
  #wake: (() => void) | undefined;
  #replies = new Map<
    number,
    { resolve: (v: unknown[]) => void; reject: (e: unknown) => void; floats?: "plain" | "tagged" }
  >();
  #replySeq = 0;
  #closed = false;
  #driving = false;
  #stopReason: string | undefined;
  #hRef: number;
  #runtimeRef: number;
  /** Registry ref of `R.ERROR_MT`, the metatable of `LuaErrorTable` values. */
  #errorMtRef: number;
  /**
   * The thread whose stack `define`, `exec` and `defineLazy` work on: the main thread, except
   * while a lazily installed module installs from inside a host call (see `defineLazy`), when
   * it is the calling thread — the main thread is then suspended inside `lua_resume`.
   */
  #installL: number | undefined;
  #limits: EngineLimits;
  /** The run's watchdog: CPU limit, preemption, exit (src/lua/watchdog.ts). */
  readonly watchdog: Watchdog;
  /** Registry ref of `R.EXIT`. */
  #exitRef: number;
  /** Ids below this are the runtime's primitives (the only host functions left once exiting). */
  #primitiveCount = 0;
  /** Called with warnings the runtime raises (unjoined failed tasks, ...). */
  onWarning: (message: string) => void = (m) => console.error(`warn: ${m}`);

  private constructor(global: LuaGlobal, api: LuaApi, limits: EngineLimits) {
    this.#global = global;
    this.api = api;
    this.#limits = limits;
    this.L = global.address;
    engines.set(this.L, this);
    const L = this.L;
    // Marker metatables for arrays and objects (std.json.array_mt / object_mt).
    api.createtable(L, 0, 1);
    api.pushstring(L, "json.array");
    api.setfield(L, -2, "__name");
    const arrayMt = api.ref(L);
    api.createtable(L, 0, 1);
    api.pushstring(L, "json.object");
    api.setfield(L, -2, "__name");
    const objectMt = api.ref(L);
    const limit = limits.memoryBytes;
    this.converter = new Converter(
      api,
      arrayMt,
      objectMt,
      (L2) => this.#makeRef(L2),
      limit === undefined ? undefined : () => limit - global.getMemoryUsed(),
    );
    this.arrayMtRef = arrayMt;
    this.objectMtRef = objectMt;
    // The table of host primitives handed to runtime.lua and the prelude.
    api.createtable(L, 0, 16);
    api.pushlightuserdata(L, 0);
    api.setfield(L, -2, "null");
    api.pushref(L, arrayMt);
    api.setfield(L, -2, "array_mt");
    api.pushref(L, objectMt);
    api.setfield(L, -2, "object_mt");
    this.#hRef = api.ref(L);
    this.#installPrimitives();
    // Load the scheduler.
    this.#runtimeRef = this.#loadInternal(runtimeSource, RUNTIME_CHUNK, [this.#hRef]);
    api.pushref(L, this.#runtimeRef);
    api.getfield(L, -1, "ERROR_MT");
    this.#errorMtRef = api.ref(L);
    api.getfield(L, -1, "EXIT");
    this.#exitRef = api.ref(L);
    api.pop(L, 1);
    this.watchdog = new Watchdog(api, hookInstalled!, {
      cpuSeconds: limits.cpuSeconds,
      schedulerChunk: RUNTIME_CHUNK,
      preemptMs: limits.preemptMs,
    });
    this.#installInterruptible();
    if (limits.memoryBytes) global.setMemoryMax(limits.memoryBytes);
  }

  /** Registry ref of the array marker metatable (`std.json.array_mt`). */
  readonly arrayMtRef: number;
  /** Registry ref of the object marker metatable (`std.json.object_mt`). */
  readonly objectMtRef: number;

  /** Creates an engine on the process-wide wasm module. */
  static async create(limits: EngineLimits = {}): Promise<LuaEngine> {
    precompiled(RUNTIME_CHUNK, runtimeSource); // looked up and decoded while the wasm may still compile
    precompiled(INTERRUPTIBLE_CHUNK, interruptibleSource);
    const { factory, api } = await sharedFactory();
    // The bare global state, not wasmoon's `LuaEngine`: that one also registers wasmoon's JS
    // type extensions (metatables and wasm table entries for JS functions, promises, errors),
    // which this engine never uses (it converts values itself) — about half of an engine's
    // creation time. Tracing routes every Lua allocation through a JS function: only pay for
    // it when a memory limit needs it.
    const global = new LuaGlobal(await factory.getLuaModule(), limits.memoryBytes !== undefined);
    api.m._luaL_openlibs(global.address);
    if (dispatcherInstalled === undefined) {
      dispatcherInstalled = api.m.addFunction((L: number) => dispatch(api, L), "ii");
    }
    if (hookInstalled === undefined) hookInstalled = api.m.addFunction((L: number) => onHook(api, L), "vii");
    return new LuaEngine(global, api, limits);
  }

  /** Lua heap in use, in bytes (`collectgarbage("count")`; exact when a memory limit is set). */
  memoryUsed(): number {
    if (this.#limits.memoryBytes !== undefined) return this.#global.getMemoryUsed();
    const api = this.api;
    const L = this.L;
    api.getglobal(L, "collectgarbage");
    api.pushstring(L, "count");
    this.#pcall(L, 1, 1);
    const kb = api.tonumber(L, -1);
    api.pop(L, 1);
    return Math.round(kb * 1024);
  }

  // --- host functions ------------------------------------------------------------------------

  /**
   * Installs `fn` at the dotted global `path` (`"std.fs.read"`), creating intermediate tables.
   * Paths starting with `@` go into the internal primitives table handed to the prelude
   * (`"@io_open"`), invisible to scripts except through what the prelude builds on them.
   */
  define(path: string, fn: HostFunction): void {
    const api = this.api;
    const L = this.#installL ?? this.L;
    if ("async" in fn) {
      const opName = path.replace(/^@/, "");
      this.#asyncOps.set(opName, fn);
      // R.async_function(op) builds `function(...) return host_call(op, ...) end`.
      api.pushref(L, this.#runtimeRef);
      api.getfield(L, -1, "async_function");
      api.pushstring(L, opName);
      this.#pcall(L, 1, 1);
      api.rotate(L, -2, 1);
      api.pop(L, 1);
    } else {
      this.#pushCFunction(L, path, fn);
    }
    this.#storeTop(path);
  }

  #asyncOps = new Map<string, Extract<HostFunction, { async: unknown }>>();

  /** Registers an asynchronous operation reachable only through `host_call(name, ...)`. */
  defineOp(name: string, fn: Extract<HostFunction, { async: unknown }>): void {
    this.#asyncOps.set(name, fn);
  }

  #pushCFunction(L: number, name: string, fn: HostFunction): void {
    const id = this.#fns.length;
    this.#fns.push(fn);
    this.#fnNames.push(name.replace(/^@/, ""));
    this.#fnPure.push("pure" in fn && fn.pure === true);
    this.api.pushinteger(L, BigInt(id));
    this.api.pushcclosure(L, dispatcherInstalled!, 1);
  }

  /** Pops the value on top of the main stack into the dotted path. */
  #storeTop(path: string): void {
    const api = this.api;
    const L = this.#installL ?? this.L;
    let parts: string[];
    if (path.startsWith("@")) {
      api.pushref(L, this.#hRef);
      parts = [path.slice(1)];
    } else {
      parts = path.split(".");
      api.m._lua_rawgeti(L, LUA_REGISTRYINDEX, 2n); // LUA_RIDX_GLOBALS
    }
    // stack: value, table
    for (let i = 0; i < parts.length - 1; i++) {
      if (api.getfield(L, -1, parts[i]) === 0) {
        api.pop(L, 1);
        api.createtable(L, 0, 4);
        api.pushvalue(L, -1);
        api.setfield(L, -3, parts[i]);
      }
      api.rotate(L, -2, 1);
      api.pop(L, 1);
    }
    api.rotate(L, -2, 1); // table, value
    api.setfield(L, -2, parts[parts.length - 1]);
    api.pop(L, 1);
  }

  /**
   * Registers a hook to run before the next host call that may act outside Lua, once
   * `effectPending()` has been signalled. A hook must not throw.
   */
  onBeforeEffect(hook: () => void): void {
    this.#effectHooks.push(hook);
  }

  /** Signals that the hooks have work: they run before the next host call that is not pure. */
  effectPending(): void {
    this.#effectPending = true;
  }

  #runEffectHooks(): void {
    this.#effectPending = false;
    for (const hook of this.#effectHooks) hook();
  }

  /** Called by the shared dispatcher for closure `id`. */
  invoke(L: number, id: number): number {
    if (this.watchdog.exiting && id >= this.#primitiveCount) throw new RunExiting();
    if (this.#effectPending && !this.#fnPure[id]) this.#runEffectHooks();
    const fn = this.#fns[id];
    const name = this.#fnNames[id];
    if ("raw" in fn) return fn.raw(L, this);
    if (!("sync" in fn)) throw new Error(`host function '${name}' is asynchronous`);
    const args = new Args(
      name,
      this.converter.argsToJs(L, 1, { functions: fn.functions ?? "error", floats: fn.floats ?? "plain" }),
    );
    const result = fn.sync(args, { engine: this, signal: NEVER });
    return this.pushResult(L, result, name);
  }

  /**
   * Pushes a host function's result; returns the number of Lua values pushed. `undefined` is no
   * value at all (a function that returns nothing, like Lua's `print`); a function whose answer
   * may be nil returns `new LuaMulti([undefined])`, one nil, so `tostring(f())` sees a value.
   * Under a memory limit each value is pushed under protection: one the heap cannot hold raises
   * an error naming the limit, at the caller's line, and the state stays consistent.
   */
  pushResult(L: number, result: unknown, name = "host function"): number {
    if (result === undefined) return 0;
    const values = result instanceof LuaMulti ? result.values : [result];
    for (const v of values) {
      if (this.#limits.memoryBytes === undefined) {
        this.converter.push(L, v);
        continue;
      }
      const failure = this.#pushProtected(L, v);
      if (failure !== undefined) {
        throw new Error(`${name}: its result could not be passed into Lua: ${failure}`);
      }
    }
    return values.length;
  }

  /** Reads a value from the stack with the engine's converter. */
  toJs(L: number, idx: number, opts?: ToJsOptions): unknown {
    return this.converter.toJs(L, idx, opts);
  }

  /**
   * JSON text (sorted keys, float fidelity) of the value at `idx`: written straight from the
   * stack when it can be, else through `toJs` + `stringifyJson` — which raise the usual errors.
   */
  toJson(L: number, idx: number): string {
    return this.converter.toJson(L, idx) ?? stringifyJson(this.converter.toJs(L, idx, { floats: "tagged" }));
  }

  #makeRef(L: number): LuaFunctionRef {
    const ref = this.api.ref(L);
    let live = true;
    return new LuaFunctionRef(ref, () => {
      if (live && !this.#closed) this.api.unref(this.L, ref);
      live = false;
    });
  }

  // --- primitives for runtime.lua ------------------------------------------------------------

  #installPrimitives(): void {
    const prim = (name: string, fn: HostFunction) => {
      this.#pushCFunction(this.L, name, fn);
      this.#storeTop("@" + name);
    };
    prim("start", { raw: (L) => this.#start(L), pure: true }); // runs the hooks itself, see #start
    prim("take", { raw: (L) => this.#take(L), pure: true });
    prim("cancel", {
      sync: (a) => {
        this.#cancelOp(a.integer(1, "id"));
      },
    });
    prim("reply", { raw: (L) => this.#reply(L), pure: true });
    prim("warn", {
      sync: (a) => {
        this.onWarning(a.string(1, "message"));
      },
    });
    prim("json_encode", {
      pure: true,
      raw: (L) => {
        this.api.pushstring(L, this.toJson(L, 1));
        return 1;
      },
    });
    // The watchdog's side of the runtime (src/lua/watchdog.ts).
    prim("preempted", {
      pure: true,
      raw: (L) => {
        this.api.pushboolean(L, this.watchdog.preempted);
        return 1;
      },
    });
    prim("preempt_blocked", {
      pure: true,
      raw: (L) => {
        this.watchdog.blocked(L);
        return 0;
      },
    });
    prim("preempt_now", {
      pure: true,
      raw: () => {
        this.watchdog.preempted = true;
        return 0;
      },
    });
    prim("exit_requested", {
      pure: true,
      raw: () => {
        this.watchdog.exiting = true;
        return 0;
      },
    });
    // The body of `#pushProtected`'s protected call (kept by ref: pushing it allocates nothing).
    this.#pushCFunction(this.L, "push", { raw: (L) => this.#pushPending(L), pure: true });
    this.#pushRef = this.api.ref(this.L);
    this.#primitiveCount = this.#fns.length;
  }

  /** String matching and `table.sort` made interruptible (src/lua/interruptible.lua). */
  #installInterruptible(): void {
    const prim = (name: string, fn: HostFunction) => {
      this.#pushCFunction(this.L, name, fn);
      this.#storeTop("@" + name);
    };
    prim("str_info", {
      pure: true,
      raw: (L) => {
        const info = patternInfo(this.api.tobytesView(L, 1), this.api.toboolean(L, 2));
        this.api.pushboolean(L, info.valid);
        this.api.pushinteger(L, BigInt(info.captures));
        this.api.pushinteger(L, BigInt(info.k));
        return 3;
      },
    });
    prim("str_search", { pure: true, raw: (L) => strSearch(this, L) });
    prim("str_batch", { pure: true, raw: (L) => strBatch(this, L) });
    prim("str_gsub", { pure: true, raw: (L) => strGsub(this, L) });
    this.exec(interruptibleSource, INTERRUPTIBLE_CHUNK);
  }

  /** Raises the runtime's `EXIT` sentinel in `L` (does not return: Lua longjmps). */
  raiseExit(L: number): number {
    this.api.pushref(L, this.#exitRef);
    return this.api.error(L);
  }

  #start(L: number): number {
    const api = this.api;
    if (api.type(L, 1) !== LUA_TSTRING) throw new Error("host op name must be a string");
    const name = String(this.converter.toJs(L, 1));
    const op = name === "sleep" ? SLEEP_OP : this.#asyncOps.get(name);
    if (!op) throw new Error(`unknown host operation '${name}'`);
    // every asynchronous operation acts outside Lua; only one harmless to repeat may go first
    if (this.#effectPending && op.deferCommit !== true) this.#runEffectHooks();
    const args = new Args(
      name,
      this.converter.argsToJs(L, 2, { functions: op.functions ?? "error", floats: op.floats ?? "plain" }),
    );
    const id = ++this.#opSeq;
    const ac = new AbortController();
    // A synchronous throw (argument validation) fails the call at once, at the caller's line.
    const promise = op.async(args, { engine: this, signal: ac.signal });
    this.#ops.set(id, ac);
    this.#opNames.set(id, name);
    promise.then(
      (value) => this.#complete(id, true, value),
      (err) => this.#complete(id, false, err),
    );
    api.pushinteger(L, BigInt(id));
    return 1;
  }

  #complete(id: number, ok: boolean, value: unknown): void {
    const ac = this.#ops.get(id);
    const op = this.#opNames.get(id) ?? "host operation";
    this.#opNames.delete(id);
    if (!ac) return; // cancelled: the scheduler no longer waits for it
    this.#ops.delete(id);
    if (ac.signal.aborted) return;
    this.#completions.push({ id, op, ok, value });
    this.#wakeUp();
  }

  #cancelOp(id: number): void {
    const ac = this.#ops.get(id);
    this.#opNames.delete(id);
    if (!ac) return;
    this.#ops.delete(id);
    ac.abort(new DOMException("cancelled", "AbortError"));
  }

  #wakeUp(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  /**
   * Pushes the batch of completions and callback requests as one Lua array. Each completion's
   * values are pushed under protection (`#pushProtected`): one that Lua cannot hold becomes that
   * operation's failure, and the batch goes on.
   */
  #take(L: number): number {
    const api = this.api;
    const completions = this.#completions;
    const calls = this.#calls;
    this.#completions = [];
    this.#calls = [];
    api.createtable(L, completions.length + calls.length, 0);
    let i = 0;
    for (const c of completions) {
      api.createtable(L, 0, 2);
      api.pushinteger(L, BigInt(c.id));
      api.setfield(L, -2, "id");
      // values = { n = k, ok, results... }
      const failure = c.ok ? this.#pushProtected(L, new CompletionValues(c.value)) : undefined;
      if (c.ok && failure === undefined) {
        api.setfield(L, -2, "values");
      } else {
        const err = failure === undefined
          ? c.value
          : new Error(`${c.op}: its result could not be passed into Lua: ${failure}`);
        api.createtable(L, 2, 1);
        api.pushboolean(L, false);
        api.rawseti(L, -2, 1);
        const bad = this.#pushProtected(L, new PushedError(err));
        if (bad !== undefined) api.pushstring(L, `${c.op}: its error could not be passed into Lua: ${bad}`);
        api.rawseti(L, -2, 2);
        api.pushinteger(L, 2n);
        api.setfield(L, -2, "n");
        api.setfield(L, -2, "values");
      }
      api.rawseti(L, -2, ++i);
    }
    for (const c of calls) {
      const failure = this.#pushProtected(L, new CallRequestValue(c));
      if (failure !== undefined) {
        this.#replies.get(c.reply)?.reject(
          new LuaCallbackError(`the arguments could not be passed into Lua: ${failure}`, undefined),
        );
        this.#replies.delete(c.reply);
        continue;
      }
      api.rawseti(L, -2, ++i);
    }
    return 1;
  }

  /** The value `#pushProtected` pushes from inside its protected call (see `#pushPending`). */
  #pending: unknown;
  /** A JS failure while pushing `#pending` (the push answers nothing then). */
  #pendingFailure: unknown;
  /** Registry ref of the C closure that pushes `#pending`. */
  #pushRef = 0;

  /**
   * Pushes `v` (converted; `CompletionValues`, `PushedError` and `CallRequestValue` are built into
   * their tables) inside a protected call, so that a value the Lua heap cannot hold — a memory
   * limit reached half way, or a value that cannot be converted — leaves the state as it was.
   * Answers undefined when `v` is on the stack, else why it is not (nothing is pushed then).
   */
  #pushProtected(L: number, v: unknown): string | undefined {
    const api = this.api;
    this.#pending = v;
    this.#pendingFailure = undefined;
    api.pushref(L, this.#pushRef);
    const status = api.m._lua_pcallk(L, 0, 1, 0, 0, 0);
    this.#pending = undefined;
    const failure = this.#pendingFailure;
    this.#pendingFailure = undefined;
    if (status === LUA_OK && failure === undefined) return undefined;
    api.pop(L, 1);
    if (status === 4 /* LUA_ERRMEM */ || failure instanceof HeapLimitError) {
      return this.#heapMessage(v, failure);
    }
    return failure !== undefined ? errorMessage(failure) : "the Lua heap has no room left";
  }

  #heapMessage(v: unknown, failure: unknown): string {
    const limit = this.#limits.memoryBytes;
    const size = failure instanceof HeapLimitError ? ` (${mib(failure.bytes)} MiB)` : sizeOf(v);
    if (limit === undefined) return `the value${size} does not fit in the Lua heap`;
    return `the value${size} does not fit in the Lua heap: the memory limit is ${mib(limit)} MiB`;
  }

  /** The C closure's body: pushes `#pending`; a JS failure is kept, not raised. */
  #pushPending(L: number): number {
    const api = this.api;
    const v = this.#pending;
    try {
      if (v instanceof CompletionValues) {
        const vals = v.value instanceof LuaMulti ? v.value.values : v.value === undefined ? [] : [v.value];
        api.createtable(L, vals.length + 1, 1);
        api.pushboolean(L, true);
        api.rawseti(L, -2, 1);
        vals.forEach((x, k) => {
          this.converter.push(L, x);
          api.rawseti(L, -2, k + 2);
        });
        api.pushinteger(L, BigInt(vals.length + 1));
        api.setfield(L, -2, "n");
      } else if (v instanceof PushedError) {
        this.#pushError(L, v.error);
      } else if (v instanceof CallRequestValue) {
        const c = v.call;
        api.createtable(L, 0, 3);
        api.pushref(L, c.fn.ref);
        api.setfield(L, -2, "call");
        api.createtable(L, c.args.length, 1);
        c.args.forEach((x, k) => {
          this.converter.push(L, x);
          api.rawseti(L, -2, k + 1);
        });
        api.pushinteger(L, BigInt(c.args.length));
        api.setfield(L, -2, "n");
        api.setfield(L, -2, "args");
        api.pushinteger(L, BigInt(c.reply));
        api.setfield(L, -2, "reply");
      } else {
        this.converter.push(L, v);
      }
      return 1;
    } catch (e) {
      if (isLongjmp(e)) throw e; // the heap's limit: Lua unwinds to the protected call
      this.#pendingFailure = e;
      return 0;
    }
  }

  /** Pushes the Lua error value for a failed operation. */
  #pushError(L: number, err: unknown): void {
    if (err instanceof LuaErrorValue) {
      this.converter.push(L, err.value);
    } else if (err instanceof LuaErrorTable) {
      this.pushErrorTable(L, err.message, err.fields);
    } else if (err instanceof DOMException && err.name === "AbortError") {
      // An operation aborted by something other than its task's cancel (that one's completion is
      // dropped; the task receives the runtime's CANCEL sentinel): a plain error, not a cancel.
      this.api.pushstring(L, "cancelled");
    } else {
      this.api.pushstring(L, errorMessage(err));
    }
  }

  /**
   * Pushes an error table (`fields` plus `message`) with the runtime's error metatable: what a
   * `LuaErrorTable` becomes in Lua.
   */
  pushErrorTable(L: number, message: string, fields: Record<string, unknown>): void {
    this.converter.push(L, { ...fields, message });
    this.api.pushref(L, this.#errorMtRef);
    this.api.setmetatable(L, -2);
  }

  #reply(L: number): number {
    const id = Number(this.api.tointeger(L, 1));
    const ok = this.api.toboolean(L, 2);
    const pending = this.#replies.get(id);
    if (!pending) return 0;
    this.#replies.delete(id);
    if (ok) {
      const values = this.converter.argsToJs(L, 3, { functions: "ref", floats: pending.floats });
      pending.resolve(values);
    } else {
      const value = this.converter.toJs(L, 3, { functions: "error" });
      const tb = this.api.type(L, 4) === LUA_TSTRING ? String(this.converter.toJs(L, 4)) : undefined;
      const message = typeof value === "string" ? value : safeJson(value);
      pending.reject(new LuaCallbackError(message, value, tb ? trimTraceback(tb) : undefined));
    }
    return 0;
  }

  /**
   * Runs the Lua function `fn` with `args` as a task of this engine's scheduler and resolves
   * with its return values. Rejects with `LuaCallbackError` when it raises, and when the run
   * ends before it was called. `floats: "tagged"` keeps an integral float result a `LuaFloat`
   * (for a caller that passes the value on as JSON, where `2.0` must stay `2.0`).
   */
  callLua(
    fn: LuaFunctionRef,
    args: unknown[] = [],
    opts: { floats?: "plain" | "tagged" } = {},
  ): Promise<unknown[]> {
    if (this.#closed || !this.#driving) {
      return Promise.reject(new LuaCallbackError("the Lua run has ended", undefined));
    }
    const reply = ++this.#replySeq;
    return new Promise((resolve, reject) => {
      this.#replies.set(reply, { resolve, reject, floats: opts.floats });
      this.#calls.push({ fn, args, reply });
      this.#wakeUp();
    });
  }

  // --- loading and running -------------------------------------------------------------------

  /** Protected call on the main stack; throws a JS Error with the Lua message on failure. */
  #pcall(L: number, nargs: number, nresults: number): void {
    const status = this.api.m._lua_pcallk(L, nargs, nresults, 0, 0, 0);
    if (status !== LUA_OK) {
      const msg = String(this.converter.toJs(L, -1) ?? "error");
      this.api.pop(L, 1);
      throw new Error(msg);
    }
  }

  /**
   * Loads and runs an internal chunk with registry refs as arguments; returns a ref to its result.
   * Uses the chunk's precompiled bytecode when it was generated from this source (see
   * `precompiled.ts`), else parses the text.
   */
  #loadInternal(source: string, chunkname: string, argRefs: number[]): number {
    const api = this.api;
    const L = this.#installL ?? this.L;
    const bytecode = precompiled(chunkname, source);
    let loaded = false;
    if (bytecode) {
      loaded = api.load(L, bytecode, chunkname, "b") === LUA_OK;
      if (!loaded) api.pop(L, 1); // another Lua build: fall back to the text
    }
    if (!loaded && api.load(L, new TextEncoder().encode(source), chunkname) !== LUA_OK) {
      const msg = String(this.converter.toJs(L, -1));
      api.pop(L, 1);
      throw new Error(`internal chunk ${chunkname} failed to compile: ${msg}`);
    }
    for (const r of argRefs) api.pushref(L, r);
    this.#pcall(L, argRefs.length, 1);
    return api.ref(L);
  }

  /**
   * Runs an internal setup chunk synchronously (no host calls may yield in it). It receives the
   * runtime table and the primitives table as `...`.
   */
  exec(source: string, chunkname: string): void {
    const ref = this.#loadInternal(source, chunkname, [this.#runtimeRef, this.#hRef]);
    this.api.unref(this.L, ref);
  }

  /**
   * Runs an internal chunk synchronously, like `exec`, and returns its first result converted to
   * JS (for reading the engine's state between host calls or after the main chunk, for example
   * the tool registry when a run ends).
   */
  evaluate(source: string, chunkname: string): unknown {
    const ref = this.#loadInternal(source, chunkname, [this.#runtimeRef, this.#hRef]);
    const L = this.#installL ?? this.L;
    try {
      this.api.pushref(L, ref);
      const value = this.converter.toJs(L, -1);
      this.api.pop(L, 1);
      return value;
    } finally {
      this.api.unref(this.L, ref);
    }
  }

  /**
   * Installs a host module on first use instead of now. `install` (which calls `define`, `exec`
   * and the like as usual) runs, once, the first time Lua reads, writes or iterates one of the
   * `tables` (dotted global paths such as `"std.kv"`, created empty now if absent), or requires
   * one of the `preload` module names. It runs synchronously inside that access, so it works
   * wherever the access happens, including where Lua cannot yield; it must not call Lua that
   * yields. Until then `rawget`/`next` on those tables see them empty and they carry a metatable
   * (whose `__installed(fn)` has `fn` called right after the installation, see `R.lazy`).
   * Why: a run pays for each host module it installs (mostly V8 compiling its code on first call),
   * and most blocks use few of them; start-up is what every block pays.
   */
  defineLazy(
    triggers: { tables?: readonly string[]; preload?: readonly string[] },
    install: () => void,
  ): void {
    const api = this.api;
    const L = this.#installL ?? this.L;
    api.pushref(L, this.#runtimeRef);
    api.getfield(L, -1, "lazy");
    api.rotate(L, -2, 1);
    api.pop(L, 1);
    this.#pushCFunction(L, "lazy install", {
      raw: (T) => {
        const outer = this.#installL;
        this.#installL = T;
        try {
          install();
        } finally {
          this.#installL = outer;
        }
        return 0;
      },
    });
    this.converter.push(L, [...(triggers.tables ?? [])]);
    this.converter.push(L, [...(triggers.preload ?? [])]);
    this.#pcall(L, 3, 0);
  }

  /** Sets global `name` to a converted JS value. */
  setGlobal(name: string, value: unknown): void {
    this.converter.push(this.L, value);
    this.api.setglobal(this.L, name);
  }

  /**
   * Compiles `source` as the main chunk named `chunkname` (`@path` style, see `lua_load`).
   * Returns the syntax error message instead of throwing.
   */
  compile(source: Uint8Array, chunkname: string): { ok: true; ref: number } | { ok: false; message: string } {
    const api = this.api;
    if (api.load(this.L, source, chunkname) !== LUA_OK) {
      const message = String(this.converter.toJs(this.L, -1));
      api.pop(this.L, 1);
      return { ok: false, message };
    }
    return { ok: true, ref: api.ref(this.L) };
  }

  /**
   * Drives `R.main(chunk)` to completion: the scheduler runs the chunk as the main task.
   * `stop` ends the drive at the next return to the event loop: at the next host wait, or while
   * Lua computes within `PREEMPT_MS` (src/lua/watchdog.ts) — for SIGINT/SIGTERM and an
   * embedder's cancel or timeout.
   */
  async runMain(chunkRef: number, stop?: AbortSignal): Promise<DriveResult> {
    const api = this.api;
    const L = this.L;
    const dog = this.watchdog;
    const T = api.newthread(L);
    const threadRef = api.ref(L);
    api.pushref(T, this.#runtimeRef);
    api.getfield(T, -1, "main");
    api.rotate(T, -2, 1);
    api.pop(T, 1);
    api.pushref(T, chunkRef);
    dog.start(T);
    let nargs = 1;
    this.#driving = true;
    const onStop = () => {
      this.#stopReason = String(stop?.reason ?? "stopped");
      this.#wakeUp();
    };
    stop?.addEventListener("abort", onStop, { once: true });
    if (stop?.aborted) onStop();
    const stopped = (): DriveResult => ({ kind: "stopped", reason: this.#stopReason! });
    // A result reached at the end of a long stretch in Lua: a stop that came meanwhile (its
    // listener could not run) is what ends the run. A short sleep rather than one zero timeout:
    // the loop then waits for I/O, where a signal that already arrived is always picked up.
    const settle = async (result: DriveResult): Promise<DriveResult> => {
      if (dog.stretchMs() >= PREEMPT_MS) {
        // a few turns: on a loaded machine the sleep's timer may come before the signal's turn
        for (let i = 0; i < SETTLE_TURNS && !this.#stopReason; i++) {
          await new Promise((r) => setTimeout(r, SETTLE_MS));
        }
      }
      return this.#stopReason ? stopped() : result;
    };
    try {
      while (true) {
        if (this.#stopReason) return stopped();
        let r: { status: number; nresults: number };
        dog.sliceBegin();
        try {
          r = api.resume(T, L, nargs);
        } catch (e) {
          if (e instanceof RunAborted) {
            return await settle({ kind: "error", message: e.message, traceback: "", value: e.message });
          }
          throw e;
        } finally {
          dog.sliceEnd();
        }
        if (r.status === LUA_YIELD) {
          api.pop(T, r.nresults);
          nargs = 0;
          if (dog.preempted) {
            await macrotask(); // let signals, timers and cancels run; then Lua goes on
          } else if (this.#completions.length === 0 && this.#calls.length === 0 && !this.#stopReason) {
            await new Promise<void>((resolve) => (this.#wake = resolve));
          }
          dog.visitedLoop();
          continue;
        }
        if (r.status !== LUA_OK) {
          const message = String(this.converter.toJs(T, -1) ?? "unknown error");
          const memory = r.status === 4 ? " (memory limit reached)" : "";
          return await settle({ kind: "error", message: message + memory, traceback: "", value: message });
        }
        return await settle(this.#readOutcome(T, r.nresults));
      }
    } finally {
      this.#driving = false;
      stop?.removeEventListener("abort", onStop);
      for (const id of [...this.#ops.keys()]) this.#cancelOp(id);
      for (const [, p] of this.#replies) p.reject(new LuaCallbackError("the Lua run has ended", undefined));
      this.#replies.clear();
      if (!this.#closed) api.unref(L, threadRef);
    }
  }

  #readOutcome(T: number, n: number): DriveResult {
    const api = this.api;
    const base = api.gettop(T) - n + 1;
    const kind = String(this.converter.toJs(T, base));
    if (kind === "ok") {
      const value = this.converter.toJs(T, base + 1);
      return { kind: "returned", values: value === undefined ? [] : [value] };
    }
    if (kind === "exit") {
      const code = Number(this.converter.toJs(T, base + 1) ?? 0);
      const reason = this.converter.toJs(T, base + 2);
      return { kind: "exit", code, reason: typeof reason === "string" ? reason : undefined };
    }
    // "error", message, traceback, value
    const message = String(this.converter.toJs(T, base + 1));
    const tb = String(this.converter.toJs(T, base + 2) ?? "");
    let value: unknown = message;
    try {
      value = this.converter.toJs(T, base + 3);
    } catch { /* the message stands for a value that cannot be converted */ }
    return { kind: "error", message, traceback: trimTraceback(tb), value };
  }

  /** Frees the Lua state. The engine is unusable afterwards. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    engines.delete(this.L);
    for (const id of [...this.#ops.keys()]) this.#cancelOp(id);
    try {
      this.#global.close();
    } catch { /* a state killed by the watchdog may fail to close; it is discarded either way */ }
  }
}

const NEVER = new AbortController().signal;

/**
 * How a run that ends after a long stretch in Lua waits for a stop that came meanwhile: this many
 * sleeps of this many ms (the loop waits for I/O in each, where an arrived signal is picked up).
 */
const SETTLE_MS = 5;
const SETTLE_TURNS = 3;

/**
 * One turn of the event loop: signal listeners, due timers and I/O callbacks run. A zero timeout:
 * a message on a MessageChannel is cheaper, but its delivery did not let timers or signal
 * listeners run in between (measured: an interval timer starved for seconds).
 */
function macrotask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

const SLEEP_OP: Extract<HostFunction, { async: unknown }> = {
  async: (args, cx) => {
    const ms = args.number(1, "milliseconds");
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      cx.signal.addEventListener("abort", () => {
        clearTimeout(t);
        resolve();
      }, { once: true });
    });
  },
};

function safeJson(v: unknown): string {
  try {
    return stringifyJson(v);
  } catch {
    return String(v);
  }
}

/** The message of any thrown value. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return typeof e === "string" ? e : safeJson(e);
}

/** The one C function behind every sync host function; upvalue 1 is the function's id. */
function dispatch(api: LuaApi, L: number): number {
  let engine: LuaEngine | undefined;
  let message: string;
  let errValue: unknown;
  try {
    // The main state of L: every coroutine shares the registry, so look it up by id.
    engine = engineOf(api, L);
    const id = api.tonumber(L, LUA_REGISTRYINDEX - 1); // a small integer: no bigint needed
    return engine.invoke(L, id);
  } catch (e) {
    if (isLongjmp(e) || e instanceof RunAborted) throw e; // a Lua error unwinding, the watchdog: not ours
    if (e instanceof RunExiting && engine) return engine.raiseExit(L);
    if (e instanceof LuaErrorValue || e instanceof LuaErrorTable) {
      errValue = e;
      message = "";
    } else {
      message = errorMessage(e);
    }
  }
  if (errValue instanceof LuaErrorValue && engine) {
    engine.converter.push(L, errValue.value);
    return api.error(L);
  }
  if (errValue instanceof LuaErrorTable && engine) {
    api.where(L, 1);
    const at = String(engine.converter.toJs(L, -1) ?? "");
    api.pop(L, 1);
    engine.pushErrorTable(L, at + errValue.message, errValue.fields);
    return api.error(L);
  }
  api.where(L, 1);
  api.pushstring(L, message!);
  api.concat(L, 2);
  return api.error(L);
}

/** The one count hook of every run's threads (src/lua/watchdog.ts). */
function onHook(api: LuaApi, L: number): void {
  const engine = engineOf(api, L);
  engine.watchdog.onHook(L, (T) => engine.raiseExit(T));
}

function engineOf(api: LuaApi, L: number): LuaEngine {
  const direct = engines.get(L);
  if (direct) return direct;
  // A coroutine: find its main thread through the registry (LUA_RIDX_MAINTHREAD = 1).
  api.m._lua_rawgeti(L, LUA_REGISTRYINDEX, 1n);
  const main = api.tothread(L, -1);
  api.pop(L, 1);
  const e = engines.get(main);
  if (!e) throw new Error("host function called from an unknown Lua state");
  return e;
}
