/**
 * JSON exactly as serde_json (1.0.149, no `preserve_order`, zmij float printer) reads and prints
 * it: the text the agent-mesh relay and every Rust peer rebuild before checking a signature.
 *
 * Owns three things:
 * - `serdeStringify`: a converter value → its canonical text. Object keys sorted by code point
 *   (UTF-8 byte order, not JS's UTF-16 order), no whitespace, integers as digits (`bigint`
 *   exact), floats in zmij's layout (`2.0`, `0.00001`, `1e-6`, `1e+16`, `-0.0`); an integral
 *   `LuaFloat` stays a float (`2.0`).
 * - `parseSerde`: a text → a tree that keeps what `JSON.parse` loses (integer or float, each
 *   member's source span), refusing exactly what serde_json refuses: lone surrogates, numbers
 *   that overflow, nesting past its recursion limit, anything after the value.
 * - `printSerde` / `reprintSerde`: a tree (or text) → what serde_json prints after parsing it.
 *   The test relay uses this to behave as the real one: it verifies a signature against the
 *   re-printed payload, so a sender whose text serde would print differently is dropped.
 *
 * Invariants: `reprintSerde(serdeStringify(v)) === serdeStringify(v)` for every value the
 * printer accepts; nothing is printed that serde_json would refuse to parse back
 * (`MAX_NESTING`). Errors are `MeshError` of kind `payload` naming the path (printing) or
 * `SerdeSyntaxError` naming the offset (parsing).
 */
import { LuaFloat } from "../../json/values.ts";
import { MeshError } from "./transport.ts";

/**
 * The deepest nesting of arrays/objects serde_json parses in a top-level value: its recursion
 * limit of 128 is spent on entering each container and fails when it reaches 0, so 127 fit.
 * A value inside an envelope (a plaintext payload) has one level fewer.
 */
export const MAX_NESTING = 127;

const U64_MAX = 2n ** 64n - 1n;
const I64_MIN = -(2n ** 63n);

/** Prints `value` as serde_json would. `maxNesting` bounds how deep containers may nest. */
export function serdeStringify(value: unknown, maxNesting = MAX_NESTING): string {
  const out: string[] = [];
  writeValue(value, out, maxNesting, []);
  return out.join("");
}

function fail(message: string, path: (string | number)[]): never {
  const where = path.length
    ? ` at ${path.map((p) => typeof p === "number" ? `[${p}]` : `.${p}`).join("")}`
    : "";
  throw new MeshError("payload", `${message}${where}`);
}

