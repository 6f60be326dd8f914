/**
 * Blueprints: reading a flow file (JSON or YAML; the Lua form is evaluated by the caller), linking
 * its `$file` / `$agent_md` references, and checking its fields.
 *
 * Owns the Blueprint shape agent-block runs: strict on the fields it implements (top level `id`,
 * `schema_version`, `flow`, `agents`, `metas`, `hints`, `strategy`, `metadata`,
 * `default_agent_kind`, `default_init_ctx`, `default_agent_ctx`; per agent `name`, `kind`, `spec`,
 * `profile`, `meta`, `verdict`, `lints`), while the seed 004 engine's own fields (operators,
 * runners, audits, projections, …) are accepted with a warning, so one file runs on both engines.
 *
 * The linker replaces `{"$file": p}` with the file's text and `{"$agent_md": p, …}` with the agent
 * the file declares, sibling keys merged over it (per top-level key). Paths are relative (an
 * absolute path or a `..` is refused) and looked up, first hit wins, in: the Blueprint's
 * directory, its `blueprint_ref_includes`, the `--include` directories, the project's `lib`.
 *
 * Invariant: every refusal is a `BlueprintError` naming the file and the JSON pointer (or the
 * line, for a syntax error) and what was expected.
 */
import { parse as parseYaml, YAMLParseError } from "yaml";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parseAgentMd } from "./agent_md.ts";
import { BlueprintError } from "./errors.ts";
import { IrError } from "./expr.ts";
import { type FlowNode, parseNode } from "./ir.ts";
import { isObject, type Json, typeName } from "./path.ts";

/** A verdict contract: which channel carries the verdict and its allowed values. */
export interface VerdictContract {
  /** `body`: the step's whole value is the verdict; `part`: a staged part named `verdict`. */
  channel: "body" | "part";
  /** The values the verdict may take. */
  values: Json[];
}

/** One agent of a Blueprint, as declared (after linking). */
export interface AgentDef {
  /** What `step.ref` names. */
  name: string;
  /** `block`, `agent_block`, `lua` or `fn` (absent: the Blueprint's `default_agent_kind`). */
  kind?: string;
  /** Per-kind settings. */
  spec: Record<string, Json>;
  /** `system_prompt`, `model`, `tools`, … */
  profile: Record<string, Json>;
  /** Free-form metadata (`ctx` is the agent's `_AGENT_CTX`). */
  meta?: Record<string, Json>;
  /** The agent's verdict contract. */
  verdict?: VerdictContract;
  /** Lint levels by lint name. */
  lints?: Record<string, Json>;
  /** Where the agent is in the document (`/agents/2`). */
  pointer: string;
}

/** A read Blueprint. */
export interface Blueprint {
  /** The Blueprint's id. */
  id: string;
  /** The schema version it was written for. */
  schema_version: string;
  /** The flow. */
  flow: FlowNode;
  /** The agents. */
  agents: AgentDef[];
  /** Named context bundles (kept, unused by agent-block). */
  metas: Json[];
  /** Free-form knobs: `global.max_parallel` is the fanout lane cap. */
  hints: { global: Record<string, Json>; per_agent: Record<string, Json> };
  /** Compile strictness. */
  strategy: { strict_refs: boolean; strict_kind: boolean };
  /** `description`, `strict_verdict_handling`, … */
  metadata: Record<string, Json>;
  /** The kind of an agent that names none. */
  default_agent_kind?: string;
  /** Merged under the run's initial context. */
  default_init_ctx?: Json;
  /** Every agent's `_AGENT_CTX` (an agent's `meta.ctx` is merged over it). */
  default_agent_ctx?: Json;
  /** The file it was read from (absolute), or a name for an in-memory Blueprint. */
  file: string;
  /** How messages name it (the path as the user gave it; default `file`). */
  name: string;
  /** The directory its relative paths resolve against. */
  dir: string;
  /** Warnings: engine-only fields that agent-block ignores. */
  warnings: string[];
}

