/**
 * Running one block: from a script (a file or inline source) to an outcome.
 *
 * Owns the run sequence shared by the CLI, the MCP server's child runs, the spec runner and
 * embedders (`mod.ts`):
 *   resolve paths → create the engine → install host modules → run the prelude → set globals →
 *   seal check → compile → drive the main task → clean up (process groups, handles, engine).
 * Cleanup happens whatever the outcome. Nothing here touches `Deno.exit`, argv or the result
 * file: mapping an outcome to an exit code is the caller's business.
 *
 * Invariants: a run that raised or never started has `status: "failed"`; `returned` carries the
 * chunk's first return value stringified by Lua's `tostring` (a string passes unchanged, bytes
 * exact); `deferred` is `job.defer`; `exited` is `os.exit`; `stopped` is a cancel from outside.
 */
import { basename, dirname, resolve } from "node:path";
import { type EngineLimits, LuaEngine } from "../lua/engine.ts";
import prelude from "../lua/prelude.lua" with { type: "text" };
import { installCore } from "../host/core.ts";
import type { HostModule, RunContext, RunEnding } from "../host/context.ts";
import { STANDARD_MODULES } from "../host/standard.ts";
import { Logger, writeStderr, writeStdout } from "../obs/log.ts";
import { ProcessGroups } from "../proc/group.ts";
import { displayPath, libTiers, ModuleResolver } from "../modules/resolver.ts";
import { agentBlockHome } from "./paths.ts";

/** What to run and with what. */
export interface RunSpec {
  /** A script file, or inline source with the name errors should show. */
  script: { path: string } | { source: string | Uint8Array; name: string; dir?: string };
  /** Project root (`--project`); made absolute and canonical. */
  projectRoot: string;
  /** `$AGENT_BLOCK_HOME`; defaults to the environment's, then `~/.agent-block`. */
  home?: string;
  /** `_PROMPT` (absent when undefined). */
  prompt?: string;
  /** `_CONTEXT` (absent when undefined). */
  context?: string;
  /** Run labels (`--label k=v`), stamped on kernel sessions. */
  labels?: Record<string, string>;
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
  /** Aborting ends the run at the next point where Lua waits for the host. */
  signal?: AbortSignal;
  /** Downgrade the seal check to warnings (`AGENT_BLOCK_UNSEAL=1`). */
  unseal?: boolean;
  /** Grace between SIGTERM and SIGKILL for child process groups, ms. */
  graceMs?: number;
  /** Timeout of every MCP request, seconds (`--mcp-timeout-secs`, default 30). */
  mcpTimeoutSecs?: number;
}

/** How a run ended. */
export type RunOutcome =
  | { status: "returned"; result: string | Uint8Array | undefined }
  | { status: "deferred"; reason: string }
  | { status: "exited"; code: number }
  | { status: "failed"; message: string; traceback: string; value: unknown }
  | { status: "stopped"; reason: string };

/** The script's source and naming, read before the engine exists. */
interface LoadedScript {
  source: Uint8Array;
  chunkname: string;
  dir: string;
  name: string;
}

function loadScript(spec: RunSpec): LoadedScript | { error: string } {
  if ("path" in spec.script) {
    const path = resolve(spec.script.path);
    try {
      const info = Deno.statSync(path);
      if (info.isDirectory) return { error: `cannot read script ${spec.script.path}: it is a directory` };
      return {
        source: Deno.readFileSync(path),
        chunkname: "@" + displayPath(path),
        dir: dirname(path),
        name: basename(path),
      };
    } catch (e) {
      const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
      return { error: `cannot read script ${spec.script.path}: ${why}` };
    }
  }
  const src = spec.script.source;
  return {
    source: typeof src === "string" ? new TextEncoder().encode(src) : src,
    chunkname: "@" + spec.script.name,
    dir: resolve(spec.script.dir ?? spec.projectRoot),
    name: basename(spec.script.name),
  };
}

function failed(message: string): RunOutcome {
  return { status: "failed", message, traceback: "", value: message };
}

