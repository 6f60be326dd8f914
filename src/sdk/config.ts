/**
 * `BlockConfig` and its builder: everything one run of a block is, as a checked, frozen value.
 *
 * Owns the embedder's settings and their validation — every refusal is a `BlockError` with code
 * `config` naming the field and the value, thrown by `build()` (or `new BlockConfig`) before
 * anything runs. Files named by the config (the script, prompt and context files) are read when
 * the run starts, against the run's working directory: `cwd`, else the project root (one rule
 * for the CLI, the MCP server, `serve` and the SDK); a relative project root resolves against
 * the caller's directory (`runBlock`: this process's working directory).
 *
 * Invariants:
 * - A config is immutable and can be run any number of times, concurrently too; each run gets
 *   its own Lua state, bus, tool registry, environment copy and kernel writers. The one
 *   exception is a config given a `BusHost` (`bus(host)`): a bus serves one run.
 * - `extraGlobals` are JSON values set as Lua globals after the standard library (nesting kept,
 *   converted natively, never spliced into source); names the runtime defines are refused.
 * - Nothing here reads the process: `env` left unset and the directory a relative project root
 *   resolves against are filled by the edge that runs the config (`mod.ts`'s `runBlock`: this
 *   process's environment and working directory).
 */
import {
  type OtelMeterProvider as MeterProvider,
  type OtelTracerProvider as TracerProvider,
  parseTraceparent,
  type TelemetrySettings,
} from "../obs/otel/settings.ts";
import { isAbsolute } from "node:path";
import type { JsonValue } from "../json/codec.ts";
import type { BusHandler, BusHost } from "../host/bus.ts";
import type { RunObserver } from "../obs/run_events.ts";
import { BlockError } from "./errors.ts";
import { meshUrlProblem } from "../clients/mesh/connect.ts";
import { checkHostTools, type HostTool } from "./host_tools.ts";
import {
  checkSecretKeySource,
  checkTextSource,
  type ScriptSource,
  type SecretKeySource,
  show,
  type TextSource,
} from "./sources.ts";

/**
 * Where the run's stores live; each defaults as in the CLI (`AGENT_BLOCK_*_PATH`, then home).
 *
 * ```ts
 * import { BlockConfig, runBlock, ScriptSource, type StorePaths } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * // nothing outlives the run: a private kv store and kernel log
 * const stores: StorePaths = { kv: ":memory:", kernel: ":memory:" };
 * const script = 'std.kv.set("cache", "greeting", "hi") return std.kv.get("cache", "greeting")';
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "kv.lua"), ".").stores(stores).env({}).build(),
 * );
 * assert.equal(report.value, "hi");
 * ```
 */
export interface StorePaths {
  /** `std.kv` (`AGENT_BLOCK_KV_PATH`); `:memory:` for a private in-memory store. */
  kv?: string;
  /** `std.sql` (`AGENT_BLOCK_SQL_PATH`). */
  sql?: string;
  /** `std.ts` (`AGENT_BLOCK_TS_PATH`). */
  ts?: string;
  /** The kernel log (`AGENT_BLOCK_KNL_PATH`, default `<project>/.agent-block/knl.sqlite`). */
  kernel?: string;
}

/**
 * CPU-time and heap bounds of the block's Lua code.
 *
 * ```ts
 * import { BlockConfig, type BlockLimits, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const limits: BlockLimits = { cpuSeconds: 0.2, memoryMb: 64 };
 * const spin = ScriptSource.inline("while true do end", "spin.lua");
 * const report = await runBlock(BlockConfig.builder(spin, ".").limits(limits).env({}).build());
 * assert.equal(report.error?.code, "script");
 * assert.match(report.error!.message, /CPU limit exceeded/);
 * ```
 */
export interface BlockLimits {
  /** Lua CPU time, seconds (`--cpu-limit`). */
  cpuSeconds?: number;
  /** Lua heap, MiB (`--memory-limit`). */
  memoryMb?: number;
}

/**
 * The fields of a `BlockConfig`; every one but `script` and `projectRoot` is optional. The
 * builder collects them one setter at a time; `new BlockConfig(fields)` takes them at once.
 *
 * ```ts
 * import { BlockConfig, type BlockConfigFields, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const fields: BlockConfigFields = {
 *   script: ScriptSource.inline("return _CONTEXT .. ': ' .. _PROMPT", "fields.lua"),
 *   projectRoot: ".",
 *   prompt: "hello",
 *   context: "echo",
 *   labels: { job: "docs" },
 *   env: {},
 * };
 * const report = await runBlock(new BlockConfig(fields));
 * assert.equal(report.value, "echo: hello");
 * ```
 */