function writeValue(v: unknown, out: string[], budget: number, path: (string | number)[]): void {
  switch (typeof v) {
    case "undefined":
      out.push("null");
      return;
    case "boolean":
      out.push(v ? "true" : "false");
      return;
    case "number":
      if (!Number.isFinite(v)) fail(`cannot send ${v} (JSON has no such number)`, path);
      out.push(Number.isSafeInteger(v) && !Object.is(v, -0) ? String(v) : formatFloat(v));
      return;
    case "bigint":
      if (v > U64_MAX || v < I64_MIN) fail(`integer ${v} is outside the 64-bit range`, path);
      out.push(v.toString());
      return;
    case "string":
      out.push(quote(v, path));
      return;
    case "object":
      break;
    default:
      fail(`cannot send a ${typeof v}`, path);
  }
  if (v === null) {
    out.push("null");
    return;
  }
  if (v instanceof LuaFloat) {
    if (!Number.isFinite(v.value)) fail(`cannot send ${v.value} (JSON has no such number)`, path);
    out.push(formatFloat(v.value));
    return;
  }
  if (v instanceof Uint8Array) fail("cannot send a string that is not valid UTF-8", path);
  if (budget === 0) fail(`nesting deeper than ${MAX_NESTING} levels`, path);
  if (Array.isArray(v)) {
    out.push("[");
    for (let i = 0; i < v.length; i++) {
      if (i) out.push(",");
      path.push(i + 1);
      writeValue(v[i], out, budget - 1, path);
      path.pop();
    }
    out.push("]");
    return;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    fail(`cannot send a ${proto?.constructor?.name ?? "object"}`, path);
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort(compareCodePoints);
  out.push("{");
  for (let i = 0; i < keys.length; i++) {
    if (i) out.push(",");
    out.push(quote(keys[i], path), ":");
    path.push(keys[i]);
    writeValue(obj[keys[i]], out, budget - 1, path);
    path.pop();
  }
  out.push("}");
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A JSON string literal as serde_json escapes it (the same escapes as `JSON.stringify`). */
function quote(s: string, path: (string | number)[]): string {
  if (LONE_SURROGATE.test(s)) fail("cannot send a string holding a lone UTF-16 surrogate", path);
  return JSON.stringify(s);
}

/**
 * Orders strings by code point (= UTF-8 byte order, serde's BTreeMap order). UTF-16 order only
 * differs when a surrogate (U+D800–DFFF, the start of a character above U+FFFF) meets a unit in
 * U+E000–FFFF; shifting both ranges puts them in code point order.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/**
 * A finite float in zmij's layout: the shortest digits that round-trip (the same digits
 * `Number.prototype.toString` picks), in fixed notation with a `.0` for whole values when the
 * decimal exponent is in −5..15, else `d.ddde±x`.
 */
export function formatFloat(x: number): string {
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(Math.abs(x)))!;
  let digits = m[1] + (m[2] ?? "");
  let point = m[1].length + Number(m[3] ?? 0); // digits before the decimal point
  const lead = digits.search(/[1-9]/);
  digits = digits.slice(lead).replace(/0+$/, "");
  point -= lead;
  const exp = point - 1;
  if (exp >= -5 && exp <= 15) {
    if (digits.length <= point) return `${sign}${digits}${"0".repeat(point - digits.length)}.0`;
    if (point > 0) return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
    return `${sign}0.${"0".repeat(-point)}${digits}`;
  }
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${mantissa}e${exp < 0 ? "-" : "+"}${Math.abs(exp)}`;
}

// ---- parsing as serde_json does ----

/** A JSON text serde_json would refuse, with the offset of the problem. */
export class SerdeSyntaxError extends SyntaxError {
  constructor(message: string, readonly offset: number) {
    super(`${message} at offset ${offset}`);
    this.name = "SerdeSyntaxError";
  }
}

/** A parsed JSON value with its source span (`text.slice(start, end)` is its raw text). */
export type SerdeNode =
  & { start: number; end: number }
  & (
    | { kind: "null" }
    | { kind: "bool"; value: boolean }
    | { kind: "int"; text: string } // fits u64 or i64: printed as written
    | { kind: "float"; value: number }
    | { kind: "string"; value: string }
    | { kind: "array"; items: SerdeNode[] }
    | { kind: "object"; members: Map<string, SerdeNode>; duplicates: string[] }
  );

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
// deno-lint-ignore no-control-regex -- a JSON string's plain run stops at control characters
const PLAIN_RUN = /[^"\\\u0000-\u001f]*/y;

/**
 * Parses `text` as serde_json parses into a `Value`: a duplicate key keeps its last value (the
 * names are listed in `duplicates`), integers stay integers when they fit 64 bits.
 * @throws SerdeSyntaxError where serde_json would fail
 */
export function parseSerde(text: string): SerdeNode {
  let pos = 0;
  const ws = () => {
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
  };
  const err = (what: string): never => {
    throw new SerdeSyntaxError(what, pos);
  };
  const str = (): string => {
    const start = pos++;
    let out = "";
    for (;;) {
      PLAIN_RUN.lastIndex = pos;
      PLAIN_RUN.exec(text);
      out += text.slice(pos, PLAIN_RUN.lastIndex);
      pos = PLAIN_RUN.lastIndex;
      if (pos >= text.length) {
        pos = start;
        err("unterminated string");
      }
      const c = text[pos];
      if (c === '"') {
        pos++;
        break;
      }
      if (c !== "\\") err("control character in string");
      const e = text[pos + 1];
      const simple = ESCAPES[e];
      if (simple !== undefined) {
        out += simple;
        pos += 2;
        continue;
      }
      if (e !== "u") err("invalid escape");
      const unit = hex4(pos + 2);
      pos += 6;
      if (unit >= 0xdc00 && unit <= 0xdfff) err("lone trailing surrogate in hex escape");
      if (unit >= 0xd800 && unit <= 0xdbff) {
        if (text[pos] !== "\\" || text[pos + 1] !== "u") err("lone leading surrogate in hex escape");
        const low = hex4(pos + 2);
        if (low < 0xdc00 || low > 0xdfff) err("lone leading surrogate in hex escape");
        pos += 6;
        out += String.fromCharCode(unit, low);
      } else {
        out += String.fromCharCode(unit);
      }
    }
    if (LONE_SURROGATE.test(out)) err("lone surrogate in string");
    return out;
  };
  const hex4 = (at: number): number => {
    const h = text.slice(at, at + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) {
      pos = at;
      err("invalid \\u escape");
    }
    return parseInt(h, 16);
  };
  const value = (depth: number): SerdeNode => {
    ws();
    const start = pos;
    const c = text[pos];
    if (c === "{" || c === "[") {
      if (depth === 0) err("recursion limit exceeded");
      pos++;
      ws();
      if (c === "[") {
        const items: SerdeNode[] = [];
        if (text[pos] === "]") pos++;
        else {
          for (;;) {
            items.push(value(depth - 1));
            ws();
            if (text[pos] === ",") pos++;
            else if (text[pos] === "]") {
              pos++;
              break;
            } else err("expected , or ]");
          }
        }
        return { kind: "array", items, start, end: pos };
      }
      const members = new Map<string, SerdeNode>();
      const duplicates: string[] = [];
      if (text[pos] === "}") pos++;
      else {
        for (;;) {
          ws();
          if (text[pos] !== '"') err("expected a key");
          const key = str();
          ws();
          if (text[pos] !== ":") err("expected :");
          pos++;
          if (members.has(key)) {
            duplicates.push(key);
            members.delete(key);
          }
          members.set(key, value(depth - 1));
          ws();
          if (text[pos] === ",") pos++;
          else if (text[pos] === "}") {
            pos++;
            break;
          } else err("expected , or }");
        }
      }
      return { kind: "object", members, duplicates, start, end: pos };
    }
    if (c === '"') {
      const s = str();
      return { kind: "string", value: s, start, end: pos };
    }
    for (const [word, node] of LITERALS) {
      if (text.startsWith(word, pos)) {
        pos += word.length;
        return { ...node, start, end: pos } as SerdeNode;
      }
    }
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (!m) err("expected a value");
    pos = NUMBER.lastIndex;
    const raw = m![0];
    if (m![1] === undefined && m![2] === undefined && raw !== "-0") {
      const n = BigInt(raw);
      if (n <= U64_MAX && n >= I64_MIN) return { kind: "int", text: raw, start, end: pos };
    }
    const f = Number(raw);
    if (!Number.isFinite(f)) {
      pos = start;
      err("number out of range");
    }
    return { kind: "float", value: f, start, end: pos };
  };
  const root = value(MAX_NESTING);
  ws();
  if (pos !== text.length) err("trailing characters");
  return root;
}

const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

const LITERALS: [string, object][] = [
  ["null", { kind: "null" }],
  ["true", { kind: "bool", value: true }],
  ["false", { kind: "bool", value: false }],
];

/** What serde_json prints for a parsed tree (compact, keys sorted). */
export function printSerde(node: SerdeNode): string {
  const out: string[] = [];
  const walk = (n: SerdeNode): void => {
    switch (n.kind) {
      case "null":
        out.push("null");
        return;
      case "bool":
        out.push(n.value ? "true" : "false");
        return;
      case "int":
        out.push(n.text);
        return;
      case "float":
        out.push(formatFloat(n.value));
        return;
      case "string":
        out.push(JSON.stringify(n.value));
        return;
      case "array":
        out.push("[");
        n.items.forEach((item, i) => {
          if (i) out.push(",");
          walk(item);
        });
        out.push("]");
        return;
      case "object": {
        out.push("{");
        [...n.members.keys()].sort(compareCodePoints).forEach((k, i) => {
          if (i) out.push(",");
          out.push(JSON.stringify(k), ":");
          walk(n.members.get(k)!);
        });
        out.push("}");
      }
    }
  };
  walk(node);
  return out.join("");
}

/**
 * What serde_json prints after parsing `text`.
 * @throws SerdeSyntaxError where serde_json would fail to parse
 */
export function reprintSerde(text: string): string {
  return printSerde(parseSerde(text));
}
