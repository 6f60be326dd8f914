/**
 * Flow paths: `$`, `$.a.b` and bracket keys (`$["plan.md"]`, `$.s.parts["x.y"]`), parsed once.
 *
 * Owns the path grammar of the engine's flow IR 0.2 and reading and writing a JSON context
 * through a path.
 *
 * Invariants:
 * - Parsing refuses `$foo`, `$.`, `$.a..b`, unterminated or unquoted brackets and indexes
 *   (`[0]`): there is no array indexing, so `$.r.0` on an array is a missing key.
 * - Reading a missing key, or through anything that is not an object, is `PathNotFound`.
 * - Writing creates missing or `null` intermediate objects, refuses to write through any other
 *   non-object (`TypeError`), and writing at `$` replaces the whole context.
 */
import { FlowError } from "./errors.ts";

/** A parsed path: its text and its keys (empty for `$`). */
export interface Path {
  /** The path as written. */
  readonly text: string;
  /** The keys from the root. */
  readonly keys: readonly string[];
}

/** JSON values as a flow holds them. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A plain JSON object (not an array, not null). */
export function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Parses `text`, or throws `FlowError("InvalidPath")` saying what was expected. */
export function parsePath(text: string): Path {
  const bad = (why: string) => new FlowError("InvalidPath", `invalid path '${text}': ${why}`);
  if (typeof text !== "string") throw new FlowError("InvalidPath", `a path must be a string`);
  if (!text.startsWith("$")) throw bad("a path starts with '$'");
  const keys: string[] = [];
  let i = 1;
  while (i < text.length) {
    const c = text[i];
    if (c === ".") {
      let j = i + 1;
      while (j < text.length && text[j] !== "." && text[j] !== "[") j++;
      if (j === i + 1) throw bad(`an empty key at character ${i + 1}`);
      keys.push(text.slice(i + 1, j));
      i = j;
    } else if (c === "[") {
      if (text[i + 1] !== '"') {
        throw bad(`a bracket holds a quoted key ($["name"]); indexes like [0] are not supported`);
      }
      const end = text.indexOf('"]', i + 2);
      if (end < 0) throw bad(`an unterminated bracket at character ${i + 1}`);
      keys.push(text.slice(i + 2, end));
      i = end + 2;
    } else {
      throw bad(`expected '.' or '[' at character ${i + 1}, got '${c}'`);
    }
  }
  return { text, keys };
}

/** The value at `path` in `ctx`; `PathNotFound` when a key is missing. */
export function readPath(ctx: Json, path: Path): Json {
  let cur: Json = ctx;
  for (const k of path.keys) {
    if (!isObject(cur) || !Object.hasOwn(cur, k)) {
      throw new FlowError("PathNotFound", `path not found: ${path.text} (no key '${k}')`);
    }
    cur = cur[k];
  }
  return cur;
}

/** `ctx` with `value` written at `path` (in place; the new root is returned, for `$`). */
export function writePath(ctx: Json, path: Path, value: Json): Json {
  if (path.keys.length === 0) return value;
  if (ctx === null) ctx = {};
  if (!isObject(ctx)) {
    throw new FlowError("TypeError", `cannot write ${path.text}: the context is not an object`);
  }
  let cur: Record<string, Json> = ctx;
  for (let i = 0; i < path.keys.length - 1; i++) {
    const k = path.keys[i];
    const next = cur[k];
    if (next === undefined || next === null) {
      const fresh: Record<string, Json> = {};
      cur[k] = fresh;
      cur = fresh;
    } else if (isObject(next)) {
      cur = next;
    } else {
      throw new FlowError(
        "TypeError",
        `cannot write ${path.text}: '${path.keys.slice(0, i + 1).join(".")}' is ${
          typeName(next)
        }, not an object`,
      );
    }
  }
  cur[path.keys[path.keys.length - 1]] = value;
  return ctx;
}

/** `null`, `a boolean`, `a number`, `a string`, `an array` or `an object`. */
export function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `a ${typeof v}`;
}