export interface BlockConfigFields {
  /** The script to run. */
  script: ScriptSource;
  /**
   * The project root (relative: against the caller's directory): `.env` is not read here, but
   * `lib/` and `blocks/` tiers, the kernel log, `sh.exec`'s cwd, and the run's working directory
   * unless `cwd` names another.
   */
  projectRoot: string;
  /** `_PROMPT`: text, or `{ file }` read when the run starts. */
  prompt?: TextSource;
  /** `_CONTEXT`: text, or `{ file }` read when the run starts. */
  context?: TextSource;
  /** Lua globals set after the standard library (JSON values; nesting kept). */
  extraGlobals?: Readonly<Record<string, JsonValue>>;
  /** The run's environment (default: this process's, read by `runBlock`). */
  env?: Readonly<Record<string, string>>;
  /** The run's working directory, absolute (default: the project root). */
  cwd?: string;
  /** `$AGENT_BLOCK_HOME` (default: the run environment's, then `~/.agent-block`). */
  home?: string;
  /** TypeScript handlers for `bus.emit` kinds. */
  hostHandlers?: Readonly<Record<string, BusHandler>>;
  /** One TypeScript handler for every kind nothing else claims. */
  hostHandler?: BusHandler;
  /** The run's bus, to emit into the script from TypeScript (a bus serves one run). */
  bus?: BusHost;
  /** Dispatch `bus.on` handlers in the background, without the script calling `bus.serve`. */
  autoServeBus?: boolean;
  /** Aborting it cancels the run (outcome `cancelled`). */
  signal?: AbortSignal;
  /** Wall-clock limit of the run, ms (outcome `timed_out`). */
  timeoutMs?: number;
  /** Timeout of every MCP request, ms (default 30 000). */
  mcpRpcTimeoutMs?: number;
  /**
   * Joins the mesh before the script runs (`--relay`): `nats://host:port[,...]` or
   * `ws(s)://host:port/ws`; without it `mesh.*` raises "mesh not connected".
   */
  relay?: string;
  /**
   * The mesh identity (`--secret-key`): 64 hex characters, an Ed25519 seed — or `{ env }` /
   * `{ file }` to read them when the run starts (`SecretKeySource`). Default: the run's
   * `AGENT_BLOCK_MESH_SECRET_KEY`, else a random key (the AgentId then changes every run).
   */
  secretKey?: SecretKeySource;
  /** TypeScript functions registered as Lua tools. */
  hostTools?: readonly HostTool[];
  /** Paths of the kv, sql, ts and kernel stores. */
  stores?: StorePaths;
  /** The `fetch` model requests go through (route or record the model traffic). */
  fetch?: typeof fetch;
  /** Run labels, stamped on kernel sessions. */
  labels?: Readonly<Record<string, string>>;
  /** CPU and memory bounds. */
  limits?: BlockLimits;
  /** Sink for the script's stdout (`print`, `io.write`); default this process's stdout. */
  stdout?: (bytes: Uint8Array) => void;
  /** Sink for logs and `io.stderr`; default this process's stderr. */
  stderr?: (bytes: Uint8Array) => void;
  /** Watch the run as it goes: kernel events as committed, MCP connects and calls, the end. */
  observers?: readonly RunObserver[];
  /** Export the run's traces and metrics over OTLP/HTTP (`telemetryFromEnv` makes it from `OTEL_*`). */
  telemetry?: TelemetrySettings;
  /** The embedder's tracer provider: the run's spans go to it (its export is the embedder's). */
  tracerProvider?: TracerProvider;
  /** The embedder's meter provider, for the run's metrics. */
  meterProvider?: MeterProvider;
  /** The caller's span, a W3C `traceparent` header: the run's span is its child. */
  traceparent?: string;
}

