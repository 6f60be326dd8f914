/**
 * Running one block: from a script (a file or inline source) to an outcome.
 *
 * Layer: runtime. Owns the run sequence; its one product caller is the in-process runner
 * (`src/runner/in_process.ts`), through which the CLI, the SDK, the spec runner and every child
 * run come:
 *   resolve paths → load the script → seal check → join the mesh (with `--relay`) → create the
 *   engine → install host modules → run the prelude → set `_SCRIPT_NAME`, `_PROMPT`, `_CONTEXT`
 *   and the globals → compile → drive the main task → clean up (process groups, handles, engine).
 * Cleanup happens whatever the outcome. Nothing here touches `Deno.exit`, argv, the result file
 * or the process environment and working directory: the run's environment is `spec.env` (a
 * record the edge resolved; empty when absent), its settings `spec.settings` (the edge parsed
 * them from that environment's `AGENT_BLOCK_*` variables; nothing here parses one) and its
 * working directory `spec.cwd` (the project root when absent), and mapping the outcome to an exit code is the caller's business
 * (`exitCodeOf`).
 *
 * The run's secrets (`src/obs/secrets.ts`: the host's credential variables of `spec.env`, then
 * the keys of its model calls) are made here, with the run's logger, which scrubs them from every
 * line; the outcome is scrubbed of them too.
 *
 * Invariants: the outcome follows `src/outcome.ts`; a run that raised or never started is
 * `raised` (code `config` when it never started); `cancelled` is a cancel from outside
 * (`spec.signal`).
 */
import { basename, dirname, isAbsolute, join, normalize, resolve } from "node:path";
import { type EngineLimits, LuaEngine } from "../lua/engine.ts";
import prelude from "../lua/prelude.lua" with { type: "text" };
import { installCore } from "../host/core.ts";
import type { HostModule, RunContext } from "../host/context.ts";
import { standardModules } from "../host/standard.ts";
import type { BusHost } from "../host/bus.ts";
import { Logger, writeStderr, writeStdout } from "../obs/log.ts";
import { ProcessGroups } from "../proc/group.ts";
import { displayPath, libTiers, ModuleResolver } from "../modules/resolver.ts";
import { userHome } from "../home.ts";
import { notStarted, type Outcome, raisedCodeOf } from "../outcome.ts";
import { RunEnv } from "../run_env.ts";
import { NO_SETTINGS, type RunSettings } from "../run_settings.ts";
import type { RunCorrelationIds } from "../correlation.ts";
import { Secrets } from "../obs/secrets.ts";
import type { RunObserver } from "../obs/run_events.ts";
import type { RunTrace } from "../obs/otel/run_trace.ts";
import type { MeshSpec } from "../host/mesh_open.ts";

