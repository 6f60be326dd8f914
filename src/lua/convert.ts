/**
 * The one value converter between Lua and JavaScript, on the raw C API.
 *
 * Owns the rules every host function, every JSON codec and every embedder sees:
 *
 * Lua → JS
 * - nil → `undefined`; `std.json.null` (the NULL light userdata) → `null`.
 * - integer → `number` when |n| ≤ 2^53−1, else `bigint` (no precision lost up to 2^63).
 * - float → `number`; with `floats: "tagged"` an integral float (`3.0`) becomes `LuaFloat` so that
 *   JSON encoding can keep writing it as `3.0`.
 * - string → `string` when it is valid UTF-8, else a `Uint8Array` of its exact bytes.
 * - table → array or object by ONE rule:
 *   1. a table whose metatable is `std.json.array_mt` is an array of `1..#t` (holes become `null`);
 *   2. a table whose metatable is `std.json.object_mt` is an object;
 *   3. otherwise a non-empty table whose keys are exactly the integers `1..n` is an array;
 *   4. everything else, the empty table included, is an object; integer and float keys are
 *      written in decimal, keys of any other type are refused.
 *   A table that contains itself is refused (`cycle`); nesting deeper than 200 is refused.
 * - function → `LuaFunctionRef` when `functions: "ref"`, refused otherwise; other userdata and
 *   threads are refused.
 *
 * JS → Lua
 * - `undefined` → nil; `null` → `std.json.null` (or nil with `nullAs: "nil"`).
 * - `number` → integer when it is an integer below 2^63 in magnitude and not −0, else float;
 *   `bigint` → integer; `LuaFloat` → float.
 * - `string` → UTF-8 bytes; `Uint8Array` → the same bytes.
 * - array → table marked with `std.json.array_mt` (so `[]` survives a round trip).
 * - object → table (own enumerable keys; `undefined` values skipped; `toJSON` honoured).
 * - `LuaFunctionRef` → the referenced function. Anything else is refused.
 *
 * Errors are `ConversionError` with a message that names the offending key path. Under a heap
 * limit, a string or bytes value larger than the room left is refused before anything is
 * allocated (`HeapLimitError`): pushing a 200 MB string into a 64 MiB heap must not first copy it
 * into the wasm heap.
 */
import {
  LUA_TBOOLEAN,
  LUA_TFUNCTION,
  LUA_TLIGHTUSERDATA,
  LUA_TNIL,
  LUA_TNONE,
  LUA_TNUMBER,
  LUA_TSTRING,
  LUA_TTABLE,
  LUA_TYPE_NAMES,
  type LuaApi,
} from "./capi.ts";
import { LuaFloat, LuaFunctionRef, NullsAsNil } from "../json/values.ts";

/** A value that cannot cross the boundary. */
export class ConversionError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = "ConversionError";
  }
}

/** A value refused before it is pushed: it is larger than what the heap's limit leaves. */
export class HeapLimitError extends Error {
  /**
   * @param bytes the size of the value refused
   * @param message what happened
   */
  constructor(readonly bytes: number, message: string) {
    super(message);
    this.name = "HeapLimitError";
  }
}

/** Strings and bytes above this size are checked against the room a heap limit leaves. */
const LARGE_VALUE = 1 << 16;

/** Options for reading a Lua value into JS. */
export interface ToJsOptions {
  /** What to do with Lua functions: registry references, or refuse (default). */
  functions?: "ref" | "error";
  /** `"tagged"` turns integral floats into `LuaFloat`. Default `"plain"`. */
  floats?: "plain" | "tagged";
}

/** Options for pushing a JS value into Lua. */
export interface ToLuaOptions {
  /** `null` becomes `std.json.null` (default) or nil. */
  nullAs?: "sentinel" | "nil";
}

const MAX_DEPTH = 200;
const I64_LIMIT = 2 ** 63;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const SHORT_STRING = 32;