/** The globals of stock Lua 5.4 (the standard libraries and base functions). */
export const LUA_GLOBALS: readonly string[] = [
  "_G",
  "_VERSION",
  "assert",
  "collectgarbage",
  "coroutine",
  "debug",
  "dofile",
  "error",
  "getmetatable",
  "io",
  "ipairs",
  "load",
  "loadfile",
  "math",
  "next",
  "os",
  "package",
  "pairs",
  "pcall",
  "print",
  "rawequal",
  "rawget",
  "rawlen",
  "rawset",
  "require",
  "select",
  "setmetatable",
  "string",
  "table",
  "tonumber",
  "tostring",
  "type",
  "utf8",
  "warn",
  "xpcall",
]; // deno-fmt-ignore

/**
 * Globals the runtime defines, which `extraGlobals` may not replace: Lua's own, agent-block's
 * faces, the run's inputs and the SDK's. Names starting with `__` are reserved too (internal
 * tables). A test holds this list equal to what a fresh run defines.
 *
 * @example Pick names that are free
 * ```ts
 * import { BlockConfig, BlockError, RESERVED_GLOBALS, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * assert.ok(RESERVED_GLOBALS.has("std") && RESERVED_GLOBALS.has("_PROMPT"));
 * assert.ok(!RESERVED_GLOBALS.has("_TASK_METADATA"));
 * const script = ScriptSource.inline("return 1", "g.lua");
 * const builder = BlockConfig.builder(script, ".").extraGlobals({ std: 1 });
 * assert.throws(() => builder.build(), (e) => e instanceof BlockError && e.code === "config");
 * assert.throws(() => builder.build(), /'std' is defined by the runtime and cannot be replaced/);
 * ```
 */
export const RESERVED_GLOBALS: ReadonlySet<string> = new Set([
  ...LUA_GLOBALS,
  "std", "sh", "tool", "mcp", "llm", "bus", "job", "http", "log", "knl", "mesh", "a2a",
  "_PROMPT", "_CONTEXT", "_SCRIPT_NAME", "_DEFAULT_AGENT",
]); // deno-fmt-ignore

const LUA_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LUA_KEYWORDS = new Set(
  ("and break do else elseif end false for function goto if in local nil not or repeat return " +
    "then true until while").split(" "),
);

function fail(message: string): never {
  throw new BlockError("config", message);
}

function positive(field: string, v: number | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) {
    fail(`${field} must be a positive number, got ${show(v)}`);
  }
  return v;
}

function checkRelay(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  if (typeof url !== "string") fail(`relay must be a string, got ${show(url)}`);
  const why = meshUrlProblem(url, "relay");
  if (why !== undefined) fail(why);
  return url;
}

function stringRecord(field: string, r: Readonly<Record<string, string>> | undefined) {
  if (r === undefined) return undefined;
  if (typeof r !== "object" || r === null || Array.isArray(r)) {
    fail(`${field} must be an object of strings, got ${show(r)}`);
  }
  for (const [k, v] of Object.entries(r)) {
    if (typeof v !== "string") fail(`${field}.${k} must be a string, got ${show(v)}`);
  }
  return Object.freeze({ ...r });
}

/** Checks that `v` is plain JSON; `path` names where in the error. */
function checkJson(path: string, v: unknown, seen: Set<object>): void {
  if (v === null || typeof v === "string" || typeof v === "boolean") return;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) fail(`${path} must be a finite number, got ${v}`);
    return;
  }
  if (typeof v !== "object") fail(`${path} must be a JSON value, got ${show(v)}`);
  if (seen.has(v)) fail(`${path} refers back to itself (a cycle has no JSON form)`);
  seen.add(v);
  if (Array.isArray(v)) {
    v.forEach((x, i) => checkJson(`${path}[${i}]`, x, seen));
  } else {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      fail(`${path} must be a plain object, array or scalar, got ${proto?.constructor?.name ?? "an object"}`);
    }
    for (const [k, x] of Object.entries(v)) checkJson(`${path}.${k}`, x, seen);
  }
  seen.delete(v);
}

function checkGlobals(globals: Readonly<Record<string, JsonValue>> | undefined) {
  if (globals === undefined) return Object.freeze({});
  if (typeof globals !== "object" || globals === null || Array.isArray(globals)) {
    fail(`extraGlobals must be an object, got ${show(globals)}`);
  }
  for (const [name, value] of Object.entries(globals)) {
    if (!LUA_NAME.test(name) || LUA_KEYWORDS.has(name)) {
      fail(`extraGlobals: '${name}' is not a Lua name (letters, digits and '_', not starting with a digit)`);
    }
    if (RESERVED_GLOBALS.has(name) || name.startsWith("__")) {
      fail(`extraGlobals: '${name}' is defined by the runtime and cannot be replaced; choose another name`);
    }
    checkJson(`extraGlobals.${name}`, value, new Set());
  }
  return Object.freeze({ ...globals });
}

