// src/lua/values.ts
var LuaFunctionRef = class {
  ref;
  release;
  /**
   * Wraps a registry reference.
   * @param ref registry reference inside the owning engine
   * @param release frees the registry slot; idempotent
   */
  constructor(ref, release) {
    this.ref = ref;
    this.release = release;
  }
};
var LuaFloat = class {
  value;
  /**
   * A tagged integral float.
   * @param value the float's value
   */
  constructor(value) {
    this.value = value;
  }
  /** The plain number. */
  valueOf() {
    return this.value;
  }
};
var LuaMulti = class {
  values;
  /**
   * Multiple results.
   * @param values the results, in order
   */
  constructor(values) {
    this.values = values;
  }
};
var LuaErrorValue = class extends Error {
  value;
  /**
   * An error carrying a non-string Lua value.
   * @param value the Lua error value (a table, usually)
   * @param message text for JS-side reports
   */
  constructor(value, message) {
    super(message ?? "Lua error value"), this.value = value;
    this.name = "LuaErrorValue";
  }
};
function luaTypeName(v) {
  if (v === void 0) return "nil";
  if (v === null) return "userdata";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "number" || typeof v === "bigint" || v instanceof LuaFloat) return "number";
  if (typeof v === "string" || v instanceof Uint8Array) return "string";
  if (v instanceof LuaFunctionRef) return "function";
  return "table";
}
var NullsAsNil = class {
  value;
  constructor(value) {
    this.value = value;
  }
};

// src/lua/json.ts
var JsonError = class extends TypeError {
  constructor(message) {
    super(message);
    this.name = "JsonError";
  }
};
function stringifyJson(value, indent = 0) {
  const parts = [];
  write(value, parts, indent, 0, []);
  return parts.join("");
}
function at(path) {
  if (path.length === 0) return "";
  return " at " + path.map((p) => typeof p === "number" ? `[${p}]` : `.${p}`).join("");
}
function write(v, out, indent, depth, path) {
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
  const obj = v;
  const keys = [];
  for (const k in obj) if (Object.hasOwn(obj, k) && obj[k] !== void 0) keys.push(k);
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
var FLOAT_SYNTAX = /[.eE]/;
var NEEDS_REVIVER = /\d\.0|\d[eE]|\d{16}/;
function parseJson(text) {
  if (!NEEDS_REVIVER.test(text)) return JSON.parse(text);
  return JSON.parse(text, function(_key, value, context) {
    if (typeof value !== "number" || context?.source === void 0) return value;
    const src = context.source;
    if (FLOAT_SYNTAX.test(src)) return Number.isInteger(value) ? new LuaFloat(value) : value;
    if (!Number.isSafeInteger(value)) {
      const big = BigInt(src);
      return big >= -(2n ** 63n) && big < 2n ** 63n ? big : value;
    }
    return value;
  });
}

export {
  LuaFunctionRef,
  LuaFloat,
  LuaMulti,
  LuaErrorValue,
  luaTypeName,
  NullsAsNil,
  stringifyJson,
  parseJson
};
