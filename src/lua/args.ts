/**
 * Argument checking for host functions, with the error wording every Lua API shares:
 * `std.fs.write: argument 2 (content) must be a string, got table`.
 *
 * Owns: reading positional arguments (already converted by `convert.ts`) with a type check that
 * names the function, the position and the parameter, and says what it got.
 */
import { LuaFloat, LuaFunctionRef, luaTypeName } from "../json/values.ts";

/** A bad argument to a host function. Raised in Lua at the caller's line. */
export class LuaArgError extends TypeError {
  /**
   * An argument error with its complete message.
   * @param message the complete message (`fn: argument i (name) must be ..., got ...`)
   */
  constructor(message: string) {
    super(message);
    this.name = "LuaArgError";
  }
}

/** Positional arguments of one host-function call. Positions are 1-based, as Lua counts them. */
export class Args {
  /**
   * The arguments of one call of `fn`.
   * @param fn the Lua-visible function name, for messages
   * @param values the converted arguments
   */
  constructor(readonly fn: string, readonly values: unknown[]) {}

  /** Number of arguments passed. */
  get length(): number {
    return this.values.length;
  }

  /** The raw converted value at position `i`. */
  at(i: number): unknown {
    return this.values[i - 1];
  }

  /** Raises the standard "must be X, got Y" error for position `i`. */
  fail(i: number, name: string, expected: string, got?: string): never {
    throw new LuaArgError(
      `${this.fn}: argument ${i} (${name}) must be ${expected}, got ${got ?? luaTypeName(this.at(i))}`,
    );
  }

  /** A UTF-8 string. */
  string(i: number, name: string): string {
    const v = this.at(i);
    if (typeof v === "string") return v;
    if (v instanceof Uint8Array) this.fail(i, name, "a valid UTF-8 string", "a non-UTF-8 string");
    if (typeof v === "number") return String(v);
    return this.fail(i, name, "a string");
  }

  /** An optional UTF-8 string (`undefined` when nil). */
  optString(i: number, name: string): string | undefined {
    return this.at(i) === undefined ? undefined : this.string(i, name);
  }

  /** Any Lua string: text, or the exact bytes when it is not valid UTF-8. */
  bytes(i: number, name: string): string | Uint8Array {
    const v = this.at(i);
    if (typeof v === "string" || v instanceof Uint8Array) return v;
    if (typeof v === "number") return String(v);
    return this.fail(i, name, "a string");
  }

  /** A number (integer or float). */
  number(i: number, name: string): number {
    const v = this.at(i);
    if (typeof v === "number") return v;
    if (v instanceof LuaFloat) return v.value;
    if (typeof v === "bigint") return Number(v);
    return this.fail(i, name, "a number");
  }

  /** An optional number. */
  optNumber(i: number, name: string): number | undefined {
    return this.at(i) === undefined ? undefined : this.number(i, name);
  }

  /** An integer-valued number. */
  integer(i: number, name: string): number {
    const v = this.number(i, name);
    if (!Number.isInteger(v)) this.fail(i, name, "an integer", String(v));
    return v;
  }

  /** An optional integer. */
  optInteger(i: number, name: string): number | undefined {
    return this.at(i) === undefined ? undefined : this.integer(i, name);
  }

  /** A boolean. */
  boolean(i: number, name: string): boolean {
    const v = this.at(i);
    if (typeof v === "boolean") return v;
    return this.fail(i, name, "a boolean");
  }

  /** An optional boolean. */
  optBoolean(i: number, name: string): boolean | undefined {
    return this.at(i) === undefined ? undefined : this.boolean(i, name);
  }

  /** A table read as an object (arrays are accepted too: they are tables in Lua). */
  table(i: number, name: string): Record<string, unknown> {
    const v = this.at(i);
    if (
      v !== null && typeof v === "object" && !(v instanceof Uint8Array) && !(v instanceof LuaFloat) &&
      !(v instanceof LuaFunctionRef)
    ) {
      return v as Record<string, unknown>;
    }
    return this.fail(i, name, "a table");
  }

  /** An optional table. */
  optTable(i: number, name: string): Record<string, unknown> | undefined {
    return this.at(i) === undefined ? undefined : this.table(i, name);
  }

  /** A Lua function (requires `functions: "ref"` on the host function). */
  func(i: number, name: string): LuaFunctionRef {
    const v = this.at(i);
    if (v instanceof LuaFunctionRef) return v;
    return this.fail(i, name, "a function");
  }

  /** An optional Lua function. */
  optFunc(i: number, name: string): LuaFunctionRef | undefined {
    return this.at(i) === undefined ? undefined : this.func(i, name);
  }
}

/**
 * Reads field `key` of an options table with a type check; messages name the field:
 * `sh.exec: argument 2 (opts) field 'timeout' must be a number, got string`.
 */
export function optField<T>(
  args: Args,
  i: number,
  name: string,
  opts: Record<string, unknown> | undefined,
  key: string,
  kind: "string" | "number" | "boolean" | "table" | "function",
): T | undefined {
  if (!opts) return undefined;
  const v = opts[key];
  if (v === undefined) return undefined;
  const t = luaTypeName(v);
  const ok = kind === "string" ? typeof v === "string" : t === kind;
  if (!ok) {
    throw new LuaArgError(
      `${args.fn}: argument ${i} (${name}) field '${key}' must be a ${kind}, got ${t}`,
    );
  }
  if (v instanceof LuaFloat) return v.value as T;
  if (typeof v === "bigint") return Number(v) as T;
  return v as T;
}