function checkHandlers(h: Readonly<Record<string, BusHandler>> | undefined) {
  if (h === undefined) return Object.freeze({});
  if (typeof h !== "object" || h === null) {
    fail(`hostHandlers must be an object of functions, got ${show(h)}`);
  }
  for (const [kind, fn] of Object.entries(h)) {
    if (kind === "") fail("hostHandlers: an event kind must be a non-empty string");
    if (typeof fn !== "function") fail(`hostHandlers.${kind} must be a function, got ${show(fn)}`);
  }
  return Object.freeze({ ...h });
}

function checkStores(s: StorePaths | undefined): StorePaths {
  if (s === undefined) return Object.freeze({});
  for (const k of Object.keys(s)) {
    if (!["kv", "sql", "ts", "kernel"].includes(k)) fail(`stores.${k} is not a store (kv, sql, ts, kernel)`);
    const v = (s as Record<string, unknown>)[k];
    if (v !== undefined && (typeof v !== "string" || v.trim() === "")) {
      fail(`stores.${k} must be a path or ":memory:", got ${show(v)}`);
    }
  }
  return Object.freeze({ ...s });
}

/**
 * One run of a block, fully described. Build it with `BlockConfig.builder(script, projectRoot)`
 * and run it with `runBlock`.
 *
 * @example A script with its input
 * ```ts
 * import { BlockConfig, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const config = BlockConfig.builder(
 *   ScriptSource.inline("return _PROMPT .. ' ' .. _TASK_METADATA.ticket.id", "echo.lua"),
 *   ".",
 * )
 *   .prompt("triage")
 *   .extraGlobals({ _TASK_METADATA: { ticket: { id: "T-7" } } })
 *   .env({})
 *   .build();
 * const report = await runBlock(config);
 * assert.equal(report.value, "triage T-7");
 * ```
 */
export class BlockConfig {
  /** The script to run. */
  readonly script: ScriptSource;
  /** The project root. */
  readonly projectRoot: string;
  /** `_PROMPT`. */
  readonly prompt?: TextSource;
  /** `_CONTEXT`. */
  readonly context?: TextSource;
  /** Lua globals set after the standard library. */
  readonly extraGlobals: Readonly<Record<string, JsonValue>>;
  /** The run's environment (`undefined`: the runner's process environment). */
  readonly env?: Readonly<Record<string, string>>;
  /** The run's working directory (`undefined`: the project root). */
  readonly cwd?: string;
  /** `$AGENT_BLOCK_HOME`. */
  readonly home?: string;
  /** TypeScript handlers per event kind. */
  readonly hostHandlers: Readonly<Record<string, BusHandler>>;
  /** The TypeScript handler for any kind. */
  readonly hostHandler?: BusHandler;
  /** The run's bus, when the embedder supplies one. */
  readonly bus?: BusHost;
  /** Serve `bus.on` handlers in the background. */
  readonly autoServeBus: boolean;
  /** Cancels the run. */
  readonly signal?: AbortSignal;
  /** Wall-clock limit, ms. */
  readonly timeoutMs?: number;
  /** MCP request timeout, ms. */
  readonly mcpRpcTimeoutMs: number;
  /** The mesh to join (`--relay`). */
  readonly relay?: string;
  /** The mesh identity (`--secret-key`): the hex seed, or where to read it. */
  readonly secretKey?: SecretKeySource;
  /** Host tools. */
  readonly hostTools: readonly HostTool[];
  /** Store paths. */
  readonly stores: StorePaths;
  /** The `fetch` of model requests. */
  readonly fetch?: typeof fetch;
  /** Run labels. */
  readonly labels: Readonly<Record<string, string>>;
  /** CPU and memory bounds. */
  readonly limits: BlockLimits;
  /** The script's stdout sink. */
  readonly stdout?: (bytes: Uint8Array) => void;
  /** The logs' sink. */
  readonly stderr?: (bytes: Uint8Array) => void;
  /** The run's observers, in order. */
  readonly observers: readonly RunObserver[];
  /** OTLP export settings. */
  readonly telemetry?: TelemetrySettings;
  /** The embedder's tracer provider. */
  readonly tracerProvider?: TracerProvider;
  /** The embedder's meter provider. */
  readonly meterProvider?: MeterProvider;
  /** The caller's span, a checked W3C `traceparent` header. */
  readonly traceparent?: string;