/** What to run and with what. */
export interface RunSpec {
  /**
   * A script file, or inline source with the name errors should show (`name`; `chunkname`, when
   * given, is the chunk's own name instead of `@name`, for a runner's driver chunk: `=ab:...`).
   */
  script: { path: string } | { source: string | Uint8Array; name: string; dir?: string; chunkname?: string };
  /** Project root (`--project`); resolved against `cwd`, made absolute and canonical. */
  projectRoot: string;
  /**
   * The run's environment, resolved by the caller (the CLI passes the process environment with
   * the project's `.env` layered in). Absent: an empty environment — nothing is read from the
   * process. The run copies it; `std.env.set` changes the run's own copy only.
   */
  env?: Readonly<Record<string, string>>;
  /**
   * The run's working directory (absolute; a relative one is refused); relative paths resolve
   * against it. Default: the project root.
   */
  cwd?: string;
  /** `$AGENT_BLOCK_HOME`; defaults to `settings.home`, then `<user home>/.agent-block`. */
  home?: string;
  /**
   * Paths of the kv, sql, ts and kernel stores (typed: they win over `settings.stores`, the
   * edge's reading of `AGENT_BLOCK_*_PATH`, and the block does not see them as variables).
   */
  stores?: RunContext["stores"];
  /** `_PROMPT` (absent when undefined). */
  prompt?: string;
  /** `_CONTEXT` (absent when undefined). */
  context?: string;
  /** Run labels (`--label k=v`), stamped on kernel sessions. */
  labels?: Record<string, string>;
  /** Correlation ids by key (`src/correlation.ts`); they win over `settings.correlation`. */
  correlationIds?: RunCorrelationIds;
  /** Extra globals set before the script runs (converted like host values). */
  globals?: Record<string, unknown>;
  /** CPU-time and heap limits. */
  limits?: EngineLimits;
  /** Sink for the script's stdout (`print`, `io.write`); default the process stdout. */
  stdout?: (bytes: Uint8Array) => void;
  /** Sink for logs and `io.stderr`; default the process stderr. */
  stderr?: (bytes: Uint8Array) => void;
  /** Host modules installed after the standard ones (embedders). */
  modules?: readonly HostModule[];
  /**
   * Aborting ends the run at the next point where Lua waits for the host, or within about 0.1 s
   * while Lua computes without waiting (src/lua/watchdog.ts).
   */
  signal?: AbortSignal;
  /**
   * The run's typed settings, parsed at the edge from its `AGENT_BLOCK_*` variables
   * (`src/config/env_settings.ts`). Absent: every default — nothing is parsed from `env` here.
   */
  settings?: RunSettings;
  /** Downgrade the seal check to warnings (default: `settings.unseal`, else off). */
  unseal?: boolean;
  /** Grace between SIGTERM and SIGKILL for child process groups, ms (default: `settings.taskGraceMs`, else 1000). */
  graceMs?: number;
  /** Timeout of every MCP request, ms (`--mcp-timeout-secs` × 1000, default 30 000). */
  mcpTimeoutMs?: number;
  /**
   * The run's event bus (with an embedder's TypeScript handlers registered). Absent: a fresh
   * one. Either is installed when the script first touches `bus`, unless `busEager`.
   */
  bus?: BusHost;
  /** Install the bus before the script runs (a bus TypeScript emits into, or one served in the background). */
  busEager?: boolean;
  /** The `fetch` model requests go through (default the global one): an embedder's router or recorder. */
  llmFetch?: typeof fetch;
  /** Told the id of every kernel session the run opens (`knl.session`, `agent.run`). */
  onSessionOpen?: (id: string) => void;
  /**
   * Joins the mesh before the script runs (`--relay`, `--secret-key`: `src/host/mesh_open.ts`);
   * absent: `mesh.*` raises "mesh not connected". A mesh that will not connect, or a bad key, is
   * a run that never started (exit 1). Inbound requests go to `bus` (or a fresh bus), installed
   * before the script runs.
   */
  mesh?: MeshSpec;
  /**
   * Watches the run (`src/obs/run_events.ts`): kernel commits, MCP connects and calls. It must not
   * throw — pass `fanOut(...)`'s guarded function. The `end` event is the caller's to send.
   */
  observe?: RunObserver;
  /**
   * Subscribes to the connections the sandbox's network proxy refused (`--sandbox-net
   * allow-list`, from the CLI edge): each becomes a `net_denied` event of the run's innermost
   * open kernel session (`RunContext.recordTraffic`).
   */
  netDenials?: (listener: (denial: { host: string; port: number; reason: string }) => void) => void;
  /**
   * The HTTP proxy the run's mesh connection (`mesh`) goes through, `http://127.0.0.1:PORT`: the
   * sandbox's bridge under `--sandbox-net allow-list` (from the CLI edge), where the run has no
   * other way out. Absent: the mesh server is dialled directly.
   */
  netProxy?: string;
  /**
   * The replay memory of the run's NATS mesh connection (`mesh`): the sandbox launcher's, which a
   * confined run may not write itself (`src/clients/mesh/seen_remote.ts`, from the CLI edge).
   * Absent: the project's file (`src/host/mesh_open.ts`).
   */
  meshSeenIds?: {
    /** True when `id` (stamped `ts`) is new, remembering it; false for a replay (`seen_ids.ts`). */
    add(id: string, ts: number, now: number): boolean | Promise<boolean>;
    close(): void;
  };
  /**
   * The run's trace (`src/obs/otel/run_trace.ts`), when it is traced: host modules feed it kernel
   * rows and open spans for their calls. Absent: nothing is traced, at no cost.
   */
  trace?: RunTrace;
}

/** The script's source and naming, read before the engine exists. */
interface LoadedScript {
  source: Uint8Array;
  chunkname: string;
  dir: string;
  name: string;
  /** What the run's kernel sessions record as their script (`RunContext.script`). */
  ref: string;
}

