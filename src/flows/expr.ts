/**
 * Flow expressions: their JSON form, a strict parser, and the evaluator.
 *
 * Owns the 20 ops of the engine's flow IR 0.2 (`path`, `lit`, `eq`, `ne`, `lt`, `lte`, `gt`,
 * `gte`, `not`, `and`, `or`, `exists`, `add`, `sub`, `mul`, `div`, `mod`, `len`, `in`,
 * `call_extern`) and their exact semantics.
 *
 * Invariants:
 * - Parsing refuses an unknown op or field and a bad path, naming the JSON pointer.
 * - Truthiness: only `null` and `false` are falsy; `and`/`or` short-circuit; empty `and` is
 *   true, empty `or` false. Equality is deep, numbers compared as f64.
 * - `lt`/`lte`/`gt`/`gte` take two numbers or two strings (compared by UTF-16 code units, which
 *   orders like the bytes of UTF-8 outside the surrogate range); anything else is `TypeError`.
 * - Arithmetic is f64; dividing or `mod` by zero is `ArithError`; `mod` takes the sign of the
 *   right side, as Lua's `%` does.
 * - `exists` is the one op that turns a missing path into a value (`false`).
 * - Evaluation never writes to the context.
 */
import { FlowError } from "./errors.ts";
import { isObject, type Json, parsePath, type Path, readPath, typeName } from "./path.ts";

/** A parsed expression. */
export type Expr =
  | { op: "path"; at: Path }
  | { op: "lit"; value: Json }
  | {
    op: "eq" | "ne" | "lt" | "lte" | "gt" | "gte" | "add" | "sub" | "mul" | "div" | "mod";
    lhs: Expr;
    rhs: Expr;
  }
  | { op: "not" | "exists" | "len"; arg: Expr }
  | { op: "and" | "or"; args: Expr[] }
  | { op: "in"; needle: Expr; haystack: Expr }
  | { op: "call_extern"; ref: string; args: Expr[] };

/** Pure host functions a flow may call with `call_extern`. */
export type Externs = Readonly<Record<string, (args: Json[]) => Json | undefined>>;

const BINARY = new Set(["eq", "ne", "lt", "lte", "gt", "gte", "add", "sub", "mul", "div", "mod"]);
const UNARY = new Set(["not", "exists", "len"]);

/** The fields each op takes (besides `op`). */
const FIELDS: Record<string, string[]> = {
  path: ["at"],
  lit: ["value"],
  and: ["args"],
  or: ["args"],
  in: ["needle", "haystack"],
  call_extern: ["ref", "args"],
};
for (const op of BINARY) FIELDS[op] = ["lhs", "rhs"];
for (const op of UNARY) FIELDS[op] = ["arg"];

/** The expression ops, in a fixed order. */
export const EXPR_OPS: readonly string[] = Object.keys(FIELDS);

/** A parse failure at a JSON pointer (turned into a `BlueprintError` by the Blueprint reader). */
export class IrError extends Error {
  /**
   * @param pointer where in the document (`/flow/children/0/in`)
   * @param message what was expected
   */
  constructor(readonly pointer: string, message: string) {
    super(message);
    this.name = "IrError";
  }
}

/** Checks `obj` has exactly the fields `allowed` (plus the tag). */
export function checkFields(obj: Record<string, unknown>, tag: string, allowed: string[], ptr: string): void {
  for (const k of Object.keys(obj)) {
    if (k !== tag && !allowed.includes(k)) {
      throw new IrError(`${ptr}/${k}`, `unknown field '${k}' (expected ${allowed.join(", ") || "none"})`);
    }
  }
}

/** Parses a path field (a string) at `ptr`. */
export function parsePathAt(v: unknown, ptr: string): Path {
  if (typeof v !== "string") throw new IrError(ptr, `expected a path string, got ${typeName(v)}`);
  try {
    return parsePath(v);
  } catch (e) {
    throw new IrError(ptr, (e as Error).message);
  }
}

/** Parses one expression at JSON pointer `ptr`. */
export function parseExpr(v: unknown, ptr: string): Expr {
  if (!isObject(v)) throw new IrError(ptr, `expected an expression object {"op": ...}, got ${typeName(v)}`);
  const op = v.op;
  if (typeof op !== "string" || !Object.hasOwn(FIELDS, op)) {
    throw new IrError(
      `${ptr}/op`,
      `unknown expression op ${JSON.stringify(op)} (expected one of ${EXPR_OPS.join(", ")})`,
    );
  }
  const fields = FIELDS[op];
  checkFields(v, "op", fields, ptr);
  for (const f of fields) {
    if (!Object.hasOwn(v, f)) throw new IrError(ptr, `op '${op}' needs the field '${f}'`);
  }
  const list = (f: string): Expr[] => {
    const a = v[f];
    if (!Array.isArray(a)) throw new IrError(`${ptr}/${f}`, `expected an array of expressions`);
    return a.map((x, i) => parseExpr(x, `${ptr}/${f}/${i}`));
  };
  switch (op) {
    case "path":
      return { op, at: parsePathAt(v.at, `${ptr}/at`) };
    case "lit":
      return { op, value: v.value as Json };
    case "and":
    case "or":
      return { op, args: list("args") };
    case "in":
      return {
        op,
        needle: parseExpr(v.needle, `${ptr}/needle`),
        haystack: parseExpr(v.haystack, `${ptr}/haystack`),
      };
    case "call_extern":
      if (typeof v.ref !== "string") {
        throw new IrError(`${ptr}/ref`, `expected the extern's name as a string`);
      }
      return { op, ref: v.ref, args: list("args") };
    default:
      if (UNARY.has(op)) return { op: op as "not", arg: parseExpr(v.arg, `${ptr}/arg`) };
      return { op: op as "eq", lhs: parseExpr(v.lhs, `${ptr}/lhs`), rhs: parseExpr(v.rhs, `${ptr}/rhs`) };
  }
}