  /**
   * A checked config; throws a `BlockError` (code `config`) naming the first field refused.
   * @param fields the settings
   */
  constructor(fields: BlockConfigFields) {
    const f = fields;
    const s = f.script as ScriptSource | undefined;
    if (!s || !["path", "inline", "default_agent"].includes(s.kind)) {
      fail(`script must come from ScriptSource.path, .inline or .defaultAgent, got ${show(s)}`);
    }
    if (typeof f.projectRoot !== "string" || f.projectRoot === "") {
      fail(`projectRoot must be a non-empty path, got ${show(f.projectRoot)}`);
    }
    if (f.cwd !== undefined && (typeof f.cwd !== "string" || !isAbsolute(f.cwd))) {
      fail(`cwd must be an absolute path, got ${show(f.cwd)}`);
    }
    if (f.home !== undefined && (typeof f.home !== "string" || f.home === "")) {
      fail(`home must be a non-empty path, got ${show(f.home)}`);
    }
    if (f.hostHandler !== undefined && typeof f.hostHandler !== "function") {
      fail(`hostHandler must be a function, got ${show(f.hostHandler)}`);
    }
    if (f.signal !== undefined && !(f.signal instanceof AbortSignal)) {
      fail(`signal must be an AbortSignal, got ${show(f.signal)}`);
    }
    if (f.fetch !== undefined && typeof f.fetch !== "function") {
      fail(`fetch must be a function, got ${show(f.fetch)}`);
    }
    const observers = f.observers ?? [];
    if (!Array.isArray(observers)) fail(`observers must be an array of functions, got ${show(observers)}`);
    observers.forEach((o, i) => {
      if (typeof o !== "function") fail(`observers[${i}] must be a function, got ${show(o)}`);
    });
    const limits = f.limits ?? {};
    this.script = s;
    this.projectRoot = f.projectRoot;
    if (f.prompt !== undefined) this.prompt = checkTextSource("prompt", f.prompt);
    if (f.context !== undefined) this.context = checkTextSource("context", f.context);
    this.extraGlobals = checkGlobals(f.extraGlobals);
    this.env = stringRecord("env", f.env);
    this.cwd = f.cwd;
    this.home = f.home;
    this.hostHandlers = checkHandlers(f.hostHandlers);
    this.hostHandler = f.hostHandler;
    this.bus = f.bus;
    this.autoServeBus = f.autoServeBus ?? false;
    this.signal = f.signal;
    this.timeoutMs = positive("timeoutMs", f.timeoutMs);
    this.mcpRpcTimeoutMs = positive("mcpRpcTimeoutMs", f.mcpRpcTimeoutMs) ?? 30_000;
    this.relay = checkRelay(f.relay);
    if (f.secretKey !== undefined) this.secretKey = checkSecretKeySource(f.secretKey);
    this.hostTools = checkHostTools(f.hostTools ?? []);
    this.stores = checkStores(f.stores);
    this.fetch = f.fetch;
    this.labels = stringRecord("labels", f.labels) ?? Object.freeze({});
    this.limits = Object.freeze({
      cpuSeconds: positive("limits.cpuSeconds", limits.cpuSeconds),
      memoryMb: positive("limits.memoryMb", limits.memoryMb),
    });
    this.stdout = f.stdout;
    this.stderr = f.stderr;
    this.observers = Object.freeze([...observers]);
    if (f.tracerProvider !== undefined && typeof f.tracerProvider?.getTracer !== "function") {
      fail(
        `tracerProvider must be an OpenTelemetry TracerProvider (with getTracer), got ${
          show(f.tracerProvider)
        }`,
      );
    }
    if (f.meterProvider !== undefined && typeof f.meterProvider?.getMeter !== "function") {
      fail(
        `meterProvider must be an OpenTelemetry MeterProvider (with getMeter), got ${show(f.meterProvider)}`,
      );
    }
    if (f.traceparent !== undefined) {
      if (typeof f.traceparent !== "string" || !parseTraceparent(f.traceparent)) {
        fail(`traceparent must be a W3C traceparent header, got ${show(f.traceparent)}`);
      }
      this.traceparent = f.traceparent;
    }
    this.telemetry = f.telemetry;
    this.tracerProvider = f.tracerProvider;
    this.meterProvider = f.meterProvider;
    Object.freeze(this);
  }

