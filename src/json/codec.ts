/**
 * JSON text ⇄ converter values, keeping what plain `JSON.stringify`/`JSON.parse` would lose.
 *
 * Owns the canonical JSON form of agent-block: object keys sorted (stable output, cache-friendly
 * prompts), integral Lua floats written as `3.0` and read back as floats, integers beyond 2^53
 * read back exactly (as `bigint`), non-finite numbers and non-UTF-8 strings refused.
 *
 * Invariant: `parseJson(stringifyJson(v))` reproduces `v` for every value the converter produces.
 */
import { LuaFloat, LuaFunctionRef } from "./values.ts";

/**
 * A plain JSON value, as an embedder writes one (the converter's own values are wider).
 *
 * ```ts
 * import { BlockConfig, type JsonValue, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const metadata: JsonValue = { ticket: { id: "T-7", tags: ["bug", "p1"] }, attempt: 2, urgent: true };
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline("return _TASK_METADATA.ticket.tags[2]", "meta.lua"), ".")
 *     .extraGlobals({ _TASK_METADATA: metadata }) // converted natively: nesting kept, arrays 1-based
 *     .env({})
 *     .build(),
 * );
 * assert.equal(report.value, "p1");
 * ```
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Raised for values that have no JSON form. */
export class JsonError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = "JsonError";
  }
}

/** Serialises a converter value. `indent` > 0 pretty-prints with that many spaces. */
export function stringifyJson(value: unknown, indent = 0): string {
  const parts: string[] = [];
  write(value, parts, indent, 0, []);
  return parts.join("");
}

/** ` at .a[2].b` for error messages (the path is only formatted when something fails). */
/** ` at .key[2]` for a non-empty path, else nothing (the value itself). */
function at(path: (string | number)[]): string {
  if (path.length === 0) return "";
  return " at " + path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("");
}

function write(v: unknown, out: string[], indent: number, depth: number, path: (string | number)[]): void {
  switch (typeof v) {
    case "undefined":
      out.push("null");
      return;
    case "boolean":
      out.push(v ? "true" : "false");
      return;
    case "number":
      if (!Number.isFinite(v)) throw new JsonError(`cannot encode ${v} as a JSON number${at(path)}`);
      out.push(Object.is(v, -0) ? "-0.0" : String(v));
      return;
    case "bigint":
      out.push(v.toString());
      return;
    case "string":
      out.push(JSON.stringify(v));
      return;
    case "object":
      break;
    default:
      throw new JsonError(`cannot encode a ${typeof v} as JSON${at(path)}`);
  }
  if (v === null) {
    out.push("null");
    return;
  }
  if (v instanceof LuaFloat) {
    if (!Number.isFinite(v.value)) {
      throw new JsonError(`cannot encode ${v.value} as a JSON number${at(path)}`);
    }
    if (Object.is(v.value, -0)) out.push("-0.0");
    else out.push(Number.isInteger(v.value) && Math.abs(v.value) < 1e21 ? `${v.value}.0` : String(v.value));
    return;
  }
  if (v instanceof Uint8Array) {
    throw new JsonError(`cannot encode a string that is not valid UTF-8${at(path)}`);
  }
  if (v instanceof LuaFunctionRef) throw new JsonError(`cannot encode a function${at(path)}`);
  const nl = indent ? "\n" + " ".repeat(indent * (depth + 1)) : "";
  const close = indent ? "\n" + " ".repeat(indent * depth) : "";
  const colon = indent ? ": " : ":";
  if (Array.isArray(v)) {
    if (v.length === 0) {
      out.push("[]");
      return;
    }
    out.push("[");
    for (let i = 0; i < v.length; i++) {
      if (i) out.push(",");
      if (nl) out.push(nl);
      path.push(i + 1);
      write(v[i], out, indent, depth + 1, path);
      path.pop();
    }
    if (close) out.push(close);
    out.push("]");
    return;
  }
  const obj = v as Record<string, unknown>;
  const keys: string[] = [];
  for (const k in obj) if (Object.hasOwn(obj, k) && obj[k] !== undefined) keys.push(k);
  if (keys.length === 0) {
    out.push("{}");
    return;
  }
  keys.sort();
  out.push("{");
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (i) out.push(",");
    if (nl) out.push(nl);
    out.push(JSON.stringify(k), colon);
    path.push(k);
    write(obj[k], out, indent, depth + 1, path);
    path.pop();
  }
  if (close) out.push(close);
  out.push("}");
}

const FLOAT_SYNTAX = /[.eE]/;
const NEEDS_REVIVER = /\d\.0|\d[eE]|\d{16}/;

/**
 * Parses JSON text. Numbers written with a fraction or exponent stay floats (`LuaFloat` when
 * integral), integers outside the safe range come back as exact `bigint`s.
 * @throws SyntaxError with the position, as `JSON.parse` reports it
 */
export function parseJson(text: string): unknown {
  // Fast path: without an integral-looking float (`2.0`, `1e3`) or a 16+ digit run anywhere
  // (strings included: a false alarm only costs the slow path), plain JSON.parse is exact.
  if (!NEEDS_REVIVER.test(text)) return JSON.parse(text);
  return JSON.parse(text, function (_key, value, context?: { source?: string }) {
    if (typeof value !== "number" || context?.source === undefined) return value;
    const src = context.source;
    if (FLOAT_SYNTAX.test(src)) return Number.isInteger(value) ? new LuaFloat(value) : value;
    if (!Number.isSafeInteger(value)) {
      const big = BigInt(src);
      return big >= -(2n ** 63n) && big < 2n ** 63n ? big : value;
    }
    return value;
  });
}