/** Runs one block to its outcome. */
export async function runBlock(spec: RunSpec): Promise<RunOutcome> {
  let projectRoot: string;
  try {
    projectRoot = Deno.realPathSync(spec.projectRoot);
    if (!Deno.statSync(projectRoot).isDirectory) {
      return failed(`project ${spec.projectRoot} is not a directory`);
    }
  } catch {
    return failed(`project directory ${spec.projectRoot} does not exist`);
  }
  const script = loadScript(spec);
  if ("error" in script) return failed(script.error);

  const stdout = spec.stdout ?? writeStdout;
  const stderr = spec.stderr ?? writeStderr;
  const log = Logger.fromEnv(script.name, stderr);
  const cleanups: ((ending: RunEnding) => void | Promise<void>)[] = [];
  let ending: RunEnding = "not-started";
  const procs = new ProcessGroups(spec.graceMs ?? graceFromEnv());
  const home = spec.home ?? agentBlockHome();
  const run: RunContext = {
    projectRoot,
    scriptDir: script.dir,
    scriptName: script.name,
    home,
    labels: spec.labels ?? {},
    stdout,
    stderr,
    log,
    procs,
    mcpTimeoutMs: (spec.mcpTimeoutSecs ?? 30) * 1000,
    onCleanup: (fn) => cleanups.push(fn),
  };

  const resolver = new ModuleResolver(
    libTiers(script.dir, projectRoot, home),
    spec.unseal ?? Deno.env.get("AGENT_BLOCK_UNSEAL") === "1",
    (m) => log.warn(m),
  );
  const violations = resolver.checkSeals();
  if (violations.length && !resolver.unseal) {
    const v = violations[0];
    return failed(
      `sealed module '${v.module}' cannot be replaced from the filesystem: found ${v.file} ` +
        `(read the embedded one with require("embedded.${v.module}"); AGENT_BLOCK_UNSEAL=1 downgrades this to a warning)`,
    );
  }
  for (const v of violations) {
    log.warn(`sealed module '${v.module}' is shadowed by ${v.file} (AGENT_BLOCK_UNSEAL=1)`);
  }

  let engine: LuaEngine | undefined;
  try {
    engine = await LuaEngine.create(spec.limits ?? {});
    engine.onWarning = (m) => log.warn(m);
    installCore(engine, run, resolver);
    for (const install of STANDARD_MODULES) install(engine, run);
    for (const install of spec.modules ?? []) install(engine, run);
    engine.exec(prelude, "=ab:prelude");
    engine.setGlobal("_SCRIPT_NAME", script.name);
    if (spec.prompt !== undefined) engine.setGlobal("_PROMPT", spec.prompt);
    if (spec.context !== undefined) engine.setGlobal("_CONTEXT", spec.context);
    for (const [k, v] of Object.entries(spec.globals ?? {})) engine.setGlobal(k, v);

    const compiled = engine.compile(stripShebang(script.source), script.chunkname);
    if (!compiled.ok) return failed(compiled.message);
    const r = await engine.runMain(compiled.ref, spec.signal);
    ending = r.kind === "returned" ? "returned" : r.kind;
    switch (r.kind) {
      case "returned":
        return { status: "returned", result: r.values[0] as string | Uint8Array | undefined };
      case "exit":
        return r.reason !== undefined && r.code === 75
          ? { status: "deferred", reason: r.reason }
          : { status: "exited", code: r.code };
      case "stopped":
        return { status: "stopped", reason: r.reason };
      default: {
        let message = r.message;
        if (/not enough memory/.test(message) && spec.limits?.memoryBytes) {
          message = `memory limit exceeded: the script needed more than ${
            Math.round(spec.limits.memoryBytes / 1048576)
          } MiB of Lua heap (${message})`;
        }
        return { status: "failed", message, traceback: r.traceback, value: r.value };
      }
    }
  } finally {
    // Cleanups first (newest first): an MCP disconnect closes a server's stdin and lets it exit
    // by itself; whatever is still running afterwards is ended with its process group.
    for (const fn of cleanups.reverse()) {
      try {
        await fn(ending);
      } catch (e) {
        log.warn(`cleanup failed: ${(e as Error).message}`);
      }
    }
    await procs.endAll();
    engine?.close();
  }
}

/** `AGENT_BLOCK_TASK_GRACE_MS`, default 1000. */
function graceFromEnv(): number {
  const raw = Deno.env.get("AGENT_BLOCK_TASK_GRACE_MS");
  const n = raw ? Number(raw) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : 1000;
}

/** Blanks a leading `#!` line (keeping line numbers), as the Lua standalone interpreter does. */
function stripShebang(src: Uint8Array): Uint8Array {
  if (src[0] !== 0x23 /* # */) return src;
  const out = src.slice();
  for (let i = 0; i < out.length && out[i] !== 0x0a; i++) out[i] = 0x20;
  out[0] = 0x2d;
  out[1] = 0x2d; // "--" keeps it a comment even when the line is short
  return out;
}
