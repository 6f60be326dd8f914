/**
 * Checking a value against a declared block's JSON Schema: a tool call's arguments before the
 * block runs, its structured result against its output schema after.
 *
 * Owns the subset of JSON Schema (2020-12, and the draft-07 spelling of the same keywords) that
 * block declarations use: `type` (one or a list; `integer` is a whole number), `enum`, `const`,
 * `properties`, `required`, `additionalProperties` (false or a schema), `items`, `minItems`,
 * `maxItems`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`,
 * `maxLength`, `pattern`, `anyOf`, `oneOf`, `allOf`, `not`, `if`/`then`/`else`, and `$ref` to `#/$defs/...` or
 * `#/definitions/...` of the root. Other keywords (`format`, `description`, `default`, ...) are
 * annotations and are not checked.
 *
 * Why not a general validator: the SDK's Ajv is not part of its public exports, and the errors a
 * caller needs ("argument 'b': expected number, got string") want the path of the field, which a
 * small walker gives directly.
 *
 * Invariant: the first problem found is reported, with the JSON path of the field (`a.b[2]`);
 * `undefined` means the value conforms.
 */
import type { JsonSchema } from "../blocks/declaration.ts";

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function typeMatches(want: string, v: unknown): boolean {
  const got = typeOf(v);
  return want === got || (want === "number" && got === "integer");
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function resolveRef(root: JsonSchema, ref: string): JsonSchema | undefined {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!m) return undefined;
  const defs = root[m[1]] as Record<string, JsonSchema> | undefined;
  return defs?.[m[2].replace(/~1/g, "/").replace(/~0/g, "~")];
}

function at(path: string, key: string | number): string {
  return typeof key === "number" ? `${path}[${key}]` : path ? `${path}.${key}` : key;
}

/** The first way `value` breaks `schema`, as "<path>: <what>", or undefined. */
export function schemaProblem(schema: JsonSchema, value: unknown): string | undefined {
  return check(schema, schema, value, "", 0);
}

function check(
  root: JsonSchema,
  s: JsonSchema | boolean,
  v: unknown,
  path: string,
  depth: number,
): string | undefined {
  if (s === true) return undefined;
  if (s === false) return `${path || "the value"}: no value is allowed here`;
  if (depth > 64) return `${path}: the schema nests too deep`;
  const where = path || "the value";
  if (typeof s.$ref === "string") {
    const target = resolveRef(root, s.$ref);
    if (!target) return `${where}: the schema's $ref ${s.$ref} cannot be resolved`;
    const p = check(root, target, v, path, depth + 1);
    if (p) return p;
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type as string[] : [s.type as string];
    if (!types.some((t) => typeMatches(t, v))) {
      return `${where}: expected ${types.join(" or ")}, got ${v === undefined ? "nothing" : typeOf(v)}`;
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, v))) {
    return `${where}: must be one of ${s.enum.map((e) => JSON.stringify(e)).join(", ")}, got ${
      JSON.stringify(v)
    }`;
  }
  if ("const" in s && !deepEqual(s.const, v)) return `${where}: must be ${JSON.stringify(s.const)}`;
  if (typeof v === "number") {
    if (typeof s.minimum === "number" && v < s.minimum) return `${where}: must be >= ${s.minimum}`;
    if (typeof s.maximum === "number" && v > s.maximum) return `${where}: must be <= ${s.maximum}`;
    if (typeof s.exclusiveMinimum === "number" && v <= s.exclusiveMinimum) {
      return `${where}: must be > ${s.exclusiveMinimum}`;
    }
    if (typeof s.exclusiveMaximum === "number" && v >= s.exclusiveMaximum) {
      return `${where}: must be < ${s.exclusiveMaximum}`;
    }
  }
  if (typeof v === "string") {
    const n = [...v].length;
    if (typeof s.minLength === "number" && n < s.minLength) {
      return `${where}: must be at least ${s.minLength} characters`;
    }
    if (typeof s.maxLength === "number" && n > s.maxLength) {
      return `${where}: must be at most ${s.maxLength} characters`;
    }
    if (typeof s.pattern === "string") {
      let re: RegExp | undefined;
      try {
        re = new RegExp(s.pattern, "u");
      } catch {
        re = undefined;
      }
      if (re && !re.test(v)) return `${where}: must match the pattern ${s.pattern}`;
    }
  }
  if (Array.isArray(v)) {
    if (typeof s.minItems === "number" && v.length < s.minItems) {
      return `${where}: needs at least ${s.minItems} items`;
    }
    if (typeof s.maxItems === "number" && v.length > s.maxItems) {
      return `${where}: takes at most ${s.maxItems} items`;
    }
    if (s.items !== undefined && typeof s.items === "object" && !Array.isArray(s.items)) {
      for (let i = 0; i < v.length; i++) {
        const p = check(root, s.items as JsonSchema, v[i], at(path, i), depth + 1);
        if (p) return p;
      }
    }
  }
  if (typeOf(v) === "object") {
    const o = v as Record<string, unknown>;
    const props = (s.properties ?? {}) as Record<string, JsonSchema>;
    if (Array.isArray(s.required)) {
      for (const r of s.required as string[]) {
        if (!(r in o)) return `${at(path, r)}: is required`;
      }
    }
    for (const [k, val] of Object.entries(o)) {
      if (k in props) {
        const p = check(root, props[k], val, at(path, k), depth + 1);
        if (p) return p;
      } else if (s.additionalProperties === false) {
        const known = Object.keys(props);
        return `${at(path, k)}: is not a known field${known.length ? ` (known: ${known.join(", ")})` : ""}`;
      } else if (typeof s.additionalProperties === "object" && s.additionalProperties !== null) {
        const p = check(root, s.additionalProperties as JsonSchema, val, at(path, k), depth + 1);
        if (p) return p;
      }
    }
  }
  if (Array.isArray(s.allOf)) {
    for (const sub of s.allOf as JsonSchema[]) {
      const p = check(root, sub, v, path, depth + 1);
      if (p) return p;
    }
  }
  if (
    Array.isArray(s.anyOf) && !(s.anyOf as JsonSchema[]).some((sub) => !check(root, sub, v, path, depth + 1))
  ) {
    return `${where}: matches none of the allowed shapes (anyOf)`;
  }
  if (Array.isArray(s.oneOf)) {
    const n = (s.oneOf as JsonSchema[]).filter((sub) => !check(root, sub, v, path, depth + 1)).length;
    if (n !== 1) return `${where}: must match exactly one of the allowed shapes (oneOf), matched ${n}`;
  }
  if (s.if !== undefined) {
    const branch = check(root, s.if as JsonSchema, v, path, depth + 1) ? s.else : s.then;
    if (branch !== undefined) {
      const p = check(root, branch as JsonSchema, v, path, depth + 1);
      if (p) return p;
    }
  }
  if (s.not !== undefined && !check(root, s.not as JsonSchema, v, path, depth + 1)) {
    return `${where}: matches a shape it must not (not)`;
  }
  return undefined;
}