  /**
   * A builder for a config running `script` in `projectRoot`.
   * @param script where the script comes from (`ScriptSource`)
   * @param projectRoot the project root (relative: against the caller's directory, `runBlock`'s
   *   being this process's working directory); also the run's working directory unless `cwd` is set
   */
  static builder(script: ScriptSource, projectRoot: string): BlockConfigBuilder {
    return new BlockConfigBuilder(script, projectRoot);
  }
}

/**
 * Collects a `BlockConfig`'s settings; `build()` checks them. Each setter replaces the earlier
 * value, except `hostHandler(kind, fn)`, `hostTool`, `label`, `extraGlobals` and `observe`, which add.
 *
 * @example Settings that add up
 * ```ts
 * import { BlockConfig, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const printed: string[] = [];
 * const builder = BlockConfig.builder(
 *   ScriptSource.inline('print(_PROMPT .. " " .. _TEAM .. "/" .. _TICKET) return "ok"', "steps.lua"),
 *   ".",
 * )
 *   .prompt("triage")
 *   .extraGlobals({ _TEAM: "infra" })
 *   .extraGlobals({ _TICKET: "T-7" }) // adds to the first
 *   .label("job", "nightly")
 *   .label("shard", "3")
 *   .timeoutMs(10_000)
 *   .stdout((bytes) => printed.push(new TextDecoder().decode(bytes)))
 *   .env({});
 * const report = await runBlock(builder.build());
 * assert.equal(report.value, "ok");
 * assert.deepEqual(printed, ["triage infra/T-7\n"]);
 * ```
 *
 * @example A refused setting
 * ```ts
 * import { BlockConfig, BlockError, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const builder = BlockConfig.builder(ScriptSource.inline("return 1", "one.lua"), ".").timeoutMs(0);
 * assert.throws(() => builder.build(), (e) => {
 *   assert.ok(e instanceof BlockError);
 *   assert.equal(e.code, "config");
 *   assert.equal(e.message, "timeoutMs must be a positive number, got number 0");
 *   return true;
 * });
 * ```
 */
export class BlockConfigBuilder {
  #f: { -readonly [K in keyof BlockConfigFields]: BlockConfigFields[K] };

  /**
   * A builder; `BlockConfig.builder` is the usual way to get one.
   * @param script where the script comes from
   * @param projectRoot the project root
   */
  constructor(script: ScriptSource, projectRoot: string) {
    this.#f = { script, projectRoot };
  }

