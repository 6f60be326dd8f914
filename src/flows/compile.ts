/**
 * The flow compiler: from a read Blueprint to agents ready to dispatch, with the checks that
 * catch a broken flow before anything runs.
 *
 * Owns agent resolution (kind, what runs, the agent's digest), the reference and kind checks
 * (`strategy.strict_refs`, `strategy.strict_kind`, duplicate names, unsupported kinds), the
 * verdict-contract checks and the lints for the flow's known traps (`lint.ts`).
 *
 * Agent kinds:
 * - `block`: `spec.block` names a registered block (as `-b NAME`), or `spec.script` a Lua file
 *   relative to the Blueprint;
 * - `agent_block` (seed 002): `spec.script_path` runs that script; without it, prompt mode, one
 *   `agent.run` over `_PROMPT` with `_CONTEXT` as the system prompt, `profile.model`, the
 *   `spec.mcp_servers` whose tools `profile.tools` grants (`mcp__<server>__*`), and the further
 *   `agent.run` options of `spec.agent_options` (`provider`, `max_iterations`, …);
 * - `lua`: inline `spec.source`;
 * - `fn`: a TypeScript function an embedder registered (`spec.fn_id`, default the agent's name).
 * `operator` and `subprocess` (engine kinds) are compile errors. An agent without a kind takes
 * `default_agent_kind`, else `block` when it has `spec.block`/`spec.script`, else `agent_block`.
 *
 * Invariant: an agent's digest is the sha256 of its resolved definition and of the source it
 * runs (its block file, its `agent.md` body through `profile.system_prompt`), so editing either
 * changes the digest and a resumed run dispatches that agent's steps again.
 */
import { resolve } from "node:path";
import { stringifyJson } from "../json/codec.ts";
import { blockRoots, findBlock } from "../blocks/registry.ts";
import type { AgentDef, Blueprint } from "./blueprint.ts";
import { BlueprintError } from "./errors.ts";
import type { Json } from "./path.ts";
import { lintFlow } from "./lint.ts";
import { sha256Hex } from "./hash.ts";

/** What a step of an agent runs. */
export type AgentRun =
  | { type: "script"; script: { path: string } | { source: string; name: string; dir: string } }
  | { type: "fn"; fnId: string };

/** An agent ready to dispatch. */
export interface CompiledAgent {
  /** Its declaration. */
  def: AgentDef;
  /** Its resolved kind. */
  kind: "block" | "agent_block" | "lua" | "fn";
  /** What a step runs. */
  run: AgentRun;
  /** `_CONTEXT`: the system prompt (`profile.system_prompt`). */
  context?: string;
  /** `_AGENT_CTX`: `default_agent_ctx` with `meta.ctx` merged over it. */
  agentCtx?: Json;
  /** What `job.defer` means: `skip` (default) or `wait` (`spec.on_defer`). */
  onDefer: "skip" | "wait";
  /** sha256 of the definition and the source it runs. */
  digest: string;
}

/** A compiled flow: the Blueprint, its agents and what the checks found. */
export interface CompiledFlow {
  /** The Blueprint. */
  blueprint: Blueprint;
  /** Agents by name. */
  agents: Map<string, CompiledAgent>;
  /** Warnings (ignored engine fields, lints). */
  warnings: string[];
  /** Fanout lanes at once (`hints.global.max_parallel`, default 4). */
  maxParallel: number;
}

/** What the compiler needs from outside the Blueprint. */
export interface CompileOptions {
  /** The project root (block lookup). */
  projectRoot: string;
  /** `$AGENT_BLOCK_HOME` (the user tier of blocks). */
  home: string;
  /** Names of the functions an embedder registered (absent: `fn` agents are not checked). */
  fns?: ReadonlySet<string>;
}

const KINDS = ["block", "agent_block", "lua", "fn"] as const;
const ENGINE_KINDS = ["operator", "subprocess", "rust_fn"];

/** The prompt-mode source of an `agent_block` agent. */
const PROMPT_MODE = `local config = _FLOW_AGENT or {}
local opts = {}
for k, v in pairs(config.agent_options or {}) do opts[k] = v end
opts.prompt, opts.system = _PROMPT, _CONTEXT
if config.model then opts.model = config.model end
if config.mcp_servers and #config.mcp_servers > 0 then opts.mcp_servers = config.mcp_servers end
local r = require("agent").run(opts)
if not r.ok then error(r.error or "agent.run failed", 0) end
return r.content
`;

/** Compiles `bp`: resolves its agents and runs every check; throws a `BlueprintError` on an error. */
export function compileFlow(bp: Blueprint, options: CompileOptions): CompiledFlow {
  const errors: string[] = [];
  const warnings = [...bp.warnings];
  const agents = new Map<string, CompiledAgent>();
  for (const def of bp.agents) {
    if (agents.has(def.name)) {
      errors.push(`${bp.name}: at ${def.pointer}/name: duplicate agent name '${def.name}'`);
      continue;
    }
    try {
      const a = resolveAgent(def, bp, options);
      if (a) agents.set(def.name, a);
      else {warnings.push(
          `${bp.name}: at ${def.pointer}/kind: unknown kind '${def.kind}'; its steps will fail`,
        );}
    } catch (e) {
      if (e instanceof BlueprintError) errors.push(e.message);
      else throw e;
    }
  }
  const lint = lintFlow(bp, agents);
  errors.push(...lint.errors);
  warnings.push(...lint.warnings);
  if (errors.length > 0) throw new BlueprintError(errors.join("\n"));
  return {
    blueprint: bp,
    agents,
    warnings,
    maxParallel: (bp.hints.global.max_parallel as number | undefined) ?? 4,
  };
}