/** Where a Blueprint's references are looked up. */
export interface ReadOptions {
  /** `--include` directories (absolute), after the Blueprint's own directory. */
  includes?: readonly string[];
  /** The project root: its `lib/` is the last tier. */
  projectRoot?: string;
}

const TOP_FIELDS = [
  "id",
  "schema_version",
  "flow",
  "agents",
  "metas",
  "hints",
  "strategy",
  "metadata",
  "default_agent_kind",
  "default_init_ctx",
  "default_agent_ctx",
];
/** Fields of the seed 004 engine agent-block accepts and ignores (with a warning). */
const ENGINE_TOP_FIELDS = [
  "operators",
  "runners",
  "default_runner",
  "audits",
  "projection_placement",
  "check_policy",
  "subprocesses",
  "spawner_hints",
  "default_operator_kind",
  "default_context_policy",
  "degradation_policy",
  "blueprint_ref_includes",
];
const AGENT_FIELDS = ["name", "kind", "spec", "profile", "meta", "verdict", "lints"];
const ENGINE_AGENT_FIELDS = ["runner", "runner_ref"];

/** The top-level fields agent-block implements, and the engine's it accepts with a warning. */
export const BLUEPRINT_FIELDS = {
  top: TOP_FIELDS,
  engineTop: ENGINE_TOP_FIELDS,
  agent: AGENT_FIELDS,
  engineAgent: ENGINE_AGENT_FIELDS,
};