  /** `_PROMPT`: text, or `{ file }` read when the run starts. */
  prompt(prompt: TextSource): this {
    this.#f.prompt = prompt;
    return this;
  }
  /** `_CONTEXT` (a system prompt): text, or `{ file }`. */
  context(context: TextSource): this {
    this.#f.context = context;
    return this;
  }
  /** Adds Lua globals (JSON values, set after the standard library). */
  extraGlobals(globals: Readonly<Record<string, JsonValue>>): this {
    this.#f.extraGlobals = { ...this.#f.extraGlobals, ...globals };
    return this;
  }
  /** The run's environment, whole (default: this process's). */
  env(env: Readonly<Record<string, string>>): this {
    this.#f.env = env;
    return this;
  }
  /** The run's working directory, absolute (default: the project root). */
  cwd(cwd: string): this {
    this.#f.cwd = cwd;
    return this;
  }
  /** `$AGENT_BLOCK_HOME` of the run. */
  home(home: string): this {
    this.#f.home = home;
    return this;
  }
  /** Adds the TypeScript handler for events of `kind`. */
  hostHandler(kind: string, handler: BusHandler): this;
  /** Sets the TypeScript handler for every kind nothing else claims. */
  hostHandler(handler: BusHandler): this;
  /**
   * A handler for one kind, or for any kind.
   * @param kindOrHandler the kind, or the any-kind handler
   * @param handler the handler for that kind
   */
  hostHandler(kindOrHandler: string | BusHandler, handler?: BusHandler): this {
    if (typeof kindOrHandler === "string") {
      this.#f.hostHandlers = { ...this.#f.hostHandlers, [kindOrHandler]: handler! };
    } else {
      this.#f.hostHandler = kindOrHandler;
    }
    return this;
  }
  /** Sets the TypeScript handlers per event kind, whole. */
  hostHandlers(handlers: Readonly<Record<string, BusHandler>>): this {
    this.#f.hostHandlers = handlers;
    return this;
  }
  /** The run's bus (to emit into the script from TypeScript); it serves one run. */
  bus(bus: BusHost): this {
    this.#f.bus = bus;
    return this;
  }
  /** Serve `bus.on` handlers in the background (no `bus.serve` in the script). */
  autoServeBus(on = true): this {
    this.#f.autoServeBus = on;
    return this;
  }
  /** Aborting `signal` cancels the run. */
  signal(signal: AbortSignal): this {
    this.#f.signal = signal;
    return this;
  }
  /** Wall-clock limit of the run, ms. */
  timeoutMs(ms: number): this {
    this.#f.timeoutMs = ms;
    return this;
  }
  /** Timeout of every MCP request, ms. */
  mcpRpcTimeoutMs(ms: number): this {
    this.#f.mcpRpcTimeoutMs = ms;
    return this;
  }
  /** Joins the mesh at `url` before the script runs (`nats://...` or `ws(s)://.../ws`). */
  relay(url: string): this {
    this.#f.relay = url;
    return this;
  }
  /** The mesh identity: 64 hex characters (an Ed25519 seed), `{ env }` or `{ file }` (`SecretKeySource`). */
  secretKey(source: SecretKeySource): this {
    this.#f.secretKey = source;
    return this;
  }
  /** Adds a host tool. */
  hostTool(tool: HostTool): this {
    this.#f.hostTools = [...(this.#f.hostTools ?? []), tool];
    return this;
  }
  /** Sets the host tools, whole. */
  hostTools(tools: readonly HostTool[]): this {
    this.#f.hostTools = tools;
    return this;
  }
  /** Paths of the kv, sql, ts and kernel stores. */
  stores(paths: StorePaths): this {
    this.#f.stores = paths;
    return this;
  }
  /** The `fetch` model requests go through. */
  fetch(fn: typeof fetch): this {
    this.#f.fetch = fn;
    return this;
  }
  /** Adds a run label. */
  label(key: string, value: string): this {
    this.#f.labels = { ...this.#f.labels, [key]: value };
    return this;
  }
  /** Sets the run labels, whole. */
  labels(labels: Readonly<Record<string, string>>): this {
    this.#f.labels = labels;
    return this;
  }
  /** CPU and memory bounds. */
  limits(limits: BlockLimits): this {
    this.#f.limits = limits;
    return this;
  }
  /** Sink for the script's stdout. */
  stdout(sink: (bytes: Uint8Array) => void): this {
    this.#f.stdout = sink;
    return this;
  }
  /** Sink for logs and `io.stderr`. */
  stderr(sink: (bytes: Uint8Array) => void): this {
    this.#f.stderr = sink;
    return this;
  }
  /**
   * Adds an observer: told each `RunEvent` as it happens — the kernel's rows as they are
   * committed (each a record of `knl export --as events`), MCP connects and tool calls, and the
   * run's end (see `RunEvent`). One that throws is detached with a warning; the run goes on.
   */
  observe(observer: RunObserver): this {
    this.#f.observers = [...(this.#f.observers ?? []), observer];
    return this;
  }
  /**
   * Exports the run's traces and metrics over OTLP/HTTP: `telemetryFromEnv(env)` makes the
   * settings from the standard `OTEL_*` variables (nothing reads them unless you do).
   */
  telemetry(settings: TelemetrySettings | undefined): this {
    this.#f.telemetry = settings;
    return this;
  }
  /**
   * Sends the run's spans (and, with `meterProvider`, its metrics) to your OpenTelemetry
   * providers instead of an export of agent-block's own; flushing them is yours.
   */
  tracerProvider(provider: TracerProvider, meterProvider?: MeterProvider): this {
    this.#f.tracerProvider = provider;
    this.#f.meterProvider = meterProvider;
    return this;
  }
  /** Makes the run's span a child of the caller's (a W3C `traceparent` header). */
  traceparent(header: string): this {
    this.#f.traceparent = header;
    return this;
  }
  /** The checked config; throws a `BlockError` (code `config`) naming the field refused. */
  build(): BlockConfig {
    return new BlockConfig(this.#f);
  }
}