/** The JSON form of `e` (what `parseExpr` reads back). */
export function exprToJson(e: Expr): Json {
  switch (e.op) {
    case "path":
      return { op: e.op, at: e.at.text };
    case "lit":
      return { op: e.op, value: e.value };
    case "and":
    case "or":
      return { op: e.op, args: e.args.map(exprToJson) };
    case "in":
      return { op: e.op, needle: exprToJson(e.needle), haystack: exprToJson(e.haystack) };
    case "call_extern":
      return { op: e.op, ref: e.ref, args: e.args.map(exprToJson) };
    case "not":
    case "exists":
    case "len":
      return { op: e.op, arg: exprToJson(e.arg) };
    default:
      return { op: e.op, lhs: exprToJson(e.lhs), rhs: exprToJson(e.rhs) };
  }
}

/** Flow truthiness: everything but `null` and `false` is true. */
export function truthy(v: Json): boolean {
  return v !== null && v !== false;
}

/** Deep equality, numbers compared as f64. */
export function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a === "number" || typeof b === "number") return a === b;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

function num(v: Json, op: string, side: string): number {
  if (typeof v !== "number") {
    throw new FlowError("TypeError", `'${op}' needs numbers; its ${side} is ${typeName(v)}`);
  }
  return v;
}

function compare(op: string, a: Json, b: Json): boolean {
  if (
    !((typeof a === "number" && typeof b === "number") || (typeof a === "string" && typeof b === "string"))
  ) {
    throw new FlowError(
      "TypeError",
      `'${op}' compares two numbers or two strings, got ${typeName(a)} and ${typeName(b)}`,
    );
  }
  switch (op) {
    case "lt":
      return a < b;
    case "lte":
      return a <= b;
    case "gt":
      return a > b;
    default:
      return a >= b;
  }
}

/** Evaluates `e` against `ctx`. */
export function evalExpr(e: Expr, ctx: Json, externs?: Externs): Json {
  switch (e.op) {
    case "path":
      return readPath(ctx, e.at);
    case "lit":
      return e.value;
    case "eq":
      return deepEqual(evalExpr(e.lhs, ctx, externs), evalExpr(e.rhs, ctx, externs));
    case "ne":
      return !deepEqual(evalExpr(e.lhs, ctx, externs), evalExpr(e.rhs, ctx, externs));
    case "lt":
    case "lte":
    case "gt":
    case "gte":
      return compare(e.op, evalExpr(e.lhs, ctx, externs), evalExpr(e.rhs, ctx, externs));
    case "not":
      return !truthy(evalExpr(e.arg, ctx, externs));
    case "and":
      for (const a of e.args) if (!truthy(evalExpr(a, ctx, externs))) return false;
      return true;
    case "or":
      for (const a of e.args) if (truthy(evalExpr(a, ctx, externs))) return true;
      return false;
    case "exists":
      try {
        return evalExpr(e.arg, ctx, externs) !== null;
      } catch (err) {
        if (err instanceof FlowError && err.kind === "PathNotFound") return false;
        throw err;
      }
    case "add":
    case "sub":
    case "mul":
    case "div":
    case "mod": {
      const a = num(evalExpr(e.lhs, ctx, externs), e.op, "left side");
      const b = num(evalExpr(e.rhs, ctx, externs), e.op, "right side");
      if ((e.op === "div" || e.op === "mod") && b === 0) {
        throw new FlowError("ArithError", `'${e.op}' by zero`);
      }
      if (e.op === "add") return a + b;
      if (e.op === "sub") return a - b;
      if (e.op === "mul") return a * b;
      if (e.op === "div") return a / b;
      return a - Math.floor(a / b) * b;
    }
    case "len": {
      const v = evalExpr(e.arg, ctx, externs);
      if (Array.isArray(v)) return v.length;
      if (typeof v === "string") return [...v].length;
      if (isObject(v)) return Object.keys(v).length;
      throw new FlowError("TypeError", `'len' takes an array, a string or an object, got ${typeName(v)}`);
    }
    case "in": {
      const needle = evalExpr(e.needle, ctx, externs);
      const hay = evalExpr(e.haystack, ctx, externs);
      if (!Array.isArray(hay)) {
        throw new FlowError("TypeError", `'in' needs an array haystack, got ${typeName(hay)}`);
      }
      return hay.some((x) => deepEqual(needle, x));
    }
    case "call_extern": {
      const f = externs && Object.hasOwn(externs, e.ref) ? externs[e.ref] : undefined;
      if (!f) throw new FlowError("ExternError", `extern '${e.ref}' is not registered`);
      const args = e.args.map((a) => evalExpr(a, ctx, externs));
      try {
        return f(args) ?? null;
      } catch (err) {
        throw new FlowError("ExternError", `extern '${e.ref}' failed: ${(err as Error)?.message ?? err}`);
      }
    }
  }
}