/** Decodes Lua string bytes: a JS string when valid UTF-8, else the bytes themselves (copied). */
export function decodeLuaBytes(view: Uint8Array): string | Uint8Array {
  // Short ASCII strings (keys, names) are the common case: building them directly is several
  // times cheaper than a TextDecoder call.
  const n = view.length;
  if (n <= SHORT_STRING) {
    let out = "";
    let i = 0;
    for (; i < n; i++) {
      const c = view[i];
      if (c > 0x7f) break;
      out += String.fromCharCode(c);
    }
    if (i === n) return out;
  }
  // Pure ASCII cannot fail.
  let ascii = true;
  for (let i = 0; i < view.length; i++) {
    if (view[i] > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return strictUtf8.decode(view);
  try {
    return strictUtf8.decode(view);
  } catch {
    return view.slice();
  }
}

/**
 * One step of a read or write path: an argument position, a numeric key (`[k]`) or a string
 * key. Kept as values and formatted only when an error names the path, so that converting a
 * table allocates no path text.
 */
type PathStep = string | number | bigint | ArgStep;
class ArgStep {
  constructor(readonly n: number) {}
}
const ARG_STEPS = Array.from({ length: 16 }, (_, i) => new ArgStep(i));
const argStep = (n: number) => ARG_STEPS[n] ?? new ArgStep(n);

/** Formats a path: `argument N`, `[k]` for numeric keys, `.name` for string keys. */
function keyPath(path: PathStep[]): string {
  if (!path.length) return "";
  return ` at ${
    path.map((p) => p instanceof ArgStep ? `argument ${p.n}` : typeof p === "string" ? "." + p : `[${p}]`)
      .join("")
  }`;
}

const quotedKeys = new Map<string, string>();
/** A key as JSON text; the keys of a run repeat (`type`, `text`, `id`...), so they are cached. */
function quotedKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (k.length <= 64 && quotedKeys.size < 4096) quotedKeys.set(k, q);
  }
  return q;
}

/**
 * Converter bound to one engine: it knows the engine's array/object marker metatables (by
 * registry reference) and how to turn functions into references.
 */
export class Converter {
  /**
   * Binds the converter to one engine.
   * @param api the raw API
   * @param arrayMtRef registry ref of `std.json.array_mt`
   * @param objectMtRef registry ref of `std.json.object_mt`
   * @param makeFunctionRef turns the function on top of a stack into a `LuaFunctionRef`
   * @param headroom bytes the heap's limit leaves, when there is a limit
   */
  constructor(
    private readonly api: LuaApi,
    /** Registry refs of `std.json.array_mt` and `std.json.object_mt`. */
    private readonly arrayMtRef: number,
    private readonly objectMtRef: number,
    /** Creates a registry reference for the value on top of `L`'s stack (popping it). */
    private readonly makeFunctionRef: (L: number) => LuaFunctionRef,
    private readonly headroom?: () => number,
  ) {}