/** Parses a Blueprint file's text by its extension (`.json`, `.yaml`, `.yml`). */
export function parseBlueprintText(text: string, file: string): unknown {
  if (/\.ya?ml$/i.test(file)) {
    try {
      return parseYaml(text);
    } catch (e) {
      if (e instanceof YAMLParseError && e.linePos) {
        const { line, col } = e.linePos[0];
        throw new BlueprintError(`${file}:${line}:${col}: not valid YAML: ${e.message.split("\n")[0]}`);
      }
      throw new BlueprintError(`${file}: not valid YAML: ${(e as Error).message}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    const m = /position (\d+)/.exec(msg);
    const where = m ? lineCol(text, Number(m[1])) : "";
    throw new BlueprintError(`${file}${where}: not valid JSON: ${msg}`);
  }
}

function lineCol(text: string, pos: number): string {
  const before = text.slice(0, pos).split("\n");
  return `:${before.length}:${before[before.length - 1].length + 1}`;
}

/** Reads, links and checks the Blueprint at `file` (absolute; JSON or YAML; `name` is how messages name it). */
export async function readBlueprint(
  file: string,
  options: ReadOptions & { name?: string } = {},
): Promise<Blueprint> {
  if (!isAbsolute(file)) throw new TypeError(`readBlueprint takes an absolute path, got '${file}'`);
  const name = options.name ?? file;
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
    throw new BlueprintError(`cannot read Blueprint ${name}: ${why}`);
  }
  return parseBlueprint(parseBlueprintText(text, name), { ...options, file, name });
}

/** Links and checks a Blueprint document (`file` is where it lives: its directory anchors references; `name` names it in messages). */
export function parseBlueprint(
  doc: unknown,
  options: ReadOptions & { file: string; dir?: string; name?: string },
): Blueprint {
  const file = options.name ?? options.file;
  const dir = options.dir ?? dirname(options.file);
  const at = (ptr: string, why: string) => new BlueprintError(`${file}: at ${ptr || "/"}: ${why}`);
  if (!isObject(doc)) throw at("", `a Blueprint is an object, got ${typeName(doc)}`);
  const warnings: string[] = [];
  for (const k of Object.keys(doc)) {
    if (ENGINE_TOP_FIELDS.includes(k)) {
      warnings.push(`${file}: /${k} is a field of the seed 004 engine; agent-block ignores it`);
    } else if (!TOP_FIELDS.includes(k)) {
      throw at(`/${k}`, `unknown field '${k}' (expected ${TOP_FIELDS.join(", ")})`);
    }
  }
  const includes = Array.isArray(doc.blueprint_ref_includes)
    ? doc.blueprint_ref_includes.filter((d): d is string => typeof d === "string").map((d) => resolve(dir, d))
    : [];
  const tiers = [
    dir,
    ...includes,
    ...(options.includes ?? []),
    ...(options.projectRoot ? [join(options.projectRoot, "lib")] : []),
  ];
  const linked = link(doc, "", tiers, file) as Record<string, Json>;
  if (typeof linked.id !== "string" || linked.id === "") {
    throw at("/id", "expected the Blueprint's id (a string)");
  }
  if (linked.schema_version !== undefined && typeof linked.schema_version !== "string") {
    throw at("/schema_version", 'expected a version string like "0.1.0"');
  }
  if (!Object.hasOwn(linked, "flow")) throw at("/flow", "a Blueprint needs a flow");
  let flow: FlowNode;
  try {
    flow = parseNode(linked.flow, "/flow");
  } catch (e) {
    if (e instanceof IrError) throw at(e.pointer, e.message);
    throw e;
  }
  const obj = (k: string): Record<string, Json> => {
    const v = linked[k];
    if (v === undefined || v === null) return {};
    if (!isObject(v)) throw at(`/${k}`, `expected an object, got ${typeName(v)}`);
    return v;
  };
  const hintsRaw = obj("hints");
  const hints = {
    global: isObject(hintsRaw.global) ? hintsRaw.global : {},
    per_agent: isObject(hintsRaw.per_agent) ? hintsRaw.per_agent : {},
  };
  const mp = hints.global.max_parallel;
  if (mp !== undefined && (typeof mp !== "number" || !Number.isInteger(mp) || mp < 1)) {
    throw at("/hints/global/max_parallel", `expected a whole number ≥ 1, got ${JSON.stringify(mp)}`);
  }
  const strategyRaw = obj("strategy");
  const strategy = {
    strict_refs: strategyRaw.strict_refs !== false,
    strict_kind: strategyRaw.strict_kind !== false,
  };
  const agentsRaw = linked.agents ?? [];
  if (!Array.isArray(agentsRaw)) {
    throw at("/agents", `expected an array of agents, got ${typeName(agentsRaw)}`);
  }
  const agents = agentsRaw.map((a, i) => parseAgent(a, `/agents/${i}`, at, warnings, file));
  const metas = linked.metas ?? [];
  if (!Array.isArray(metas)) throw at("/metas", "expected an array");
  if (linked.default_agent_kind !== undefined && typeof linked.default_agent_kind !== "string") {
    throw at("/default_agent_kind", "expected a kind name");
  }
  return {
    id: linked.id,
    schema_version: (linked.schema_version as string | undefined) ?? "0.1.0",
    flow,
    agents,
    metas,
    hints,
    strategy,
    metadata: obj("metadata"),
    ...(linked.default_agent_kind !== undefined
      ? { default_agent_kind: linked.default_agent_kind as string }
      : {}),
    ...(linked.default_init_ctx !== undefined ? { default_init_ctx: linked.default_init_ctx } : {}),
    ...(linked.default_agent_ctx !== undefined ? { default_agent_ctx: linked.default_agent_ctx } : {}),
    file: options.file,
    name: file,
    dir,
    warnings,
  };
}

function parseAgent(
  a: Json,
  ptr: string,
  at: (ptr: string, why: string) => BlueprintError,
  warnings: string[],
  file: string,
): AgentDef {
  if (!isObject(a)) throw at(ptr, `an agent is an object, got ${typeName(a)}`);
  for (const k of Object.keys(a)) {
    if (ENGINE_AGENT_FIELDS.includes(k)) {
      warnings.push(`${file}: ${ptr}/${k} is a field of the seed 004 engine; agent-block ignores it`);
    } else if (!AGENT_FIELDS.includes(k)) {
      throw at(`${ptr}/${k}`, `unknown agent field '${k}' (expected ${AGENT_FIELDS.join(", ")})`);
    }
  }
  if (typeof a.name !== "string" || a.name === "") {
    throw at(`${ptr}/name`, "an agent needs a name (a string)");
  }
  if (a.kind !== undefined && typeof a.kind !== "string") throw at(`${ptr}/kind`, "expected a kind name");
  for (const k of ["spec", "profile", "meta", "lints"]) {
    if (a[k] !== undefined && a[k] !== null && !isObject(a[k])) {
      throw at(`${ptr}/${k}`, `expected an object, got ${typeName(a[k])}`);
    }
  }
  let verdict: VerdictContract | undefined;
  if (a.verdict !== undefined && a.verdict !== null) {
    const v = a.verdict;
    if (!isObject(v) || (v.channel !== "body" && v.channel !== "part") || !Array.isArray(v.values)) {
      throw at(`${ptr}/verdict`, `expected {"channel": "body" | "part", "values": [...]}`);
    }
    for (const k of Object.keys(v)) {
      if (k !== "channel" && k !== "values") throw at(`${ptr}/verdict/${k}`, `unknown field '${k}'`);
    }
    verdict = { channel: v.channel, values: v.values };
  }
  return {
    name: a.name,
    ...(a.kind !== undefined ? { kind: a.kind as string } : {}),
    spec: (a.spec as Record<string, Json>) ?? {},
    profile: (a.profile as Record<string, Json>) ?? {},
    ...(a.meta ? { meta: a.meta as Record<string, Json> } : {}),
    ...(verdict ? { verdict } : {}),
    ...(a.lints ? { lints: a.lints as Record<string, Json> } : {}),
    pointer: ptr,
  };
}

/** Finds relative `p` in `tiers` (first hit); refuses absolute paths and `..`. */
function lookup(p: Json, ptr: string, tiers: string[], file: string): string {
  if (typeof p !== "string" || p === "") {
    throw new BlueprintError(`${file}: at ${ptr}: expected a relative path`);
  }
  if (isAbsolute(p) || /^[a-zA-Z]:[\\/]/.test(p)) {
    throw new BlueprintError(`${file}: at ${ptr}: '${p}' is absolute; references are relative paths`);
  }
  if (p.split(/[\\/]/).includes("..")) {
    throw new BlueprintError(`${file}: at ${ptr}: '${p}' holds '..'; references stay below their directory`);
  }
  for (const t of tiers) {
    const full = join(t, p);
    try {
      if (Deno.statSync(full).isFile) return full;
    } catch { /* next tier */ }
  }
  throw new BlueprintError(
    `${file}: at ${ptr}: '${p}' not found; looked in ${tiers.map((t) => join(t, p)).join(", ")}`,
  );
}

function link(v: Json, ptr: string, tiers: string[], file: string): Json {
  if (Array.isArray(v)) return v.map((x, i) => link(x, `${ptr}/${i}`, tiers, file));
  if (!isObject(v)) return v;
  if (Object.hasOwn(v, "$file")) {
    if (Object.keys(v).length !== 1) {
      throw new BlueprintError(`${file}: at ${ptr}: {"$file": ...} takes no other keys`);
    }
    return Deno.readTextFileSync(lookup(v.$file, `${ptr}/$file`, tiers, file));
  }
  if (Object.hasOwn(v, "$agent_md")) {
    const path = lookup(v.$agent_md, `${ptr}/$agent_md`, tiers, file);
    const md = parseAgentMd(Deno.readTextFileSync(path), path);
    const out: Record<string, Json> = {
      name: md.name,
      profile: md.profile,
      ...(md.lints ? { lints: md.lints } : {}),
    };
    for (const [k, x] of Object.entries(v)) {
      if (k !== "$agent_md") out[k] = link(x, `${ptr}/${k}`, tiers, file);
    }
    return out;
  }
  const out: Record<string, Json> = {};
  for (const [k, x] of Object.entries(v)) out[k] = link(x, `${ptr}/${k}`, tiers, file);
  return out;
}