/** `path` with its symlinks resolved, or as it is when it cannot be (`/dev/stdin` on a pipe). */
function realOrSelf(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

function loadScript(spec: RunSpec, cwd: string, projectRoot: string): LoadedScript | { error: string } {
  if ("path" in spec.script) {
    const path = resolve(cwd, spec.script.path);
    const shown = displayPath(path, cwd); // as chunk names show it: relative to the run's cwd when inside
    try {
      const info = Deno.statSync(path);
      if (info.isDirectory) return { error: `cannot read script ${shown}: it is a directory` };
      return {
        source: Deno.readFileSync(path),
        chunkname: "@" + displayPath(path, cwd),
        dir: dirname(path),
        name: basename(path),
        ref: displayPath(realOrSelf(path), projectRoot),
      };
    } catch (e) {
      const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
      return { error: `cannot read script ${shown}: ${why}` };
    }
  }
  const src = spec.script.source;
  return {
    source: typeof src === "string" ? new TextEncoder().encode(src) : src,
    chunkname: spec.script.chunkname ?? "@" + spec.script.name,
    dir: resolve(cwd, spec.script.dir ?? projectRoot),
    name: basename(spec.script.name),
    ref: spec.script.name,
  };
}

/** Runs one block to its outcome. */
export async function runBlock(spec: RunSpec): Promise<Outcome> {
  const env = new RunEnv(spec.env);
  if (spec.cwd !== undefined && !isAbsolute(spec.cwd)) {
    return notStarted(`the run's working directory must be an absolute path, got '${spec.cwd}'`);
  }
  let projectRoot: string;
  try {
    // Without `cwd` a relative root is the caller's own (the process's) business: realpath decides.
    projectRoot = Deno.realPathSync(
      spec.cwd !== undefined ? resolve(spec.cwd, spec.projectRoot) : spec.projectRoot,
    );
    if (!Deno.statSync(projectRoot).isDirectory) {
      return notStarted(`project ${spec.projectRoot} is not a directory`);
    }
  } catch {
    return notStarted(`project directory ${spec.projectRoot} does not exist`);
  }
  const cwd = spec.cwd !== undefined ? normalize(spec.cwd) : projectRoot;
  const script = loadScript(spec, cwd, projectRoot);
  if ("error" in script) return notStarted(script.error);

  const stdout = spec.stdout ?? writeStdout;
  const stderr = spec.stderr ?? writeStderr;
  const secrets = Secrets.fromEnv(env);
  const settings = spec.settings ?? NO_SETTINGS;
  const log = new Logger(script.name, settings.logLevel ?? "info", stderr, (m) => secrets.scrub(m));
  for (const w of settings.warnings ?? []) log.warn(w);
  const cleanups: ((outcome: Outcome | undefined) => void | Promise<void>)[] = [];
  let outcome: Outcome | undefined;
  const graceMs = spec.graceMs ?? settings.taskGraceMs ?? 1000;
  const procs = new ProcessGroups(graceMs, env, { warn: (m) => log.warn(m), childEnv: settings.childEnv });
  const home = resolve(cwd, spec.home ?? settings.home ?? join(userHome(env, cwd), ".agent-block"));
  const run: RunContext = {
    env,
    settings,
    cwd,
    resolve: (path) => resolve(cwd, path),
    projectRoot,
    scriptDir: script.dir,
    scriptName: script.name,
    script: script.ref,
    home,
    labels: spec.labels ?? {},
    correlation: { ...settings.correlation, ...spec.correlationIds },
    stores: mergedStores(settings.stores, spec.stores),
    stdout,
    stderr,
    log,
    secrets,
    procs,
    mcpTimeoutMs: spec.mcpTimeoutMs ?? 30_000,
    llmFetch: spec.llmFetch,
    observe: spec.observe,
    trace: spec.trace,
    mesh: undefined,
    sessionOpened: spec.onSessionOpen ?? (() => {}),
    onCleanup: (fn) => cleanups.push(fn),
  };
  spec.netDenials?.((d) =>
    run.recordTraffic?.("net_denied", { host: d.host, port: d.port, reason: d.reason })
  );

  const resolver = new ModuleResolver(
    libTiers(script.dir, projectRoot, home),
    spec.unseal ?? settings.unseal ?? false,
    (m) => log.warn(m),
    cwd,
  );
  const violations = resolver.checkSeals();
  if (violations.length && !resolver.unseal) {
    const v = violations[0];
    const more = violations.slice(1).map((x) => `, '${x.module}' by ${displayPath(x.file, cwd)}`).join("");
    return notStarted(
      `sealed module '${v.module}' cannot be replaced from the filesystem: ${displayPath(v.file, cwd)} ` +
        `would replace it${
          more ? ` (and ${more.slice(2)})` : ""
        }; remove the file (read the embedded one with ` +
        `require("embedded.${v.module}"); AGENT_BLOCK_UNSEAL=1 downgrades this to a warning)`,
    );
  }
  for (const v of violations) resolver.warnUnsealed(v.module, v.file);

  let engine: LuaEngine | undefined;
  try {
    if (spec.mesh) {
      // loaded only for a run with --relay: the transports cost nothing otherwise
      const { openMesh, MeshStartError } = await import("../host/mesh_open.ts");
      try {
        run.mesh = await openMesh(spec.mesh, run, spec.bus, spec.signal, spec.netProxy, spec.meshSeenIds);
      } catch (e) {
        if (e instanceof MeshStartError) return outcome = notStarted(secrets.scrub(e.message));
        throw e;
      }
    }
    engine = await LuaEngine.create(spec.limits ?? {});
    engine.onWarning = (m) => log.warn(m);
    installCore(engine, run, resolver);
    const bus = run.mesh?.bus ?? spec.bus;
    for (const install of standardModules(bus, (spec.busEager ?? false) || run.mesh !== undefined)) {
      install(engine, run);
    }
    for (const install of spec.modules ?? []) install(engine, run);
    engine.exec(prelude, "=ab:prelude");
    engine.setGlobal("_SCRIPT_NAME", script.name);
    if (spec.prompt !== undefined) engine.setGlobal("_PROMPT", spec.prompt);
    if (spec.context !== undefined) engine.setGlobal("_CONTEXT", spec.context);
    for (const [k, v] of Object.entries(spec.globals ?? {})) engine.setGlobal(k, v);

    const compiled = engine.compile(stripShebang(script.source), script.chunkname);
    if (!compiled.ok) {
      return { status: "raised", code: "script", message: secrets.scrub(compiled.message), traceback: "" };
    }
    const r = await engine.runMain(compiled.ref, spec.signal);
    switch (r.kind) {
      case "returned":
        outcome = { status: "returned", value: r.values[0] as string | Uint8Array | undefined };
        break;
      case "exit":
        outcome = r.reason !== undefined && r.code === 75
          ? { status: "deferred", reason: r.reason }
          : { status: "exited", code: r.code };
        break;
      case "stopped":
        outcome = { status: "cancelled", reason: r.reason };
        break;
      default: {
        let message = r.message;
        if (/not enough memory/.test(message) && spec.limits?.memoryBytes) {
          message = `memory limit exceeded: the script needed more than ${
            Math.round(spec.limits.memoryBytes / 1048576)
          } MiB of Lua heap (${message})`;
        }
        outcome = {
          status: "raised",
          code: raisedCodeOf(r.value),
          message,
          traceback: r.traceback,
          error: r.value,
        };
      }
    }
    return outcome = maskOutcome(outcome, secrets);
  } finally {
    // Cleanups first (newest first): an MCP disconnect closes a server's stdin and lets it exit
    // by itself; whatever is still running afterwards is ended with its tree (its process group,
    // its descendants and what carries its tag: src/proc/group.ts).
    for (const fn of cleanups.reverse()) {
      try {
        await fn(outcome);
      } catch (e) {
        log.warn(`cleanup failed: ${(e as Error).message}`);
      }
    }
    await procs.endAll();
    engine?.close();
  }
}

/** The stores' paths: the edge's (`AGENT_BLOCK_*_PATH`) overridden field by field by the typed ones. */
function mergedStores(
  fromEnv: RunSettings["stores"],
  typed: RunSpec["stores"],
): NonNullable<RunContext["stores"]> {
  const out: Record<string, string> = { ...fromEnv };
  for (const [k, v] of Object.entries(typed ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * `outcome` with the run's secrets (and URL credentials) scrubbed from what it reports: the
 * message, traceback and raised value of a failure, the reason of a deferral or cancellation. A
 * returned value is the block's own output and passes unchanged.
 */
function maskOutcome(outcome: Outcome, secrets: Secrets): Outcome {
  switch (outcome.status) {
    case "raised":
      return {
        ...outcome,
        message: secrets.scrub(outcome.message),
        traceback: secrets.scrub(outcome.traceback),
        ...(outcome.error !== undefined ? { error: secrets.maskValue(outcome.error) } : {}),
      };
    case "deferred":
    case "cancelled":
      return { ...outcome, reason: secrets.scrub(outcome.reason) };
    default:
      return outcome;
  }
}

/** Blanks a leading `#!` line (keeping line numbers), as the Lua standalone interpreter does. */
function stripShebang(src: Uint8Array): Uint8Array {
  if (src[0] !== 0x23 /* # */) return src;
  const out = src.slice();
  let end = 0;
  while (end < out.length && out[end] !== 0x0a) out[end++] = 0x20;
  // "--" keeps a blanked line a comment; a one-character line ("#") is a blank line already
  if (end >= 2) out[0] = out[1] = 0x2d;
  return out;
}
