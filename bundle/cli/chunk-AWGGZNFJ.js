import {
  LuaErrorValue,
  LuaFloat,
  LuaFunctionRef,
  LuaMulti,
  NullsAsNil,
  luaTypeName,
  stringifyJson
} from "./chunk-J4FUTWHQ.js";

// src/host/mcp/errors.ts
var McpError = class extends Error {
  code;
  constructor(message, code) {
    super(message), this.code = code;
    this.name = "McpError";
  }
};
function unknownServer(fn, name) {
  return new McpError(`${fn}: no server named '${name}'`, "unknown");
}
function runEnding(fn, name) {
  return new McpError(`${fn}: the run is ending; cannot connect server '${name}'`);
}
function sanitizeUrl(url) {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return url.replace(/[?#].*$/, "").replace(/\/\/[^/@]*@/, "//");
  }
}
function seconds(ms) {
  return `${Number((ms / 1e3).toFixed(2))} s`;
}

// src/lua/wasm.ts
import { LuaFactory } from "wasmoon";
import { fileURLToPath } from "node:url";

// src/lua/capi.ts
var LUA_TNONE = -1;
var LUA_TNIL = 0;
var LUA_TBOOLEAN = 1;
var LUA_TLIGHTUSERDATA = 2;
var LUA_TNUMBER = 3;
var LUA_TSTRING = 4;
var LUA_TTABLE = 5;
var LUA_TFUNCTION = 6;
var LUA_OK = 0;
var LUA_YIELD = 1;
var LUA_REGISTRYINDEX = -1e6 - 1e3;
var LUA_MASKCOUNT = 8;
var LUA_TYPE_NAMES = [
  "nil",
  "boolean",
  "userdata",
  "number",
  "string",
  "table",
  "function",
  "userdata",
  "thread"
];
var encoder = new TextEncoder();
var LuaApi = class {
  /** The emscripten module: raw `_lua*` exports, heap views, `_malloc`. */
  m;
  #scratch = 0;
  #scratchSize = 0;
  #interned = /* @__PURE__ */ new Map();
  #lenPtr;
  /**
   * A façade over one emscripten module's exports.
   * @param m the emscripten module of one wasmoon factory
   */
  constructor(m) {
    this.m = m;
    this.#lenPtr = m._malloc(8);
  }
  // --- stack -------------------------------------------------------------------------------
  /** `lua_gettop`. */
  gettop(L) {
    return this.m._lua_gettop(L);
  }
  /** `lua_settop`. */
  settop(L, idx) {
    this.m._lua_settop(L, idx);
  }
  /** `lua_pop`. */
  pop(L, n) {
    this.m._lua_settop(L, -n - 1);
  }
  /** `lua_absindex`. */
  absindex(L, idx) {
    return this.m._lua_absindex(L, idx);
  }
  /** `lua_pushvalue`. */
  pushvalue(L, idx) {
    this.m._lua_pushvalue(L, idx);
  }
  /** `lua_checkstack`. */
  checkstack(L, n) {
    return this.m._lua_checkstack(L, n) !== 0;
  }
  /** `lua_rotate`. */
  rotate(L, idx, n) {
    this.m._lua_rotate(L, idx, n);
  }
  /** `lua_insert`. */
  insert(L, idx) {
    this.m._lua_rotate(L, idx, 1);
  }
  /** `lua_xmove`. */
  xmove(from, to, n) {
    this.m._lua_xmove(from, to, n);
  }
  // --- reading ----------------------------------------------------------------------------
  /** `lua_type`. */
  type(L, idx) {
    return this.m._lua_type(L, idx);
  }
  /** `lua_toboolean`. */
  toboolean(L, idx) {
    return this.m._lua_toboolean(L, idx) !== 0;
  }
  /** `lua_isinteger`. */
  isinteger(L, idx) {
    return this.m._lua_isinteger(L, idx) !== 0;
  }
  /** `lua_tointegerx` (as a bigint). */
  tointeger(L, idx) {
    return BigInt(this.m._lua_tointegerx(L, idx, 0));
  }
  /**
   * The integer at `idx` (`lua_isinteger` is true there): a number when it is below 2^53 in
   * magnitude, read as a double, which is exact in that range and makes no bigint; a bigint
   * beyond.
   */
  tointegerish(L, idx) {
    const d = this.m._lua_tonumberx(L, idx, 0);
    return d <= Number.MAX_SAFE_INTEGER && d >= -Number.MAX_SAFE_INTEGER ? d : this.tointeger(L, idx);
  }
  /** `lua_tonumberx`. */
  tonumber(L, idx) {
    return this.m._lua_tonumberx(L, idx, 0);
  }
  /** `lua_topointer`. */
  topointer(L, idx) {
    return this.m._lua_topointer(L, idx);
  }
  /** `lua_touserdata`. */
  touserdata(L, idx) {
    return this.m._lua_touserdata(L, idx);
  }
  /** `lua_rawlen` (as a number). */
  rawlen(L, idx) {
    return Number(this.m._lua_rawlen(L, idx));
  }
  /** `lua_tothread`. */
  tothread(L, idx) {
    return this.m._lua_tothread(L, idx);
  }
  /** The bytes of the string (or number, converted in place) at `idx`; a copy, safe to keep. */
  tobytes(L, idx) {
    const ptr = this.m._lua_tolstring(L, idx, this.#lenPtr);
    if (ptr === 0) return new Uint8Array(0);
    const len = this.m.HEAPU32[this.#lenPtr >> 2];
    return this.m.HEAPU8.slice(ptr, ptr + len);
  }
  /** A view of the string bytes at `idx`, valid only until the next call into Lua. */
  tobytesView(L, idx) {
    const ptr = this.m._lua_tolstring(L, idx, this.#lenPtr);
    if (ptr === 0) return new Uint8Array(0);
    const len = this.m.HEAPU32[this.#lenPtr >> 2];
    return this.m.HEAPU8.subarray(ptr, ptr + len);
  }
  /** `lua_next`. */
  next(L, idx) {
    return this.m._lua_next(L, idx) !== 0;
  }
  /** `lua_getmetatable`. */
  getmetatable(L, idx) {
    return this.m._lua_getmetatable(L, idx) !== 0;
  }
  /** `lua_rawequal`. */
  rawequal(L, a, b) {
    return this.m._lua_rawequal(L, a, b) !== 0;
  }
  /** `lua_rawgeti`. */
  rawgeti(L, idx, n) {
    return this.m._lua_rawgeti(L, idx, BigInt(n));
  }
  /** `lua_rawget`. */
  rawget(L, idx) {
    return this.m._lua_rawget(L, idx);
  }
  /** `lua_getfield`. */
  getfield(L, idx, key) {
    return this.m._lua_getfield(L, idx, this.cstr(key));
  }
  /** `lua_getglobal`. */
  getglobal(L, name) {
    return this.m._lua_getglobal(L, this.cstr(name));
  }
  /** `lua_isyieldable`. */
  isyieldable(L) {
    return this.m._lua_isyieldable(L) !== 0;
  }
  // --- pushing ----------------------------------------------------------------------------
  /** `lua_pushnil`. */
  pushnil(L) {
    this.m._lua_pushnil(L);
  }
  /** `lua_pushboolean`. */
  pushboolean(L, b) {
    this.m._lua_pushboolean(L, b ? 1 : 0);
  }
  /** `lua_pushinteger`. */
  pushinteger(L, n) {
    this.m._lua_pushinteger(L, n);
  }
  /** `lua_pushnumber`. */
  pushnumber(L, n) {
    this.m._lua_pushnumber(L, n);
  }
  /** `lua_pushlightuserdata`. */
  pushlightuserdata(L, p) {
    this.m._lua_pushlightuserdata(L, p);
  }
  /** `lua_pushcclosure`. */
  pushcclosure(L, fn, nup) {
    this.m._lua_pushcclosure(L, fn, nup);
  }
  /** Pushes raw bytes as a Lua string. */
  pushbytes(L, bytes) {
    const ptr = this.#ensureScratch(bytes.length);
    this.m.HEAPU8.set(bytes, ptr);
    this.m._lua_pushlstring(L, ptr, bytes.length);
  }
  /** Pushes a JS string encoded as UTF-8 (lone surrogates become U+FFFD, as TextEncoder does). */
  pushstring(L, s) {
    if (s.length === 0) {
      this.m._lua_pushlstring(L, 0, 0);
      return;
    }
    const ptr = this.#ensureScratch(s.length * 3);
    if (s.length <= 32) {
      const heap = this.m.HEAPU8;
      let i = 0;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c > 127) break;
        heap[ptr + i] = c;
      }
      if (i === s.length) {
        this.m._lua_pushlstring(L, ptr, i);
        return;
      }
    }
    const { written } = encoder.encodeInto(s, this.m.HEAPU8.subarray(ptr, ptr + s.length * 3));
    this.m._lua_pushlstring(L, ptr, written);
  }
  /** `lua_createtable`. */
  createtable(L, narr, nrec) {
    this.m._lua_createtable(L, narr, nrec);
  }
  /** `lua_rawseti`. */
  rawseti(L, idx, n) {
    this.m._lua_rawseti(L, idx, BigInt(n));
  }
  /** `lua_rawset`. */
  rawset(L, idx) {
    this.m._lua_rawset(L, idx);
  }
  /** `lua_setfield`. */
  setfield(L, idx, key) {
    this.m._lua_setfield(L, idx, this.cstr(key));
  }
  /** `lua_setglobal`. */
  setglobal(L, name) {
    this.m._lua_setglobal(L, this.cstr(name));
  }
  /** `lua_setmetatable`. */
  setmetatable(L, idx) {
    this.m._lua_setmetatable(L, idx);
  }
  // --- references, errors, execution ---------------------------------------------------------
  /** `luaL_ref` on the registry. */
  ref(L) {
    return this.m._luaL_ref(L, LUA_REGISTRYINDEX);
  }
  /** `luaL_unref` on the registry. */
  unref(L, ref) {
    this.m._luaL_unref(L, LUA_REGISTRYINDEX, ref);
  }
  /** `lua_rawgeti` on the registry (pushes a ref). */
  pushref(L, ref) {
    this.m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(ref));
  }
  /** Pushes `chunk:line:` of the function at `level` (1 = the caller of the running C function). */
  where(L, level) {
    this.m._luaL_where(L, level);
  }
  /** `lua_concat`. */
  concat(L, n) {
    this.m._lua_concat(L, n);
  }
  /** Raises the value on top of the stack. Never returns normally (it longjmps). */
  error(L) {
    return this.m._lua_error(L);
  }
  /**
   * Loads `source` as a chunk named `chunkname` (`luaL_loadbufferx`); pushes the function or the
   * message. `mode` is "t" (text only, the default: user code never loads bytecode) or "b"
   * (bytecode only, for the runtime's precompiled chunks).
   */
  load(L, source, chunkname, mode = "t") {
    const name = this.m._malloc(encoder.encode(chunkname).length + 1);
    try {
      this.#writeCString(name, chunkname);
      const buf = this.m._malloc(Math.max(1, source.length));
      try {
        this.m.HEAPU8.set(source, buf);
        return this.m._luaL_loadbufferx(L, buf, source.length, name, this.cstr(mode));
      } finally {
        this.m._free(buf);
      }
    } finally {
      this.m._free(name);
    }
  }
  /** `lua_newthread`. */
  newthread(L) {
    return this.m._lua_newthread(L);
  }
  /** Resumes `co`; returns the status and the number of values it left on its stack. */
  resume(co, from, nargs) {
    const status = this.m._lua_resume(co, from, nargs, this.#lenPtr);
    return {
      status,
      nresults: this.m.HEAPU32[this.#lenPtr >> 2]
    };
  }
  /** `lua_sethook`. */
  sethook(L, fn, mask, count) {
    this.m._lua_sethook(L, fn, mask, count);
  }
  /** `luaL_traceback`. */
  traceback(L, L1, msg, level) {
    this.m._luaL_traceback(L, L1, msg === null ? 0 : this.cstr(msg), level);
  }
  /** A NUL-terminated copy of `s` in the wasm heap, kept for the life of the module. */
  cstr(s) {
    let p = this.#interned.get(s);
    if (p === void 0) {
      p = this.m._malloc(encoder.encode(s).length + 1);
      this.#writeCString(p, s);
      this.#interned.set(s, p);
    }
    return p;
  }
  #writeCString(ptr, s) {
    const bytes = encoder.encode(s);
    this.m.HEAPU8.set(bytes, ptr);
    this.m.HEAPU8[ptr + bytes.length] = 0;
  }
  #ensureScratch(size) {
    if (size > this.#scratchSize) {
      if (this.#scratch) this.m._free(this.#scratch);
      const want = Math.max(size, 4096);
      this.#scratch = this.m._malloc(want);
      if (!this.#scratch) throw new RangeError(`cannot allocate ${want} bytes in the Lua heap`);
      this.#scratchSize = want;
    }
    return this.#scratch;
  }
};

// src/lua/wasm.ts
var SHARED = Symbol.for("agent-block.lua.factory");
var slot = globalThis;
function glueWasmPath() {
  return fileURLToPath(import.meta.resolve("wasmoon/dist/glue.wasm"));
}
function sharedFactory() {
  return slot[SHARED] ??= (async () => {
    const f = new LuaFactory(glueWasmPath());
    const { value: wasm, exports } = await captureExports(() => f.getLuaModule());
    const module = wasm.module;
    if (exports) bypassAssertions(module, exports);
    return {
      factory: f,
      api: new LuaApi(module)
    };
  })();
}
function preloadLua() {
  sharedFactory().catch(() => void 0);
}
async function captureExports(load) {
  const original = WebAssembly.instantiate;
  let exports;
  WebAssembly.instantiate = async (...args) => {
    const r = await original.apply(WebAssembly, args);
    exports ??= (r.instance ?? r).exports;
    return r;
  };
  try {
    const value = await load();
    return {
      value,
      exports
    };
  } finally {
    WebAssembly.instantiate = original;
  }
}
function bypassAssertions(module, exports) {
  const memory = Object.values(exports).find((v) => v instanceof WebAssembly.Memory);
  if (!memory || memory.buffer !== module.HEAPU8.buffer) return;
  for (const key of Object.keys(module)) {
    if (!key.startsWith("_lua")) continue;
    const raw = exports[key.slice(1)];
    if (typeof raw === "function") module[key] = raw;
  }
}

// src/lua/engine.ts
import { LuaGlobal } from "wasmoon";

// src/lua/convert.ts
var ConversionError = class extends TypeError {
  constructor(message) {
    super(message);
    this.name = "ConversionError";
  }
};
var MAX_DEPTH = 200;
var I64_LIMIT = 2 ** 63;
var strictUtf8 = new TextDecoder("utf-8", {
  fatal: true,
  ignoreBOM: true
});
var SHORT_STRING = 32;
function decodeLuaBytes(view) {
  const n = view.length;
  if (n <= SHORT_STRING) {
    let out = "";
    let i = 0;
    for (; i < n; i++) {
      const c = view[i];
      if (c > 127) break;
      out += String.fromCharCode(c);
    }
    if (i === n) return out;
  }
  let ascii = true;
  for (let i = 0; i < view.length; i++) {
    if (view[i] > 127) {
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
var ArgStep = class {
  n;
  constructor(n) {
    this.n = n;
  }
};
var ARG_STEPS = Array.from({
  length: 16
}, (_, i) => new ArgStep(i));
var argStep = (n) => ARG_STEPS[n] ?? new ArgStep(n);
function keyPath(path) {
  if (!path.length) return "";
  return ` at ${path.map((p) => p instanceof ArgStep ? `argument ${p.n}` : typeof p === "string" ? "." + p : `[${p}]`).join("")}`;
}
var quotedKeys = /* @__PURE__ */ new Map();
function quotedKey(k) {
  let q = quotedKeys.get(k);
  if (q === void 0) {
    q = JSON.stringify(k);
    if (k.length <= 64 && quotedKeys.size < 4096) quotedKeys.set(k, q);
  }
  return q;
}
var Converter = class {
  api;
  arrayMtRef;
  objectMtRef;
  makeFunctionRef;
  /**
   * Binds the converter to one engine.
   * @param api the raw API
   * @param arrayMtRef registry ref of `std.json.array_mt`
   * @param objectMtRef registry ref of `std.json.object_mt`
   * @param makeFunctionRef turns the function on top of a stack into a `LuaFunctionRef`
   */
  constructor(api, arrayMtRef, objectMtRef, makeFunctionRef) {
    this.api = api;
    this.arrayMtRef = arrayMtRef;
    this.objectMtRef = objectMtRef;
    this.makeFunctionRef = makeFunctionRef;
  }
  /** Reads the Lua value at `idx` of `L`. */
  toJs(L, idx, opts = {}) {
    return this.#read(L, this.api.absindex(L, idx), opts, [], /* @__PURE__ */ new Set());
  }
  /** Reads stack slots `from..gettop()` into an array (missing trailing values are omitted). */
  argsToJs(L, from, opts = {}) {
    const top = this.api.gettop(L);
    const out = [];
    if (top < from) return out;
    const path = [
      argStep(from)
    ];
    const onPath = /* @__PURE__ */ new Set();
    for (let i = from; i <= top; i++) {
      path.length = 1;
      path[0] = argStep(i);
      onPath.clear();
      out.push(this.#read(L, i, opts, path, onPath));
    }
    return out;
  }
  /** Pushes one JS value onto `L`. */
  push(L, v, opts = {}) {
    this.#write(L, v, opts, [], /* @__PURE__ */ new Set());
  }
  /**
   * JSON text of the Lua value at `idx`, written straight from the stack — the same text as
   * `stringifyJson(toJs(L, idx, { floats: "tagged" }))`, without building the JS value first.
   * Returns `undefined` for anything outside the plain case (a value that would raise, a
   * function, non-UTF-8 bytes, a non-finite number, keys that collide once written as text):
   * the caller then takes the general path, which raises with the usual message.
   */
  toJson(L, idx) {
    return this.#json(L, this.api.absindex(L, idx), 0, /* @__PURE__ */ new Set());
  }
  #json(L, idx, depth, onPath) {
    const api = this.api;
    switch (api.type(L, idx)) {
      case LUA_TBOOLEAN:
        return api.toboolean(L, idx) ? "true" : "false";
      case LUA_TNUMBER: {
        if (api.isinteger(L, idx)) return String(api.tointegerish(L, idx));
        const f = api.tonumber(L, idx);
        if (!Number.isFinite(f)) return void 0;
        if (Object.is(f, -0)) return "-0.0";
        return Number.isInteger(f) && Math.abs(f) < 1e21 ? `${f}.0` : String(f);
      }
      case LUA_TSTRING: {
        const s = decodeLuaBytes(api.tobytesView(L, idx));
        return typeof s === "string" ? JSON.stringify(s) : void 0;
      }
      case LUA_TLIGHTUSERDATA:
        return api.touserdata(L, idx) === 0 ? "null" : void 0;
      case LUA_TTABLE:
        return this.#jsonTable(L, idx, depth, onPath);
      default:
        return void 0;
    }
  }
  #jsonTable(L, idx, depth, onPath) {
    const api = this.api;
    const ptr = api.topointer(L, idx);
    if (onPath.has(ptr) || depth >= MAX_DEPTH || !api.checkstack(L, 4)) return void 0;
    const mark = this.#markOf(L, idx);
    onPath.add(ptr);
    const intKeys = [];
    const intVals = [];
    const strKeys = [];
    const strVals = [];
    let allPositiveInts = true;
    let numberAsText = false;
    let maxInt = 0;
    const vIdx = api.gettop(L) + 2;
    api.pushnil(L);
    while (api.next(L, idx)) {
      const kt = api.type(L, -2);
      let key;
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
      const v = intKey || key !== void 0 ? this.#json(L, vIdx, depth + 1, onPath) : void 0;
      if (v === void 0) {
        api.pop(L, 2);
        onPath.delete(ptr);
        return void 0;
      }
      if (intKey) {
        intKeys.push(intKey);
        intVals.push(v);
        if (intKey > maxInt) maxInt = intKey;
      } else {
        allPositiveInts = false;
        strKeys.push(key);
        strVals.push(v);
      }
      api.pop(L, 1);
    }
    onPath.delete(ptr);
    if (mark === "array") {
      if (strKeys.length) return void 0;
      const n2 = Math.max(api.rawlen(L, idx), maxInt);
      if (n2 === 0) return "[]";
      const arr = new Array(n2).fill("null");
      for (let i = 0; i < intKeys.length; i++) arr[intKeys[i] - 1] = intVals[i];
      return "[" + arr.join(",") + "]";
    }
    if (mark !== "object" && allPositiveInts && intKeys.length > 0 && maxInt === intKeys.length) {
      const arr = new Array(maxInt);
      for (let i = 0; i < intKeys.length; i++) arr[intKeys[i] - 1] = intVals[i];
      return "[" + arr.join(",") + "]";
    }
    const n = intKeys.length + strKeys.length;
    if (n === 0) return "{}";
    if (intKeys.length === 0 && !numberAsText) {
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
      let out2 = "{" + quotedKey(strKeys[0]) + ":" + strVals[0];
      for (let i = 1; i < n; i++) out2 += "," + quotedKey(strKeys[i]) + ":" + strVals[i];
      return out2 + "}";
    }
    const keys = new Array(n);
    const byKey = /* @__PURE__ */ new Map();
    for (let i = 0; i < intKeys.length; i++) {
      const k = String(intKeys[i]);
      keys[i] = k;
      byKey.set(k, intVals[i]);
    }
    for (let i = 0; i < strKeys.length; i++) {
      keys[intKeys.length + i] = strKeys[i];
      byKey.set(strKeys[i], strVals[i]);
    }
    if (byKey.size !== n) return void 0;
    keys.sort();
    let out = "{";
    for (let i = 0; i < n; i++) {
      if (i) out += ",";
      out += quotedKey(keys[i]) + ":" + byKey.get(keys[i]);
    }
    return out + "}";
  }
  #read(L, idx, opts, path, onPath) {
    const api = this.api;
    const t = api.type(L, idx);
    switch (t) {
      case LUA_TNIL:
      case LUA_TNONE:
        return void 0;
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
  #markOf(L, idx) {
    const api = this.api;
    if (!api.getmetatable(L, idx)) return void 0;
    let mark;
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
  #readTable(L, idx, opts, path, onPath) {
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
    const intKeys = [];
    const intVals = [];
    const strKeys = [];
    const strVals = [];
    let allPositiveInts = true;
    let maxInt = 0;
    const vIdx = api.gettop(L) + 2;
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
        throw new ConversionError(`cannot convert a table with a ${LUA_TYPE_NAMES[kt]} key${keyPath(path)}`);
      }
      api.pop(L, 1);
    }
    onPath.delete(ptr);
    if (mark === "array") {
      if (strKeys.length) {
        throw new ConversionError(`table marked as an array has a non-array key '${strKeys[0]}'${keyPath(path)}`);
      }
      const n = Math.max(api.rawlen(L, idx), maxInt);
      const arr = new Array(n).fill(null);
      for (let i = 0; i < intKeys.length; i++) {
        const v = intVals[i];
        arr[intKeys[i] - 1] = v === void 0 ? null : v;
      }
      return arr;
    }
    if (mark !== "object" && allPositiveInts && intKeys.length > 0 && maxInt === intKeys.length) {
      const arr = new Array(maxInt);
      for (let i = 0; i < intKeys.length; i++) arr[intKeys[i] - 1] = intVals[i];
      return arr;
    }
    const obj = {};
    for (let i = 0; i < intKeys.length; i++) obj[String(intKeys[i])] = intVals[i];
    for (let i = 0; i < strKeys.length; i++) obj[strKeys[i]] = strVals[i];
    return obj;
  }
  #write(L, v, opts, path, onPath) {
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
      this.#write(L, v.value, {
        ...opts,
        nullAs: "nil"
      }, path, onPath);
      return;
    }
    if (v instanceof Uint8Array) {
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
      const withJson = v;
      if (typeof withJson.toJSON === "function") {
        this.#write(L, withJson.toJSON(), opts, path, onPath);
        return;
      }
      if (v instanceof Error) {
        api.pushstring(L, v.message);
        return;
      }
      const obj = v;
      const keys = Object.keys(obj);
      api.createtable(L, 0, keys.length);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        const val = obj[k];
        if (val === void 0) continue;
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
};

// src/lua/args.ts
var LuaArgError = class extends TypeError {
  /**
   * An argument error with its complete message.
   * @param message the complete message (`fn: argument i (name) must be ..., got ...`)
   */
  constructor(message) {
    super(message);
    this.name = "LuaArgError";
  }
};
var Args = class {
  fn;
  values;
  /**
   * The arguments of one call of `fn`.
   * @param fn the Lua-visible function name, for messages
   * @param values the converted arguments
   */
  constructor(fn, values) {
    this.fn = fn;
    this.values = values;
  }
  /** Number of arguments passed. */
  get length() {
    return this.values.length;
  }
  /** The raw converted value at position `i`. */
  at(i) {
    return this.values[i - 1];
  }
  /** Raises the standard "must be X, got Y" error for position `i`. */
  fail(i, name, expected, got) {
    throw new LuaArgError(`${this.fn}: argument ${i} (${name}) must be ${expected}, got ${got ?? luaTypeName(this.at(i))}`);
  }
  /** A UTF-8 string. */
  string(i, name) {
    const v = this.at(i);
    if (typeof v === "string") return v;
    if (v instanceof Uint8Array) this.fail(i, name, "a valid UTF-8 string", "a non-UTF-8 string");
    if (typeof v === "number") return String(v);
    return this.fail(i, name, "a string");
  }
  /** An optional UTF-8 string (`undefined` when nil). */
  optString(i, name) {
    return this.at(i) === void 0 ? void 0 : this.string(i, name);
  }
  /** Any Lua string: text, or the exact bytes when it is not valid UTF-8. */
  bytes(i, name) {
    const v = this.at(i);
    if (typeof v === "string" || v instanceof Uint8Array) return v;
    if (typeof v === "number") return String(v);
    return this.fail(i, name, "a string");
  }
  /** A number (integer or float). */
  number(i, name) {
    const v = this.at(i);
    if (typeof v === "number") return v;
    if (v instanceof LuaFloat) return v.value;
    if (typeof v === "bigint") return Number(v);
    return this.fail(i, name, "a number");
  }
  /** An optional number. */
  optNumber(i, name) {
    return this.at(i) === void 0 ? void 0 : this.number(i, name);
  }
  /** An integer-valued number. */
  integer(i, name) {
    const v = this.number(i, name);
    if (!Number.isInteger(v)) this.fail(i, name, "an integer", String(v));
    return v;
  }
  /** An optional integer. */
  optInteger(i, name) {
    return this.at(i) === void 0 ? void 0 : this.integer(i, name);
  }
  /** A boolean. */
  boolean(i, name) {
    const v = this.at(i);
    if (typeof v === "boolean") return v;
    return this.fail(i, name, "a boolean");
  }
  /** An optional boolean. */
  optBoolean(i, name) {
    return this.at(i) === void 0 ? void 0 : this.boolean(i, name);
  }
  /** A table read as an object (arrays are accepted too: they are tables in Lua). */
  table(i, name) {
    const v = this.at(i);
    if (v !== null && typeof v === "object" && !(v instanceof Uint8Array) && !(v instanceof LuaFloat) && !(v instanceof LuaFunctionRef)) {
      return v;
    }
    return this.fail(i, name, "a table");
  }
  /** An optional table. */
  optTable(i, name) {
    return this.at(i) === void 0 ? void 0 : this.table(i, name);
  }
  /** A Lua function (requires `functions: "ref"` on the host function). */
  func(i, name) {
    const v = this.at(i);
    if (v instanceof LuaFunctionRef) return v;
    return this.fail(i, name, "a function");
  }
  /** An optional Lua function. */
  optFunc(i, name) {
    return this.at(i) === void 0 ? void 0 : this.func(i, name);
  }
};
function optField(args, i, name, opts, key, kind) {
  if (!opts) return void 0;
  const v = opts[key];
  if (v === void 0) return void 0;
  const t = luaTypeName(v);
  const ok = kind === "string" ? typeof v === "string" : t === kind;
  if (!ok) {
    throw new LuaArgError(`${args.fn}: argument ${i} (${name}) field '${key}' must be a ${kind}, got ${t}`);
  }
  if (v instanceof LuaFloat) return v.value;
  if (typeof v === "bigint") return Number(v);
  return v;
}

// src/lua/precompiled.gen.ts
var PRECOMPILED = {
  "=ab:fs_tools": {
    source: "src/host/fs_tools.lua",
    hash: "a218ae0b:14a1",
    bytecode: "G0x1YVQAGZMNChoKBAgIeFYAAAAAAAAAAAAAACh3QAGNPWFiOmZzX3Rvb2xzgIAAARUBs1EAAABQAAADDgEAAIsBAAELAgACiwIAA44CBQQLAwAFkwMAAlIAAAADBAMAg4QDAM4DAgATBAMAUgAAABKECAkShAoJEoQLCc8EAAATBQIAUgAAABKFDAMShQ0OkwUEAFIAAAATBgIAUgAAABKGDQ+ABgkAEwcCAFIAAACTBwMAUgAAAJIHEgoTCAIAUgAAABKIDBQSiA0VkgcTEBMIAgBSAAAAEogMFBKIDReSBxYQEgcRD5MHAAFSAAAAAwgJAM4HAQASBxgPxAYCAhIGEA2SBQYMEwYCAFIAAACDhgwAAwcNAIOHDQC1BgMAEgYNDYAGCQATBwIAUgAAAJMHBABSAAAAkgcSChMIAQBSAAAAEogMFJIHExATCAEAUgAAABKIDBSSBxYQEwgCAFIAAAASiAwDEogNHZIHHBATCAIAUgAAABKIDAMSiA0fkgceEBIHEQ+TBwAFUgAAAAMICQCDiAkAAwkLAIMJDgADCg8AzgcFABIHGA/EBgICEgYQDZIFBwwTBgIAUgAAABKGDSCABgkAEwcCAFIAAACTBwIAUgAAAJIHEgoTCAEAUgAAABKIDAOSBx4QEgcRD5MHAAJSAAAAAwgJAIMIDwDOBwIAEgcYD8QGAgISBhANkgUIDBMGAgBSAAAAEoYNIYAGCQATBwIAUgAAAJMHAQBSAAAAkgcSChIHEQ+TBwABUgAAAAMICQDOBwEAEgcYD8QGAgISBhANkgUKDBMGAgBSAAAAgwYRAAOHEQC1BgIAEgYNDYAGCQATBwIAUgAAAJMHAwBSAAAAkgcSChMIAQBSAAAAEogMA5IHJBATCAEAUgAAABKIDAOSByUQEgcRD5MHAANSAAAAAwgJAIMIEgADiRIAzgcDABIHGA/EBgICEgYQDZIFCwxPhgAAiwYAJo4GDSdPBwEAkgYoDosGACaOBg0nT4cBAJIGKQ7GhgEBqgSLdXNlcl9sZXZlbASFdHlwZQSGZXJyb3IEh3N0cmluZwSHZm9ybWF0BIdpcGFpcnMEiGZzX3JlYWQEiGZzX2VkaXQEiWZzX3dyaXRlEQSMZnNfcm9sbGJhY2sEkmZzX3NlYXJjaF9yZXBsYWNlBIV0eXBlBIxkZXNjcmlwdGlvbgSoRmlsZSBwYXRoLCByZWxhdGl2ZSB0byB0aGUgcHJvamVjdCByb290FNxSZWFkIGEgdGV4dCBmaWxlIHdpdGggbGluZSBudW1iZXJzLiBPcHRpb25hbGx5IG9ubHkgbGluZXMgc3RhcnRfbGluZS4uZW5kX2xpbmUgKGluY2x1c2l2ZSkuBI1pbnB1dF9zY2hlbWEEgnAEhXBhdGgEi3N0YXJ0X2xpbmUEiGludGVnZXIEnUZpcnN0IGxpbmUgdG8gc2hvdyAoMS1iYXNlZCkEiWVuZF9saW5lBJ5MYXN0IGxpbmUgdG8gc2hvdyAoaW5jbHVzaXZlKQSCchTgUmVwbGFjZSBsaW5lcyBzdGFydF9saW5lLi5lbmRfbGluZSAoaW5jbHVzaXZlLCAxLWJhc2VkKSBvZiBhIGZpbGUgd2l0aCBjb250ZW50LiBleHBlY3QgbXVzdCBiZSAU7XRoZSBleGFjdCBjdXJyZW50IHRleHQgb2YgdGhvc2UgbGluZXMgKGNvcHkgaXQgZnJvbSBmc19yZWFkLCB3aXRob3V0IHRoZSBsaW5lIG51bWJlcnMpOyB0aGUgZWRpdCBpcyByZWZ1c2VkIBTyb3RoZXJ3aXNlLiBFbXB0eSBjb250ZW50IGRlbGV0ZXMgdGhlIGxpbmVzOyBlbmRfbGluZSA9IHN0YXJ0X2xpbmUgLSAxIHdpdGggZXhwZWN0ID0gIiIgaW5zZXJ0cyBiZWZvcmUgc3RhcnRfbGluZS4Eh2V4cGVjdASpQ3VycmVudCB0ZXh0IG9mIHRoZSBsaW5lcyBiZWluZyByZXBsYWNlZASIY29udGVudASZTmV3IHRleHQgZm9yIHRob3NlIGxpbmVzFMpDcmVhdGUgb3Igb3ZlcndyaXRlIGEgZmlsZSB3aXRoIGNvbnRlbnQgKHBhcmVudCBkaXJlY3RvcmllcyBhcmUgY3JlYXRlZCkuFOZVbmRvIHRoZSBtb3N0IHJlY2VudCByZW1haW5pbmcgZWRpdCB0aGlzIHJ1biBtYWRlIHRvIGEgZmlsZSAoZnNfZWRpdCwgZnNfd3JpdGUgb3IgZnNfc2VhcmNoX3JlcGxhY2UpLhTZUmVwbGFjZSBvbmUgc25pcHBldCBvZiBhIGZpbGU6IHNlYXJjaCBtdXN0IG9jY3VyIGV4YWN0bHkgb25jZSwgdmVyYmF0aW0gKGluY2x1ZGUgZW5vdWdoIBTAc3Vycm91bmRpbmcgdGV4dCB0byBtYWtlIGl0IHVuaXF1ZSk7IGl0IGlzIHJlcGxhY2VkIGJ5IHJlcGxhY2UuBIdzZWFyY2gEiHJlcGxhY2UEhHN0ZASDZnMEi3Rvb2xfc3BlY3MEj3JlZ2lzdGVyX3Rvb2xzgQEAAISAkZEBAAOJkwADAFIAAACSgAABDgEAA5IAAgIOAQAFkgAEAsgAAgDHAAEAhgSFdHlwZQSHb2JqZWN0BItwcm9wZXJ0aWVzBIJwBIlyZXF1aXJlZASCcoCAiQAAAAAAAAAAAICBgnSAiYCAtdwCABEBkbyAAAC4BwCACQEAAIABAQBEAQICPIEBADgFAIAJAQEAiQECAAMCAQCAAgAACQMAAIADAQBEAwIAxAEAAgkCAwBEAgEARAEAAcKAAAA4AQCAEwEAAFIAAACAAAIAEwEAAlIAAACJAQQAjQEDAQkCBAANAgQCTgECAI4BAQO8gQAAuCAAgIkBAAAOAgEDxAECAryBAQA4BQCAiQEBAAkCAgCDAgIAAAMAAIkDAAAOBAEDxAMCAEQCAAKJAgMAxAIBAMQBAAGJAQUADgIBA8QBAgXLgRUAiQQGAIwECQjChAAAuAgAgDyEBQC4BwCAPIQGALgGAICJBAEACQUCAIOFAwADBgQAtQUCAAAGAACABgcACwcHCYAHCABEBwIARAUAAokFAwDEBQEAxAQAAYkEBgCMBAkIwgQAADgIAICFBAAACQUFAIAFAgBEBQIFS4UBALkHCAA4AACAhwQAAEwFAAJNhQIANgUAAMKEAAC4AQCANAUCABUFCoAvBYAGEAEKCMwBAALNgRYAtgEAAIsBBwoLAggLgAIBAMQBAwPCgQAAOAUAgIkCAQALAwcJgAMEAEQDAgIUgwYMA4QGAIAEAABEAwQCiQMDAMQDAQDEAgABiwIHDo4CBQ+OAgUQxAIBAgkDBQCAAwIARAMCBUsDCAAJBgkADAYMC7QGBQCVBg2ArwaABhMHAwBSAAAAEgcRC44HDBISBxIPjgcMExIHEw/PBwAAEgcUD5ACDQ42BQAATAMAAk0DCQA2AwAAxoICAEaDAQCVAASGdGFibGUUriVzOiBhcmd1bWVudCAxIChvcHRzKSBtdXN0IGJlIGEgdGFibGUsIGdvdCAlcwSIYWxsb3dlZBS+JXM6IGFyZ3VtZW50IDEgKG9wdHMpIGZpZWxkICdhbGxvd2VkJyBtdXN0IGJlIGEgdGFibGUsIGdvdCAlcwSIZnNfcmVhZASIZnNfZWRpdBTYJXM6IGFyZ3VtZW50IDEgKG9wdHMpIGZpZWxkICdhbGxvd2VkJyBlbGVtZW50ICVkIG11c3QgYmUgb25lIG9mIGZzX3dyaXRlLCBmc19yb2xsYmFjaywgBJpmc19zZWFyY2hfcmVwbGFjZSwgZ290ICVzBIl0b3N0cmluZwSGcGNhbGwEjWZzX3Rvb2xzX25ldwSFZ3N1YgSOXmZzX3Rvb2xzX25ldwSEc3RkBIVqc29uBIZhcnJheQSFbmFtZQSMZGVzY3JpcHRpb24EjWlucHV0X3NjaGVtYQSIaGFuZGxlcooBAwABBAABBQABAgABBwABBgABCAAAAAABAQABCwCBgNTYAQAGjYsAAAAJAQEAiQECAAACAADEAAQDvAABALgBAICJAQMAAAICAIGC/3/EAQMByAACAMcBAQCCBIhmc190b29sAIQACAABBAABCwAAAQCAjQEAAAAAAQAAAAAAAQGAg4ZpbnB1dICNh3Jlc3VsdIWNhGVycoWNhIJIhHNldIVuYW1lhmVycm9yAZEBAAAAAAAAAQAAAAAAAAAAAAACAAAAAAEAAAAAAAABAAABAAAAAAEAAAAAAAAAAAAAAgAAAAEAAAAAAAAAAQABAAAAAAAAAP8BAP8DAAAAAQEAAAAAAAAAAAABAAAAAAD4AAoCAAAAAQAAAAAAAAAAAAAAAAEAAAABAAAAAQABAIAAAAEBAAEABQABAPUADAEBgQGA0JqGZm5hbWWAAZGFb3B0c4ABkYZuYW1lc54BkYwoZm9yIHN0YXRlKbTijChmb3Igc3RhdGUptOKMKGZvciBzdGF0ZSm04owoZm9yIHN0YXRlKbTigmm14IVuYW1lteCEZHVw0OCMKGZvciBzdGF0ZSnT2YwoZm9yIHN0YXRlKdPZjChmb3Igc3RhdGUp09mMKGZvciBzdGF0ZSnT2YJf1NeCbtTXg29r5wGRhHNldOcBkYRvdXT4AZGMKGZvciBzdGF0ZSn7AY6MKGZvciBzdGF0ZSn7AY6MKGZvciBzdGF0ZSn7AY6MKGZvciBzdGF0ZSn7AY6CX/wBi4VuYW1l/AGLhXNwZWP+AYuKhXR5cGWGZXJyb3KIc2Zvcm1hdIt1c2VyX2xldmVsiERFRkFVTFSHaXBhaXJziU9QVElPTkFMhV9FTlaCSIZTUEVDU4De3gEABIaJAAAAAwEAAIABAADFAAMAxgAAAMcAAQCBBJJzdGQuZnMudG9vbF9zcGVjc4EBDACAhgAAAAAAAICBhW9wdHOAhoGGYnVpbGSA4O0BAA+6iQAAAAMBAACAAQAAxAADAkMBAAA4AACADgEAATyBAgA4BwCAiQEBAAACAgDEAQICvIEDALgEAICJAQIACQIDAIMCAgAJAwEAgAMCAEQDAgBEAgACiQIEAMQCAQDEAQABiwEFBY4BAwaOAQMHxAEBAgkCBgCAAgEARAICBUuCCgALBQUIDgUKCY4FCQoTBgIAUgAAAI4GCQsSBgsNjgYJDBIGDA2OBgkNQgEAADgCAIATBwEAUgAAABIHAQJChwAAOAAAgAgHAABEBQUBDgUJCpABCApMAgACTYILADYCAADGgQIARoIBAI4ElnN0ZC5mcy5yZWdpc3Rlcl90b29scwSGZ3JvdXAABIdzdHJpbmcU0HN0ZC5mcy5yZWdpc3Rlcl90b29sczogYXJndW1lbnQgMSAob3B0cykgZmllbGQgJ2dyb3VwJyBtdXN0IGJlIGEgc3RyaW5nLCBnb3QgJXMEhHN0ZASFanNvbgSGYXJyYXkEhXRvb2wEiXJlZ2lzdGVyBIVuYW1lBIxkZXNjcmlwdGlvbgSNaW5wdXRfc2NoZW1hBIhoYW5kbGVyhwEMAAEDAAEEAAEFAAECAAAAAAEGAIC6AQAAAAEAAAEAAAAAAAABAAAAAAAAAAAAAgAAAAEAAAABAAAAAAAAAAAAAQAAAAAAAAD/AgD9AAQBAYCKhW9wdHOAuoZzcGVjc4S6hmdyb3Vwh7qGbmFtZXOcuowoZm9yIHN0YXRlKZ+3jChmb3Igc3RhdGUpn7eMKGZvciBzdGF0ZSmft4woZm9yIHN0YXRlKZ+3gmmgtYJzoLWHhmJ1aWxkhXR5cGWGZXJyb3KIc2Zvcm1hdIt1c2VyX2xldmVshV9FTlaHaXBhaXJzAbMBCQEBAAAAAAIAAAAAAQAAAAACAQAAAAIAAQABAQAAAAAAAQAAAAABAAAAAAAAAAAAAP4CAQEAAgEAAAABAAAAAAABAAAAAAAAAAEAAAAAAQAAAAAAAQAAAAAAAAAA/AQBAQABAQAAAAAAAAAAAAAAAAAAAAAAAAEBAAEBAAAAAIAAAAAAAAAAAAEBAAIAAAABAAAAAAAAAAAAAAAAAAABAAAAAAAA/wEBKgIAAAACAA3zDYEBgKuNglKCAbOCSIIBs4t1c2VyX2xldmVsgwGzhXR5cGWIAbOGZXJyb3KIAbOIc2Zvcm1hdIgBs4dpcGFpcnOIAbOIREVGQVVMVI0Bs4lPUFRJT05BTJIBs4Zwcm9wc5MBs4VwYXRolwGzhlNQRUNTAakBs4ZidWlsZAGqAbOBhV9FTlY="
  },
  "=ab:knl": {
    source: "src/host/knl.lua",
    hash: "ffecfbfc:214",
    bytecode: "G0x1YVQAGZMNChoKBAgIeFYAAAAAAAAAAAAAACh3QAGIPWFiOmtubICAAAEFnlEAAABQAAADCwEAAA4BAgGTAQUAUgAAAA4CAQSSAQMEDgIBBpIBBQQOAgEIkgEHBA4CAQqSAQkEDgIBDJIBCwQOAgEOkgENBA4CARCSAQ8EDgIBEpIBEQQOAgEUkgETBA4CARaSARUEDgIBGJIBFwQSAQIDRgEBAZkEiHBhY2thZ2UEh2xvYWRlZASJa25sLmhvc3QEhW9wZW4EiWtubF9vcGVuBI1zZXNzaW9uX29wZW4EkWtubF9zZXNzaW9uX29wZW4EjnNlc3Npb25fY2xvc2UEkmtubF9zZXNzaW9uX2Nsb3NlBIdhcHBlbmQEi2tubF9hcHBlbmQEjGFwcGVuZF9tYW55BJBrbmxfYXBwZW5kX21hbnkEh2V2ZW50cwSLa25sX2V2ZW50cwSFdGFpbASJa25sX3RhaWwEhGhhcwSIa25sX2hhcwSGcXVlcnkEimtubF9xdWVyeQSHc2NoZW1hBItrbmxfc2NoZW1hBIZjbG9jawSKa25sX2Nsb2NrgQEAAICeAQIBAAAAAQABAAEAAQABAAEAAQABAAEAAQABAAEAgIKCX4KegkiCnoGFX0VOVg=="
  },
  "=ab:llm": {
    source: "src/host/llm/llm.lua",
    hash: "f0848ee6:6fd",
    bytecode: "G0x1YVQAGZMNChoKBAgIeFYAAAAAAAAAAAAAACh3QAGIPWFiOmxsbYCAAAEIolEAAABQAAADCwEAAIsBAAELAgACDgIEA5MCBABSAAAADgMBBZICBAYOAwEHkgIGBg4DAQmSAggGDgMBC5ICCgYOAwENkgIMBg4DAQ+SAg4GCwMAEA4DBhHPAwAAEgMSBwsDABNCgwAAuAAAgBMDAABSAAAADwATBgsDABPPgwAAEgMUB0aDAQGVBIV0eXBlBIZlcnJvcgSHc3RyaW5nBIdmb3JtYXQEhXNlbmQEiWxsbV9zZW5kBIliYXNlX3VybASNbGxtX2Jhc2VfdXJsBIxyZWFkX3JlcGxheQSQbGxtX3JlYWRfcmVwbGF5BIRlbnYEiGxsbV9lbnYEh2VuY29kZQSLbGxtX2VuY29kZQSIcmVsZWFzZQSMbGxtX3JlbGVhc2UEiHBhY2thZ2UEiHByZWxvYWQElGxsbV9wcm90by50cmFuc3BvcnQEhGxsbQSFY2hhdIEBAACCgJOTAAACgwkAAABIAAIARwABAICBAQUAgIMAAACAgIGKdHJhbnNwb3J0gJirAgAN2gkBAACAAQAARAECAjwBAAA4BACAEwEAAVIAAACTAQIAUgAAAJKBAQKSAQMATgEBAAAAAgC4BgCACQEAAIABAABEAQICPIEEADgEAIAJAQEAiQECAAOCAgCJAgAAAAMAAMQCAgDEAQACAYIAgEQBAwG8gAYAuAYAgAkBAACAAQEARAECAjyBBAA4BACACQEBAIkBAgADggMAiQIAAAADAQDEAgIAxAEAAgGCAIBEAQMBwoAAADgBAIATAQAAUgAAAIAAAgAOAQEIQoEAADgAAIADgQQAiwEDCgOCBQDEAQICDAIDAkKCAAA4BACAiQIBAAkDAgCDAwYACwQDDYAEAgBEBAIARAMAAoGDAIDEAgMBkwIAAFIAAAALAwMOgAMBAEQDAgVLgwEAPIUIADgAAICQAgoLTAMAAk2DAgA2AwAAFIMEDwAEBQBEAwMCFIMGEBMEAQBSAAAAEgQRAEWDAwBGgwAARoMBAJIEh3N0cmluZwSFcm9sZQSFdXNlcgSIY29udGVudASGdGFibGUUxGxsbS5jaGF0OiBhcmd1bWVudCAxIChtZXNzYWdlcykgbXVzdCBiZSBhIHN0cmluZyBvciBhIHRhYmxlLCBnb3QgJXMAFLRsbG0uY2hhdDogYXJndW1lbnQgMiAob3B0cykgbXVzdCBiZSBhIHRhYmxlLCBnb3QgJXMEiXByb3ZpZGVyBIphbnRocm9waWMEiHJlcXVpcmUEj2xsbV9wcm90by5wb3J0FMRsbG0uY2hhdDogb3B0cy5wcm92aWRlciBtdXN0IGJlIGFudGhyb3BpYywgb3BlbmFpIG9yIHJlcGxheSwgZ290ICVxBIl0b3N0cmluZwSGcGFpcnMEhW9wZW4EhWNoYXQEiW1lc3NhZ2VzhAECAAEDAAEEAAAAAIDaAQAAAAABAAAAAAAAAAABAAAAAAEAAAAAAAAAAAIAAAAAAAABAAAAAAAAAAACAAAAAAEAAAABAAABAQABAAAAAAAAAAACAAEAAAAAAAAAAAABAAAAAAAAAAABgIyJbWVzc2FnZXOA2oVvcHRzgNqJcHJvdmlkZXK12oZwb3J0c7jaglC52oJvxtqMKGZvciBzdGF0ZSnJz4woZm9yIHN0YXRlKcnPjChmb3Igc3RhdGUpyc+MKGZvciBzdGF0ZSnJz4Jrys2CdsrNhIV0eXBlhmVycm9yiHNmb3JtYXSFX0VOVqIBBwEAAAACAAEAAQABAAEAAQABAAIAAAACAAAAAAADE+0TgIaCUoKigkiCooV0eXBlhqKGZXJyb3KGoohzZm9ybWF0hqKKdHJhbnNwb3J0lKKBhV9FTlY="
  },
  "=ab:stores": {
    source: "src/host/stores/stores.lua",
    hash: "a1fc8038:208f",
    bytecode: "G0x1YVQAGZMNChoKBAgIeFYAAAAAAAAAAAAAACh3QAGLPWFiOnN0b3Jlc4CAAAEPslEAAABQAAADDgEAAIsBAAELAgACiwIAA44CBQQLAwAFiwMABgsEAAcOBAgIjgQBCRIECQlPBAAAz4QAAE8FAQCLBQAKjgULC0+GAQCSBQwMgAUIABMGAgBSAAAAkwYCAFIAAACShg0DkoYODxIGCA2TBgEAUgAAAJKGDhESBhANkwYAAVIAAAADBwQAzgYBAMQFAwILBgASDgYMCM8GAgASBgwNEwYCAFIAAAAShg0TEoYUFYsGABaOBg0XT4cCAJIGDA7GhgEBmASLdXNlcl9sZXZlbASFdHlwZQSGZXJyb3IEh3N0cmluZwSHZm9ybWF0BIdpcGFpcnMEhnBhaXJzBIRzdGQEhHNxbASFbnVsbASEc3RkBINrdgSPcmVnaXN0ZXJfdG9vbHMEhXR5cGUEjGRlc2NyaXB0aW9uBJVPbmUgU1FMaXRlIHN0YXRlbWVudASHcGFyYW1zFLtQb3NpdGlvbmFsIHBhcmFtZXRlcnMgKGFycmF5KSBvciBuYW1lZCBwYXJhbWV0ZXJzIChvYmplY3QpBIRzdGQEh29iamVjdASMZGVzY3JpcHRpb24UvFRhZ3M6IHN0cmluZyBrZXlzLCBzY2FsYXIgdmFsdWVzIChBTkQtZmlsdGVyIHdoZW4gcXVlcnlpbmcpBIRzdGQEg3RzgQEAAIaAkZUCAASMEwECAFIAAAASgQABEgECAMIAAAC4AQCAtAEBAMABfwA4AACAEgEDAUgBAgDHAQEAhASFdHlwZQSHb2JqZWN0BItwcm9wZXJ0aWVzBIlyZXF1aXJlZICAjAEAAAABAAAAAAABAYCDhnByb3BzgIyJcmVxdWlyZWSAjIJzhIyAgJe6BAAXAay8gAAAuAcAgAkCAACAAgEARAICAjyCAQA4BQCACQIBAIkCAgADAwEAgAMAAAkEAACABAEARAQCAMQCAAIJAwMARAMBAEQCAAHCgAAAOAEAgBMCAABSAAAAgAAEAA4CAQNCggAAOAAAgAACAgCJAgAAAAMEAMQCAgK8ggQAOAUAgIkCAQAJAwIAg4MCAAAEAACJBAAAAAUEAMQEAgBEAwACiQMDAMQDAQDEAgABkwIAAFIAAAATAwAAUgAAAIkDBAAABAMAxAMCBcuDAwCOBgwGkAINDLQGBgCVBg2ArwaABg4HDAYQAw0OzAMAAs2DBAC2AwAAgAMGAA4EAQc8hAAAuB8AgAkEAACOBAEHRAQCAjyEAQA4BQCACQQBAIkEAgADBQQAgAUAAAkGAACOBgEHRAYCAMQEAAIJBQMARAUBAEQEAAETBAAAUgAAAIADCAAJBAQAjgQBB0QEAgVLBBMACQcAAIAHDQBEBwICPAcEALgDAIAUhw0JAwgFAIAIBAA1CAIAg4gFAEQHBAJChwAAOAAAgAAHDQCMBwUOwocAADgIAICJBwEACQgCAIMIBgAACQAAgAkMAAsKBQEOChQNgAoGAAMLBwBECgMCiwoFDwALDQDECgIARAgAAokIAwDECAEAxAcAAbQHBwCVBw+ArweABpADDw5MBAACTQQUADYEAAAOBAEQQgQAALgCAIATBAEAUgAAAI4EARASBBAJQoQAADgAAIAIBAAAiwQFEY4ECRKOBAkTxAQBAgkFBACABQcARAUCBUsFCgAMCAUPgAgEAAAJDwC1CAIACwkFFA4JEhWACREAEwoCAFIAAACOChAWEgoWFY4KEBgSChcVjgoQGQALCABECQUBNAkJABUJEoAvCYAGkAQSEUwFAAJNBQsANgUAAMaEAgBGhQEAmgAEhnRhYmxlFK4lczogYXJndW1lbnQgMSAob3B0cykgbXVzdCBiZSBhIHRhYmxlLCBnb3QgJXMEh3ByZWZpeASHc3RyaW5nFL4lczogYXJndW1lbnQgMSAob3B0cykgZmllbGQgJ3ByZWZpeCcgbXVzdCBiZSBhIHN0cmluZywgZ290ICVzBINvcASIYWxsb3dlZBS+JXM6IGFyZ3VtZW50IDEgKG9wdHMpIGZpZWxkICdhbGxvd2VkJyBtdXN0IGJlIGEgdGFibGUsIGdvdCAlcwSFZ3N1YgSCXgSBFMslczogYXJndW1lbnQgMSAob3B0cykgZmllbGQgJ2FsbG93ZWQnIGVsZW1lbnQgJWQgbXVzdCBiZSBvbmUgb2YgJXMsIGdvdCAlcwSHY29uY2F0BIMsIASJdG9zdHJpbmcEhmdyb3VwBIRzdGQEhWpzb24EhmFycmF5BIV0b29sBIlyZWdpc3RlcgSMZGVzY3JpcHRpb24EjWlucHV0X3NjaGVtYQSHc2NoZW1hBIhoYW5kbGVyhgEDAAEEAAEFAAECAAEGAAAAAIABrAEAAAAAAAABAAAAAAAAAAAAAAIAAAAAAQAAAAEAAAAAAQAAAAAAAAAAAAACAAAAAQAAAAAAAAAAAAAAAAABAQAAAQAAAAABAAAAAAAAAAAAAAIAAAEAAAABAAAAAAAAAAAAAAAAAAEAAAEAAAEAAAAAAAAAAAD/AQD/AwAAAPoAgAIAAAAAAAAAAAABAAAAAQAAAAEBAAABAAAAAAAAAAAAAAABAAAA/AAFAQGBAYCvn4ZmbmFtZYABrIVvcHRzgAGsj2RlZmF1bHRfcHJlZml4gAGshG9wc4ABrIdwcmVmaXibAayIYnlfbmFtZa8BrIZvcmRlcq8BrIwoZm9yIHN0YXRlKbK8jChmb3Igc3RhdGUpsryMKGZvciBzdGF0ZSmyvIwoZm9yIHN0YXRlKbK8gl+zuoNvcLO6h3dhbnRlZL4BrIwoZm9yIHN0YXRlKdcBgIwoZm9yIHN0YXRlKdcBgIwoZm9yIHN0YXRlKdcBgIwoZm9yIHN0YXRlKdcBgIJp2P6FbmFtZdj+g29w5v6FbWV0YQGLAayGbmFtZXMBjwGsjChmb3Igc3RhdGUpAZIBqYwoZm9yIHN0YXRlKQGSAamMKGZvciBzdGF0ZSkBkgGpjChmb3Igc3RhdGUpAZIBqYJfAZMBp4NvcAGTAaeFc3BlYwGUAaeFbmFtZQGXAaeGhXR5cGWGZXJyb3KIc2Zvcm1hdIt1c2VyX2xldmVsh2lwYWlyc4VfRU5WgLzCBAANnAkCAACAAgAARAICAjwCAAA4AQCADAIAAkKCAAA4AACACAIAAIkCAAAAAwQAxAICArmCAwC4BQCAiQIBAAkDAgCDgwAAAAQBAIAEAgAABQMAiQUAAAAGBADEBQIARAMAAoGD/3/EAgMBSAICAMcCAQCCBIZ0YWJsZRSqJXM6IGlucHV0IGZpZWxkICclcycgbXVzdCBiZSBhICVzLCBnb3QgJXODAQMAAQQAAQUAgJwBAAAAAAAAAAABAAAAAAEAAAAAAAAAAAAAAAIBgIWGaW5wdXSAnIp0b29sX25hbWWAnIZmaWVsZICchWtpbmSAnIJ2iZyDhXR5cGWGZXJyb3KIc2Zvcm1hdIDE8gEAEwGEiQAAAAABAADEAAICvAAAADgBAICOAAABwoAAADgAAICIAAAAvIACADgIAIAJAQAAgAEBAEQBAgI8AQMAuAAAgLwABAC4BACACQEBAIkBAgADggIAiQIAAAADAQDEAgIAxAEAAgkCAwBEAgEARAEAAU8BAADPgQAATwIBAJMCAgBSAAAAkoIGB5KCCAkJAwcAgwMFAAAEAACDhAUAEwUABFIAAACTBQMAUgAAAJKFDA2ShQgOCQYIAIAGAwATBwEAUgAAABIHEAXEBgICAAcEAJMHAAFSAAAAAwgIAM4HAQBEBwIARAYAApIFDwxPhgEAkgURDBMGAwBSAAAAEoYMEhKGCBOJBggAAAcDAJMHAgBSAAAAkgcUBRMIAQBSAAAAEogIFpIHFRBEBwICgAcEABMIAAJSAAAAgwgKAAOJCgBOCAIAxAcCAMQGAAISBg8NzwYCABIGEQ2TBgMAUgAAAJKGDBeShggYCQcIAIAHAwATCAEAUgAAABIIGQXEBwICAAgEAJMIAAFSAAAAA4kMAM4IAQBECAIARAcAApIGDw5PhwIAkgYRDhMHAwBSAAAAEocMGhKHCBuJBwgAAAgDAJMIAQBSAAAAEwkCAFIAAAASiQYdEokIHpIIHBJECAICgAgEABMJAABSAAAAxAgCAMQHAAISBw8PzwcDABIHEQ9OBQQARYMFAEaDAABGgwEAnwSGdGFibGUEiG5zX2xvY2sABIdzdHJpbmcEgRTcc3RkLmt2LnJlZ2lzdGVyX3Rvb2xzOiBhcmd1bWVudCAxIChvcHRzKSBmaWVsZCAnbnNfbG9jaycgbXVzdCBiZSBhIG5vbi1lbXB0eSBzdHJpbmcsIGdvdCAlcwSFdHlwZQSHc3RyaW5nBIxkZXNjcmlwdGlvbgSES2V5BJZzdGQua3YucmVnaXN0ZXJfdG9vbHMEhGt2XwSDb3AEhGdldBS2UmVhZCB0aGUgdmFsdWUgc3RvcmVkIHVuZGVyIGEga2V5IChudWxsIHdoZW4gYWJzZW50KS4Eh3NjaGVtYQSEa2V5BIhoYW5kbGVyBIRzZXQUvlN0b3JlIGEgSlNPTiB2YWx1ZSB1bmRlciBhIGtleSwgcmVwbGFjaW5nIGFueSBwcmV2aW91cyB2YWx1ZS4EhGtleQSGdmFsdWUEj0FueSBKU09OIHZhbHVlBIdkZWxldGUUqkRlbGV0ZSBhIGtleTsgYW5zd2VycyB3aGV0aGVyIGl0IGV4aXN0ZWQuBIRrZXkEhWxpc3QUzkxpc3QgdGhlIGtleXMgb2YgdGhlIG5hbWVzcGFjZSwgb3B0aW9uYWxseSBvbmx5IHRob3NlIHN0YXJ0aW5nIHdpdGggYSBwcmVmaXguBIdwcmVmaXgEh3N0cmluZwSLS2V5IHByZWZpeIoBAwABBAABBQABAgABCgABBwABBgABCQABCAAAAACHgMrNAQAGjYkAAADCAAAAuAAAgIkAAADIAAIAiQABAAABAACDAQAAA4IAAIMCAQDFAAUAxgAAAMcAAQCDBINrdgSDbnMEh3N0cmluZ4IBAQAABACAjQEAAAAAAQAAAAAAAAGAgYZpbnB1dICNgoVsb2NrhW5lZWSAztMBAAmUkwAAAFIAAAAJAQAAQoEAADgCAIATAQIAUgAAABKBAQISgQMEkgAAAgkBAQCAAQAARAECBUuBAACQAAYHTAEAAk2BAQA2AQAAxoACAEaBAQCFBINucwSFdHlwZQSHc3RyaW5nBIxkZXNjcmlwdGlvbgSKTmFtZXNwYWNlggEBAAAFAICUAQABAAAAAAAAAAEAAAAAAAAAAQGAiIZleHRyYYCUgnCClIwoZm9yIHN0YXRlKY2RjChmb3Igc3RhdGUpjZGMKGZvciBzdGF0ZSmNkYwoZm9yIHN0YXRlKY2RgmuOj4J2jo+ChWxvY2uGcGFpcnOA1NkBAAmTkwAAAFIAAAAJAQAAQoEAADgAAICRgAEACQEBAIABAABEAQIFSwECADQEAQAVBAiALwSABpAACAdMAQACTQEDADYBAADGgAIARoEBAIEEg25zggEBAAAGAICTAQABAAAAAQAAAAAAAAAAAAABAYCIhWxpc3SAk4JygpOMKGZvciBzdGF0ZSmJkIwoZm9yIHN0YXRlKYmQjChmb3Igc3RhdGUpiZCMKGZvciBzdGF0ZSmJkIJfio6CdoqOgoVsb2Nrh2lwYWlyc4De3gEACZKTAAEAUgAAAAsBAAEOAQICDgECA4kBAQAAAgAAxAECAgkCAgCAAgAAAwMCAIODAgADBAMARAIFAEQBAAKSAAACyAACAMcAAQCHBIZ2YWx1ZQSEc3RkBINrdgSEZ2V0BIdrdl9nZXQEhGtleQSHc3RyaW5ngwAJAAECAAAEAICSAAAAAAAAAAAAAAAAAAAAAAAAgIGGaW5wdXSAkoOFX0VOVoZuc19vZoVuZWVkgOHmAQAJookAAAAAAQAAxAACArwAAAC4AACAjgAAAbgAAICGAAAAhwAAALwAAgC4AQCACQEBAIOBAQABgv9/RAEDAQsBAgQOAQIFDgECBokBAwAAAgAAxAECAgkCBACAAgAAA4MDAIMDBAADhAQARAIFAoACAQBEAQQBEwEBAFIAAAASgQoLSAECAEcBAQCMBIZ0YWJsZQSGdmFsdWUABKdrdl9zZXQ6IGlucHV0IGZpZWxkICd2YWx1ZScgaXMgbWlzc2luZwSEc3RkBINrdgSEc2V0BIdrdl9zZXQEhGtleQSHc3RyaW5nBINvaxGFAAAAAAEAAAkAAQIAAAQAgKIBAAAAAAAAAAABAAAAAAABAAAAAAAAAAAAAAAAAAEAAAABgIKGaW5wdXSAooJ2iaKFhXR5cGWGZXJyb3KFX0VOVoZuc19vZoVuZWVkgOnpAQAJkpMAAQBSAAAACwEAAQ4BAgIOAQIDiQEBAAACAADEAQICCQICAIACAAADAwIAg4MCAAMEAwBEAgUARAEAApIAAALIAAIAxwABAIcEiGRlbGV0ZWQEhHN0ZASDa3YEh2RlbGV0ZQSKa3ZfZGVsZXRlBIRrZXkEh3N0cmluZ4MACQABAgAABACAkgAAAAAAAAAAAAAAAAAAAAAAAICBhmlucHV0gJKDhV9FTlaGbnNfb2aFbmVlZIDs8AEABqGJAAAAAAEAAMQAAgK8AAAAOAEAgI4AAAHCgAAAOAAAgIgAAAC8gAIAOAQAgAkBAACAAQEARAECAjyBAwC4AQCACQEBAIMBAgABgv9/RAEDARMBAQBSAAAAiwECBo4BAweOAQMICQIDAIACAABEAgICgAIBAMQBAwISAQUDSAECAEcBAQCJBIZ0YWJsZQSHcHJlZml4AASHc3RyaW5nFK9rdl9saXN0OiBpbnB1dCBmaWVsZCAncHJlZml4JyBtdXN0IGJlIGEgc3RyaW5nBIVrZXlzBIRzdGQEg2t2BIVsaXN0hAAAAAABAAAJAAECAIChAQAAAAAAAAAAAQAAAAAAAAAAAAABAAAAAAAAAAAAAAABgIKGaW5wdXSAoYJwiaGEhXR5cGWGZXJyb3KFX0VOVoZuc19vZgGEAQAAAAAAAAAAAQAAAAAAAAAAAQAAAQAA/wEA/wYGBgEAAAABAAAAAAAAAAEAAQAAAAAAAAAAAAAAAAABAAAAAQABAAAAAAAAAAAAAAAAAAAAAAAABgAAAAEAAQAAAAAAAAAAAAAAAAABAAAAAQABAAAAAAAAAAAAAAAAAAAABQCA6hYBgQGA8YaFb3B0c4ABhIVsb2NriQGEhm5zX29mnQGEhnByb3BzngGEhHJlcZ8BhIRrZXmjAYSKhXR5cGWGZXJyb3KIc2Zvcm1hdIt1c2VyX2xldmVshW5lZWSGcGFpcnOHaXBhaXJziXJlZ2lzdGVyhG9iaoVfRU5WgPkBhQEACZqJAAAAAwEAAIABAAADggAAkwIAAlIAAAATAwMAUgAAABKDAgMSgwQFiQMBABIDBgfPAwAAEgMHB5MDAwBSAAAAkoMCCJKDBAkJBAEAkgMGCE+EAACSAwcIzgICAMUABQDGAAAAxwABAIoEl3N0ZC5zcWwucmVnaXN0ZXJfdG9vbHMEhXNxbF8Eg29wBIhleGVjdXRlBIxkZXNjcmlwdGlvbhTeRXhlY3V0ZSBhbiBTUUxpdGUgc3RhdGVtZW50IHRoYXQgY2hhbmdlcyBkYXRhIG9yIHNjaGVtYTsgYW5zd2VycyB0aGUgbnVtYmVyIG9mIHJvd3MgYWZmZWN0ZWQuBIdzY2hlbWEEiGhhbmRsZXIEhnF1ZXJ5FMdSdW4gYW4gU1FMaXRlIHF1ZXJ5OyBhbnN3ZXJzIHRoZSByb3dzIGFzIG9iamVjdHMga2V5ZWQgYnkgY29sdW1uIG5hbWUuhAEJAAELAAAAAAEKAIKA/QGAAQAHk4sAAACOAAEBjgABAgkBAQCAAQAAA4IBAIOCAAADAwIARAEFAo4BAAXEAAMCEwECAFIAAACOAQEGEgEGA44BAQcSAQcDSAECAEcBAQCIBIRzdGQEhHNxbASIZXhlY3V0ZQSMc3FsX2V4ZWN1dGUEh3N0cmluZwSHcGFyYW1zBIlhZmZlY3RlZASIbGFzdF9pZIIAAgAAAwCAkwEAAAAAAAAAAAAAAQAAAAAAAAGAgoZpbnB1dICTgnKLk4KFX0VOVoVuZWVkgAGDAYMBAAiQkwABAFIAAAALAQABDgECAg4BAgOJAQEAAAIAAIMCAgADAwEAg4MCAMQBBQIOAgAGRAEDApIAAALIAAIAxwABAIcEhXJvd3MEhHN0ZASEc3FsBIZxdWVyeQSKc3FsX3F1ZXJ5BIdzdHJpbmcEh3BhcmFtc4IAAgAAAwCAkAAAAAAAAAAAAAAAAAAAAACAgYZpbnB1dICQgoVfRU5WhW5lZWSaAQAAAAAAAAABAAEABAAAAAEAAQABAAH2CgGAgYVvcHRzgJqEiXJlZ2lzdGVyi3NxbF9zY2hlbWGFX0VOVoVuZWVkgAGJAagBABD2iQAAAAMBAACAAQAAA4IAAJMCAANSAAAAEwMDAFIAAAASgwIDEoMEBYkDAQATBAMAUgAAAJMEAQBSAAAAkoQICRIEBwmTBAEAUgAAAJKEBAsSBAoJiQQCABIEDAmTBAIAUgAAAJKECA6ShAQPEgQNCZMEAAJSAAAAA4UDAIMFBQDOBAIAxAMDAhIDBgfPAwAAEgMQB5MDAwBSAAAAkoMCEZKDBBIJBAEAkwQEAFIAAAATBQEAUgAAABKFCBSSBBMKEwUCAFIAAAAShQgOEoUEFpIEFQoTBQIAUgAAABKFCA4ShQQYkgQXCgkFAgCSBBkKEwUCAFIAAAAShQgUkwUABFIAAAADBg4Ag4YOAAMHDwCDhw8AzgUEABIFGwuSBBoKEwUCAFIAAAAShQgOEoUEIZIEIAoTBQEAUgAAABKFCA6SBCIKEwUBAFIAAAAShQgOkgQjChMFAAFSAAAAg4UJAE4FAQBEBAMCkgMGCE+EAACSAxAIEwQDAFIAAAAShAIfEoQEJIkEAQATBQIAUgAAAJMFAQBSAAAAkoUIJhIFJQuJBQIAEgUnC5MFAAFSAAAAA4YSAM4FAQDEBAMCEgQGCc8EAQASBBAJzgIDAMUABQDGAAAAxwABAKgElnN0ZC50cy5yZWdpc3Rlcl90b29scwSEdHNfBINvcASHYXBwZW5kBIxkZXNjcmlwdGlvbhS9QXBwZW5kIGEgZGF0YSBwb2ludCAoYSBudW1iZXIgb3IgYSBKU09OIG9iamVjdCkgdG8gYSBzZXJpZXMuBIdzY2hlbWEEh3NlcmllcwSFdHlwZQSHc3RyaW5nBIZ2YWx1ZQSaQSBudW1iZXIgb3IgYSBKU09OIG9iamVjdASFdGFncwSDYXQEiGludGVnZXIEqFVuaXggdGltZSBpbiBtaWxsaXNlY29uZHMgKGRlZmF1bHQgbm93KQSIaGFuZGxlcgSGcXVlcnkU3FF1ZXJ5IGEgc2VyaWVzOiByYXcgcG9pbnRzLCBvciBhZ2dyZWdhdGVkIChjb3VudC9zdW0vYXZnL2xhc3QpLCBvcHRpb25hbGx5IGluIHRpbWUgYnVja2V0cy4Eh3NlcmllcwSHc3RyaW5nBIVmcm9tBJVTdGFydCwgbXMsIGluY2x1c2l2ZQSDdG8Ek0VuZCwgbXMsIGluY2x1c2l2ZQSFdGFncwSEYWdnBIVlbnVtBIZjb3VudASEc3VtBIRhdmcEhWxhc3QEimJ1Y2tldF9tcwSfQnVja2V0IHdpZHRoIGluIG1zIChuZWVkcyBhZ2cpBIZsaW1pdASHb2Zmc2V0FMdUaGUgbW9zdCByZWNlbnQgcG9pbnQgb2YgYSBzZXJpZXMgKG9wdGlvbmFsbHkgbWF0Y2hpbmcgdGFncyksIG9yIG51bGwuBIdzZXJpZXMEh3N0cmluZwSFdGFnc4YBCQABCAABDAAAAAABCgABBgCDgAGQAZMBAAeSiwAAAI4AAQGOAAECCQEBAIABAAADggEAgwICAAODAgBEAQUCjgEABg4CAAeOAgAIxAAFAZMAAQBSAAAAkoAJCsgAAgDHAAEAiwSEc3RkBIN0cwSHYXBwZW5kBIp0c19hcHBlbmQEh3NlcmllcwSHc3RyaW5nBIZ2YWx1ZQSFdGFncwSDYXQEg29rEYIAAwAABACAkgEAAAAAAAAAAAAAAAABAAAAAYCBhmlucHV0gJKChV9FTlaFbmVlZIABngGjAQAMpYkAAAAAAQAAgwEAAAOCAACDAgEAxAAFAhMBAABSAAAAiQEBABMCAAdSAAAAg4IBAAMDAgCDgwIAAwQDAIOEAwADBQQAg4UEAE4CBwDEAQIFywEBAIwEAAgQAQgJzAEAAs0BAgC2AQAAkwEBAFIAAAALAgILDgIEDA4CBA2AAgEAAAMCAEQCAwKSAQoExoECAMaBAQCOBIl0c19xdWVyeQSHc2VyaWVzBIdzdHJpbmcEhWZyb20Eg3RvBIV0YWdzBIRhZ2cEimJ1Y2tldF9tcwSGbGltaXQEh29mZnNldASFcm93cwSEc3RkBIN0cwSGcXVlcnmDAAQAAAUAAAMAgKUBAAAAAAABAAEAAAAAAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAABgImGaW5wdXSApYdzZXJpZXOGpYJxiKWMKGZvciBzdGF0ZSmUmYwoZm9yIHN0YXRlKZSZjChmb3Igc3RhdGUplJmMKGZvciBzdGF0ZSmUmYJflZeCa5WXg4VuZWVkh2lwYWlyc4VfRU5WgAGmAaYBAAiQkwABAFIAAAALAQABDgECAg4BAgOJAQEAAAIAAIMCAgADgwIAgwMDAMQBBQIOAgAHRAEDApIAAALIAAIAxwABAIgEhHJvdwSEc3RkBIN0cwSFbGFzdASIdHNfbGFzdASHc2VyaWVzBIdzdHJpbmcEhXRhZ3OCAAMAAAQAgJAAAAAAAAAAAAAAAAAAAAAAgIGGaW5wdXSAkIKFX0VOVoVuZWVk9gEAAAAAAAAAAQABAAABAAAAAAAAAAAAAQAAAAABAAAAAP0DBAAAAAEAAQAAAQAAAAEAAAAAAQAAAAABAAEAAAAAAAAAAAAAAAEAAAAAAQAAAAAAAAABAAAA+AgGAAAAAQABAAAAAAAAAAAAAAAAAAABAAHjHQGAgYVvcHRzgPaGiXJlZ2lzdGVyhG9iaox0YWdzX3NjaGVtYYVfRU5WhW5lZWSHaXBhaXJzsgEKAQEAAAAAAAIAAAAGJQgCAC7SMAAAAQAAAAABAAAAAQAAAP0FAAz0DgAAAAIAH+EfgI2CUoKygkiCsot1c2VyX2xldmVsg7KFdHlwZYmyhmVycm9yibKIc2Zvcm1hdImyh2lwYWlyc4myhnBhaXJzibKEb2JqjrKJcmVnaXN0ZXKPsoVuZWVkkLKLc3FsX3NjaGVtYaWyjHRhZ3Nfc2NoZW1hrbKBhV9FTlY="
  },
  "=ab:time": {
    source: "src/host/time.lua",
    hash: "3c69d654:4c2",
    bytecode: "G0x1YVQAGZMNChoKBAgIeFYAAAAAAAAAAAAAACh3QAGJPWFiOnRpbWWAgAABDKNRAAAAUAAAAw4BAACLAQABjgEDAgsCAAEOAgQDiwIABAsDAAWLAwAGCwQAB0KEAAC4AACAEwQAAFIAAAAPAAcICwQAB4sEAAeOBAkIwoQAALgAAICTBAAAUgAAABIECAkOBAEJiwQAB44ECQhPBQAAkgQKCs+EAAALBQAHDgUKCM8FAQASBQsLRoUBAYwEimhvc3RfY2FsbASGdGFibGUEhXBhY2sEh3VucGFjawSFdHlwZQSGZXJyb3IEiXRvc3RyaW5nBIRzdGQEhXRpbWUEi3RpbWVfY2xvY2sEhnNsZWVwBIhtZWFzdXJlgQEAAIOAipIBAAWiiQAAAAABAADEAAICvIAAALgDAICJAAEAA4EAAIkBAAAAAgAAxAECAjUBAgCBgQCAxAADATkAAAA4AgCAPoB/ADgBAICDAAEAugAAALgDAICJAAEAA4EBAIkBAgAAAgAAxAECAjUBAgCBgQCAxAADAYkAAwADAQIAmAEABTAABQjEAAMBxwABAIYEh251bWJlchS8c3RkLnRpbWUuc2xlZXA6IGFyZ3VtZW50IDEgKHNlY29uZHMpIG11c3QgYmUgYSBudW1iZXIsIGdvdCADgIQeAAAAAAAUyXN0ZC50aW1lLnNsZWVwOiBhcmd1bWVudCAxIChzZWNvbmRzKSBtdXN0IGJlIGJldHdlZW4gMCBhbmQgMjAwMDAwMCwgZ290IASGc2xlZXAD6AMAAAAAAACEAQUAAQYAAQcAAQIAgKIBAAAAAAEAAAAAAAAAAgAAAAAAAAEAAAAAAAAAAgAAAAABgIGIc2Vjb25kc4CihIV0eXBlhmVycm9yiXRvc3RyaW5nimhvc3RfY2FsbICTlQEBA4rRAAAAiQAAAMQAAQKjAAEArgAAB5sAAQCwAAALUAEAAMYAAALGAAECgQPoAwAAAAAAAIEBCACAigABAAAAAAAAAAGAgYN0MICKgYZjbG9ja4CWmwEBBZfRAAAAiQAAAAABAADEAAICvIAAALgDAICJAAEAA4EAAIkBAAAAAgAAxAECAjUBAgCBgQCAxAADAYkAAgAJAQMARAEBAoABAABQAgAAxAEAAMUAAALGAAACxgABAoIEiWZ1bmN0aW9uFLtzdGQudGltZS5tZWFzdXJlOiBhcmd1bWVudCAxIChmbikgbXVzdCBiZSBhIGZ1bmN0aW9uLCBnb3QghAEFAAEGAAEJAAEIAICXAAEAAAAAAQAAAAAAAAACAAAAAAAAAAGAgYNmboCXhIV0eXBlhmVycm9yh2ZpbmlzaIZjbG9ja6MBBAEAAAAAAAAAAQAAAAAAAQAAAAAAAAABAQAI+AsBAAX7BYCKglKCo4JIgqOKaG9zdF9jYWxsiqOFcGFja4qjh3VucGFja4qjhXR5cGWKo4ZlcnJvcoqjiXRvc3RyaW5niqOGY2xvY2uZo4dmaW5pc2ieo4GFX0VOVg=="
  },
  "=ab:tool": {
    source: "src/host/tool.lua",
    hash: "b25247cb:ea5",
    bytecode: "G0x1YVQAGZMNChoKBAgIeFYAAAAAAAAAAAAAACh3QAGJPWFiOnRvb2yAgAABC6dRAAAAUAAAAosAAAALAQABiwEAAo4BAwMLAgAEDgIEBYsCAAbCggAAuAAAgJMCAABSAAAADwAGBZMCAABSAAAAEwMAAFIAAACBg/9/TwQAAIsEAAZPhQAAkgQHCosEAAZPBQEAkgQICosEAAZPhQEAkgQJCosEAAZPBQIAkgQKCosEAAZPhQIAkgQLCosEAAZPBQMAkgQMCsaEAQGNBIV0eXBlBIZlcnJvcgSHc3RyaW5nBIdmb3JtYXQEhnRhYmxlBIdjb25jYXQEhXRvb2wEiXJlZ2lzdGVyBIVjYWxsBIVsaXN0BIdzY2hlbWEEiXJldmlzaW9uBIdleGlzdHOBAQAAh4CQkgUADo6JAgAACQMBAIMDAAAABAAAgAQBAAAFAgCABQMACQYCAIAGBABEBgIARAMAAoEDAYDEAgMBxwIBAIEEqCVzOiBhcmd1bWVudCAlZCAoJXMpIG11c3QgYmUgJXMsIGdvdCAlc4MBAgABAwABAQCAjgEAAAAAAAAAAAAAAAABgIWDZm6AjoJpgI6FbmFtZYCOiWV4cGVjdGVkgI6CdoCOg4ZlcnJvcohzZm9ybWF0hXR5cGWAlrAEAAoBjAkCAACAAgAARAICAjwCAAC4AACAPAABADgDAIAJAgEAgwIBAAEDAICDgwEAAwQCAIAEAABEAgYBCQIAAIACAQBEAgICPIIFADgDAIAJAgEAgwIBAAGDAICDAwMAA4QDAIAEAQBEAgYBCQIAAI4CAQhEAgICPIIAADgEAIAJAgIAiQIDAAODBACJAwAADgQBCMQDAgDEAgACAYMAgEQCAwEOAgEKPIILALgGAIAJAgAAjgIBCkQCAgI8ggUAOAQAgAkCAgCJAgMAAwMGAIkDAAAOBAEKxAMCAMQCAAIBgwCARAIDAQkCAACAAgIARAICAjyCDQA4AwCACQIBAIMCAQABAwGAgwMHAAOEBwCABAIARAIGAbyBCwC4BQCACQIAAIACAwBEAgICPIIFADgDAIAJAgEAgwIBAAGDAYCDAwgAA4QDAIAEAwBEAgYBQwIDADgAAIAOAgMRPIILALgHAICJAgAAAAMEAMQCAgK8AgAAuAAAgDwCAQA4BACAiQICAAkDAwCDAwkACQQAAIAEBABEBAIARAMAAoGDAIDEAgMBiQIEAIwCBQDCggAAuAIAgIkCBQC0AgUAFQMFgK8CgAaJAgUAkAIGAIkCBgCVAgWArwKABooCBgCJAgQAEwMEAFIAAAASAwMAjgMBCBIDCAeOAwEKwoMAALgDAICTAwIAUgAAAJKDExQLBAcWDgQIFw4ECBREBAECkgMVCBIDCgcSAw4CEgMRBJACAAbHAgEAmASHc3RyaW5nBIEEjnRvb2wucmVnaXN0ZXIEhW5hbWUEk2Egbm9uLWVtcHR5IHN0cmluZwSGdGFibGUEh3NjaGVtYQSIYSB0YWJsZQSMZGVzY3JpcHRpb24U0HRvb2wucmVnaXN0ZXI6IGFyZ3VtZW50IDIgKHNjaGVtYSkgZmllbGQgJ2Rlc2NyaXB0aW9uJyBtdXN0IGJlIGEgc3RyaW5nLCBnb3QgJXMEjWlucHV0X3NjaGVtYQAU0HRvb2wucmVnaXN0ZXI6IGFyZ3VtZW50IDIgKHNjaGVtYSkgZmllbGQgJ2lucHV0X3NjaGVtYScgbXVzdCBiZSBhIHRhYmxlLCBnb3QgJXMEiWZ1bmN0aW9uBIhoYW5kbGVyBIthIGZ1bmN0aW9uBIVtZXRhBIZncm91cBTSdG9vbC5yZWdpc3RlcjogYXJndW1lbnQgNCAobWV0YSkgZmllbGQgJ2dyb3VwJyBtdXN0IGJlIGEgbm9uLWVtcHR5IHN0cmluZywgZ290ICVzBIV0eXBlBIdvYmplY3QEi3Byb3BlcnRpZXMEhHN0ZASFanNvbogBAQABCAABAgABAwABBQABBgABBwAAAACAAYwBAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAEAAAAAAQAAAQAA/wH/AwAAAAAAAAABAAABAAD/Af8DAAAAAAAAAAAAAAABAAAAAAAAAAAAAAAAAAEAAAEAAAAAAAAAAAEAAAAAAAAAAAIAAAAAAAAAAAABAAAAAQAAAQEAAQAAAIAAAAAAAAAAAQEBAYEBgKyFhW5hbWWAAYyHc2NoZW1hgAGMiGhhbmRsZXKAAYyFbWV0YYABjIZncm91cNYBjIiFdHlwZYphcmdfZXJyb3KGZXJyb3KIc2Zvcm1hdIhlbnRyaWVzhm9yZGVyiXJldmlzaW9uhV9FTlaAs7sCAAqnCQEAAIABAABEAQICPIEAADgDAIAJAQEAg4EAAAECAICDAgEAA4MBAIADAABEAQYBCQECAAwBAgBCgQAAuAgAgIkBAwAJAgQAgwICAAADAACJAwUAtAMHAMADfwC4AgCAiQMGAAkEBQCDhAIAxAMDAsKDAAA4AACAgwMDAEQCBAKBggCAxAEDAY4BAgcAAgEAxQECAMYBAADHAQEAiASHc3RyaW5nBIp0b29sLmNhbGwEhW5hbWUEiWEgc3RyaW5nFK50b29sLmNhbGw6IHVua25vd24gdG9vbCAnJXMnOyBrbm93biB0b29sczogJXMEgywgBIcobm9uZSkEiGhhbmRsZXKHAQEAAQgAAQUAAQIAAQMAAQYAAQQAgKcBAAAAAAAAAAAAAAABAAEAAQAAAAEAAAAAAAAAAAAA/wH/AwAAAAGAg4VuYW1lgKeGaW5wdXSAp4JljqeHhXR5cGWKYXJnX2Vycm9yiGVudHJpZXOGZXJyb3KIc2Zvcm1hdIZvcmRlcodjb25jYXSAvsIAAAaPCwAAAA4AAAEOAAACRAABAoEAAIAJAQEANAECAIEBAIDKgAEAiQIBAIwCBQQQAAQFyQACAEgAAgDHAAEAgwSEc3RkBIVqc29uBIZhcnJheYIAAAABBgCAjwEAAAABAAAAAAAAAAABAYCFhG91dISPjChmb3Igc3RhdGUpiI2MKGZvciBzdGF0ZSmIjYwoZm9yIHN0YXRlKYiNgmmJjIKFX0VOVoZvcmRlcoDFzAAACJsLAAAADgAAAQ4AAAJEAAECgQAAgAkBAQA0AQIAgQEAgMqABwCJAgEADAMFBIkCAgCMAgUGEwMDAFIAAACOAwUDEgMDB44DBQQSAwQHjgMFBRIDBQeOAwUGEgMGBxAABAbJAAgASAACAMcAAQCHBIRzdGQEhWpzb24EhmFycmF5BIVuYW1lBIxkZXNjcmlwdGlvbgSNaW5wdXRfc2NoZW1hBIZncm91cIMAAAABBgABBQCAmwEAAAABAAAAAAEAAAABAAAAAAAAAAAAAP4EAYCGhG91dISbjChmb3Igc3RhdGUpiJmMKGZvciBzdGF0ZSmImYwoZm9yIHN0YXRlKYiZgmmJmIJljZiDhV9FTlaGb3JkZXKIZW50cmllc4DPzwAAAoMJAAAASAACAEcAAQCAgQEHAICDAAAAgICBiXJldmlzaW9ugNLSAQACiIkAAACMAAEAvAAAADgAAICGAAAAhwAAAMgAAgDHAAEAgQCBAQUAgIgAAAAAAAAAAICBhW5hbWWAiIGIZW50cmllc6cBCAEAAAAAAAIAAAAAAAEAAAABBAQa5h0I+AsE/AcH+QoAAAMAAACAiYJSgqeFdHlwZYinhmVycm9yiKeIc2Zvcm1hdIinh2NvbmNhdIiniGVudHJpZXOSp4ZvcmRlcpKniXJldmlzaW9uk6eKYXJnX2Vycm9ylKeBhV9FTlY="
  },
  "=ab:prelude": {
    source: "src/lua/prelude.lua",
    hash: "a7e83ba9:33f2",
    bytecode: "G0x1YVQAGZMNChoKBAgIeFYAAAAAAAAAAAAAACh3QAGMPWFiOnByZWx1ZGWAgAABKwHgUQAAAFAAAAMOAQAAjgEAAQsCAAKLAgADCwMABIsDAAULBAAGiwQABwsFAAiLBQAJCwYACg4GDAuLBgAKjgYNDAsHAAoOBw4NiwcADo4HDw8LCAAODggQEIsIAA6OCBERCwkAEg4JEgKLCQATwokAALgAAICTCQAAUgAAAA8AExOLCQATCwoAEw4KFBRCigAAuAAAgBMKAABSAAAAkgkUFIsJABOOCRMUDgoBFZIJFRQOCgEWkgkWFA4KAReSCRcUTwoAAJIJGBRPigAAkgkZFE8KAQCSCRoUT4oBAJIJGxQLCgATjgoAHBIKHBVPCgIAz4oCAA8AHRWTCgAAUgAAAJIKHhWSih8gTwsDAJIKIRZPiwMAzwsEAE+MBADPDAUAT40FAM8NBgBPjgYAzw4HAE+PBwCSCiIeTw8IAJIKIx5PjwgAkgokHk8PCQCSCiUeT48JAJIKJh5PDwoAkgonHk+PCgCSCigeTw8LAJIKKR5PjwsAkgoqHgAPFgCBj/9/A5AVAIcQAAAFEQAARA8FAoAPFgABEACAgxAWAAURAACHEQAAxA8FAgAQFgCBkACAA5EWAIURAAAHEgAARBAFAocQAAAHEQAAEpAuL5IPLiISDy4hgBAeAAARHwCLEQAwCxIAMIsSADAAEx4AgBMfAJISLSASEiwnkhErJpMRBABSAAAAkpExL5KRMi+SkTMvkpE0L5KRNS+SkTYvCxIAMM8SDAASEjclCxIAMM+SDAASEjglCxIAMM8SDQASEjklCxIAMM+SDQASEgIlCxIAMM8SDgASEjolCxIAO8+SDgASEjwlCxIAPc8SDwASEj4lCxIAPc+SDwASEj8lCxIAPc8SEAASEkAlCxIAQY4SAUISEkIlCxIAQY4SAUQSEkMlCxIAQY4SAUYSEkUlCxIAQY4SAUgSEkclCxIAQc+SEAASEkklCxIAQc8SEQASEkolCxIAS4sSAEySkk1Oz5IRAA8ASyXPEhIADwBPJc+SEgAPAFAlixIAUY4SJVILEwBRDhMmU4ATCQATFAAAUgAAAJMUAQBSAAAAkpQfVMQTAwILFABRixQAUQOVKwCSlFZXEhRVKgsUAFESlFhOCxQAURKUWU4LFABRzxQTABIUWilPlBMADwBbKAsUAFxClAAAuAAAgBMUAABSAAAADwBcKAsUAFzPFBQAEhRdKUaUAQHeBIpob3N0X2NhbGwEi3VzZXJfbGV2ZWwEhXR5cGUEiXRvc3RyaW5nBIl0b251bWJlcgSHc2VsZWN0BIZlcnJvcgSNc2V0bWV0YXRhYmxlBI1nZXRtZXRhdGFibGUEiXJhd2VxdWFsBIdzdHJpbmcEh2Zvcm1hdASEc3ViBIVmaW5kBIZ0YWJsZQSHY29uY2F0BIVwYWNrBId1bnBhY2sEhW1hdGgEhHN0ZASFanNvbgSFbnVsbASJYXJyYXlfbXQEim9iamVjdF9tdASGYXJyYXkEh29iamVjdASJaXNfYXJyYXkEiGlzX251bGwEhXRhc2sEhnByaW50BIhfX2luZGV4BIdfX25hbWUEhkZJTEUqBItfX3Rvc3RyaW5nBIVyZWFkBIZsaW5lcwSGd3JpdGUEhXNlZWsEhmZsdXNoBIhzZXR2YnVmBIZjbG9zZQSIX19jbG9zZQSFX19nYwSGc3RkaW4Eh3N0ZG91dASHc3RkZXJyBIRzdGQRBINpbwSCcgSCdwSCYQSDcisEg3crBINhKwSFb3BlbgSGcG9wZW4EhmNsb3NlBIZpbnB1dASDaW8Eh291dHB1dASDaW8EhXJlYWQEhndyaXRlBIZsaW5lcwSDb3MEh2dldGVudgSHcmVtb3ZlBIpvc19yZW1vdmUEh3JlbmFtZQSKb3NfcmVuYW1lBIh0bXBuYW1lBItvc190bXBuYW1lBIhleGVjdXRlBIVleGl0BIVsb2FkBIdzdHJpbmcEhWR1bXAABIlsb2FkZmlsZQSHZG9maWxlBIhwYWNrYWdlBIdsb2FkZWQEiHByZWxvYWQElG1vZHVsZSBiZWluZyBsb2FkZWQEhXBhdGgEhmNwYXRoBIEEinNlYXJjaGVycwSLc2VhcmNocGF0aASIbG9hZGxpYgSIcmVxdWlyZQSEam9iBIZkZWZlcoEBAACpgJ+fAQAEiYkAAABDgQAAuAAAgBMBAABSAAAAiwEBAMUAAwDGAAAAxwABAIEEiWFycmF5X210ggEJAAEBAICJAAAAAAAAAAAAgIGCdICJgo1zZXRtZXRhdGFibGWCSIChoQEABImJAAAAQ4EAALgAAIATAQAAUgAAAIsBAQDFAAMAxgAAAMcAAQCBBIpvYmplY3RfbXSCAQkAAQEAgIkAAAAAAAAAAACAgYJ0gImCjXNldG1ldGF0YWJsZYJIgKKiAQADj4kAAAAAAQAAxAACArwAAAC4AgCAiQABAAABAADEAAICCwECAbmAAgA4AACAhgAAAIcAAADIAAIAxwABAIIEhnRhYmxlBIlhcnJheV9tdIMBBAABCgABAQCAjwAAAAAAAAAAAAAAAAAAAICBgnSAj4OFdHlwZY1nZXRtZXRhdGFibGWCSICjowEABIaJAAAAAAEAAIsBAQDFAAMAxgAAAMcAAQCBBIVudWxsggELAAEBAICGAAAAAAAAgIGCdoCGgolyYXdlcXVhbIJIgKeqAQAEj4kAAAAAAQAAxAACArwAAAA4AgCAiQABAAOBAACAAQAAxQADAMYAAACJAAIAAAEAAMUAAgDGAAAAxwABAIIEhmZsb2F0BIYlLjE0Z4MBEgABDAABBQCAjwEAAAAAAAAAAAABAAAAAYCBgnaAj4OKbWF0aF90eXBliHNmb3JtYXSJdG9zdHJpbmeArLEAAQqdUQAAAAkAAACDAAAAUAEAAEQAAAKTAAAAUgAAAAEBAICAAQAAAQIAgEqBAwAJAwEAiQMAAAAEBQDQBAAAxAMAAkQDAgKQAAUGSQEEAAsBAgGBAQCACQIDAIACAQADAwEARAIDAoOCAQA1AgIARAEDAUYBAQGEBIIjBIZ3cml0ZQSCCQSCCoQBBwABBQABAQABDwCAnQABAAAAAQABAAAAAAAAAAAAAAABAAAAAAAAAAABgIaCboWdhnBhcnRzh52MKGZvciBzdGF0ZSmKk4woZm9yIHN0YXRlKYqTjChmb3Igc3RhdGUpipOCaYuShIdzZWxlY3SJdG9zdHJpbmeCSIdjb25jYXSAtrkBAASLjgAAAMIAAAC4AACAg4AAAMgAAgCJAAAAAwEBAI4BAAPFAAMAxgAAAMcAAQCEBIdjbG9zZWQEjmZpbGUgKGNsb3NlZCkEimZpbGUgKCVzKQSGbGFiZWyBAQwAgIsBAAAAAAEAAAAAAYCBgmaAi4GIc2Zvcm1hdIC7vgQAB48JAgAAkwIEAFIAAACSAgAAkgIBAZICAgKSAgMDkoIEBZKCBgeSgggJkoIKCQkDAQBFAgMARgIAAEcCAQCLBIJoBIZsYWJlbASGYXN5bmMEiXdyaXRhYmxlBIRidWYEgQSEcG9zAwEAAAAAAAAABIRlb2YBBIdjbG9zZWSCAQkAARUAgI8BAAAAAAAAAAABAAD/AQGAhIJogI+GbGFiZWyAj4Zhc3luY4CPiXdyaXRhYmxlgI+CjXNldG1ldGF0YWJsZYVGaWxlgMDGAgAImQkBAACAAQAARAECAokBAQA5gQMAuAQAgAkBAgCJAQMAAwIAAIACAQAJAwQAgAMAAEQDAgDEAQACAQIBgEQBAwEOAQABQgEAALgBAIAJAQIAgwEBAAECAYBEAQMBSAACAEcBAQCDFLFiYWQgYXJndW1lbnQgIzEgdG8gJyVzJyAoRklMRSogZXhwZWN0ZWQsIGdvdCAlcykEh2Nsb3NlZASdYXR0ZW1wdCB0byB1c2UgYSBjbG9zZWQgZmlsZYUBCgABFQABCAABDAABBACAmQEAAAAAAAEAAAAAAAAAAAACAAAAAAAAAQGAgoJmgJmGZm5hbWWAmYWNZ2V0bWV0YXRhYmxlhUZpbGWGZXJyb3KIc2Zvcm1hdIV0eXBlgMjTAQAFqo4AAADCAAAAuAAAgIUAAADIAAIAiAAAAA4BAAFCAQAAuAIAgAkBAACDAQEADgIAA0QBAwKAAAIAuAEAgAsBAQSOAQADRAECAoAAAgC8AAUAOAEAgBKAAAYFAQAASAECAA4BAAeOAQAItAEDALoBAgC4AACAEgAIATgDAIAJAQIAjgEACA4CAAdEAQMCgAEBADUBAgASAAgCEoAHCQcBAABIAQIARwEBAIoEhGVvZgSGYXN5bmMEjmlvLnJlYWRfY2h1bmsEgmgEjmlvX3JlYWRfY2h1bmsAEQSEcG9zBIRidWYDAQAAAAAAAACDAQIAAQEAAQ0AgKoBAAAAAAEBAAAAAAAAAAAAAAAAAQABAQACAAAAAAAAAAAAAAAAAAEBAAGAgoJmgKqGY2h1bmuGqoOKaG9zdF9jYWxsgkiFc3N1YoDV5AIAB64JAQAAjgEAAAOCAACOAgACBwMAAEQBBQJCAQAAuAYAgIkBAQAOAgAAjgIAAsIAAAC4AACAQ4MCALgAAIAVAwJ+LwGAB8QBBAIVAgKALwGABhIAAgTIAQIAiQECAAACAADEAQICwoEAADjy/3+OAQACDgIAADQCBAA6AgMAuAAAgIgBAADIAQIAiQEBAA4CAACOAgACxAEDAg4CAAA0AgQAFQIEgC8CgAYSAAIEyAECADjp/39HAQEAgwSEYnVmBIIKBIRwb3ODAQ4AAQ0AARgAgK4CAAAAAAABAAEAAAAAAAAAAAABAAABAgAAAAABAAAAAAAAAQAAAAEAAAAAAQECgIWCZoCuhWtlZXCAroNubIashWxpbmWSloVyZXN0pqyDhnNmaW5khXNzdWKFZmlsbIDm6wEABI+JAAAAAAEAAMQAAgLCAAAAOAAAgLj8/3+JAAEADgEAAI4BAAHEAAMCAwEBABKAAQMSAAACyAACAEcBAQCEBIRidWYEhHBvcwSBAwEAAAAAAAAAggEYAAENAICPAQAAAAAAAQAAAAEAAAEBgIKCZoCPhXJlc3SKj4KFZmlsbIVzc3VigO35AgAGuA4BAAA0AQIAjgEAASMBAgMuAQMHFQECgC8BgAY6AQEAuAIAgAkBAACAAQAARAECAkIBAAA4AACAOPj/fw4BAAGOAQAAtAEDALoBAgC4AQCAwAB/ALgAAIAIAQAASAECAL0AfwC4BgCADgEAAY4BAAC0AQMAugECADgDAIAJAQAAgAEAAEQBAgJCgQAAuAAAgAgBAABIAQIAAwEBAEgBAgAJAQEAjgEAAA4CAAGOAgABogIFAa4CAQaVAgV+rwKAB0QBBAKOAQABNAICAKIBAwSuAQQGEgABA0gBAgDHAQEAgwSEYnVmBIRwb3MEgYIBGAABDQCAuAEAAAAAAAAAAAEAAAAAAAIAAAAAAAAAAAEAAQAAAAAAAAAAAAAAAQACAAAAAAAAAAABAAAAAAEBgIOCZoC4gm6AuIJzsbiChWZpbGyFc3N1YoD7AYoBAAW2iQAAAA4BAACDgQAADgIAAsQABALCAAAAuAAAgBIAAgE4BgCADgEAADQBAgAVAQKALwGABhIAAgIJAQEAgAEAAEQBAgJCgQAAOPb/fwgBAABIAQIAuPT/f4kAAAAOAQAAg4EBAA4CAALEAAQCwoAAALgCAICJAAEAAAEAAMQAAgLCAAAAOAAAgDj5/3+LAAIEjgABBQ4BAACDAQMADgIAAsQABALCgAAAOAAAgIOAAwAOAQACtAEBACIBAgMuAQMGEgACAgkBAwCAAQEARQECAEYBAABHAQEAiASEYnVmBIZbXiVzXQSEcG9zBIxbXiV3JS4lKyUtXQSHc3RyaW5nBIZtYXRjaASlXlslKyUtXT9bJXclLl0qW2VFcFBdP1slKyUtXT9bJXclLl0qBIGEAQ4AARgAAAAAAQYAgLYCAAAAAAEAAQECAAAAAAEAAAAAAAAAAwAAAAAAAAAAAAAAAAEAAAAAAAAAAAEAAAAAAQAAAAGAg4JmgLaCc4WViG51bWVyYWystoSGc2ZpbmSFZmlsbIVfRU5WiXRvbnVtYmVygAGMAZUCAAe8CQEAAIABAQBEAQICPAEAALgDAIAJAQEAgAEAAAsCAgEOAgQCgAIBAEQCAgBFAQAARgEAAAkBAwCAAQEARAECAhSBAgMDAgIAg4ICAEQBBAKAAAIACQEEAIABAQABAgCAgQIAgEQBBAI8AQYAOAIAgIkBBQAAAgAAhQIAAMUBAwDGAQAAPAEHADgCAICJAQUAAAIAAIcCAADFAQMAxgEAADwBCAC4AQCAiQEGAAACAADFAQIAxgEAADwBCQC4AQCAiQEHAAACAADFAQIAxgEAAIkBCAAJAgkAgwIFAAADAQBEAgMCgYIBgMQBAwHHAQEAiwSHbnVtYmVyBIVtYXRoBIZmbG9vcgSFZ3N1YgSEXiUqBIEEgmwEgkwEgmEEgm4UrWJhZCBhcmd1bWVudCB0byAncmVhZCcgKGludmFsaWQgZm9ybWF0ICclcycpigEEAAEbAAAAAAEFAAENAAEZAAEaAAEcAAEIAAEMAIC8AQAAAAAAAAAAAAAAAAEAAAAAAAAAAQAAAAABAAAAAAAAAQAAAAAAAAEAAAAAAAEAAAAAAAEAAAAAAAABgIOCZoC8hGZtdIC8gmOavIqFdHlwZYtyZWFkX2NvdW50hV9FTlaJdG9zdHJpbmeFc3N1YopyZWFkX2xpbmWJcmVhZF9hbGyMcmVhZF9udW1iZXKGZXJyb3KIc2Zvcm1hdIABlwGiAQEMrtEAAACJAAAAAAEAAIMBAADEAAMBiQABAAOBAADQAQAAxAAAAr0AfwA4AgCACQECAIABAAAFAgAARQEDAkYBAAITAQAAUgAAAIEBAIAAAgEAgQIAgMoBCACJAwMAAAQAAIkEAQAABQYA0AUAAMQEAALEAwMCEAEGB7wDAgC4AgCACQQEAIAEAgABBQCAgAUGAEUEBAJGBAACyYEIAIkBBAAAAgIAgQIAgAADAQDFAQQCxgEAAsYBAQKDBIVyZWFkBIIjAIUBFwABBwABGQABHQABEQCArgABAAAAAQAAAAEAAAAAAAABAAEAAAABAAAAAAAAAQEAAAAAAAAA/QUAAAAAAAGAiIVzZWxmgK6CbomuhG91dJKujChmb3Igc3RhdGUplaeMKGZvciBzdGF0ZSmVp4woZm9yIHN0YXRlKZWngmmWpoJ2naaFi2NoZWNrX2ZpbGWHc2VsZWN0inJlYWRfbGluZYlyZWFkX29uZYd1bnBhY2uAAaQBrAEBBIvRAAAAiQAAAAABAACDAQAAxAADAYkAAQBQAQAAxAAAAk8BAABGgQICRoEBAoEEhmxpbmVzhQEXAAEQAAEIAAEZAAERAIGAAacBqwAABpkLAAAAQgAAALgBAIAJAAEAg4AAAAGBAIBEAAMBCwACAj0AfwA4AgCACQADAIkAAAAFAQAARQADAEYAAAAJAAAAFIAAAwkBBACJAQIAAQIAgIsCAgJEAQQARQAAAEYAAABHAAEAhASHY2xvc2VkBJdmaWxlIGlzIGFscmVhZHkgY2xvc2VkBIJuBIVyZWFkhQEAAAACAAEBAAADAAAEAICZAQAAAAAAAAEAAAAAAAAAAQAAAAAAAAAAAYCAhYVzZWxmhmVycm9yhWZtdHOKcmVhZF9saW5lh3VucGFja4sAAQAAAAEAAAUAAYCChXNlbGaAi4VmbXRziIuFi2NoZWNrX2ZpbGWFcGFja4ZlcnJvcopyZWFkX2xpbmWHdW5wYWNrgAGuAcYBAQ7J0QAAAIkAAAAAAQAAgwEAAMQAAwGJAAEAA4EAANABAADEAAACEwEAAFIAAACBAQCAAAIBAIECAIDKAQ0AiQMBAAAEBgDQBAAAxAMAAgkEAgCABAcARAQCAjwEAgA4AgCAiQQDAAAFBwDEBAICEAEGCbgFAIA8BAMAuAAAgBABBge4AwCAiQQEAAkFBQCDBQIAAAYGAIAGCABEBQQCgYUAgMQEAwHJgQ0AiQEGAAACAgDEAQICCAICAI4DAAXCAwAAOAQAgIkDBwADBAMAjgQABwAFAwDEAwQEAAMJAIACCAAAAgcAOAMAgIsDCAgOBAAHgAQDAMQDAwQAAwkAgAIIAAACBwBCggAAuAEAgIgDAAAABAUAgAQGAMYDBAJGAAICxgMBAokEhndyaXRlBIIjBIdudW1iZXIEh3N0cmluZxS2YmFkIGFyZ3VtZW50ICMlZCB0byAnd3JpdGUnIChzdHJpbmcgZXhwZWN0ZWQsIGdvdCAlcykEhmFzeW5jBI5pby53cml0ZV9waXBlBIJoBIlpb193cml0ZYkBFwABBwABBAABFAABCAABDAABDwABAgABAQCAyQABAAAAAQAAAAEAAQAAAAEAAAABAAABAAEAAAAAAQABAAIAAAAAAAAA+AsAAAEBAAABAAAAAAAAAAACAAAAAAAAAgAAAAAAAQGAjYVzZWxmgMmCbonJhnBhcnRzi8mMKGZvciBzdGF0ZSmOqowoZm9yIHN0YXRlKY6qjChmb3Igc3RhdGUpjqqCaY+pgnaTqYN0dpaphWRhdGGtyYNva67JhGVycq7JhWNvZGWuyYmLY2hlY2tfZmlsZYdzZWxlY3SFdHlwZYpmbXRfdmFsdWWGZXJyb3KIc2Zvcm1hdIdjb25jYXSKaG9zdF9jYWxsgkiAAcgB0wMACLeJAQAAAAIAAIMCAADEAQMBwoAAADgAAICDgAAAQoEAADgAAIABgf9/vIACADgGAIC8gAEAOAUAgLyAAwA4BACAiQEBAAkCAgCDAgIACQMDAIADAQBEAwIARAIAAoGCAIDEAQMBjgEABcIBAAC4AQCAiAEAAAMCAwCBAg6AxgEEALwAAQA4BACAjgEAB7QBAwAOAgAIowEDBK4BBAeVAQOArwGABiMBAgMuAQMHgwEFAAECAIASgAkLEgAIBBIABwOLAQQMDgIADYACAQAAAwIAxQEEAMYBAADHAQEAjgSFc2VlawSEY3VyBIRzZXQEhGVuZBSwYmFkIGFyZ3VtZW50ICMxIHRvICdzZWVrJyAoaW52YWxpZCBvcHRpb24gJyVzJykEhmFzeW5jBI1JbGxlZ2FsIHNlZWsEhGJ1ZgSEcG9zBIRlb2YEgQEEiGlvX3NlZWsEgmiFARcAAQgAAQwAAQUAAQEAgLcBAAAAAQAAAQAAAQAAAAAAAQAAAAAAAAAAAgAAAAAAAAEAAAAAAAAAAAAAAQAAAAABAAAAAAABgIOFc2VsZoC3h3doZW5jZYC3h29mZnNldIC3hYtjaGVja19maWxlhmVycm9yiHNmb3JtYXSJdG9zdHJpbmeCSIAB1QHYAQAEhokAAAAAAQAAgwEAAMQAAwFIAAIAxwABAIEEhmZsdXNogQEXAICGAQAAAAEBgIGFc2VsZoCGgYtjaGVja19maWxlgAHaAdoBAAKDhwAAAMgAAgDHAAEAgICAgwAAAICBhXNlbGaAg4CAAdwB4gEABJiJAAAAAAEAAIMBAADEAAMBjgAAAcIAAAA4AQCAiAAAAAMBAQDGAAMAEoADBI4AAAXCAAAAOAIAgIkAAQADAQMAjgEAB8UAAwDGAAAAiwACCA4BAAfFAAIAxgAAAMcAAQCJBIZjbG9zZQSEc3RkBJtjYW5ub3QgY2xvc2Ugc3RhbmRhcmQgZmlsZQSHY2xvc2VkEQSFcGlwZQSKaW8ucGNsb3NlBIJoBIlpb19jbG9zZYMBFwABAgABAQCAmAEAAAABAAAAAAABAQAAAAAAAAABAAAAAYCBhXNlbGaAmIOLY2hlY2tfZmlsZYpob3N0X2NhbGyCSIAB5AHkAQADiY4AAADCgAAAOAIAgI4AAAHCgAAAuAAAgJSAAALEAAIBxwABAIMEh2Nsb3NlZASEc3RkBIZjbG9zZYCAiQAAAAAAAAAAAICBgmaAiYCAAeUB5QEABI6OAAAAwoAAALgEAICOAAABwoAAADgDAICOAAACwoAAALgBAICLAAADCwEBBI4BAAXEAAMBxwABAIYEh2Nsb3NlZASEc3RkBIVwaXBlBIZwY2FsbASJaW9fY2xvc2UEgmiCAAAAAQEAgI4AAAAAAAAAAAAAAAAAAICBgmaAjoKFX0VOVoJIgAHwAfoCAAu6CQEAAIABAABEAQICPIEAADgEAIAJAQEAiQECAAOCAACJAgAAAAMAAMQCAgDEAQACAYIAgEQBAwHCgAAAOAAAgIMAAQAJAQMAgAEBAEQBAgIUgQIDAwICAIOCAgBEAQQCiQEEAIwBAwLCgQAAOAQAgIkBAQAJAgIAgwIDAAkDAwCAAwEARAMCAEQCAAKBggCAxAEDAYsBBQcAAgAAgAICAMQBAwTCgQAAuAEAgAgDAACAAwQAAAQFAEYDBAAJAwYAgAMDAAAEAACFBAAAPAECADgAAIAGBQAABwUAAEUDBQBGAwAARwMBAIgEh3N0cmluZxS0YmFkIGFyZ3VtZW50ICMxIHRvICdvcGVuJyAoc3RyaW5nIGV4cGVjdGVkLCBnb3QgJXMpBIJyBIVnc3ViBINiJASBFK5iYWQgYXJndW1lbnQgIzIgdG8gJ29wZW4nIChpbnZhbGlkIG1vZGUgJyVzJykEiGlvX29wZW6HAQQAAQgAAQwAAQUAASMAAQEAARYAgLoBAAAAAAEAAAAAAAAAAAIAAAEAAAAAAAABAAAAAAAAAAAAAAAAAQAAAAEAAAAAAAEAAAAAAAAAAAABgIaFcGF0aIC6hW1vZGWAuoJtmLqCaKm6hGVycqm6hWNvZGWpuoeFdHlwZYZlcnJvcohzZm9ybWF0iXRvc3RyaW5ni1ZBTElEX01PREWCSIluZXdfZmlsZYAB/AKHAgAJsQkBAACAAQAARAECAjyBAAA4BACACQEBAIkBAgADggAAiQIAAAADAADEAgIAxAEAAgGCAIBEAQMBwoAAADgAAICDAAEAvIACADgEAIC8gAMAOAMAgAkBAQCJAQIAAwICAIACAQDEAQMCAYIAgEQBAwELAQMFgAEAAAACAQBEAQMDQoEAADgBAIAIAgAAgAIDAEYCAwAJAgQAgAICAAMDAwCHAwAAvIADADgAAIAGBAAABwQAAEQCBQISggYHSAICAMcCAQCIBIdzdHJpbmcUtWJhZCBhcmd1bWVudCAjMSB0byAncG9wZW4nIChzdHJpbmcgZXhwZWN0ZWQsIGdvdCAlcykEgnIEgncUr2JhZCBhcmd1bWVudCAjMiB0byAncG9wZW4nIChpbnZhbGlkIG1vZGUgJyVzJykEiWlvX3BvcGVuBIVwaXBlEYUBBAABCAABDAABAQABFgCAsQEAAAAAAQAAAAAAAAAAAgAAAQAAAAAAAAAAAAABAAAAAQAAAAABAAAAAAAAAAABAQGAhYRjbWSAsYVtb2RlgLGCaKCxhGVycqCxgmausYWFdHlwZYZlcnJvcohzZm9ybWF0gkiJbmV3X2ZpbGWAAokCiwEAA4fDgAAAOAAAgIkAAACUgAEAxQACAMYAAADHAAEAgQSGY2xvc2WBASIAgIcBAAAAAAABgIGCZoCHgYxkZWZhdWx0X291dIACjQKQAQADkYkAAAAAAQAAxAACAgkBAQC5gAIAuAAAgIgAAADIAAIAjgAAAMIAAAA4AQCAg4AAAMKAAAA4AACAgwABAMgAAgDHAAEAgwSHY2xvc2VkBIxjbG9zZWQgZmlsZQSFZmlsZYIBCgABFQCAkQEAAAAAAAAAAQAAAAAAAAABgIGCZoCRgo1nZXRtZXRhdGFibGWFRmlsZYACkgKcAQAGnjwAAAC4AACAiQAAAMgAAgCJAAEAAAEAAMQAAgK8AAEAOAYAgIsAAgKOAAEDAAEAAIMBAgDEAAMDwoAAALgBAICJAQMAAAICAIGCAIDEAQMBigAAADgCAICJAAQAAAEAAIOBAgDEAAMCigAAAIkAAADIAAIAxwABAIYABIdzdHJpbmcEg2lvBIVvcGVuBIJyBIZpbnB1dIUBIQABBAAAAAABCAABFwCAngEAAAABAAAAAAEAAAAAAQAAAAAAAQACAAAAAAIAAYCDgmaAnoNuZo6VhGVyco6VhYtkZWZhdWx0X2luhXR5cGWFX0VOVoZlcnJvcotjaGVja19maWxlgAKeAqgBAAaePAAAALgAAICJAAAAyAACAIkAAQAAAQAAxAACArwAAQA4BgCAiwACAo4AAQMAAQAAgwECAMQAAwPCgAAAuAEAgIkBAwAAAgIAgYIAgMQBAwGKAAAAOAIAgIkABAAAAQAAg4ECAMQAAwKKAAAAiQAAAMgAAgDHAAEAhgAEh3N0cmluZwSDaW8EhW9wZW4EgncEh291dHB1dIUBIgABBAAAAAABCAABFwCAngEAAAABAAAAAAEAAAAAAQAAAAAAAQACAAAAAAIAAYCDgmaAnoNuZo6VhGVyco6VhYxkZWZhdWx0X291dIV0eXBlhV9FTlaGZXJyb3KLY2hlY2tfZmlsZYACqgKqAAEDh1EAAAAJAAAAFIAAAFABAABFAAABRgAAAUYAAQGBBIVyZWFkgQEhAICHAAAAAAAAAICAgYtkZWZhdWx0X2lugAKrAqsAAQOHUQAAAAkAAAAUgAAAUAEAAEUAAAFGAAABRgABAYEEhndyaXRlgQEiAICHAAAAAAAAAICAgYxkZWZhdWx0X291dIACrQK5AQEIm9EAAAA8AAAAOAIAgIkAAACUgAEB0AEAAMWAAALGgAACiwABAo4AAQMAAQAAgwECAMQAAwPCgAAAuAEAgIkBAgAAAgIAgYIAgMQBAwGJAQMAUAIAAMQBAAJPAgAAiAIBAIADAQBGggUCRoIBAoUABIZsaW5lcwSDaW8EhW9wZW4EgnKGASEAAAAAAQgAARAAARkAAREAgYACsgK4AAAHnwsAAABCAAAAuAAAgAgAAABIAAIACAAAAIsAAQG9AH8AuAIAgIkAAgAJAQAAhQEAAMQAAwIAAAEAOAQAgIkAAACUgAECiQEDAAkCAQCBAgCACwMBAcQBBADEAAACAAABADwAAwA4AQCAiQAAAJSAAQTEAAIBSAACAMcAAQCFBIdjbG9zZWQEgm4EhXJlYWQABIZjbG9zZYQBAQABAwAABAAABQCAnwEAAAAAAQEAAAAAAAAAAAAAAAAAAAAAAAEAAAAAAQGAgYJ2hp+EgmaFZm10c4pyZWFkX2xpbmWHdW5wYWNrmwABAAAAAAAAAQAAAAABAAAAAAABAAAHAAAAAYCEhXBhdGiAm4JmjZuEZXJyjZuFZm10c5abhotkZWZhdWx0X2luhV9FTlaGZXJyb3KFcGFja4pyZWFkX2xpbmWHdW5wYWNrgALBAscBAAaYPAAAALgAAICHAAAAyAACAIkAAAAAAQAAxAACAryAAQA4BACAiQABAAkBAgCDAQEACQIAAIACAABEAgIARAEAAoGBAIDEAAMBiQADAAOBAQCAAQAAxQADAMYAAADHAAEAhAAEh3N0cmluZxS3YmFkIGFyZ3VtZW50ICMxIHRvICdleGVjdXRlJyAoc3RyaW5nIGV4cGVjdGVkLCBnb3QgJXMpBItvcy5leGVjdXRlhAEEAAEIAAEMAAECAICYAQAAAAEAAAAAAQAAAAAAAAAAAgAAAAABgIGEY21kgJiEhXR5cGWGZXJyb3KIc2Zvcm1hdIpob3N0X2NhbGyAAskC0gEABpw8gAAAuAAAgDwAAQC4AACAAYD/f7gIAIA8AAIAuAAAgAEAAIC4BgCAiQAAAAABAADEAAICvIADADgEAICJAAEACQECAIMBAgAJAgMAgAIAAEQCAgBEAQACgYEAgMQAAwGLAAQFAAEAAMQAAgHHAAEAhgARAQSIaW50ZWdlchTAYmFkIGFyZ3VtZW50ICMxIHRvICdleGl0JyAoaW50ZWdlciBvciBib29sZWFuIGV4cGVjdGVkLCBnb3QgJXMpBI1yZXF1ZXN0X2V4aXSFARIAAQgAAQwAAQQAAQAAgJwBAAAAAQABAAEAAQAAAAABAAAAAAAAAAACAAABgIGFY29kZYCchYptYXRoX3R5cGWGZXJyb3KIc2Zvcm1hdIV0eXBlglKAAtgC2wMBCJXRAQAAiQEAAAMCAADQAgAAxAEAAsABfwA4AwCAiQEBAAACAACAAgEAA4MAANADAADFAQAExgEABIkBAQAAAgAAgAIBAAODAADFAQQExgEABMYBAQSCBIIjBIJ0ggEHAAEkAICVAAEAAAAAAAAAAAAAAAABAAAAAAABgIOGY2h1bmuAlYpjaHVua25hbWWAlYZfbW9kZYCVgodzZWxlY3SJcmF3X2xvYWSAAt0C4wIBCaZRAQAACwEAAIABAABEAQIDQoEAADgBAIAIAgAAgAIDAEYCAwMUggIBAwMBAIODAQBEAgQCAAEEAAkCAQCDAgIAUAMAAEQCAAJAAn8AOAQAgAkCAgCAAgIAA4MCAIADAAA1AwIAgwMDAFAEAABFAgADRgIAAwkCAgCAAgIAA4MCAIADAAA1AwIAgwMDAEUCBANGAgADRgIBA4cEjHJlYWRfc291cmNlBIVnc3ViBIheI1teCl0qBIEEgiMEgkAEgnSDAQEAAQcAASQAgKYAAQAAAQAAAAABAAAAAAEAAAAAAAAAAAAAAAAAAAEAAAAAAAAAAYCEhXBhdGiApoZfbW9kZYCmhHNyY4SmhGVycoSmg4JIh3NlbGVjdIlyYXdfbG9hZIAC5QLpAQAGjYsAAAAAAQAAxAACA8KAAAC4AQCAiQEBAAACAgCBggCAxAEDAYABAQDFAQEAxgEAAMcBAQCBBIlsb2FkZmlsZYIAAAABCACAjQEAAAEAAAAAAAEAAAGAg4VwYXRogI2CZoONhGVycoONgoVfRU5WhmVycm9ygALyAvIAAAOFCAAAAIMAAAADgQAARgAEAEcAAQCCBJxDIG1vZHVsZXMgYXJlIG5vdCBzdXBwb3J0ZWQEh2Fic2VudICAhQAAAAAAgICAgAL0A5EBAA/kiQAAAAABAADEAAICvIAAADgEAICJAAEACQECAIOBAAAJAgAAgAIAAEQCAgBEAQACgYEAgMQAAwGJAAMAjAABAAkBBAC5AAIAOAMAgAkBAQCJAQIAAwIBAIACAADEAQMCAYIAgEQBAwG8gAMAOAAAgMgAAgAJAQUADAECAIMBAgBCgQAAOBAAgAsCBgWAAgAARAICBEKCAAA4BACAiQMBAAkEAgCDBAMAAAUAAIAFAAAABgUARAQFAoGEAIDEAwMBiQMHAAAEBACABAUAA4UDAMQDBAPCgwAAOAQAgIkEAQAJBQIAgwUEAAAGAACABgYAAAcIAEQFBQKBhQCAxAQDAYAEBwCAAQYAAAEJAAkCAwCJAgQAEAIABQsCCAmAAgIAAAMAAIADAwBEAgQDQoIAALgCAIAJAwMAEIMAAwkDAQCAAwUAAYT/f0QDAwG8ggMAOAEAgAkDAwAQAwAFOAMAgAkDAwAMAwYAiQMEADkDBwC4AACACQMDABCDAAoJAwMADAMGAIADAwBGAwMARwMBAIsEh3N0cmluZxS3YmFkIGFyZ3VtZW50ICMxIHRvICdyZXF1aXJlJyAoc3RyaW5nIGV4cGVjdGVkLCBnb3QgJXMpFLpjeWNsaWMgcmVxdWlyZTogbW9kdWxlICclcycgcmVxdWlyZXMgaXRzZWxmIHdoaWxlIGxvYWRpbmcABIo6cHJlbG9hZDoEj3Jlc29sdmVfbW9kdWxlFLltb2R1bGUgJyVzJyBub3QgZm91bmQ6CglubyBmaWVsZCBwYWNrYWdlLnByZWxvYWRbJyVzJ10lcwSCdBSuZXJyb3IgbG9hZGluZyBtb2R1bGUgJyVzJyBmcm9tIGZpbGUgJyVzJzoKCSVzBIZwY2FsbBGJAQQAAQgAAQwAASUAAScAASYAAQEAASQAAAAAgOQBAAAAAAEAAAAAAAAAAAIAAQAAAAAAAAAAAAEAAAEAAAEAAQAAAQABAAAAAAAAAAACAAAAAAEAAAAAAAAAAAAAAQAAAgAAAQAAAAABAAEAAQAAAAIAAQAAAQAAAAABAAIAAAABgIuFbmFtZYDkgnaQ5Idsb2FkZXKg5IZ3aGVyZaDkhHNyY6XDimNodW5rbmFtZaXDhWluZm+lw4NmbrXDhGVycrXDg29ry+SEcmVzy+SJhXR5cGWGZXJyb3KIc2Zvcm1hdIdsb2FkZWSITE9BRElOR4hwcmVsb2FkgkiJcmF3X2xvYWSFX0VOVoADlgObAQAGk4kAAAAAAQAAxAACAryAAAA4BACAiQABAAkBAgCDgQAACQIAAIACAABEAgIARAEAAoGBAIDEAAMBiwADAgEBJYCAAQAAxAADAccAAQCDBIdzdHJpbmcUuGpvYi5kZWZlcjogYXJndW1lbnQgMSAocmVhc29uKSBtdXN0IGJlIGEgc3RyaW5nLCBnb3QgJXMEjXJlcXVlc3RfZXhpdIQBBAABCAABDAABAACAkwEAAAAAAQAAAAAAAAAAAgAAAAGAgYdyZWFzb26Ak4SFdHlwZYZlcnJvcohzZm9ybWF0glIB4AEOAQACAAAAAAAAAAEAAAAAAAEAAAAAAAEAAwAAAAAAAQAAAAAAAAABAAEAAQABAAIAAgABAAEAAQAABgf7BwABAQQABQgNEQcOEQsN9RX4Iugl9RD9BQAI+ggAAQACAAAAAAABAAAAAAABAAAAAAABAAAAAAEAAQAAAAAAAAACgAAAAAAAAAIK9gwL9Q0C/gQD/QUK9gwK9gwAAAEAAAIM9A8AAAEAAAEAAAEAAAIG+ggJ9wwBAAX9C/oM/AcAAQABAAAAAAAAAQAAAAABAAEAAQAAH+MgAAAAAAACBfsFgQGAAe6oglKCAeCCSIIB4Ipob3N0X2NhbGyEAeCLdXNlcl9sZXZlbIQB4IV0eXBljAHgiXRvc3RyaW5njAHgiXRvbnVtYmVyjAHgh3NlbGVjdIwB4IZlcnJvcowB4I1zZXRtZXRhdGFibGWMAeCNZ2V0bWV0YXRhYmxljAHgiXJhd2VxdWFsjAHgiHNmb3JtYXSYAeCFc3N1YpgB4IZzZmluZJgB4Idjb25jYXSYAeCFcGFja5gB4Id1bnBhY2uYAeCKbWF0aF90eXBlmgHghWpzb26qAeCKZm10X3ZhbHVlvAHghUZpbGXAAeCJbmV3X2ZpbGXFAeCLY2hlY2tfZmlsZcYB4IVmaWxsxwHginJlYWRfbGluZcgB4IlyZWFkX2FsbMkB4ItyZWFkX2NvdW50ygHgjHJlYWRfbnVtYmVyywHgiXJlYWRfb25lzAHghnN0ZGlu5AHgh3N0ZG91dOoB4IdzdGRlcnLwAeCLZGVmYXVsdF9pbvcB4IxkZWZhdWx0X291dPcB4ItWQUxJRF9NT0RFAYcB4IlyYXdfbG9hZAG1AeCHbG9hZGVkAb8B4IhwcmVsb2FkAcEB4IhMT0FESU5HAcgB4IGFX0VOVg=="
  },
  "=ab:runtime": {
    source: "src/lua/runtime.lua",
    hash: "36ffeb97:4199",
    bytecode: "G0x1YVQAGZMNChoKBAgIeFYAAAAAAAAAAAAAACh3QAGMPWFiOnJ1bnRpbWWAgAABMAGlUQAAAFAAAAKTAAQAUgAAAAsBAAEOAQIAkgAAAgsBAAEOAQICkgACAgsBAAEOAQIDkgADAgsBAAEOAQIEkgAEAgsBAAEOAQIFkgAFAgsBAAEOAQIGkgAGAgsBAAEOAQIHkgAHAgsBAAgOAQIJiwEACI4BAwoLAgALDgIEDIsCAAuOAgUNCwMADosDAA8LBAAQiwQAEQsFABKLBQATjgULFAsGABMOBgwVgAYJABMHAABSAAAAkwcBAFIAAACShxYXxAYDAgAHCQCTBwAAUgAAABMIAgBSAAAAEogWGM8IAAASCBkRRAcDAoAHCQATCAAAUgAAAJMIAQBSAAAAkogaG8QHAwIICAAAiwgACI4IERxPiQAAzwkBABMKAgBSAAAAEgodDRIKGA7PigEAEgoeFU8LAgDPiwIATwwDABIKHxjPjAMAEgogGc8MBAALDQABz40EABINIRsLDQABzw0FABINIhsLDQABz40FABINBxtPDQYAiw0AAU+OBgCSDSMckw0AAFIAAACSDSQbko0WJRMOAgBSAAAAEo4mJxKOKCmTDgAAUgAAAAGP/3+TDwAAUgAAAAgQAACBkP9/ExEAAFIAAADPEQcAT5IHAJMSAQBSAAAAkpIWKk8TCADPkwgATxQJAM+UCQBPFQoAz5UKAE8WCwDPlgsATxcMABIKKy5PlwwAEgosLk8XDQASCi0uT5cNABIKLi5PFw4AEgovLk+XDgCSDTAuTxcPAJINMS5Plw8Akg0yLk8XEACSDTMuT5cQAJINGS4TFwAAUgAAAM8XEQASFzQvz5cRABIXNS/PFxIAEhc2L8+XEgASFzcvzxcTABIXOC/PlxMAEhcxL88XFAASFzkvEgolLkaKAgHGlwEBugSHY3JlYXRlBIpjb3JvdXRpbmUEh3Jlc3VtZQSGeWllbGQEh3N0YXR1cwSIcnVubmluZwSMaXN5aWVsZGFibGUEhmNsb3NlBIZkZWJ1ZwSIZ2V0aW5mbwSKdHJhY2ViYWNrBIZ0YWJsZQSFcGFjawSHdW5wYWNrBIV0eXBlBIZlcnJvcgSHc2VsZWN0BI1zZXRtZXRhdGFibGUEiXRvc3RyaW5nBIdzdHJpbmcEhWZpbmQEh2Zvcm1hdASHX19uYW1lBI1IT1NUX1JFUVVFU1QEhUVYSVQEi19fdG9zdHJpbmcEh19fbW9kZQSCawSIc2V0aG9vawSFSE9TVASLdXNlcl9sZXZlbASKaG9zdF9jYWxsBI9hc3luY19mdW5jdGlvbgSHcmVzdW1lBIdzdGF0dXMEhXdyYXAEiF9faW5kZXgEhXRhc2sEhmZpcnN0AwEAAAAAAAAABIVsYXN0AwAAAAAAAAAABIt0YXNrIGVycm9yBIRydW4EjXJlcXVlc3RfZXhpdASFbWFpbgSFbGF6eQSPZGVzY3JpYmVfZXJyb3IEhWpvaW4Eh2NhbmNlbASFZG9uZQSHc3RhdHVzBIZzcGF3bgSGc2xlZXAEhnlpZWxkBIRhbGwEhWpvaW4EiGlzX3Rhc2uBAQAAqYCrqwAAAoMDAAAASAACAEcAAQCBBKl0aGUgcnVuIGlzIGVuZGluZyAob3MuZXhpdCBvciBqb2IuZGVmZXIpgICDAAAAgICAgLGxAAADhQkAAACJAAEAAYH/f0QAAwFHAAEAgIIBBwABDgCAhQAAAAAAgICChmVycm9yhUVYSVSAtLcAAASKCQAAAIkAAQADAQAAgQEAgEQABAEJAAIAiQADAAGB/39EAAMBRwABAIEEgYQBEQABEgABBwABDgCAigEAAAAAAQAAAAGAgISIc2V0aG9va4pleGl0X2hvb2uGZXJyb3KFRVhJVIDAzAAABp8BgACAiAAAAAkBAACVAQCALwCABgMCAABEAQMCQoEAALgBAIDDgQEAOAAAgIEBAIDIAQIAjgECAbwBAgC4AQCAwoAAADgEAICAAAAAOAMAgIkBAQAOAgIDgwICAMQBAwLCgQAAOAAAgEgAAgAVAACALwCABrjx/39HAQEAhQSCUwSFd2hhdASCQwSHc291cmNlBIZePWFiOoIBAgABCwCAnwEAAgAAAAABAAAAAAABAAABAAAAAQAAAAAAAQIAAAKAg4ZsZXZlbIKfiGZpcnN0X2OCn4VpbmZvh52CiGdldGluZm+Gc2ZpbmSAz9MBAASIiQAAAAMBAACDgQAANQECAIABAADFAAMAxgAAAMcAAQCCFOFob3N0IGNhbGwgJyVzJyBtYWRlIHdoZXJlIHlpZWxkaW5nIGlzIGltcG9zc2libGUgKGluc2lkZSBhIEMgYm91bmRhcnk6IGEgdGFibGUuc29ydCBjb21wYXJhdG9yLCAUzGEgc3RyaW5nLmdzdWIgY2FsbGJhY2ssIF9fdG9zdHJpbmcsIF9fZ2MsIG9yIGEgZnVuY3Rpb24gY2FsbGVkIGJ5IHRoZSBob3N0KYEBDACAiAECAAAA/gIBgIGDb3CAiIGIc2Zvcm1hdIDV2wEBBZrRAAAAQgAAALgAAIDQAAAAxgAAAtAAAAIJAQAAuQACALgAAIAJAQEARAEBAQkBAgCAAQEARAECAjwBAAA4AgCACQEDAIABAQAJAgQARAIBAEQBAAEJAQMAgAEBAAGC/39EAQMBRgEBAoEEh3N0cmluZ4UBDgABEwABBgABBwABFQCAmgABAAAAAQEAAAAAAQAAAAAAAAAAAAEAAAABgIKDb2uAmoRlcnKGmoWFRVhJVItyYWlzZV9leGl0hXR5cGWGZXJyb3KLdXNlcl9sZXZlbIDf4wEBBprRAAAAiQAAAMIAAAC4AACAiQABAMQAAQGLAAIAxAABAsKAAAA4AwCAiQADAAkBBACAAQAARAECAokBBQDEAQEAxAAAAYkABgALAQIBiQEHAAACAADQAgAARAEAAMUAAALGAAACxgABAoIEjGlzeWllbGRhYmxlBIZ5aWVsZIgBEAABEwABAQABBwABFgABFQABFwABDQCAmgABAAAAAAEAAAAAAAAAAAAAAQAAAAAAAAABgIGDb3CAmoiIZXhpdGluZ4tyYWlzZV9leGl0hHJhd4ZlcnJvco1jYW5ub3RfeWllbGSLdXNlcl9sZXZlbIxyYWlzZV9yZXBseYVIT1NUgOfpAQACg88AAADGgAIAxoABAICBARgAgYDo6AABA4dRAAAACQAAAIkAAQBQAQAARQAAAUYAAAFGAAEBgIIAAAABAACAhwAAAAAAAACAgIKKaG9zdF9jYWxsg29wgwEAAYCBg29wgIOBimhvc3RfY2FsbIDt+QIBC75RAQAAwoAAADgCAIAJAQAAQgEAALgAAIAJAQEARAEBAcIAAAC4FwCAUAEAAokBAgA5AQMAuBUAgAsBAwCAAQAARAECAjwBAQA4EwCACwEDAkQBAQJCgQAAuAYAgAkBBACAAQAACwIDA4ACAAAFAwAAiQMFAAkEBgCBhACAUAUAAEQEAALEAwIARAIAAEUBAANGAQADCQEHABCBAAQJAQgAiwEDBVACAADEAQAARAEAAokBBwCQgQAGiQEEAAACAACLAgMDAAMAAIkDCQAABAIAgQQAgA4FAgfEAwQAxAIAAMUBAAPGAQADAAEBANABAABGAQADRgEBA4gEh3N0YXR1cwSKc3VzcGVuZGVkBIxpc3lpZWxkYWJsZQSHcmVzdW1lEQSGeWllbGQABIJuigEQAAETAAENAAEBAAEZAAEWAAEIAAEPAAEEAAEFAIC+AAEAAAAAAAABAAAAAAAAAAAAAAEAAAABAAAAAAAAAAAAAAAAAAIAAQAAAAABAAEAAAAAAAAAAAAAAAIAAAGAg4Njb4C+g29rgL6GcmVwbHmsuoqIZXhpdGluZ4tyYWlzZV9leGl0hUhPU1SEcmF3iGZvcndhcmSNY2Fubm90X3lpZWxkh3NlbGVjdIVidXN5hXBhY2uHdW5wYWNrgPv+AQEGkdEAAACJAAAAjAABAMIAAAA4AQCAhQAAAAMBAADGAAMCiQABAAABAACLAQIBAAIAANACAADEAQAAxQAAAsYAAALGAAECggSmY2Fubm90IHJlc3VtZSBub24tc3VzcGVuZGVkIGNvcm91dGluZQSHcmVzdW1lgwEPAAEZAAEBAICRAAEAAAAAAAABAAAAAAAAAAGAgYNjb4CRg4VidXN5iGZvcndhcmSEcmF3gAGAAYMBAAOLiQAAAIwAAQDCAAAAuAAAgIMAAADIAAIAiwABAQABAADFAAIAxgAAAMcAAQCCBIdub3JtYWwEh3N0YXR1c4IBDwABAQCAiwEAAAAAAAEAAAABgIGDY2+Ai4KFYnVzeYRyYXeAAYUBiAEAA4yJAAAAjAABAMIAAAA4AQCAhQAAAAMBAADGAAMAiwABAQABAADFAAIAxgAAAMcAAQCCFLZjYW5ub3QgY2xvc2UgYSBjb3JvdXRpbmUgdGhhdCBpcyB3YWl0aW5nIGZvciB0aGUgaG9zdASGY2xvc2WCAQ8AAQEAgIwBAAAAAAAAAQAAAAGAgYNjb4CMgoVidXN5hHJhd4ABigGQAgEGnFEBAADCAAAAuAAAgFABAABGAQADUAEAAosBAAAAAgAAxAECArwBAQA4AQCAiwEAAgACAADEAQIBiQEBAAACAgDEAQICvAEDALgBAICJAQIAAAICAIGCAIDEAQMBiQECAAACAgCBgv9/xAEDAcYBAQOEBIdzdGF0dXMEhWRlYWQEhmNsb3NlBIdzdHJpbmeDAQEAAQYAAQcAgJwAAQAAAAEBAAAAAAAAAAEAAAAAAAAAAAEAAAABgIODY2+AnINva4CchGVycoacg4RyYXeFdHlwZYZlcnJvcoABkgGVAQADhosAAAAAAQAAxAACAk8BAABGgQIARoEBAIEEh2NyZWF0ZYMBAQABGgAAAACBgAGUAZQAAQWLUQAAAAkAAACJAAEACwECAA4BAgGJAQEAUAIAAEQBAABFAAABRgAAAUYAAQGCBIpjb3JvdXRpbmUEh3Jlc3VtZYMAAQABAQAAAgCAiwAAAAAAAAAAAAAAgICDjHdyYXBfcmVzdWx0g2NvhV9FTlaGAQAAAQABgIKCZoCGg2Nvg4aDhHJhd4x3cmFwX3Jlc3VsdIVfRU5WgAGkAagCAAeMCwEAABUBAoAvAYAGDwAAAokBAAATAgACUgAAAIACAAAAAwEATgICAJABAgTHAQEAgQSFbGFzdIEBHACAjAEAAAEBAAAAAAAAAYCDgnSAjIVhcmdzgIyFbGFzdIOMgYZyZWFkeYABqgGxAAAEkQsAAACLAAABugAAALgAAICIAAAAyAACAIkAAACMAAEACQEAABCBAAIVAQCALwCABg8AAAINAQEBjQEBAkYBAwBHAQEAgwSGZmlyc3QEhWxhc3QAgQEcAICRAQEAAAAAAQABAAEAAAEAAAGAgoZmaXJzdIGRhWl0ZW2IkYGGcmVhZHmAAbQBtwEABpKJAAAAOQABALgAAICJAAAAyAACAIkAAQATAQIAUgAAABIBAACJAQIACAIAAIGCAIDEAQMCEgEBA4kBAwDFAAMAxgAAAMcAAQCCBIRlcnIEinRyYWNlYmFja4QBDgABCQABAwABJQCAkgEAAAAAAQAAAAAAAAAAAAAAAYCBgmWAkoSFRVhJVI1zZXRtZXRhdGFibGWKdHJhY2ViYWNrh0VSUlJFQ4ABuAG7AQAEk4kAAAA5gAEAuAIAgIsAAQAAAQAAxAACAgkBAgC5AAIAOAAAgEgAAgCJAAMAEwECAFIAAAASAQEAEoECA4kBAgDFAAMAxgAAAMcAAQCEBI1nZXRtZXRhdGFibGUEhGVycgSKdHJhY2ViYWNrBIGEAQ4AAAAAASUAAQkAgJMBAAAAAAAAAAAAAQAAAAAAAAABgIGCZYCThIVFWElUhV9FTlaHRVJSUkVDjXNldG1ldGF0YWJsZYABvQHGAwALsIcBAAAAAgEAEgACAhIAAQQSAAADiQEAAJCBAAPCgAAAOAcAgIkBAQA5gQMAuAUAgI4BAAS0AQMAvQF/ALgDAICJAQIAOYADADgCAICOAQAFwoEAALgAAICJAQMAkIEABoEBAIAOAgAENAIEAIECAIDKgQMAiQMEAA4EAAQMBAgGiQQFAAcFAADEBAIAxAMAAckBBACTAQAAUgAAABIABAOOAQAFwgEAALgBAICOAQAFAAIBAIACAgDEAQMBxwEBAIcEiWZpbmlzaGVkBINvawSHcmVzdWx0AASIam9pbmVycwSKb25fZmluaXNoEYYBHwABDgABIAABIgABIwABBACAsAEAAAAAAQABAAAAAAAAAAAAAAAAAAABAAIAAAAAAAAAAAAAAAABAAABAAAAAAAAAYCHgnSAsINva4Cwh3Jlc3VsdICwjChmb3Igc3RhdGUpnKWMKGZvciBzdGF0ZSmcpYwoZm9yIHN0YXRlKZylgmmdpIaFbGl2ZYVFWElUhW1haW6LdW5vYnNlcnZlZIhlbnF1ZXVlhXBhY2uAAcgBzwMAB5uJAQAAlQEDgK8BgAaKAQAAiQEBABMCAwBSAAAAiQIAABICAAWTAgAAUgAAABICAQUSAgICiQICAMQBAwILAgMEzwIAAEQCAgKSAQMECQIGABCCAwUJAgcAgAIDAAADAQBEAgMBxoECAEaCAQCGBINpZASIam9pbmVycwSFbmFtZQSDY28Eh2NyZWF0ZRGIASEAAQkAARsAAQEAAAAAASYAAR8AASMAgYABywHLAAEEiFEAAAALAAAAiQABAAkBAgDQAQAARQAAAUYAAAFGAAEBgQSHeHBjYWxsgwAEAAEAAAAFAICIAAAAAAAAAACAgIOFX0VOVoNmbo5vbl90YXNrX2Vycm9ymwEAAAABAAAAAAAAAAAAAAEAAAABAAEAAAABAYCEg2ZugJuFYXJnc4CbhW5hbWWAm4J0j5uIiG5leHRfaWSNc2V0bWV0YXRhYmxlhVRhc2uEcmF3hV9FTlaOb25fdGFza19lcnJvcoVsaXZliGVucXVldWWAAdEB7QIACwGaDgEAAEIBAAA4BQCADgEAAUKBAAC4AwCACQEAAIABAAAFAgAAiQIBAAMDAADEAgIARQEAAEYBAAASgAECCQECAIsBAwMOAgAEiQIEAAADAQCBAwCADgQBBcQCBADEAQAARAEAAosBAwYOAgAExAECArwBBwC4EACAjQECAcKBAAC4AwCAiQEAAAACAACFAgAACQMBAI0DAgJEAwIAxQEAAMYBAACNAQICwgEAALgFAICJAQAAAAIAAIcCAAAJAwIAiQMEAAAEAgCBBAGADgUCBcQDBABEAwAAxQEAAMYBAACJAQAAAAIAAIUCAAAJAwEAjQMCA0QDAgDFAQAAxgEAAI0BAgIJAgUAuYEEALgCAICJAQYAAAIAAIkCAgDEAgEAxQEAAMYBAACNAQIDCQIHAEICAAC4AwCACQIGAIACAAAJAwIAhQMAAAkECABEAwMARQIAAEYCAAAOAgAAQgIAALgDAIAJAgYAgAIAAAkDAgCFAwAAAwQAAEQDAwBFAgAARgIAALwBCAA4CQCADQICBI4CBAnCAgAAOAMAgIkCBgAAAwAAiQMCAAcEAADEAwIAxQIAAMYCAAASAAoEjgIECw4DBAs0AwYAFQMGgC8DgAaQAgYAxwIBALwBDAA4AwCACQIGAIACAAAJAwIAhwMAAEQDAgBFAgAARgIAAAsCCQ2LAgoOAAMDAIkDBAAABAIAgYQBgA4FAgXEAwQARAIAA0KCAAC4AwCACQMGAIADAAAJBAIAhQQAAAAFBQBEBAMARQMAAEYDAAASAA8FCQMLABADBQAJAwwAFQMGgC8DgAYKAwwARwMBAJAEimNhbmNlbGxlZASIc3RhcnRlZBEEh3Jlc3VtZQSDY28Egm4Eh3N0YXR1cwSFZGVhZASHX19qb2luBIlmaW5pc2hlZASIam9pbmluZwSIam9pbmVycwSIX195aWVsZASGcGNhbGwEhnN0YXJ0BINvcI0BKAABJwABBAABAQABBQABDQABIwABEAABDgAAAAABAAABHQABHgCAAZoBAAAAAAABAAAAAAAAAAIBAAAAAAAAAAAAAQAAAAABAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAAAAAEAAAAAAAAAAgAAAAAAAAAAAAEBAAAAAAAAAAAAAAEAAAAAAAAAAAAAAQABAQAAAAAAAAAAAAEBAAAAAAABAgAAAAAAAAAAAYAAAAAAAAAAAQAAAAAAAAAAAAEBAAEAAAABgQGAAeiHgnSAAZqFYXJnc4ABmoJymQGag29wywGah3RhcmdldOT2g29rAYgBmoNpZAGIAZqNh2ZpbmlzaIdlcnJyZWOFcGFja4RyYXeHdW5wYWNrhUhPU1SIZW5xdWV1ZYhleGl0aW5nhUVYSVSFX0VOVoJIiHdhaXRpbmeJbndhaXRpbmeAAfAB/gAADqYFAAAAiwAAAAkBAQDEAAIFywAOAA4DBQFCAwAAOAwAgA4DBQGOAwYCtAMHAAEEAICBBP9/yoMEAI4FBgKMBQsKuQUFADgCAICLBQADjgULBA4GBgKABgoAxAUDAckDBQCSggEFiQMCAAAEBQCJBAMABQUAAIMFAwDEBAMAxAMAAQcAAADMAAABzQAPALYAAABGgAIAxoABAIcEhnBhaXJzBIhqb2luaW5nBIhqb2luZXJzBIZ0YWJsZQSHcmVtb3ZlABTSZGVhZGxvY2s6IGV2ZXJ5IHRhc2sgaXMgd2FpdGluZyBmb3IgYW5vdGhlciB0YXNrIGFuZCBubyBob3N0IG9wZXJhdGlvbiBpcyBwZW5kaW5nhAAAAAEfAAEjAAEEAICmAQEAAAABAAABAQAAAAABAAAAAAAAAAD/AwEAAAAAAAAB+AAKAQGAi4RhbnmBpowoZm9yIHN0YXRlKYSjjChmb3Igc3RhdGUphKOMKGZvciBzdGF0ZSmEo4woZm9yIHN0YXRlKYSjgnSFoYd0YXJnZXSJoYwoZm9yIHN0YXRlKY2YjChmb3Igc3RhdGUpjZiMKGZvciBzdGF0ZSmNmIJpjpeEhV9FTlaFbGl2ZYhlbnF1ZXVlhXBhY2uAAoACjQMAB4iJAQAAAAIAAIACAQADAwAAxAEEAk8CAACSAQEERoIBAIIEiWNhbGxiYWNrBIpvbl9maW5pc2iGASkAAAAAAQAAAQUAAQoAAQ4AgYACggKMAgAKs0IAAAC4CgCACwEAAIsBAQEJAgIAhwIAAAkDAwCAAwEAAQQAgI4EAQJEAwQARAEAA0KBAAC4EQCACwIBAYkCAgAFAwAAg4MBAAkEBACABAMARAQCArUDAgBEAgQBuAwAgAkBBQC5AAIAuAIAgAsBAQGJAQIABQIAAIMCAgBEAQQBOAgAgAsBAACLAQEBCQICAIUCAAAOAwEFjgMBBkQBBgJCgQAAuAMAgIsBAQEJAgIAhQIAAAkDBACOAwEFRAMCAo4DAQbEAQUBRwEBAIcEhnBjYWxsBIZyZXBseQSCbhSvY2FsbGJhY2sgcmVzdWx0IGNhbm5vdCBiZSBwYXNzZWQgdG8gdGhlIGhvc3Q6IASSdGhlIHJ1biBpcyBlbmRpbmcEhGVycgSKdHJhY2ViYWNrhgABAAACAAECAAADAAAEAAAFAICzAQABAAAAAAAAAAAAAQAAAAAAAAAAAAAAAQAAAQAAAAAAAgAAAAAAAAEAAAAAAAAAAAACgIWDb2uAs4dyZXN1bHSAs4VzZW50jJeEd2h5jJeFc2VudKiyhoVfRU5WgkiGcmVwbHmHdW5wYWNriXRvc3RyaW5nhUVYSVSIAQAAAAALAAGAhINmboCIhWFyZ3OAiIZyZXBseYCIgnSFiIaJbmV3X3Rhc2uFX0VOVoJIh3VucGFja4l0b3N0cmluZ4VFWElUgAKPAqIBAAm6jgAAAMIAAAC4AACAhQAAAMgAAgASgAECjgAAA8IAAAA4CQCAjgAAAxKAAwQJAQAAEIEBBAkBAQAVAQJ+LwGABwoBAQALAQIFgAEBAEQBAgEJAQMAgAEAAAkCBACFAgAAA4MAAEQCAwBEAQABOA0AgI4AAAbCAAAAuAsAgI4AAAYOAQEHNAECAIEBAIABAv9/SoEEAA4DAQcMAwYFOQMAADgCAIALAwUIDgMGCY4DAQcABAUARAMDAUkBBQASgAYECQEDAIABAAAJAgQAhQIAAAODAABEAgMARAEAAYcAAADIAAIAxwABAIoEiWZpbmlzaGVkBIpjYW5jZWxsZWQRBINvcAAEh2NhbmNlbASIam9pbmluZwSIam9pbmVycwSGdGFibGUEh3JlbW92ZYYBHQABHgABAAABIwABBAAAAACAugEAAAAAAQEAAAEBAQABAAAAAQAAAQAAAAAAAAABAAABAQAAAAABAAAAAAAAAAD/AwEAAAAAAAACAAGAh4J0gLqDaWSKm4d0YXJnZXSgt4woZm9yIHN0YXRlKaSvjChmb3Igc3RhdGUppK+MKGZvciBzdGF0ZSmkr4Jppa6GiHdhaXRpbmeJbndhaXRpbmeCSIhlbnF1ZXVlhXBhY2uFX0VOVoACpgLSAQENAYbRAAAAiQABAAABAACJAQIAUAIAAMQBAAIDAgAAxAAEAooAAACJAAMAxAABA8IAAAA4BwCAjgEBAcKBAAC4AQCAiQEEAAACAQCAAgIAxAEDAYkBBQDCgQAAOAIAgIkBAwDEAQEDAAEEAIAAAwA49/9/iQEFAMKBAAC4GwCAiwEAAcKBAAA4GgCAiQEGAL0BfwA4BgCAiQEHAMQBAQLCgQAAuO//f4cBAAAPgAIDDwABA4kBCAADggIAxAECAg8ABAO4EgCAOOv/f4sBCQbEAQEBiwEKB8QBAQIBAgCAtAIDAAEDAIBKgg0ADAQDB44ECAjCBAAAuAIAgIkECwAOBQgIjgUICQ4GCArEBAQBOAgAgA4FCAuJBAwAjAQJCsIEAAC4BQCAjgUICwkFDAAQhQsMCQUGABUFCn4vBYAHCgUGAJKEDQwJBQ0AgAUJAA4GCA5EBQMBSQIOALjY/3+LAA4PCQEMAMQAAgXLgAEACwMKEIADBQBEAwIBzAAAAc2AAgC2AAAAiwAODwkBDwDEAAIFy4AGAA4DBRFCgwAAuAQAgAsDChKJAxAAA4QJAI4EBQsLBREUjgUFBI4FCxVEBQIAxAMAAEQDAAHMAAABzYAHALYAAACJAAUAwgAAALgBAICDAAsACwEFF4sBBRjGgAQCiwAAAsIAAAA4AQCAgwABAAsBAATGgAMCg4AMAAsBAATGgAMCxoABApoEhW1haW4EiWZpbmlzaGVkBINvawEEh3Jlc3VsdBStZGVhZGxvY2s6IHRoZSBtYWluIHRhc2sgY2Fubm90IG1ha2UgcHJvZ3Jlc3MEhnlpZWxkBIV0YWtlBIVjYWxsBIVhcmdzBIZyZXBseQSDaWQABINvcASHdmFsdWVzBIZwYWlycwSHY2FuY2VsBIlvYnNlcnZlZASFd2FybgSodGFzayAlZCBmYWlsZWQgYW5kIHdhcyBuZXZlciBqb2luZWQ6ICVzBI9kZXNjcmliZV9lcnJvcgSEZXJyBIVleGl0BIVjb2RlBIdyZWFzb24EhmVycm9ykgEgAAEpAAEEAAEkAAEqAAEQAAEeAAErAAEnAAEBAAEAAAEsAAEdAAEjAAAAAAEiAAEMAAEUAIABhgABAAAAAAAAAAIAAQABAAAAAAAAAQAAAQAAAAACAAAAAAABAAABAAAAAQAAAQAAAAEBAgABAAEAAAABAQAAAQAAAAAAAgAAAQABAAABAAAAAQEAAAD2DgIAAAAAAAAAAAABAAAAAQAAAQAAAAAAAAAAAP4ABAEAAAAAAAABAAAAgAABAAABgQGAAtCUg2ZugAGGgnSL1oVhcmdzi9aGYmF0Y2i21owoZm9yIHN0YXRlKbnWjChmb3Igc3RhdGUpudaMKGZvciBzdGF0ZSm51oJputWCY7vVgnfH1YwoZm9yIHN0YXRlKdrgjChmb3Igc3RhdGUp2uCMKGZvciBzdGF0ZSna4IwoZm9yIHN0YXRlKdrgg2lk296MKGZvciBzdGF0ZSnk9IwoZm9yIHN0YXRlKeT0jChmb3Igc3RhdGUp5PSMKGZvciBzdGF0ZSnk9IJ05fKShW1haW6JbmV3X3Rhc2uFcGFja4hkZXF1ZXVlhXN0ZXCIZXhpdGluZ4lud2FpdGluZ49icmVha19kZWFkbG9ja4dlcnJyZWOEcmF3gkiPc3Bhd25fY2FsbGJhY2uId2FpdGluZ4hlbnF1ZXVlhV9FTlaLdW5vYnNlcnZlZIhzZm9ybWF0glKAAtUC2AIAA4sJAQAAQoEAADgCAIATAQIAUgAAABIBAAASAQEBCgEAAAkBAQBEAQEBRwEBAIIEhWNvZGUEh3JlYXNvboIBEAABEwCAiwEAAAAAAAAAAQABgIKFY29kZYCLh3JlYXNvboCLgohleGl0aW5ni3JhaXNlX2V4aXSAAtwC5QEACJaLAAAATwEAAMQAAgS8AAEAOAEAgAOCAACNAgIBRoIDALwAAgA4AwCAAwIBAIsCAAMOAwIExAICAg4DAgWOAwIERoIFAAACAQCAAgIAAAMDAEaCBABGggEAhgSEcnVuBINvawSGZXJyb3IEj2Rlc2NyaWJlX2Vycm9yBIRlcnIEinRyYWNlYmFja4MBFAABBAABCgCBgALdAuEAAAORCQAAAIkAAQDEAAEARAAAAo4AAAC9gH8AOAEAgI0AAAG8AAEAuAAAgIgAAADIAAIAiQACAA0BAAHEAAICyAACAMcAAQCCBIJuAIMAAQABAAAAAgCAkQEAAAABAAAAAAAAAAEAAAABgIGCcoSRg4VwYWNrhmNodW5riXRvc3RyaW5nlgEE/AUAAAAAAQAAAAAAAAAAAQAAAAGAhIZjaHVua4CWhWtpbmSDloJhg5aCYoOWg4JShXBhY2uJdG9zdHJpbmeAAu0DlwMAGcCTAQAAUgAAAAMCAACIAgAATwMAAJMDAwBSAAAAT4QAAJIDAQhPBAEAkgMCCE+EAQCSAwMICwQBBIAEAQBEBAIFSwQOAAsHAQWUhw0Gg4gDAMQHAwXLhwcACwoBCIAKDgAACxMARAoDAjwKCQC4AwCAkwoAAFIAAAAAChUAiwoBCgALDgCACxMAAAwUAMQKBAEABxQAzAcAAc2HCAC2BwAAkIEOC4kHAgAACA4AgAgHAMQHAwFMBAACTQQPADYEAAALBAEEgAQCAEQEAgVLBAQACAcAAM8HAgAABw8AiwcBDI4HDw2QBw0ONgcAADYGAABMBAACTQQFADYEAABGhAEAjgSIcGVuZGluZwSIX19pbmRleASLX19uZXdpbmRleASIX19wYWlycwSHaXBhaXJzBINfRwSHZ21hdGNoBIZbXi5dKwSHcmF3Z2V0AASHcmF3c2V0EQSIcGFja2FnZQSIcHJlbG9hZIMBBwAAAAABCQCFgALvAvwAAAy2CQAAADwAAAA4AACARoABAAkAAAA8AAEAuAEAgAkAAQCJAAIAAYH/f0QAAwEDAAAACgAAAAsAAwKJAAQARAACBUsAAgCJAgUAAAMEAIgDAADEAgMBTAAAAU0AAwA2AAAACwADA4kABgBEAAIDQoAAALgLAIADgQAAigACAAoBAABPAQAAkwEDAFIAAACSAQQCkgEFApIBBgILAgMCiQIEAEQCAgVLAgIAiQQFAAAFCACABQMAxAQDAUwCAAFNAgMANgIAAAkCAQCAAgEAAYP/f0QCAwFGgQEAhwSKaW5zdGFsbGVkBIdmYWlsZWQEhnBhaXJzBIZwY2FsbASIX19pbmRleASLX19uZXdpbmRleASIX19wYWlyc4cBBAAAAAABBQAAAQABAwAAAgABAACBgAL3AvcAAAOFCQAAAIkAAQABgf9/RAADAUcAAQCAggABAAEBAICFAAAAAACAgIKGZXJyb3KEZXJytgEAAAABAAAAAAAAAQABAAAAAAAAAAAAAAEAAAEAAQAAAQEAAAAAAQAAAAAAAAAAAAABAAAAAoCOjChmb3Igc3RhdGUpkJeMKGZvciBzdGF0ZSmQl4woZm9yIHN0YXRlKZCXjChmb3Igc3RhdGUpkJeCdJGVg29rm7aEZXJym7aFZmFpbKG1h2Jyb2tlbqa1jChmb3Igc3RhdGUpqbCMKGZvciBzdGF0ZSmpsIwoZm9yIHN0YXRlKamwjChmb3Igc3RhdGUpqbCCdKquh4ZzdGF0ZYZlcnJvcohmYWlsdXJlhV9FTlaIcGVuZGluZ41zZXRtZXRhdGFibGWFbG9hZIAC/gL+AgADhQkBAABEAQEBDAEAAUgBAgBHAQEAgIEBBgCAhQAAAAAAgIKCdICFgmuAhYGHZW5zdXJlgAL/Av8DAASEiQEAAMQBAQEQAAECxwEBAICBAQYAgIQAAAAAgIOCdICEgmuAhIJ2gISBh2Vuc3VyZYADgAOAAQAEh4kAAADEAAEBiwABAAABAACIAQAAxgAEAMcAAQCBBIVuZXh0ggEGAAABAICHAAAAAAAAAICBgnSAh4KHZW5zdXJlhV9FTlaAA44DlAABA5ZRAAAACQAAAEQAAQELAAEADgAAAYkAAgAMAAABPIACADgDAICJAAMAOYABALgBAICAAAAAUAEAAMUAAAHGAAABiwABAI4AAQMJAQIAjAABAsYAAgHGAAEBhASIcGFja2FnZQSIcHJlbG9hZAAEh2xvYWRlZIQBBgAAAQABDQABDgCAlgABAAIAAAABAAAAAAAAAAABAAAAAAGAgYJwh5aEh2Vuc3VyZYVfRU5WhW5hbWWIdHJpZ2dlcsABAAAADgEAAQABAAEAAgAAAAEBAAAAAQAAAAEAAAAAAAAAAAAB/QAEAQEAAAD4AAkBAAAAAQcAAQAAAAD3AAoBgJyFbG9hZIDAh3RhYmxlc4DAiXByZWxvYWRzgMCIcGVuZGluZ4TAhnN0YXRlhMCIZmFpbHVyZYTAh2Vuc3VyZYXAg210jcCMKGZvciBzdGF0ZSmQr4woZm9yIHN0YXRlKZCvjChmb3Igc3RhdGUpkK+MKGZvciBzdGF0ZSmQr4Jfka2FcGF0aJGtgnSSrYwoZm9yIHN0YXRlKZWnjChmb3Igc3RhdGUplaeMKGZvciBzdGF0ZSmVp4woZm9yIHN0YXRlKZWnhXBhcnSWpYZjaGlsZJqljChmb3Igc3RhdGUps76MKGZvciBzdGF0ZSmzvowoZm9yIHN0YXRlKbO+jChmb3Igc3RhdGUps76CX7S7hW5hbWW0u4h0cmlnZ2VytbqDhmVycm9yhV9FTlaNc2V0bWV0YXRhYmxlgAOZA54BAAWSiQAAAAABAADEAAICvAAAADgAAIBIAAIAiwABAQsBAgKAAQAAxAADA8IAAAA4AACASAECAIkBAwAAAgAAxQECAMYBAADHAQEAgwSHc3RyaW5nBIZwY2FsbASManNvbl9lbmNvZGWEAQYAAAAAAQAAAQoAgJIBAAAAAAABAAAAAQAAAQAAAAGAg4JlgJKDb2uKkoJzipKEhXR5cGWFX0VOVoJIiXRvc3RyaW5ngAOiA6kBAAWgjgAAAMKAAAC4AQCAiQAAAAOBAACAAQAAxAADARKAAgOJAAEAkIAABI4AAAXCAAAAOAMAgIkAAgAOAQAGgQEAgA4CAAYOAgQHxQAEAMYAAACOAAAGCQEDALkAAgC4AACAiQAEAMQAAQGJAAUADgEABg4BAgiBgf9/xAADAccAAQCJBIlmaW5pc2hlZASHX19qb2luBIlvYnNlcnZlZBEABINvawSHcmVzdWx0BIJuBIRlcnKGARgAASIAAQUAAQ4AARMAAQcAgKABAAAAAAAAAQEAAQAAAAAAAAAAAAEAAAAAAAEAAAAAAYCBhXNlbGaAoIaKaG9zdF9jYWxsi3Vub2JzZXJ2ZWSHdW5wYWNrhUVYSVSLcmFpc2VfZXhpdIZlcnJvcoADqwOrAQADhYkAAAAAAQAAxQACAMYAAADHAAEAgIEBLQCAhQAAAAAAgIGFc2VsZoCFgYxjYW5jZWxfdGFza4ADrAOsAQACh44AAAC8gAEAOAAAgIYAAACHAAAAyAACAMcAAQCCBIlmaW5pc2hlZBGAgIcAAAAAAAAAgIGFc2VsZoCHgIADrQOwAQACmo4AAADCAAAAuAYAgI4AAAHCAAAAOAEAgIMAAQDCgAAAOAMAgI4AAAPCAAAAOAEAgIOAAQDCgAAAOAAAgIMAAgDIAAIAjgAABcIAAAA4AQCAgwADAMKAAAA4AACAg4ADAMgAAgDHAAEAiASJZmluaXNoZWQEg29rBIVkb25lBIpjYW5jZWxsZWQEh2ZhaWxlZASIc3RhcnRlZASIcnVubmluZwSGcmVhZHmAgJoBAAAAAAAAAAAAAAAAAAAAAAEAAAAAAAAAAYCBhXNlbGaAmoCAA7EDsQEABoiJAAAAAwEAAI4BAAEUggACRAICAMUAAADGAAAAxwABAIMEjXRhc2sgJWQgKCVzKQSDaWQEh3N0YXR1c4EBDACAiAAAAAAAAAAAgIGFc2VsZoCIgYhzZm9ybWF0gAO1A7oBAQaX0QAAAIkAAAAAAQAAxAACAryAAAA4BACAiQABAAkBAgCDgQAACQIAAIACAABEAgIARAEAAoGBAIDEAAMBiQADAAABAACJAQQAUAIAAMQBAADFAAACxgAAAsYAAQKCBIlmdW5jdGlvbhS7c3RkLnRhc2suc3Bhd246IGFyZ3VtZW50IDEgKGZuKSBtdXN0IGJlIGEgZnVuY3Rpb24sIGdvdCAlc4UBBgABBwABDAABKQABBACAlwABAAAAAAEAAAAAAAAAAAIAAAAAAAABgIGDZm6Al4WFdHlwZYZlcnJvcohzZm9ybWF0iW5ld190YXNrhXBhY2uAA7wDwgEABqOJAAAAAAEAAMQAAgK8AAAAuAEAgDkAAAC4AACAPgB/ADgJAICJAAEACQECAIOBAAAJAgAAgAIAAEQCAgI8AgAAOAIAgAkCAwCAAgAARAICAkKCAAA4AQCACQIAAIACAABEAgICRAEDAoGBAIDEAAMBiQAEAAMBAQCYAQADMAADCMUAAwDGAAAAxwABAIQEh251bWJlchTLc3RkLnRhc2suc2xlZXA6IGFyZ3VtZW50IDEgKHNlY29uZHMpIG11c3QgYmUgYSBub24tbmVnYXRpdmUgbnVtYmVyLCBnb3QgJXMEhnNsZWVwA+gDAAAAAAAAhQEGAAEHAAEMAAEKAAEYAICjAQAAAAAAAAAAAQAAAQAAAAAAAAAAAAAAAP8B/wMAAAAAAAGAgYhzZWNvbmRzgKOFhXR5cGWGZXJyb3KIc2Zvcm1hdIl0b3N0cmluZ4pob3N0X2NhbGyAA8QDxAAAAoUJAAAAgwAAAEUAAgBGAAAARwABAIEEiF9feWllbGSBARgAgIUAAAAAAICAgYpob3N0X2NhbGyAA8YD1AEADa6JAAAAAAEAAMQAAgK8gAAAOAQAgIkAAQAJAQIAg4EAAAkCAACAAgAARAICAEQBAAKBgQCAxAADAZMAAABSAAAAAQEAgLQBAAABAgCASoELAAwDAAWLAwMCAAQGAMQDAgIJBAQAuYMIALgEAICJAwEACQQCAIOEAQAABQUAiQUAAAAGBgDEBQIARAQAAoGEAIDEAwMBiQMFABSEBgREBAIAxAMAAg0EBwGQAAUISQEMAMgAAgBHAQEAhQSGdGFibGUUu3N0ZC50YXNrLmFsbDogYXJndW1lbnQgMSAoaGFuZGxlcykgbXVzdCBiZSBhIHRhYmxlLCBnb3QgJXMEjWdldG1ldGF0YWJsZRTIc3RkLnRhc2suYWxsOiBlbGVtZW50ICVkIG9mIGFyZ3VtZW50IDEgKGhhbmRsZXMpIG11c3QgYmUgYSB0YXNrLCBnb3QgJXMEhWpvaW6GAQYAAQcAAQwAAAAAARsAAQQAgK4BAAAAAAEAAAAAAAAAAAIAAQAAAAEBAAAAAAABAAAAAAAAAAAAAgAAAAEA+ggBgIiIaGFuZGxlc4CuhG91dJCujChmb3Igc3RhdGUpk6yMKGZvciBzdGF0ZSmTrIwoZm9yIHN0YXRlKZOsgmmUq4JolauCcqmrhoV0eXBlhmVycm9yiHNmb3JtYXSFX0VOVoVUYXNrhXBhY2uAA9YD1gEAA4SUgAAAxQACAMYAAADHAAEAgQSFam9pboCAhAAAAACAgYJogISAgAPXA9cBAAOElIAAAMUAAgDGAAAAxwABAIEEh2NhbmNlbICAhAAAAACAgYJogISAgAPYA9gBAAOKiwAAAAABAADEAAICCQEBALmAAgA4AACAhgAAAIcAAADIAAIAxwABAIEEjWdldG1ldGF0YWJsZYIAAAABGwCAigAAAAAAAAAAAACAgYJ2gIqChV9FTlaFVGFzawGlARcCAAEAAAEAAAEAAAEAAAEAAAEAAAEAAAIAAAABAAAAAQAAAAABAAAAAgAAAAAAAAEAAAAAAQEA/gQAAAAAAAABAgABBgIAAAATAQYICAEF/hICA/0FA/0FA/0LAgP9BwABAQEAAAABAAEBAAEBAQAGCQIAAAQECwkeEQ8VMNSA/RD3O9Yx+xD5CQABAAT9BAACAAf7DfoIABDyEAABAAEAAgEAgQGAAtivgkiCAaWEcmF3mQGliGdldGluZm+dAaWKdHJhY2ViYWNrnQGlhXBhY2uhAaWHdW5wYWNroQGlhXR5cGWmAaWGZXJyb3KmAaWHc2VsZWN0pgGljXNldG1ldGF0YWJsZaYBpYl0b3N0cmluZ6YBpYZzZmluZKoBpYhzZm9ybWF0qgGlhUhPU1SxAaWFRVhJVLoBpYVidXN5wQGliGV4aXRpbmfCAaWIc2V0aG9va8QBpYpleGl0X2hvb2vFAaWLcmFpc2VfZXhpdMYBpYJSygGli3VzZXJfbGV2ZWzLAaWNY2Fubm90X3lpZWxkzQGljHJhaXNlX3JlcGx5zgGlimhvc3RfY2FsbM8BpYhmb3J3YXJk0wGljHdyYXBfcmVzdWx03QGlhVRhc2viAaWGcmVhZHnoAaWId2FpdGluZ+oBpYlud2FpdGluZ+sBpYVsaXZl7QGlhW1haW7uAaWIbmV4dF9pZO8BpYt1bm9ic2VydmVk8QGliGVucXVldWXyAaWIZGVxdWV1ZfMBpYdFUlJSRUP2AaWOb25fdGFza19lcnJvcvcBpYdlcnJyZWP4AaWHZmluaXNo+QGliW5ld190YXNr+gGlhXN0ZXD7AaWPYnJlYWtfZGVhZGxvY2v8AaWPc3Bhd25fY2FsbGJhY2v9AaWMY2FuY2VsX3Rhc2v+AaWFdGFzawGUAaWBhV9FTlY="
  }
};

// src/lua/prebuilt_flag.ts
var VERIFIED = Symbol.for("agent-block.prebuilt.verified");
var slot2 = globalThis;
function isPrebuiltVerified() {
  return slot2[VERIFIED] === true;
}

// src/lua/precompiled.ts
function sourceHash(source) {
  let h = 2166136261;
  for (let i = 0; i < source.length; i++) {
    h ^= source.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return (h >>> 0).toString(16).padStart(8, "0") + ":" + source.length.toString(16);
}
var nativeFromBase64 = Uint8Array.fromBase64?.bind(Uint8Array);
function fromBase64(b64) {
  if (nativeFromBase64) return nativeFromBase64(b64);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
var memo = /* @__PURE__ */ new Map();
function precompiled(chunkname, source) {
  const known = memo.get(chunkname);
  if (known && known.source === source) return known.bytecode;
  const entry = PRECOMPILED[chunkname];
  const fresh = entry && (isPrebuiltVerified() || entry.hash === sourceHash(source));
  const bytecode = fresh ? fromBase64(entry.bytecode) : void 0;
  memo.set(chunkname, {
    source,
    bytecode
  });
  return bytecode;
}

// src/lua/runtime.lua
var runtime_default = '--- agent-block Lua runtime: the task scheduler, transparent coroutines and the host-call protocol.\n--\n-- Owns: how Lua code waits for the host. Every asynchronous host function ends in `host_call`,\n-- which yields `HOST, op, args...` from wherever it runs. Wrapped `coroutine.resume`/`wrap`\n-- forward such a request up through every user coroutine until it reaches the scheduler, which\n-- starts the operation in TypeScript and parks the task. The scheduler suspends towards the host\n-- at exactly one point (a plain yield of the driver thread); the host then resumes it once at\n-- least one operation has completed, and the scheduler takes the whole batch of completions.\n--\n-- Invariants:\n-- - A user coroutine parked on a host request is "busy": nobody else may resume it, and\n--   `coroutine.status` reports it as "normal".\n-- - A host call made where Lua cannot yield (C boundary) raises an error that says so, at the\n--   user\'s line, instead of wasmoon\'s bare "attempt to yield across a C-call boundary".\n-- - Errors raised for a failed host call point at the first frame outside the runtime\'s own\n--   chunks (names starting with "=ab:"), whatever tail calls the wrappers made.\n-- - Every task body runs under xpcall; its error value (tables included) and a traceback are kept.\n-- - When the main task ends, the run ends: tasks still alive are cancelled.\n-- - `os.exit` / `job.defer` end the run at once. They raise `EXIT` and set a count hook on the\n--   coroutine that raises it again at every instruction, so a `pcall`/`xpcall` that catches it\n--   cannot run on; `coroutine.resume` passes it to the resumer the same way.\n--\n-- This chunk is loaded by src/lua/engine.ts with the host primitives table as its argument.\nlocal H = ...\n\nlocal raw = {\n  create = coroutine.create,\n  resume = coroutine.resume,\n  yield = coroutine.yield,\n  status = coroutine.status,\n  running = coroutine.running,\n  isyieldable = coroutine.isyieldable,\n  close = coroutine.close,\n}\nlocal getinfo, traceback = debug.getinfo, debug.traceback\nlocal pack, unpack = table.pack, table.unpack\nlocal type, error, select, setmetatable, tostring = type, error, select, setmetatable, tostring\nlocal sfind, sformat = string.find, string.format\n\nlocal HOST = setmetatable({}, { __name = "HOST_REQUEST" })\nlocal EXIT = setmetatable({}, {\n  __name = "EXIT",\n  __tostring = function() return "the run is ending (os.exit or job.defer)" end,\n})\nlocal busy = setmetatable({}, { __mode = "k" })\nlocal exiting -- { code = n, reason = s } once os.exit / job.defer was called\n\nlocal sethook = debug.sethook\nlocal function exit_hook() error(EXIT, 0) end\n\n--- Raises EXIT in the running coroutine and keeps raising it there at every instruction.\nlocal function raise_exit()\n  sethook(exit_hook, "", 1)\n  error(EXIT, 0)\nend\n\nlocal R = { HOST = HOST, EXIT = EXIT }\n\n--- The stack level (as seen by the caller of this function) of the first Lua frame outside the\n-- runtime\'s own chunks. Used as the `level` argument of `error`. C frames are passed over: when\n-- the user tail-called a host function (`return t.fetch(x)`), the user\'s frame is gone and the\n-- next frame may be `pcall`, `string.gsub`, ...; the Lua line that called THAT is the best\n-- position left. With no Lua frame at all, the first C frame (no position) is used.\nlocal function user_level()\n  local level, first_c = 2, nil\n  while true do\n    local info = getinfo(level + 1, "S")\n    if not info then return first_c or 1 end\n    if info.what == "C" then\n      first_c = first_c or level\n    elseif not sfind(info.source, "^=ab:") then\n      return level\n    end\n    level = level + 1\n  end\nend\nR.user_level = user_level\n\nlocal function cannot_yield(op)\n  return sformat(\n    "host call \'%s\' made where yielding is impossible (inside a C boundary: a table.sort comparator, "\n      .. "a string.gsub callback, __tostring, __gc, or a function called by the host)", op)\nend\n\nlocal function raise_reply(ok, ...)\n  if ok then return ... end\n  local err = ...\n  if err == EXIT then raise_exit() end\n  if type(err) == "string" then error(err, user_level()) end\n  error(err, 0)\nend\n\n--- Performs host operation `op` with `...` as arguments and returns its results, yielding the\n-- running task meanwhile. Raises the operation\'s error at the user\'s line.\nlocal function host_call(op, ...)\n  if exiting then raise_exit() end\n  if not raw.isyieldable() then error(cannot_yield(op), user_level()) end\n  return raise_reply(raw.yield(HOST, op, ...))\nend\nR.host_call = host_call\n\n--- Builds the Lua function for an asynchronous host function named `op`.\nfunction R.async_function(op)\n  return function(...) return host_call(op, ...) end\nend\n\n-- Transparent coroutines ----------------------------------------------------------------------\n\nlocal function forward(co, ok, ...)\n  if not ok and exiting then raise_exit() end\n  if ok and (...) == HOST and raw.status(co) == "suspended" then\n    if not raw.isyieldable() then\n      return forward(co, raw.resume(co, false, cannot_yield((select(2, ...)))))\n    end\n    busy[co] = true\n    local reply = pack(raw.yield(...))\n    busy[co] = nil\n    return forward(co, raw.resume(co, unpack(reply, 1, reply.n)))\n  end\n  return ok, ...\nend\n\nfunction coroutine.resume(co, ...)\n  if busy[co] then return false, "cannot resume non-suspended coroutine" end\n  return forward(co, raw.resume(co, ...))\nend\n\nfunction coroutine.status(co)\n  if busy[co] then return "normal" end\n  return raw.status(co)\nend\n\nfunction coroutine.close(co)\n  if busy[co] then return false, "cannot close a coroutine that is waiting for the host" end\n  return raw.close(co)\nend\n\nlocal function wrap_result(co, ok, ...)\n  if ok then return ... end\n  local err = ...\n  if raw.status(co) == "dead" then raw.close(co) end\n  if type(err) == "string" then error(err, 2) end\n  error(err, 0)\nend\n\nfunction coroutine.wrap(f)\n  local co = raw.create(f)\n  return function(...) return wrap_result(co, coroutine.resume(co, ...)) end\nend\n\n-- Tasks ----------------------------------------------------------------------------------------\n\nlocal Task = {}\nTask.__index = Task\nTask.__name = "task"\nlocal ready = { first = 1, last = 0 }\nlocal waiting = {} -- host op id -> task\nlocal nwaiting = 0\nlocal live = {} -- every task not yet finished\nlocal main\nlocal next_id = 0\nlocal unobserved = {} -- failed tasks nobody joined (reported when the run ends)\n\nlocal function enqueue(t, args)\n  local last = ready.last + 1\n  ready.last = last\n  ready[last] = { t, args }\nend\n\nlocal function dequeue()\n  local first = ready.first\n  if first > ready.last then return nil end\n  local item = ready[first]\n  ready[first] = nil\n  ready.first = first + 1\n  return item[1], item[2]\nend\n\nlocal ERRREC = { __name = "task error" }\nlocal function on_task_error(e)\n  if e == EXIT then return EXIT end\n  return setmetatable({ err = e, traceback = traceback(nil, 2) }, ERRREC)\nend\nlocal function errrec(e)\n  if e == EXIT or getmetatable(e) == ERRREC then return e end\n  return setmetatable({ err = e, traceback = "" }, ERRREC) -- memory errors skip the handler\nend\n\nlocal function finish(t, ok, result)\n  t.finished, t.ok, t.result = true, ok, result\n  live[t] = nil\n  if not ok and result ~= EXIT and #t.joiners == 0 and t ~= main and not t.on_finish then\n    unobserved[t] = true\n  end\n  for i = 1, #t.joiners do enqueue(t.joiners[i], pack(true)) end\n  t.joiners = {}\n  if t.on_finish then t.on_finish(ok, result) end\nend\n\nlocal function new_task(fn, args, name)\n  next_id = next_id + 1\n  local t = setmetatable({ id = next_id, joiners = {}, name = name }, Task)\n  t.co = raw.create(function(...) return xpcall(fn, on_task_error, ...) end)\n  live[t] = true\n  enqueue(t, args)\n  return t\nend\n\nlocal function step(t, args)\n  if t.cancelled and not t.started then\n    return finish(t, false, errrec("cancelled"))\n  end\n  t.started = true\n  local r = pack(raw.resume(t.co, unpack(args, 1, args.n)))\n  if raw.status(t.co) == "dead" then\n    if not r[1] then return finish(t, false, errrec(r[2])) end\n    if r[2] then return finish(t, true, pack(unpack(r, 3, r.n))) end\n    return finish(t, false, errrec(r[3]))\n  end\n  if r[2] ~= HOST then return enqueue(t, pack()) end -- a plain yield: cooperative\n  local op = r[3]\n  if exiting then return enqueue(t, pack(false, EXIT)) end\n  if t.cancelled then return enqueue(t, pack(false, "cancelled")) end\n  if op == "__join" then\n    local target = r[4]\n    if target.finished then return enqueue(t, pack(true)) end\n    t.joining = target\n    target.joiners[#target.joiners + 1] = t\n    return\n  end\n  if op == "__yield" then return enqueue(t, pack(true)) end\n  local ok, id = pcall(H.start, op, unpack(r, 4, r.n))\n  if not ok then return enqueue(t, pack(false, id)) end\n  t.op = id\n  waiting[id] = t\n  nwaiting = nwaiting + 1\nend\n\n--- Fails every task blocked in a join when nothing else can make progress.\nlocal function break_deadlock()\n  local any = false\n  for t in pairs(live) do\n    if t.joining then\n      local target = t.joining\n      for i = #target.joiners, 1, -1 do\n        if target.joiners[i] == t then table.remove(target.joiners, i) end\n      end\n      t.joining = nil\n      enqueue(t, pack(false, "deadlock: every task is waiting for another task and no host operation is pending"))\n      any = true\n    end\n  end\n  return any\nend\n\nlocal function spawn_callback(fn, args, reply)\n  local t = new_task(fn, args, "callback")\n  t.on_finish = function(ok, result)\n    if ok then\n      local sent, why = pcall(H.reply, reply, true, unpack(result, 1, result.n))\n      if not sent then H.reply(reply, false, "callback result cannot be passed to the host: " .. tostring(why)) end\n    elseif result == EXIT then\n      H.reply(reply, false, "the run is ending")\n    else\n      local sent = pcall(H.reply, reply, false, result.err, result.traceback)\n      if not sent then H.reply(reply, false, tostring(result.err), result.traceback) end\n    end\n  end\nend\n\nlocal function cancel_task(t)\n  if t.finished then return false end\n  t.cancelled = true\n  if t.op then\n    local id = t.op\n    t.op = nil\n    waiting[id] = nil\n    nwaiting = nwaiting - 1\n    H.cancel(id)\n    enqueue(t, pack(false, "cancelled"))\n  elseif t.joining then\n    local target = t.joining\n    for i = #target.joiners, 1, -1 do\n      if target.joiners[i] == t then table.remove(target.joiners, i) end\n    end\n    t.joining = nil\n    enqueue(t, pack(false, "cancelled"))\n  end\n  return true\nend\n\n--- Runs `fn(...)` as the main task plus everything it spawns. Returns `"ok", results` (packed),\n-- `"error", {err, traceback}`, or `"exit", code, reason`.\nfunction R.run(fn, ...)\n  main = new_task(fn, pack(...), "main")\n  while true do\n    local t, args = dequeue()\n    while t do\n      if not t.finished then step(t, args) end\n      if exiting then break end\n      t, args = dequeue()\n    end\n    if exiting or main.finished then break end\n    if nwaiting == 0 then\n      if not break_deadlock() then\n        main.finished, main.ok = true, false\n        main.result = errrec("deadlock: the main task cannot make progress")\n        break\n      end\n    else\n      raw.yield() -- the one suspension towards the host: resumed when something completed\n      local batch = H.take()\n      for i = 1, #batch do\n        local c = batch[i]\n        if c.call then\n          spawn_callback(c.call, c.args, c.reply)\n        else\n          local w = waiting[c.id]\n          if w then\n            waiting[c.id] = nil\n            nwaiting = nwaiting - 1\n            w.op = nil\n            enqueue(w, c.values)\n          end\n        end\n      end\n    end\n  end\n  for id in pairs(waiting) do H.cancel(id) end\n  for t in pairs(unobserved) do\n    if not t.observed then\n      H.warn(sformat("task %d failed and was never joined: %s", t.id, R.describe_error(t.result.err)))\n    end\n  end\n  if exiting then return "exit", exiting.code, exiting.reason end\n  if main.ok then return "ok", main.result end\n  return "error", main.result\nend\n\n--- Ends the run with `code` at the next scheduling point; `reason` is reported on stderr.\nfunction R.request_exit(code, reason)\n  if not exiting then exiting = { code = code, reason = reason } end\n  raise_exit()\nend\n\n--- Runs a compiled main chunk; its first return value is stringified (a string passes\n-- unchanged). Returns `"ok", string|nil` / `"error", message, traceback, value` / `"exit", code, reason`.\nfunction R.main(chunk)\n  local kind, a, b = R.run(function()\n    local r = pack(chunk())\n    if r.n == 0 or r[1] == nil then return nil end\n    return (tostring(r[1]))\n  end)\n  if kind == "ok" then return "ok", a[1] end\n  if kind == "error" then return "error", R.describe_error(a.err), a.traceback, a.err end\n  return kind, a, b\nend\n\n--- Host modules installed on first use (`LuaEngine.defineLazy`). `load` is the host function that\n-- installs the module; `tables` are dotted global paths (created empty if absent) whose first\n-- read, write or `pairs` installs it; `preloads` are module names whose `require` does. The\n-- tables keep their identity: the module fills the very tables a script may already hold. Their\n-- metatables are removed before the module installs, so it writes into plain tables. A module\n-- whose installation fails stays failed: every later touch raises the same error.\nfunction R.lazy(load, tables, preloads)\n  local pending, state, failure = {}, "pending", nil\n  local function ensure()\n    if state == "installed" then return end\n    if state == "failed" then error(failure, 0) end\n    state = "installed"\n    for t in pairs(pending) do setmetatable(t, nil) end\n    local ok, err = pcall(load)\n    if not ok then\n      state, failure = "failed", err\n      local function fail() error(err, 0) end\n      local broken = { __index = fail, __newindex = fail, __pairs = fail }\n      for t in pairs(pending) do setmetatable(t, broken) end\n      error(err, 0)\n    end\n  end\n  local mt = {\n    __index = function(t, k) ensure(); return t[k] end,\n    __newindex = function(t, k, v) ensure(); t[k] = v end,\n    __pairs = function(t) ensure(); return next, t, nil end,\n  }\n  for _, path in ipairs(tables) do\n    local t = _G\n    for part in path:gmatch("[^.]+") do\n      local child = rawget(t, part)\n      if child == nil then child = {}; rawset(t, part, child) end\n      t = child\n    end\n    pending[t] = true\n    setmetatable(t, mt)\n  end\n  for _, name in ipairs(preloads) do\n    local trigger\n    trigger = function(...)\n      ensure()\n      -- The module may have preloaded or loaded `name` itself while installing.\n      local p = package.preload[name]\n      if p ~= nil and p ~= trigger then return p(...) end\n      return package.loaded[name]\n    end\n    package.preload[name] = trigger\n  end\nend\n\nfunction R.describe_error(e)\n  if type(e) == "string" then return e end\n  local ok, s = pcall(H.json_encode, e)\n  if ok then return s end\n  return tostring(e)\nend\n\n-- The task API (std.task) ---------------------------------------------------------------------\n\nfunction Task:join()\n  if not self.finished then host_call("__join", self) end\n  self.observed = true\n  unobserved[self] = nil\n  if self.ok then return unpack(self.result, 1, self.result.n) end\n  if self.result == EXIT then raise_exit() end\n  error(self.result.err, 0)\nend\n\nfunction Task:cancel() return cancel_task(self) end\nfunction Task:done() return self.finished == true end\nfunction Task:status()\n  if self.finished then return self.ok and "done" or (self.cancelled and "cancelled" or "failed") end\n  return self.started and "running" or "ready"\nend\nTask.__tostring = function(self) return sformat("task %d (%s)", self.id, self:status()) end\n\nlocal task = {}\n\nfunction task.spawn(fn, ...)\n  if type(fn) ~= "function" then\n    error(sformat("std.task.spawn: argument 1 (fn) must be a function, got %s", type(fn)), 2)\n  end\n  return new_task(fn, pack(...))\nend\n\nfunction task.sleep(seconds)\n  if type(seconds) ~= "number" or seconds ~= seconds or seconds < 0 then\n    error(sformat("std.task.sleep: argument 1 (seconds) must be a non-negative number, got %s",\n      type(seconds) == "number" and tostring(seconds) or type(seconds)), 2)\n  end\n  return host_call("sleep", seconds * 1000)\nend\n\nfunction task.yield() return host_call("__yield") end\n\nfunction task.all(handles)\n  if type(handles) ~= "table" then\n    error(sformat("std.task.all: argument 1 (handles) must be a table, got %s", type(handles)), 2)\n  end\n  local out = {}\n  for i = 1, #handles do\n    local h = handles[i]\n    if getmetatable(h) ~= Task then\n      error(sformat("std.task.all: element %d of argument 1 (handles) must be a task, got %s", i, type(h)), 2)\n    end\n    local r = pack(h:join())\n    out[i] = r[1]\n  end\n  return out\nend\n\nfunction task.join(h) return h:join() end\nfunction task.cancel(h) return h:cancel() end\nfunction task.is_task(v) return getmetatable(v) == Task end\n\nR.task = task\nreturn R\n';

// src/lua/engine.ts
var LuaCallbackError = class extends Error {
  value;
  luaTraceback;
  /**
   * A callback failure carrying the Lua error value and traceback.
   * @param message the Lua error as text (tables rendered as JSON)
   * @param value the Lua error value itself
   * @param luaTraceback the Lua traceback, runtime frames removed
   */
  constructor(message, value, luaTraceback) {
    super(message), this.value = value, this.luaTraceback = luaTraceback;
    this.name = "LuaCallbackError";
  }
};
var CpuLimitExceeded = class extends Error {
};
var INTERNAL_FRAME = /^\s*(ab:[a-z_]+:|\[C\]: in (function|upvalue) '(xpcall|error)'|\[C\]: in \?$)/;
function trimTraceback(tb) {
  if (!tb) return "";
  const lines = tb.split("\n").filter((l) => !INTERNAL_FRAME.test(l)).map((l) => l.replace("in upvalue 'chunk'", "in main chunk"));
  return lines.length <= 1 ? "" : lines.join("\n");
}
var RUNTIME_CHUNK = "=ab:runtime";
var dispatcherInstalled;
var engines = /* @__PURE__ */ new Map();
var LuaEngine = class _LuaEngine {
  /** The raw C API of the shared wasm module. */
  api;
  /** The engine's main `lua_State`. */
  L;
  /** The value converter bound to this engine. */
  converter;
  #global;
  #fns = [];
  #fnNames = [];
  #fnPure = [];
  #effectHooks = [];
  #effectPending = false;
  #ops = /* @__PURE__ */ new Map();
  #opSeq = 0;
  #completions = [];
  #calls = [];
  #wake;
  #replies = /* @__PURE__ */ new Map();
  #replySeq = 0;
  #closed = false;
  #driving = false;
  #stopReason;
  #hRef;
  #runtimeRef;
  /**
   * The thread whose stack `define`, `exec` and `defineLazy` work on: the main thread, except
   * while a lazily installed module installs from inside a host call (see `defineLazy`), when
   * it is the calling thread — the main thread is then suspended inside `lua_resume`.
   */
  #installL;
  #cpuUsed = 0;
  #sliceStart = 0;
  #limits;
  #hookPtr = 0;
  /** Called with warnings the runtime raises (unjoined failed tasks, ...). */
  onWarning = (m) => console.error(`warn: ${m}`);
  constructor(global, api, limits) {
    this.#global = global;
    this.api = api;
    this.#limits = limits;
    this.L = global.address;
    engines.set(this.L, this);
    const L = this.L;
    api.createtable(L, 0, 1);
    api.pushstring(L, "json.array");
    api.setfield(L, -2, "__name");
    const arrayMt = api.ref(L);
    api.createtable(L, 0, 1);
    api.pushstring(L, "json.object");
    api.setfield(L, -2, "__name");
    const objectMt = api.ref(L);
    this.converter = new Converter(api, arrayMt, objectMt, (L2) => this.#makeRef(L2));
    this.arrayMtRef = arrayMt;
    this.objectMtRef = objectMt;
    api.createtable(L, 0, 16);
    api.pushlightuserdata(L, 0);
    api.setfield(L, -2, "null");
    api.pushref(L, arrayMt);
    api.setfield(L, -2, "array_mt");
    api.pushref(L, objectMt);
    api.setfield(L, -2, "object_mt");
    this.#hRef = api.ref(L);
    this.#installPrimitives();
    this.#runtimeRef = this.#loadInternal(runtime_default, RUNTIME_CHUNK, [
      this.#hRef
    ]);
    if (limits.memoryBytes) global.setMemoryMax(limits.memoryBytes);
  }
  /** Registry ref of the array marker metatable (`std.json.array_mt`). */
  arrayMtRef;
  /** Registry ref of the object marker metatable (`std.json.object_mt`). */
  objectMtRef;
  /** Creates an engine on the process-wide wasm module. */
  static async create(limits = {}) {
    precompiled(RUNTIME_CHUNK, runtime_default);
    const { factory, api } = await sharedFactory();
    const global = new LuaGlobal(await factory.getLuaModule(), limits.memoryBytes !== void 0);
    api.m._luaL_openlibs(global.address);
    if (dispatcherInstalled === void 0) {
      dispatcherInstalled = api.m.addFunction((L) => dispatch(api, L), "ii");
    }
    return new _LuaEngine(global, api, limits);
  }
  /** Lua heap in use, in bytes (`collectgarbage("count")`; exact when a memory limit is set). */
  memoryUsed() {
    if (this.#limits.memoryBytes !== void 0) return this.#global.getMemoryUsed();
    const api = this.api;
    const L = this.L;
    api.getglobal(L, "collectgarbage");
    api.pushstring(L, "count");
    this.#pcall(L, 1, 1);
    const kb = api.tonumber(L, -1);
    api.pop(L, 1);
    return Math.round(kb * 1024);
  }
  // --- host functions ------------------------------------------------------------------------
  /**
   * Installs `fn` at the dotted global `path` (`"std.fs.read"`), creating intermediate tables.
   * Paths starting with `@` go into the internal primitives table handed to the prelude
   * (`"@io_open"`), invisible to scripts except through what the prelude builds on them.
   */
  define(path, fn) {
    const api = this.api;
    const L = this.#installL ?? this.L;
    if ("async" in fn) {
      const opName = path.replace(/^@/, "");
      this.#asyncOps.set(opName, fn);
      api.pushref(L, this.#runtimeRef);
      api.getfield(L, -1, "async_function");
      api.pushstring(L, opName);
      this.#pcall(L, 1, 1);
      api.rotate(L, -2, 1);
      api.pop(L, 1);
    } else {
      this.#pushCFunction(L, path, fn);
    }
    this.#storeTop(path);
  }
  #asyncOps = /* @__PURE__ */ new Map();
  /** Registers an asynchronous operation reachable only through `host_call(name, ...)`. */
  defineOp(name, fn) {
    this.#asyncOps.set(name, fn);
  }
  #pushCFunction(L, name, fn) {
    const id = this.#fns.length;
    this.#fns.push(fn);
    this.#fnNames.push(name.replace(/^@/, ""));
    this.#fnPure.push("pure" in fn && fn.pure === true);
    this.api.pushinteger(L, BigInt(id));
    this.api.pushcclosure(L, dispatcherInstalled, 1);
  }
  /** Pops the value on top of the main stack into the dotted path. */
  #storeTop(path) {
    const api = this.api;
    const L = this.#installL ?? this.L;
    let parts;
    if (path.startsWith("@")) {
      api.pushref(L, this.#hRef);
      parts = [
        path.slice(1)
      ];
    } else {
      parts = path.split(".");
      api.m._lua_rawgeti(L, LUA_REGISTRYINDEX, 2n);
    }
    for (let i = 0; i < parts.length - 1; i++) {
      if (api.getfield(L, -1, parts[i]) === 0) {
        api.pop(L, 1);
        api.createtable(L, 0, 4);
        api.pushvalue(L, -1);
        api.setfield(L, -3, parts[i]);
      }
      api.rotate(L, -2, 1);
      api.pop(L, 1);
    }
    api.rotate(L, -2, 1);
    api.setfield(L, -2, parts[parts.length - 1]);
    api.pop(L, 1);
  }
  /**
   * Registers a hook to run before the next host call that may act outside Lua, once
   * `effectPending()` has been signalled. A hook must not throw.
   */
  onBeforeEffect(hook) {
    this.#effectHooks.push(hook);
  }
  /** Signals that the hooks have work: they run before the next host call that is not pure. */
  effectPending() {
    this.#effectPending = true;
  }
  #runEffectHooks() {
    this.#effectPending = false;
    for (const hook of this.#effectHooks) hook();
  }
  /** Called by the shared dispatcher for closure `id`. */
  invoke(L, id) {
    if (this.#effectPending && !this.#fnPure[id]) this.#runEffectHooks();
    const fn = this.#fns[id];
    const name = this.#fnNames[id];
    if ("raw" in fn) return fn.raw(L, this);
    if (!("sync" in fn)) throw new Error(`host function '${name}' is asynchronous`);
    const args = new Args(name, this.converter.argsToJs(L, 1, {
      functions: fn.functions ?? "error",
      floats: fn.floats ?? "plain"
    }));
    const result = fn.sync(args, {
      engine: this,
      signal: NEVER
    });
    return this.pushResult(L, result);
  }
  /** Pushes a host function's result; returns the number of Lua values pushed. */
  pushResult(L, result) {
    if (result === void 0) return 0;
    if (result instanceof LuaMulti) {
      for (const v of result.values) this.converter.push(L, v);
      return result.values.length;
    }
    this.converter.push(L, result);
    return 1;
  }
  /** Reads a value from the stack with the engine's converter. */
  toJs(L, idx, opts) {
    return this.converter.toJs(L, idx, opts);
  }
  /**
   * JSON text (sorted keys, float fidelity) of the value at `idx`: written straight from the
   * stack when it can be, else through `toJs` + `stringifyJson` — which raise the usual errors.
   */
  toJson(L, idx) {
    return this.converter.toJson(L, idx) ?? stringifyJson(this.converter.toJs(L, idx, {
      floats: "tagged"
    }));
  }
  #makeRef(L) {
    const ref = this.api.ref(L);
    let live = true;
    return new LuaFunctionRef(ref, () => {
      if (live && !this.#closed) this.api.unref(this.L, ref);
      live = false;
    });
  }
  // --- primitives for runtime.lua ------------------------------------------------------------
  #installPrimitives() {
    const prim = (name, fn) => {
      this.#pushCFunction(this.L, name, fn);
      this.#storeTop("@" + name);
    };
    prim("start", {
      raw: (L) => this.#start(L),
      pure: true
    });
    prim("take", {
      raw: (L) => this.#take(L),
      pure: true
    });
    prim("cancel", {
      sync: (a) => {
        this.#cancelOp(a.integer(1, "id"));
      }
    });
    prim("reply", {
      raw: (L) => this.#reply(L),
      pure: true
    });
    prim("warn", {
      sync: (a) => {
        this.onWarning(a.string(1, "message"));
      }
    });
    prim("json_encode", {
      pure: true,
      raw: (L) => {
        this.api.pushstring(L, this.toJson(L, 1));
        return 1;
      }
    });
  }
  #start(L) {
    const api = this.api;
    if (api.type(L, 1) !== LUA_TSTRING) throw new Error("host op name must be a string");
    const name = String(this.converter.toJs(L, 1));
    const op = name === "sleep" ? SLEEP_OP : this.#asyncOps.get(name);
    if (!op) throw new Error(`unknown host operation '${name}'`);
    if (this.#effectPending && op.deferCommit !== true) this.#runEffectHooks();
    const args = new Args(name, this.converter.argsToJs(L, 2, {
      functions: op.functions ?? "error",
      floats: op.floats ?? "plain"
    }));
    const id = ++this.#opSeq;
    const ac = new AbortController();
    const promise = op.async(args, {
      engine: this,
      signal: ac.signal
    });
    this.#ops.set(id, ac);
    promise.then((value) => this.#complete(id, true, value), (err) => this.#complete(id, false, err));
    api.pushinteger(L, BigInt(id));
    return 1;
  }
  #complete(id, ok, value) {
    const ac = this.#ops.get(id);
    if (!ac) return;
    this.#ops.delete(id);
    if (ac.signal.aborted) return;
    this.#completions.push({
      id,
      ok,
      value
    });
    this.#wakeUp();
  }
  #cancelOp(id) {
    const ac = this.#ops.get(id);
    if (!ac) return;
    this.#ops.delete(id);
    ac.abort(new DOMException("cancelled", "AbortError"));
  }
  #wakeUp() {
    const w = this.#wake;
    this.#wake = void 0;
    w?.();
  }
  /** Pushes the batch of completions and callback requests as one Lua array. */
  #take(L) {
    const api = this.api;
    const completions = this.#completions;
    const calls = this.#calls;
    this.#completions = [];
    this.#calls = [];
    api.createtable(L, completions.length + calls.length, 0);
    let i = 0;
    for (const c of completions) {
      api.createtable(L, 0, 2);
      api.pushinteger(L, BigInt(c.id));
      api.setfield(L, -2, "id");
      const vals = c.ok ? c.value instanceof LuaMulti ? c.value.values : c.value === void 0 ? [] : [
        c.value
      ] : [];
      api.createtable(L, vals.length + 1, 1);
      api.pushboolean(L, c.ok);
      api.rawseti(L, -2, 1);
      if (c.ok) {
        vals.forEach((v, k) => {
          try {
            this.converter.push(L, v);
          } catch (e) {
            api.pushnil(L);
            this.onWarning(`host result could not be converted: ${errorMessage(e)}`);
          }
          api.rawseti(L, -2, k + 2);
        });
        api.pushinteger(L, BigInt(vals.length + 1));
      } else {
        this.#pushError(L, c.value);
        api.rawseti(L, -2, 2);
        api.pushinteger(L, 2n);
      }
      api.setfield(L, -2, "n");
      api.setfield(L, -2, "values");
      api.rawseti(L, -2, ++i);
    }
    for (const c of calls) {
      api.createtable(L, 0, 3);
      api.pushref(L, c.fn.ref);
      api.setfield(L, -2, "call");
      api.createtable(L, c.args.length, 1);
      c.args.forEach((v, k) => {
        this.converter.push(L, v);
        api.rawseti(L, -2, k + 1);
      });
      api.pushinteger(L, BigInt(c.args.length));
      api.setfield(L, -2, "n");
      api.setfield(L, -2, "args");
      api.pushinteger(L, BigInt(c.reply));
      api.setfield(L, -2, "reply");
      api.rawseti(L, -2, ++i);
    }
    return 1;
  }
  /** Pushes the Lua error value for a failed operation. */
  #pushError(L, err) {
    if (err instanceof LuaErrorValue) {
      this.converter.push(L, err.value);
    } else if (err instanceof DOMException && err.name === "AbortError") {
      this.api.pushstring(L, "cancelled");
    } else {
      this.api.pushstring(L, errorMessage(err));
    }
  }
  #reply(L) {
    const id = Number(this.api.tointeger(L, 1));
    const ok = this.api.toboolean(L, 2);
    const pending = this.#replies.get(id);
    if (!pending) return 0;
    this.#replies.delete(id);
    if (ok) {
      const values = this.converter.argsToJs(L, 3, {
        functions: "ref"
      });
      pending.resolve(values);
    } else {
      const value = this.converter.toJs(L, 3, {
        functions: "error"
      });
      const tb = this.api.type(L, 4) === LUA_TSTRING ? String(this.converter.toJs(L, 4)) : void 0;
      const message = typeof value === "string" ? value : safeJson(value);
      pending.reject(new LuaCallbackError(message, value, tb ? trimTraceback(tb) : void 0));
    }
    return 0;
  }
  /**
   * Runs the Lua function `fn` with `args` as a task of this engine's scheduler and resolves
   * with its return values. Rejects with `LuaCallbackError` when it raises, and when the run
   * ends before it was called.
   */
  callLua(fn, args = []) {
    if (this.#closed || !this.#driving) {
      return Promise.reject(new LuaCallbackError("the Lua run has ended", void 0));
    }
    const reply = ++this.#replySeq;
    return new Promise((resolve, reject) => {
      this.#replies.set(reply, {
        resolve,
        reject
      });
      this.#calls.push({
        fn,
        args,
        reply
      });
      this.#wakeUp();
    });
  }
  // --- loading and running -------------------------------------------------------------------
  /** Protected call on the main stack; throws a JS Error with the Lua message on failure. */
  #pcall(L, nargs, nresults) {
    const status = this.api.m._lua_pcallk(L, nargs, nresults, 0, 0, 0);
    if (status !== LUA_OK) {
      const msg = String(this.converter.toJs(L, -1) ?? "error");
      this.api.pop(L, 1);
      throw new Error(msg);
    }
  }
  /**
   * Loads and runs an internal chunk with registry refs as arguments; returns a ref to its result.
   * Uses the chunk's precompiled bytecode when it was generated from this source (see
   * `precompiled.ts`), else parses the text.
   */
  #loadInternal(source, chunkname, argRefs) {
    const api = this.api;
    const L = this.#installL ?? this.L;
    const bytecode = precompiled(chunkname, source);
    let loaded = false;
    if (bytecode) {
      loaded = api.load(L, bytecode, chunkname, "b") === LUA_OK;
      if (!loaded) api.pop(L, 1);
    }
    if (!loaded && api.load(L, new TextEncoder().encode(source), chunkname) !== LUA_OK) {
      const msg = String(this.converter.toJs(L, -1));
      api.pop(L, 1);
      throw new Error(`internal chunk ${chunkname} failed to compile: ${msg}`);
    }
    for (const r of argRefs) api.pushref(L, r);
    this.#pcall(L, argRefs.length, 1);
    return api.ref(L);
  }
  /**
   * Runs an internal setup chunk synchronously (no host calls may yield in it). It receives the
   * runtime table and the primitives table as `...`.
   */
  exec(source, chunkname) {
    const ref = this.#loadInternal(source, chunkname, [
      this.#runtimeRef,
      this.#hRef
    ]);
    this.api.unref(this.L, ref);
  }
  /**
   * Installs a host module on first use instead of now. `install` (which calls `define`, `exec`
   * and the like as usual) runs, once, the first time Lua reads, writes or iterates one of the
   * `tables` (dotted global paths such as `"std.kv"`, created empty now if absent), or requires
   * one of the `preload` module names. It runs synchronously inside that access, so it works
   * wherever the access happens, including where Lua cannot yield; it must not call Lua that
   * yields. Until then `rawget`/`next` on those tables see them empty and they carry a metatable.
   * Why: a run pays for each host module it installs (mostly V8 compiling its code on first call),
   * and most blocks use few of them; start-up is what every block pays.
   */
  defineLazy(triggers, install) {
    const api = this.api;
    const L = this.#installL ?? this.L;
    api.pushref(L, this.#runtimeRef);
    api.getfield(L, -1, "lazy");
    api.rotate(L, -2, 1);
    api.pop(L, 1);
    this.#pushCFunction(L, "lazy install", {
      raw: (T) => {
        const outer = this.#installL;
        this.#installL = T;
        try {
          install();
        } finally {
          this.#installL = outer;
        }
        return 0;
      }
    });
    this.converter.push(L, [
      ...triggers.tables ?? []
    ]);
    this.converter.push(L, [
      ...triggers.preload ?? []
    ]);
    this.#pcall(L, 3, 0);
  }
  /** Sets global `name` to a converted JS value. */
  setGlobal(name, value) {
    this.converter.push(this.L, value);
    this.api.setglobal(this.L, name);
  }
  /**
   * Compiles `source` as the main chunk named `chunkname` (`@path` style, see `lua_load`).
   * Returns the syntax error message instead of throwing.
   */
  compile(source, chunkname) {
    const api = this.api;
    if (api.load(this.L, source, chunkname) !== LUA_OK) {
      const message = String(this.converter.toJs(this.L, -1));
      api.pop(this.L, 1);
      return {
        ok: false,
        message
      };
    }
    return {
      ok: true,
      ref: api.ref(this.L)
    };
  }
  /**
   * Drives `R.main(chunk)` to completion: the scheduler runs the chunk as the main task.
   * `stop` ends the drive at the next suspension (for SIGINT/SIGTERM and embedder cancels).
   */
  async runMain(chunkRef, stop) {
    const api = this.api;
    const L = this.L;
    const T = api.newthread(L);
    const threadRef = api.ref(L);
    api.pushref(T, this.#runtimeRef);
    api.getfield(T, -1, "main");
    api.rotate(T, -2, 1);
    api.pop(T, 1);
    api.pushref(T, chunkRef);
    if (this.#limits.cpuSeconds) this.#installCpuHook(T, this.#limits.cpuSeconds * 1e3);
    let nargs = 1;
    this.#driving = true;
    const onStop = () => {
      this.#stopReason = String(stop?.reason ?? "stopped");
      this.#wakeUp();
    };
    stop?.addEventListener("abort", onStop, {
      once: true
    });
    if (stop?.aborted) onStop();
    try {
      while (true) {
        if (this.#stopReason) return {
          kind: "stopped",
          reason: this.#stopReason
        };
        this.#sliceStart = performance.now();
        let r;
        try {
          r = api.resume(T, L, nargs);
        } catch (e) {
          if (e instanceof CpuLimitExceeded) {
            return {
              kind: "error",
              message: e.message,
              traceback: "",
              value: e.message
            };
          }
          throw e;
        } finally {
          this.#cpuUsed += performance.now() - this.#sliceStart;
        }
        if (r.status === LUA_YIELD) {
          api.pop(T, r.nresults);
          nargs = 0;
          if (this.#completions.length === 0 && this.#calls.length === 0 && !this.#stopReason) {
            await new Promise((resolve) => this.#wake = resolve);
          }
          continue;
        }
        if (r.status !== LUA_OK) {
          const message = String(this.converter.toJs(T, -1) ?? "unknown error");
          const memory = r.status === 4 ? " (memory limit reached)" : "";
          return {
            kind: "error",
            message: message + memory,
            traceback: "",
            value: message
          };
        }
        return this.#readOutcome(T, r.nresults);
      }
    } finally {
      this.#driving = false;
      stop?.removeEventListener("abort", onStop);
      for (const id of [
        ...this.#ops.keys()
      ]) this.#cancelOp(id);
      for (const [, p] of this.#replies) p.reject(new LuaCallbackError("the Lua run has ended", void 0));
      this.#replies.clear();
      if (!this.#closed) api.unref(L, threadRef);
    }
  }
  #readOutcome(T, n) {
    const api = this.api;
    const base = api.gettop(T) - n + 1;
    const kind = String(this.converter.toJs(T, base));
    if (kind === "ok") {
      const value2 = this.converter.toJs(T, base + 1);
      return {
        kind: "returned",
        values: value2 === void 0 ? [] : [
          value2
        ]
      };
    }
    if (kind === "exit") {
      const code = Number(this.converter.toJs(T, base + 1) ?? 0);
      const reason = this.converter.toJs(T, base + 2);
      return {
        kind: "exit",
        code,
        reason: typeof reason === "string" ? reason : void 0
      };
    }
    const message = String(this.converter.toJs(T, base + 1));
    const tb = String(this.converter.toJs(T, base + 2) ?? "");
    let value = message;
    try {
      value = this.converter.toJs(T, base + 3);
    } catch {
    }
    return {
      kind: "error",
      message,
      traceback: trimTraceback(tb),
      value
    };
  }
  #installCpuHook(T, limitMs) {
    this.#hookPtr = this.api.m.addFunction(() => {
      if (this.#cpuUsed + (performance.now() - this.#sliceStart) > limitMs) {
        throw new CpuLimitExceeded(`CPU limit exceeded: the script ran Lua code for more than ${limitMs / 1e3} s`);
      }
    }, "vii");
    this.api.sethook(T, this.#hookPtr, LUA_MASKCOUNT, 1e4);
  }
  /** Frees the Lua state. The engine is unusable afterwards. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    engines.delete(this.L);
    for (const id of [
      ...this.#ops.keys()
    ]) this.#cancelOp(id);
    try {
      this.#global.close();
    } catch {
    }
    if (this.#hookPtr) this.api.m.removeFunction(this.#hookPtr);
  }
};
var NEVER = new AbortController().signal;
var SLEEP_OP = {
  async: (args, cx) => {
    const ms = args.number(1, "milliseconds");
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      cx.signal.addEventListener("abort", () => {
        clearTimeout(t);
        resolve();
      }, {
        once: true
      });
    });
  }
};
function safeJson(v) {
  try {
    return stringifyJson(v);
  } catch {
    return String(v);
  }
}
function errorMessage(e) {
  if (e instanceof Error) return e.message;
  return typeof e === "string" ? e : safeJson(e);
}
function dispatch(api, L) {
  let engine;
  let message;
  let errValue;
  try {
    engine = engineOf(api, L);
    const id = api.tonumber(L, LUA_REGISTRYINDEX - 1);
    return engine.invoke(L, id);
  } catch (e) {
    if (e === Infinity) throw e;
    if (e instanceof LuaErrorValue) {
      errValue = e;
      message = "";
    } else {
      message = errorMessage(e);
    }
  }
  if (errValue instanceof LuaErrorValue && engine) {
    engine.converter.push(L, errValue.value);
    return api.error(L);
  }
  api.where(L, 1);
  api.pushstring(L, message);
  api.concat(L, 2);
  return api.error(L);
}
function engineOf(api, L) {
  const direct = engines.get(L);
  if (direct) return direct;
  api.m._lua_rawgeti(L, LUA_REGISTRYINDEX, 1n);
  const main = api.tothread(L, -1);
  api.pop(L, 1);
  const e = engines.get(main);
  if (!e) throw new Error("host function called from an unknown Lua state");
  return e;
}

export {
  LUA_TNONE,
  LUA_TNIL,
  LUA_TTABLE,
  LUA_TYPE_NAMES,
  LuaArgError,
  Args,
  optField,
  preloadLua,
  LuaCallbackError,
  LuaEngine,
  McpError,
  unknownServer,
  runEnding,
  sanitizeUrl,
  seconds
};
