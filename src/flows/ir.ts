/**
 * Flow nodes: the JSON form of the engine's flow IR 0.2, a strict parser, and its printer.
 *
 * Owns the seven node kinds (`step`, `seq`, `branch`, `loop`, `fanout`, `try`, `assign`) and the
 * newer spelling of `assign`, `let {at: "ctx.x", value}` (flow IR 0.3), which parses to the same
 * node. The printer emits `assign`, the spelling the engine's current release reads.
 *
 * Invariants: an unknown kind or field, a missing field, or a bad path is refused at parse time
 * with the JSON pointer where it is; `max` of a loop is a whole number ≥ 0; `join` is one of the
 * four modes.
 */
import { checkFields, type Expr, exprToJson, IrError, parseExpr, parsePathAt } from "./expr.ts";
import { isObject, type Json, type Path, typeName } from "./path.ts";

/** How fanout lanes are joined. */
export type Join = "all" | "any" | "race" | "all_settled";

/** A parsed flow node. */
export type FlowNode =
  | { kind: "step"; ref: string; in: Expr; out: Path }
  | { kind: "seq"; children: FlowNode[] }
  | { kind: "branch"; cond: Expr; then: FlowNode; else: FlowNode }
  | { kind: "loop"; counter: Path; cond: Expr; body: FlowNode; max: number }
  | { kind: "fanout"; items: Expr; bind: Path; body: FlowNode; join: Join; out: Path }
  | { kind: "try"; body: FlowNode; catch: FlowNode; err_at?: Path }
  | { kind: "assign"; at: Path; value: Expr };

/** The node kinds, with the fields each takes. */
const NODE_FIELDS: Record<string, string[]> = {
  step: ["ref", "in", "out"],
  seq: ["children"],
  branch: ["cond", "then", "else"],
  loop: ["counter", "cond", "body", "max"],
  fanout: ["items", "bind", "body", "join", "out"],
  try: ["body", "catch", "err_at"],
  assign: ["at", "value"],
  let: ["at", "value"],
};

/** The node kinds a flow may use (`let` is `assign`'s newer spelling). */
export const NODE_KINDS: readonly string[] = Object.keys(NODE_FIELDS);
const JOINS: readonly Join[] = ["all", "any", "race", "all_settled"];

/** A path given as a path expression (`{"op": "path", "at": "$.x"}`). */
function pathExpr(v: unknown, ptr: string): Path {
  const e = parseExpr(v, ptr);
  if (e.op !== "path") {
    throw new IrError(ptr, `expected a path expression {"op": "path", "at": ...}, got op '${e.op}'`);
  }
  return e.at;
}

/** Parses one node at JSON pointer `ptr`. */
export function parseNode(v: unknown, ptr = ""): FlowNode {
  if (!isObject(v)) throw new IrError(ptr || "/", `expected a flow node {"kind": ...}, got ${typeName(v)}`);
  const kind = v.kind;
  if (typeof kind !== "string" || !Object.hasOwn(NODE_FIELDS, kind)) {
    throw new IrError(
      `${ptr}/kind`,
      `unknown node kind ${JSON.stringify(kind)} (expected one of ${NODE_KINDS.join(", ")})`,
    );
  }
  checkFields(v, "kind", NODE_FIELDS[kind], ptr);
  for (const f of NODE_FIELDS[kind]) {
    if (f !== "err_at" && !Object.hasOwn(v, f)) {
      throw new IrError(ptr || "/", `node '${kind}' needs the field '${f}'`);
    }
  }
  const node = (f: string) => parseNode(v[f], `${ptr}/${f}`);
  switch (kind) {
    case "step":
      if (typeof v.ref !== "string" || v.ref === "") {
        throw new IrError(`${ptr}/ref`, `expected the agent's name`);
      }
      return { kind, ref: v.ref, in: parseExpr(v.in, `${ptr}/in`), out: pathExpr(v.out, `${ptr}/out`) };
    case "seq":
      if (!Array.isArray(v.children)) throw new IrError(`${ptr}/children`, `expected an array of nodes`);
      return { kind, children: v.children.map((c, i) => parseNode(c, `${ptr}/children/${i}`)) };
    case "branch":
      return { kind, cond: parseExpr(v.cond, `${ptr}/cond`), then: node("then"), else: node("else") };
    case "loop": {
      const max = v.max;
      if (typeof max !== "number" || !Number.isInteger(max) || max < 0 || max > 0xffffffff) {
        throw new IrError(`${ptr}/max`, `expected a whole number from 0 to 4294967295`);
      }
      return {
        kind,
        counter: pathExpr(v.counter, `${ptr}/counter`),
        cond: parseExpr(v.cond, `${ptr}/cond`),
        body: node("body"),
        max,
      };
    }
    case "fanout": {
      if (!JOINS.includes(v.join as Join)) {
        throw new IrError(
          `${ptr}/join`,
          `expected one of ${JOINS.join(", ")}, got ${JSON.stringify(v.join)}`,
        );
      }
      return {
        kind,
        items: parseExpr(v.items, `${ptr}/items`),
        bind: pathExpr(v.bind, `${ptr}/bind`),
        body: node("body"),
        join: v.join as Join,
        out: pathExpr(v.out, `${ptr}/out`),
      };
    }
    case "try": {
      const errAt = v.err_at === undefined || v.err_at === null
        ? undefined
        : pathExpr(v.err_at, `${ptr}/err_at`);
      return { kind, body: node("body"), catch: node("catch"), ...(errAt ? { err_at: errAt } : {}) };
    }
    case "let": {
      if (typeof v.at !== "string") throw new IrError(`${ptr}/at`, `expected a path string like "ctx.x"`);
      const at = v.at === "ctx"
        ? "$"
        : v.at.startsWith("ctx.") || v.at.startsWith("ctx[")
        ? "$" + v.at.slice(3)
        : v.at;
      return { kind: "assign", at: parsePathAt(at, `${ptr}/at`), value: parseExpr(v.value, `${ptr}/value`) };
    }
    default:
      return { kind: "assign", at: pathExpr(v.at, `${ptr}/at`), value: parseExpr(v.value, `${ptr}/value`) };
  }
}

const p = (path: Path): Json => ({ op: "path", at: path.text });

/** The JSON form of `n` (what `parseNode` reads back; `let` is printed as `assign`). */
export function nodeToJson(n: FlowNode): Json {
  switch (n.kind) {
    case "step":
      return { kind: n.kind, ref: n.ref, in: exprToJson(n.in), out: p(n.out) };
    case "seq":
      return { kind: n.kind, children: n.children.map(nodeToJson) };
    case "branch":
      return { kind: n.kind, cond: exprToJson(n.cond), then: nodeToJson(n.then), else: nodeToJson(n.else) };
    case "loop":
      return {
        kind: n.kind,
        counter: p(n.counter),
        cond: exprToJson(n.cond),
        body: nodeToJson(n.body),
        max: n.max,
      };
    case "fanout":
      return {
        kind: n.kind,
        items: exprToJson(n.items),
        bind: p(n.bind),
        body: nodeToJson(n.body),
        join: n.join,
        out: p(n.out),
      };
    case "try":
      return {
        kind: n.kind,
        body: nodeToJson(n.body),
        catch: nodeToJson(n.catch),
        ...(n.err_at ? { err_at: p(n.err_at) } : {}),
      };
    case "assign":
      return { kind: n.kind, at: p(n.at), value: exprToJson(n.value) };
  }
}