  #checkRoom(bytes: number): void {
    if (bytes > LARGE_VALUE && this.headroom !== undefined && bytes > this.headroom()) {
      throw new HeapLimitError(
        bytes,
        `a value of ${bytes} bytes does not fit in the room the heap's limit leaves`,
      );
    }
  }

  /** Reads the Lua value at `idx` of `L`. */
  toJs(L: number, idx: number, opts: ToJsOptions = {}): unknown {
    return this.#read(L, this.api.absindex(L, idx), opts, [], new Set());
  }

  /** Reads stack slots `from..gettop()` into an array (missing trailing values are omitted). */
  argsToJs(L: number, from: number, opts: ToJsOptions = {}): unknown[] {
    const top = this.api.gettop(L);
    const out: unknown[] = [];
    if (top < from) return out;
    // One path and one cycle set for all arguments: a table read leaves both as it found them.
    const path: PathStep[] = [argStep(from)];
    const onPath = new Set<number>();
    for (let i = from; i <= top; i++) {
      path.length = 1;
      path[0] = argStep(i);
      onPath.clear();
      out.push(this.#read(L, i, opts, path, onPath));
    }
    return out;
  }

  /** Pushes one JS value onto `L`. */
  push(L: number, v: unknown, opts: ToLuaOptions = {}): void {
    this.#write(L, v, opts, [], new Set());
  }

  /**
   * JSON text of the Lua value at `idx`, written straight from the stack — the same text as
   * `stringifyJson(toJs(L, idx, { floats: "tagged" }))`, without building the JS value first.
   * Returns `undefined` for anything outside the plain case (a value that would raise, a
   * function, non-UTF-8 bytes, a non-finite number, keys that collide once written as text):
   * the caller then takes the general path, which raises with the usual message.
   */
  toJson(L: number, idx: number): string | undefined {
    return this.#json(L, this.api.absindex(L, idx), 0, new Set());
  }

  #json(L: number, idx: number, depth: number, onPath: Set<number>): string | undefined {
    const api = this.api;
    switch (api.type(L, idx)) {
      case LUA_TBOOLEAN:
        return api.toboolean(L, idx) ? "true" : "false";
      case LUA_TNUMBER: {
        if (api.isinteger(L, idx)) return String(api.tointegerish(L, idx));
        const f = api.tonumber(L, idx);
        if (!Number.isFinite(f)) return undefined;
        if (Object.is(f, -0)) return "-0.0";
        return Number.isInteger(f) && Math.abs(f) < 1e21 ? `${f}.0` : String(f);
      }
      case LUA_TSTRING: {
        const s = decodeLuaBytes(api.tobytesView(L, idx));
        return typeof s === "string" ? JSON.stringify(s) : undefined;
      }
      case LUA_TLIGHTUSERDATA:
        return api.touserdata(L, idx) === 0 ? "null" : undefined;
      case LUA_TTABLE:
        return this.#jsonTable(L, idx, depth, onPath);
      default:
        return undefined;
    }
  }

  #jsonTable(L: number, idx: number, depth: number, onPath: Set<number>): string | undefined {
    const api = this.api;
    const ptr = api.topointer(L, idx);
    if (onPath.has(ptr) || depth >= MAX_DEPTH || !api.checkstack(L, 4)) return undefined;
    const mark = this.#markOf(L, idx);
    onPath.add(ptr);
    const intKeys: number[] = [];
    const intVals: string[] = [];
    const strKeys: string[] = [];
    const strVals: string[] = [];
    let allPositiveInts = true;
    let numberAsText = false; // a number key written as text (0, -1, 2^60, 1.5): it may collide
    let maxInt = 0;
    const vIdx = api.gettop(L) + 2; // where next() leaves each value
    api.pushnil(L);
    while (api.next(L, idx)) {
      const kt = api.type(L, -2);
      let key: string | undefined;
      let intKey = 0;
      if (kt === LUA_TNUMBER && api.isinteger(L, -2)) {
        const k = api.tointegerish(L, -2);
        if (typeof k === "number" && k >= 1) intKey = k;
        else {
          key = String(k);
          numberAsText = true;
        }
      } else if (kt === LUA_TSTRING) {
        const kv = decodeLuaBytes(api.tobytesView(L, -2));
        if (typeof kv === "string") key = kv;
      } else if (kt === LUA_TNUMBER) {
        key = String(api.tonumber(L, -2));
        numberAsText = true;
      }
      const v = intKey || key !== undefined ? this.#json(L, vIdx, depth + 1, onPath) : undefined;
      if (v === undefined) {
        api.pop(L, 2);
        onPath.delete(ptr);
        return undefined;
      }
      if (intKey) {
        intKeys.push(intKey);
        intVals.push(v);
        if (intKey > maxInt) maxInt = intKey;
      } else {
        allPositiveInts = false;
        strKeys.push(key!);
        strVals.push(v);
      }
      api.pop(L, 1);
    }
    onPath.delete(ptr);
    if (mark === "array") {
      if (strKeys.length) return undefined;
      const n = Math.max(api.rawlen(L, idx), maxInt);
      if (n === 0) return "[]";
      const arr: string[] = new Array(n).fill("null");
      for (let i = 0; i < intKeys.length; i++) arr[intKeys[i] - 1] = intVals[i];
      return "[" + arr.join(",") + "]";
    }
    if (mark !== "object" && allPositiveInts && intKeys.length > 0 && maxInt === intKeys.length) {
      const arr: string[] = new Array(maxInt);
      for (let i = 0; i < intKeys.length; i++) arr[intKeys[i] - 1] = intVals[i];
      return "[" + arr.join(",") + "]";
    }
    const n = intKeys.length + strKeys.length;
    if (n === 0) return "{}";
    if (intKeys.length === 0 && !numberAsText) {
      // Lua string keys only (the common case): distinct by construction, so no collision check;
      // sorted in place with their values — by insertion when few (objects are mostly small),
      // else through a sorted index (an object with 100,000 keys must not cost n² steps).
      if (n > 32) {
        const order = Array.from({ length: n }, (_, i) => i);
        order.sort((a, b) => (strKeys[a] < strKeys[b] ? -1 : strKeys[a] > strKeys[b] ? 1 : 0));
        let out = "{";
        for (let i = 0; i < n; i++) {
          if (i) out += ",";
          out += quotedKey(strKeys[order[i]]) + ":" + strVals[order[i]];
        }
        return out + "}";
      }
      for (let i = 1; i < n; i++) {
        const k = strKeys[i];
        const v = strVals[i];
        let j = i - 1;
        while (j >= 0 && strKeys[j] > k) {
          strKeys[j + 1] = strKeys[j];
          strVals[j + 1] = strVals[j];
          j--;
        }
        strKeys[j + 1] = k;
        strVals[j + 1] = v;
      }
      let out = "{" + quotedKey(strKeys[0]) + ":" + strVals[0];
      for (let i = 1; i < n; i++) out += "," + quotedKey(strKeys[i]) + ":" + strVals[i];
      return out + "}";
    }
    const keys: string[] = new Array(n);
    const byKey = new Map<string, string>();
    for (let i = 0; i < intKeys.length; i++) {
      const k = String(intKeys[i]);
      keys[i] = k;
      byKey.set(k, intVals[i]);
    }
    for (let i = 0; i < strKeys.length; i++) {
      keys[intKeys.length + i] = strKeys[i];
      byKey.set(strKeys[i], strVals[i]);
    }
    if (byKey.size !== n) return undefined; // 1 and "1": the general path decides
    keys.sort();
    let out = "{";
    for (let i = 0; i < n; i++) {
      if (i) out += ",";
      out += quotedKey(keys[i]) + ":" + byKey.get(keys[i]);
    }
    return out + "}";
  }

  #read(L: number, idx: number, opts: ToJsOptions, path: PathStep[], onPath: Set<number>): unknown {
    const api = this.api;
    const t = api.type(L, idx);
    switch (t) {
      case LUA_TNIL:
      case LUA_TNONE: // an index above the top reads as nil, as lua_type reports it
        return undefined;
      case LUA_TBOOLEAN:
        return api.toboolean(L, idx);
      case LUA_TNUMBER: {
        if (api.isinteger(L, idx)) return api.tointegerish(L, idx);
        const f = api.tonumber(L, idx);
        return opts.floats === "tagged" && Number.isInteger(f) ? new LuaFloat(f) : f;
      }
      case LUA_TSTRING:
        return decodeLuaBytes(api.tobytesView(L, idx));
      case LUA_TLIGHTUSERDATA:
        if (api.touserdata(L, idx) === 0) return null;
        throw new ConversionError(`cannot convert a light userdata${keyPath(path)}`);
      case LUA_TTABLE:
        return this.#readTable(L, idx, opts, path, onPath);
      case LUA_TFUNCTION:
        if (opts.functions === "ref") {
          api.pushvalue(L, idx);
          return this.makeFunctionRef(L);
        }
        throw new ConversionError(`cannot convert a function${keyPath(path)}`);
      default:
        throw new ConversionError(`cannot convert a ${LUA_TYPE_NAMES[t]} value${keyPath(path)}`);
    }
  }

  #markOf(L: number, idx: number): "array" | "object" | undefined {
    const api = this.api;
    if (!api.getmetatable(L, idx)) return undefined;
    let mark: "array" | "object" | undefined;
    api.pushref(L, this.arrayMtRef);
    if (api.rawequal(L, -1, -2)) mark = "array";
    api.pop(L, 1);
    if (!mark) {
      api.pushref(L, this.objectMtRef);
      if (api.rawequal(L, -1, -2)) mark = "object";
      api.pop(L, 1);
    }
    api.pop(L, 1);
    return mark;
  }

  #readTable(
    L: number,
    idx: number,
    opts: ToJsOptions,
    path: PathStep[],
    onPath: Set<number>,
  ): unknown {
    const api = this.api;
    const ptr = api.topointer(L, idx);
    if (onPath.has(ptr)) {
      throw new ConversionError(`cannot convert a table that contains itself (cycle${keyPath(path)})`);
    }
    if (path.length > MAX_DEPTH) {
      throw new ConversionError(`cannot convert a table nested deeper than ${MAX_DEPTH} levels`);
    }
    if (!api.checkstack(L, 4)) throw new ConversionError("Lua stack overflow while converting");
    const mark = this.#markOf(L, idx);
    onPath.add(ptr);
    const intKeys: number[] = [];
    const intVals: unknown[] = [];
    const strKeys: string[] = [];
    const strVals: unknown[] = [];
    let allPositiveInts = true;
    let maxInt = 0;
    const vIdx = api.gettop(L) + 2; // where next() leaves each value
    api.pushnil(L);
    while (api.next(L, idx)) {
      const kt = api.type(L, -2);
      if (kt === LUA_TNUMBER && api.isinteger(L, -2)) {
        const kb = api.tointegerish(L, -2);
        path.push(kb);
        const v = this.#read(L, vIdx, opts, path, onPath);
        path.pop();
        if (typeof kb === "number" && kb >= 1) {
          intKeys.push(kb);
          intVals.push(v);
          if (kb > maxInt) maxInt = kb;
        } else {
          allPositiveInts = false;
          strKeys.push(String(kb));
          strVals.push(v);
        }
      } else if (kt === LUA_TSTRING) {
        const kv = decodeLuaBytes(api.tobytesView(L, -2));
        if (typeof kv !== "string") {
          throw new ConversionError(`cannot convert a table key that is not valid UTF-8${keyPath(path)}`);
        }
        allPositiveInts = false;
        strKeys.push(kv);
        path.push(kv);
        strVals.push(this.#read(L, vIdx, opts, path, onPath));
        path.pop();
      } else if (kt === LUA_TNUMBER) {
        allPositiveInts = false;
        const f = api.tonumber(L, -2);
        strKeys.push(String(f));
        path.push(f);
        strVals.push(this.#read(L, vIdx, opts, path, onPath));
        path.pop();
      } else {
        onPath.delete(ptr);
        api.pop(L, 2);
        throw new ConversionError(
          `cannot convert a table with a ${LUA_TYPE_NAMES[kt]} key${keyPath(path)}`,
        );
      }
      api.pop(L, 1);
    }
    onPath.delete(ptr);

    if (mark === "array") {
      if (strKeys.length) {
        throw new ConversionError(
          `table marked as an array has a non-array key '${strKeys[0]}'${keyPath(path)}`,
        );
      }
      const n = Math.max(api.rawlen(L, idx), maxInt);
      const arr: unknown[] = new Array(n).fill(null);
      for (let i = 0; i < intKeys.length; i++) {
        const v = intVals[i];
        arr[intKeys[i] - 1] = v === undefined ? null : v;
      }
      return arr;
    }
    if (mark !== "object" && allPositiveInts && intKeys.length > 0 && maxInt === intKeys.length) {
      const arr: unknown[] = new Array(maxInt);
      for (let i = 0; i < intKeys.length; i++) arr[intKeys[i] - 1] = intVals[i];
      return arr;
    }
    const obj: Record<string, unknown> = {};
    for (let i = 0; i < intKeys.length; i++) obj[String(intKeys[i])] = intVals[i];
    for (let i = 0; i < strKeys.length; i++) obj[strKeys[i]] = strVals[i];
    return obj;
  }

  #write(L: number, v: unknown, opts: ToLuaOptions, path: PathStep[], onPath: Set<unknown>): void {
    const api = this.api;
    switch (typeof v) {
      case "undefined":
        api.pushnil(L);
        return;
      case "boolean":
        api.pushboolean(L, v);
        return;
      case "number":
        if (Number.isInteger(v) && !Object.is(v, -0) && Math.abs(v) < I64_LIMIT) {
          api.pushinteger(L, BigInt(v));
        } else {
          api.pushnumber(L, v);
        }
        return;
      case "bigint":
        if (v >= -(2n ** 63n) && v < 2n ** 63n) api.pushinteger(L, v);
        else api.pushnumber(L, Number(v));
        return;
      case "string":
        if (v.length > LARGE_VALUE) this.#checkRoom(v.length); // UTF-8 has at least as many bytes
        api.pushstring(L, v);
        return;
      case "object":
        break;
      default:
        throw new ConversionError(`cannot pass a JS ${typeof v} into Lua${keyPath(path)}`);
    }
    if (v === null) {
      if (opts.nullAs === "nil") api.pushnil(L);
      else api.pushlightuserdata(L, 0);
      return;
    }
    if (v instanceof LuaFloat) {
      api.pushnumber(L, v.value);
      return;
    }
    if (v instanceof NullsAsNil) {
      this.#write(L, v.value, { ...opts, nullAs: "nil" }, path, onPath);
      return;
    }
    if (v instanceof Uint8Array) {
      this.#checkRoom(v.length);
      api.pushbytes(L, v);
      return;
    }
    if (v instanceof LuaFunctionRef) {
      api.pushref(L, v.ref);
      return;
    }
    if (onPath.has(v)) {
      throw new ConversionError(`cannot pass a JS value that contains itself${keyPath(path)}`);
    }
    if (path.length > MAX_DEPTH) {
      throw new ConversionError(`cannot pass a value nested deeper than ${MAX_DEPTH} levels`);
    }
    if (!api.checkstack(L, 4)) throw new ConversionError("Lua stack overflow while converting");
    onPath.add(v);
    try {
      if (Array.isArray(v)) {
        api.createtable(L, v.length, 0);
        for (let i = 0; i < v.length; i++) {
          path.push(i + 1);
          this.#write(L, v[i], opts, path, onPath);
          path.pop();
          api.rawseti(L, -2, i + 1);
        }
        api.pushref(L, this.arrayMtRef);
        api.setmetatable(L, -2);
        return;
      }
      const withJson = v as { toJSON?: () => unknown };
      if (typeof withJson.toJSON === "function") {
        this.#write(L, withJson.toJSON(), opts, path, onPath);
        return;
      }
      if (v instanceof Error) {
        api.pushstring(L, v.message);
        return;
      }
      const obj = v as Record<string, unknown>;
      const keys = Object.keys(obj);
      api.createtable(L, 0, keys.length);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        const val = obj[k];
        if (val === undefined) continue;
        api.pushstring(L, k);
        path.push(k);
        this.#write(L, val, opts, path, onPath);
        path.pop();
        api.rawset(L, -3);
      }
    } finally {
      onPath.delete(v);
    }
  }
}