function resolveAgent(def: AgentDef, bp: Blueprint, o: CompileOptions): CompiledAgent | undefined {
  const at = (field: string, why: string) =>
    new BlueprintError(`${bp.name}: at ${def.pointer}${field}: ${why}`);
  const spec = def.spec;
  const kind = def.kind ?? bp.default_agent_kind ??
    (spec.block !== undefined || spec.script !== undefined ? "block" : "agent_block");
  if (ENGINE_KINDS.includes(kind)) {
    throw at(
      "/kind",
      `agent kind '${kind}' is not supported by agent-block (use block, agent_block, lua or fn)`,
    );
  }
  if (!(KINDS as readonly string[]).includes(kind)) {
    if (bp.strategy.strict_kind) {
      throw at("/kind", `unknown agent kind '${kind}' (expected ${KINDS.join(", ")})`);
    }
    return undefined;
  }
  const str = (k: string): string | undefined => {
    const v = spec[k];
    if (v === undefined) return undefined;
    if (typeof v !== "string" || v === "") throw at(`/spec/${k}`, "expected a non-empty string");
    return v;
  };
  const onDefer = spec.on_defer ?? "skip";
  if (onDefer !== "skip" && onDefer !== "wait") throw at("/spec/on_defer", `expected "skip" or "wait"`);
  let run: AgentRun;
  let source = "";
  const file = (rel: string, field: string) => {
    const path = resolve(bp.dir, rel);
    try {
      source = Deno.readTextFileSync(path);
    } catch (e) {
      throw at(
        field,
        `cannot read ${rel}: ${e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message}`,
      );
    }
    return { type: "script" as const, script: { path } };
  };
  const extra: Record<string, Json> = {};
  switch (kind) {
    case "block": {
      const name = str("block");
      const script = str("script");
      if (name !== undefined) {
        const found = findBlock(blockRoots(o.projectRoot, o.home), name);
        if (!found) {
          throw at(
            "/spec/block",
            `no block named '${name}' is registered (project blocks/, .agent-block/blocks/, ~/.agent-block/blocks/)`,
          );
        }
        source = Deno.readTextFileSync(found.path);
        run = { type: "script", script: { path: found.path } };
      } else if (script !== undefined) run = file(script, "/spec/script");
      else {throw at(
          "/spec",
          `a block agent needs spec.block (a registered block's name) or spec.script (a Lua file)`,
        );}
      break;
    }
    case "agent_block": {
      const path = str("script_path");
      const tools = Array.isArray(def.profile.tools)
        ? def.profile.tools.filter((t): t is string => typeof t === "string")
        : [];
      if (path !== undefined) {
        if (tools.some((t) => t.startsWith("mcp__"))) {
          throw at(
            "/profile/tools",
            "a script-mode agent_block agent cannot be granted mcp__ tools (its script connects its own servers)",
          );
        }
        run = file(path, "/spec/script_path");
        break;
      }
      const servers = Array.isArray(spec.mcp_servers) ? spec.mcp_servers : [];
      const granted = new Set(tools.filter((t) => t.startsWith("mcp__")).map((t) => t.split("__")[1]));
      extra.mcp_servers = servers.filter((s) =>
        typeof s === "object" && s !== null && granted.has(String((s as { name?: Json }).name))
      );
      if (typeof def.profile.model === "string") extra.model = def.profile.model;
      if (spec.agent_options !== undefined) {
        if (
          typeof spec.agent_options !== "object" || spec.agent_options === null ||
          Array.isArray(spec.agent_options)
        ) {
          throw at(
            "/spec/agent_options",
            "expected an object of agent.run options (provider, max_iterations, ...)",
          );
        }
        extra.agent_options = spec.agent_options;
      }
      source = PROMPT_MODE;
      run = { type: "script", script: { source: PROMPT_MODE, name: `${def.name}.agent.lua`, dir: bp.dir } };
      break;
    }
    case "lua": {
      const src = str("source");
      if (src === undefined) throw at("/spec/source", "a lua agent needs spec.source (inline Lua)");
      source = src;
      run = { type: "script", script: { source: src, name: `${def.name}.lua`, dir: bp.dir } };
      break;
    }
    default: {
      const fnId = str("fn_id") ?? def.name;
      if (o.fns && !o.fns.has(fnId)) {
        throw at("/spec/fn_id", `no function '${fnId}' is registered (runFlow's fns)`);
      }
      run = { type: "fn", fnId };
    }
  }
  const context = typeof def.profile.system_prompt === "string" ? def.profile.system_prompt : undefined;
  const metaCtx = def.meta?.ctx;
  const base = bp.default_agent_ctx;
  const agentCtx = isPlainObject(base) && isPlainObject(metaCtx) ? { ...base, ...metaCtx } : metaCtx ?? base;
  const { pointer: _p, ...decl } = def;
  const digest = sha256Hex(stringifyJson({ decl, kind, extra }) + "\n" + source);
  return {
    def,
    kind: kind as CompiledAgent["kind"],
    run,
    ...(context !== undefined ? { context } : {}),
    ...(agentCtx !== undefined ? { agentCtx } : {}),
    onDefer,
    digest,
    ...(Object.keys(extra).length > 0 ? { settings: extra } : {}),
  } as CompiledAgent;
}

const isPlainObject = (v: unknown): v is Record<string, Json> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The prompt-mode settings of an `agent_block` agent (`_FLOW_AGENT`), when it has any. */
export function agentSettings(a: CompiledAgent): Record<string, Json> | undefined {
  return (a as CompiledAgent & { settings?: Record<string, Json> }).settings;
}
