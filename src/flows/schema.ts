/**
 * The JSON Schema of the Blueprints agent-block runs (`agent-block flow schema`).
 *
 * Owns the schema: the fields agent-block implements, strictly, with the flow IR's nodes and
 * expressions spelled out (the engine's own schema leaves `flow` opaque); the seed 004 engine's
 * fields are allowed (agent-block warns and ignores them).
 *
 * Invariant: generated from the same field lists the reader checks (`BLUEPRINT_FIELDS`,
 * `NODE_KINDS`, `EXPR_OPS`), so the schema and the reader cannot drift apart.
 */
import { BLUEPRINT_FIELDS } from "./blueprint.ts";
import { EXPR_OPS } from "./expr.ts";
import type { Json } from "./path.ts";

const path: Json = { type: "string", pattern: "^\\$" };
const pathExpr: Json = {
  type: "object",
  required: ["op", "at"],
  properties: { op: { const: "path" }, at: path },
  additionalProperties: false,
};
const ref = (name: string): Json => ({ $ref: `#/$defs/${name}` });

const EXPR_FIELDS: Record<string, Record<string, Json>> = {
  path: { at: path },
  lit: { value: {} },
  and: { args: { type: "array", items: ref("expr") } },
  or: { args: { type: "array", items: ref("expr") } },
  not: { arg: ref("expr") },
  exists: { arg: ref("expr") },
  len: { arg: ref("expr") },
  in: { needle: ref("expr"), haystack: ref("expr") },
  call_extern: { ref: { type: "string" }, args: { type: "array", items: ref("expr") } },
};

function exprSchema(op: string): Json {
  const fields = EXPR_FIELDS[op] ?? { lhs: ref("expr"), rhs: ref("expr") };
  return {
    type: "object",
    required: ["op", ...Object.keys(fields)],
    properties: { op: { const: op }, ...fields },
    additionalProperties: false,
  };
}

const NODE: Record<string, [Record<string, Json>, string[]]> = {
  step: [{ ref: { type: "string", minLength: 1 }, in: ref("expr"), out: pathExpr }, ["ref", "in", "out"]],
  seq: [{ children: { type: "array", items: ref("node") } }, ["children"]],
  branch: [{ cond: ref("expr"), then: ref("node"), else: ref("node") }, ["cond", "then", "else"]],
  loop: [{
    counter: pathExpr,
    cond: ref("expr"),
    body: ref("node"),
    max: { type: "integer", minimum: 0, maximum: 4294967295 },
  }, ["counter", "cond", "body", "max"]],
  fanout: [{
    items: ref("expr"),
    bind: pathExpr,
    body: ref("node"),
    join: { enum: ["all", "any", "race", "all_settled"] },
    out: pathExpr,
  }, ["items", "bind", "body", "join", "out"]],
  try: [{ body: ref("node"), catch: ref("node"), err_at: { anyOf: [pathExpr, { type: "null" }] } }, [
    "body",
    "catch",
  ]],
  assign: [{ at: pathExpr, value: ref("expr") }, ["at", "value"]],
  let: [{ at: { type: "string", pattern: "^(ctx|\\$)" }, value: ref("expr") }, ["at", "value"]],
};

/** The JSON Schema (draft 2020-12) of a Blueprint. */
export function blueprintSchema(): Json {
  const top: Record<string, Json> = {
    id: { type: "string", minLength: 1 },
    schema_version: { type: "string" },
    flow: ref("node"),
    agents: { type: "array", items: ref("agent") },
    metas: { type: "array" },
    hints: {
      type: "object",
      properties: {
        global: { type: "object", properties: { max_parallel: { type: "integer", minimum: 1 } } },
        per_agent: { type: "object" },
      },
    },
    strategy: {
      type: "object",
      properties: { strict_refs: { type: "boolean" }, strict_kind: { type: "boolean" } },
    },
    metadata: {
      type: "object",
      properties: { strict_verdict_handling: { type: "boolean" }, description: { type: "string" } },
    },
    default_agent_kind: { enum: ["block", "agent_block", "lua", "fn"] },
    default_init_ctx: {},
    default_agent_ctx: {},
  };
  for (const k of BLUEPRINT_FIELDS.engineTop) {
    top[k] = { description: "a field of the seed 004 engine: accepted, ignored with a warning" };
  }
  const agent: Record<string, Json> = {
    name: { type: "string", minLength: 1 },
    kind: { enum: ["block", "agent_block", "lua", "fn"] },
    spec: {
      type: "object",
      properties: {
        block: { type: "string", description: "block: a registered block's name" },
        script: { type: "string", description: "block: a Lua file, relative to the Blueprint" },
        script_path: { type: "string", description: "agent_block: script mode" },
        mcp_servers: {
          type: "array",
          description: "agent_block prompt mode: servers, granted by profile.tools mcp__<server>__*",
        },
        agent_options: { type: "object", description: "agent_block prompt mode: further agent.run options" },
        source: { type: "string", description: "lua: inline source" },
        fn_id: { type: "string", description: "fn: the registered function (default: the agent's name)" },
        on_defer: {
          enum: ["skip", "wait"],
          description: "what job.defer means: skip the step, or wait for an answer",
        },
      },
    },
    profile: { type: "object" },
    meta: { type: "object" },
    verdict: {
      type: "object",
      required: ["channel", "values"],
      properties: { channel: { enum: ["body", "part"] }, values: { type: "array" } },
      additionalProperties: false,
    },
    lints: { type: "object" },
  };
  for (const k of BLUEPRINT_FIELDS.engineAgent) {
    agent[k] = { description: "a field of the seed 004 engine: accepted, ignored with a warning" };
  }
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://agent-block.dev/schemas/flow-blueprint.json",
    title: "agent-block flow Blueprint",
    type: "object",
    required: ["id", "flow"],
    properties: top,
    additionalProperties: false,
    $defs: {
      node: { oneOf: Object.keys(NODE).map((k) => ref(`node_${k}`)) },
      expr: { oneOf: EXPR_OPS.map((op) => ref(`expr_${op}`)) },
      agent: {
        oneOf: [
          { type: "object", required: ["name"], properties: agent, additionalProperties: false },
          { type: "object", required: ["$agent_md"], properties: { $agent_md: { type: "string" } } },
        ],
      },
      ...Object.fromEntries(
        Object.entries(NODE).map(([k, [props, req]]) => [`node_${k}`, {
          type: "object",
          required: ["kind", ...req],
          properties: { kind: { const: k }, ...props },
          additionalProperties: false,
        }]),
      ),
      ...Object.fromEntries(EXPR_OPS.map((op) => [`expr_${op}`, exprSchema(op)])),
    },
  };
}
