/**
 * The raw Lua 5.4 C API of the wasmoon build, typed and made safe to call from TypeScript.
 *
 * Owns: the exact signatures of the `_lua_*` exports we use, the registry pseudo-index, byte-exact
 * string transfer between the JS heap and the wasm heap, and interned C strings for field names.
 *
 * Invariants:
 * - Every `lua_Integer` parameter and result is a `bigint` (the build uses WASM_BIGINT); callers
 *   never pass a JS number where the C side expects an i64.
 * - `HEAPU8` is re-read after every call that may grow the wasm memory: a cached view goes stale.
 * - Strings cross as bytes (`lua_pushlstring` / `lua_tolstring` with an explicit length), so NUL
 *   bytes and non-UTF-8 content survive. Decoding policy lives in the converter, not here.
 *
 * Why: wasmoon's own marshalling truncates at NUL, wraps integers above 2^63 and crashes on `null`
 * (see the Lua-host reference). Everything that crosses the boundary goes through this file and
 * `convert.ts` instead.
 */

/** The subset of the emscripten module object we rely on. */
export interface EmModule {
  /** The wasm heap as bytes (re-read after anything that may grow memory). */
  HEAPU8: Uint8Array;
  /** The wasm heap as 32-bit words. */
  HEAPU32: Uint32Array;
  /** Allocates in the wasm heap. */
  _malloc(size: number): number;
  /** Frees a `_malloc` block. */
  _free(ptr: number): void;
  /** Adds a JS function to the wasm table; returns its function pointer. */
  addFunction(fn: (...args: number[]) => number | void, signature: string): number;
  /** Removes an `addFunction` entry. */
  removeFunction(ptr: number): void;
  /** The raw `_lua_*` / `_luaL_*` exports, by name. */
  // deno-lint-ignore no-explicit-any
  [name: string]: any;
}

/** Lua type tags (`lua_type`). */
export const LUA_TNONE = -1;
export const LUA_TNIL = 0;
export const LUA_TBOOLEAN = 1;
export const LUA_TLIGHTUSERDATA = 2;
export const LUA_TNUMBER = 3;
export const LUA_TSTRING = 4;
export const LUA_TTABLE = 5;
export const LUA_TFUNCTION = 6;
export const LUA_TUSERDATA = 7;
export const LUA_TTHREAD = 8;

/** Thread status codes (`lua_resume`, `lua_pcall`, `luaL_loadbuffer`). */
export const LUA_OK = 0;
export const LUA_YIELD = 1;
export const LUA_ERRRUN = 2;
export const LUA_ERRSYNTAX = 3;
export const LUA_ERRMEM = 4;

/** `LUAI_MAXSTACK` of the build is one million, so the registry sits below that. */
export const LUA_REGISTRYINDEX = -1_000_000 - 1000;
/** Debug hook mask for count events. */
export const LUA_MASKCOUNT = 8;

/** Names of Lua types, indexed by tag, as `type()` spells them. */
export const LUA_TYPE_NAMES = [
  "nil",
  "boolean",
  "userdata",
  "number",
  "string",
  "table",
  "function",
  "userdata",
  "thread",
];

const encoder = new TextEncoder();
/** Bytes reserved for one `lua_Debug` (wasm32: 112 used; room to spare). */
const DEBUG_SIZE = 256;
/** Largest value pushed through the shared scratch buffer (larger ones get a buffer of their own). */
const SCRATCH_MAX = 1 << 20;

/**
 * A typed façade over the raw exports. One instance per wasm module (factory); it is shared by
 * every engine of that module because the exports do not depend on the `lua_State`.
 */
export class LuaApi {
  /** The emscripten module: raw `_lua*` exports, heap views, `_malloc`. */
  readonly m: EmModule;
  #scratch = 0;
  #scratchSize = 0;
  #interned = new Map<string, number>();
  #lenPtr: number;
  /** A `lua_Debug` for `runningSource` (allocated on first use). */
  #debug = 0;

  /**
   * A façade over one emscripten module's exports.
   * @param m the emscripten module of one wasmoon factory
   */
  constructor(m: EmModule) {
    this.m = m;
    this.#lenPtr = m._malloc(8);
  }

  // --- stack -------------------------------------------------------------------------------
  /** `lua_gettop`. */
  gettop(L: number): number {
    return this.m._lua_gettop(L);
  }
  /** `lua_settop`. */
  settop(L: number, idx: number): void {
    this.m._lua_settop(L, idx);
  }
  /** `lua_pop`. */
  pop(L: number, n: number): void {
    this.m._lua_settop(L, -n - 1);
  }
  /** `lua_absindex`. */
  absindex(L: number, idx: number): number {
    return this.m._lua_absindex(L, idx);
  }
  /** `lua_pushvalue`. */
  pushvalue(L: number, idx: number): void {
    this.m._lua_pushvalue(L, idx);
  }
  /** `lua_checkstack`. */
  checkstack(L: number, n: number): boolean {
    return this.m._lua_checkstack(L, n) !== 0;
  }
  /** `lua_rotate`. */
  rotate(L: number, idx: number, n: number): void {
    this.m._lua_rotate(L, idx, n);
  }
  /** `lua_insert`. */
  insert(L: number, idx: number): void {
    this.m._lua_rotate(L, idx, 1);
  }
  /** `lua_xmove`. */
  xmove(from: number, to: number, n: number): void {
    this.m._lua_xmove(from, to, n);
  }

  // --- reading ----------------------------------------------------------------------------
  /** `lua_type`. */
  type(L: number, idx: number): number {
    return this.m._lua_type(L, idx);
  }
  /** `lua_toboolean`. */
  toboolean(L: number, idx: number): boolean {
    return this.m._lua_toboolean(L, idx) !== 0;
  }
  /** `lua_isinteger`. */
  isinteger(L: number, idx: number): boolean {
    return this.m._lua_isinteger(L, idx) !== 0;
  }
  /** `lua_tointegerx` (as a bigint). */
  tointeger(L: number, idx: number): bigint {
    return BigInt(this.m._lua_tointegerx(L, idx, 0));
  }
  /**
   * The integer at `idx` (`lua_isinteger` is true there): a number when it is below 2^53 in
   * magnitude, read as a double, which is exact in that range and makes no bigint; a bigint
   * beyond.
   */
  tointegerish(L: number, idx: number): number | bigint {
    const d = this.m._lua_tonumberx(L, idx, 0);
    return d <= Number.MAX_SAFE_INTEGER && d >= -Number.MAX_SAFE_INTEGER ? d : this.tointeger(L, idx);
  }
  /** `lua_tonumberx`. */
  tonumber(L: number, idx: number): number {
    return this.m._lua_tonumberx(L, idx, 0);
  }
  /** `lua_topointer`. */
  topointer(L: number, idx: number): number {
    return this.m._lua_topointer(L, idx);
  }
  /** `lua_touserdata`. */
  touserdata(L: number, idx: number): number {
    return this.m._lua_touserdata(L, idx);
  }
  /** `lua_rawlen` (as a number). */
  rawlen(L: number, idx: number): number {
    return Number(this.m._lua_rawlen(L, idx));
  }
  /** `lua_tothread`. */
  tothread(L: number, idx: number): number {
    return this.m._lua_tothread(L, idx);
  }
  /** The bytes of the string (or number, converted in place) at `idx`; a copy, safe to keep. */
  tobytes(L: number, idx: number): Uint8Array {
    const ptr = this.m._lua_tolstring(L, idx, this.#lenPtr);
    if (ptr === 0) return new Uint8Array(0);
    const len = this.m.HEAPU32[this.#lenPtr >> 2];
    return this.m.HEAPU8.slice(ptr, ptr + len);
  }
  /** A view of the string bytes at `idx`, valid only until the next call into Lua. */
  tobytesView(L: number, idx: number): Uint8Array {
    const ptr = this.m._lua_tolstring(L, idx, this.#lenPtr);
    if (ptr === 0) return new Uint8Array(0);
    const len = this.m.HEAPU32[this.#lenPtr >> 2];
    return this.m.HEAPU8.subarray(ptr, ptr + len);
  }
  /**
   * Pushes bytes `start`..`start + len` of the string at (absolute) `idx` as a new string, copied
   * inside the wasm heap (the string at `idx` stays on the stack, so its bytes stay put).
   */
  pushsubstring(L: number, idx: number, start: number, len: number): void {
    const ptr = this.m._lua_tolstring(L, idx, this.#lenPtr);
    this.m._lua_pushlstring(L, ptr + start, len);
  }
  /** `lua_next`. */
  next(L: number, idx: number): boolean {
    return this.m._lua_next(L, idx) !== 0;
  }
  /** `lua_getmetatable`. */
  getmetatable(L: number, idx: number): boolean {
    return this.m._lua_getmetatable(L, idx) !== 0;
  }
  /** `lua_rawequal`. */
  rawequal(L: number, a: number, b: number): boolean {
    return this.m._lua_rawequal(L, a, b) !== 0;
  }
  /** `lua_rawgeti`. */
  rawgeti(L: number, idx: number, n: number): number {
    return this.m._lua_rawgeti(L, idx, BigInt(n));
  }
  /** `lua_rawget`. */
  rawget(L: number, idx: number): number {
    return this.m._lua_rawget(L, idx);
  }
  /** `lua_getfield`. */
  getfield(L: number, idx: number, key: string): number {
    return this.m._lua_getfield(L, idx, this.cstr(key));
  }
  /** `lua_getglobal`. */
  getglobal(L: number, name: string): number {
    return this.m._lua_getglobal(L, this.cstr(name));
  }
  /** `lua_isyieldable`. */
  isyieldable(L: number): boolean {
    return this.m._lua_isyieldable(L) !== 0;
  }

  // --- pushing ----------------------------------------------------------------------------
  /** `lua_pushnil`. */
  pushnil(L: number): void {
    this.m._lua_pushnil(L);
  }
  /** `lua_pushboolean`. */
  pushboolean(L: number, b: boolean): void {
    this.m._lua_pushboolean(L, b ? 1 : 0);
  }
  /** `lua_pushinteger`. */
  pushinteger(L: number, n: bigint): void {
    this.m._lua_pushinteger(L, n);
  }
  /** `lua_pushnumber`. */
  pushnumber(L: number, n: number): void {
    this.m._lua_pushnumber(L, n);
  }
  /** `lua_pushlightuserdata`. */
  pushlightuserdata(L: number, p: number): void {
    this.m._lua_pushlightuserdata(L, p);
  }
  /** `lua_pushcclosure`. */
  pushcclosure(L: number, fn: number, nup: number): void {
    this.m._lua_pushcclosure(L, fn, nup);
  }
  /**
   * Pushes raw bytes as a Lua string. A large value goes through a buffer of its own, freed at
   * once (also when Lua raises): the shared scratch buffer never grows past `SCRATCH_MAX`.
   */
  pushbytes(L: number, bytes: Uint8Array): void {
    if (bytes.length > SCRATCH_MAX) {
      const ptr = this.m._malloc(bytes.length);
      if (!ptr) throw new RangeError(`cannot allocate ${bytes.length} bytes in the wasm heap`);
      try {
        this.m.HEAPU8.set(bytes, ptr);
        this.m._lua_pushlstring(L, ptr, bytes.length);
      } finally {
        this.m._free(ptr);
      }
      return;
    }
    const ptr = this.#ensureScratch(bytes.length);
    this.m.HEAPU8.set(bytes, ptr);
    this.m._lua_pushlstring(L, ptr, bytes.length);
  }
  /** Pushes a JS string encoded as UTF-8 (lone surrogates become U+FFFD, as TextEncoder does). */
  pushstring(L: number, s: string): void {
    if (s.length === 0) {
      this.m._lua_pushlstring(L, 0, 0);
      return;
    }
    if (s.length * 3 > SCRATCH_MAX) {
      this.pushbytes(L, encoder.encode(s));
      return;
    }
    const ptr = this.#ensureScratch(s.length * 3);
    if (s.length <= 32) {
      // Short ASCII: copy the code units directly (cheaper than encodeInto on a fresh view).
      const heap = this.m.HEAPU8;
      let i = 0;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
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
  createtable(L: number, narr: number, nrec: number): void {
    this.m._lua_createtable(L, narr, nrec);
  }
  /** `lua_rawseti`. */
  rawseti(L: number, idx: number, n: number): void {
    this.m._lua_rawseti(L, idx, BigInt(n));
  }
  /** `lua_rawset`. */
  rawset(L: number, idx: number): void {
    this.m._lua_rawset(L, idx);
  }
  /** `lua_setfield`. */
  setfield(L: number, idx: number, key: string): void {
    this.m._lua_setfield(L, idx, this.cstr(key));
  }
  /** `lua_setglobal`. */
  setglobal(L: number, name: string): void {
    this.m._lua_setglobal(L, this.cstr(name));
  }
  /** `lua_setmetatable`. */
  setmetatable(L: number, idx: number): void {
    this.m._lua_setmetatable(L, idx);
  }

  // --- references, errors, execution ---------------------------------------------------------
  /** `luaL_ref` on the registry. */
  ref(L: number): number {
    return this.m._luaL_ref(L, LUA_REGISTRYINDEX);
  }
  /** `luaL_unref` on the registry. */
  unref(L: number, ref: number): void {
    this.m._luaL_unref(L, LUA_REGISTRYINDEX, ref);
  }
  /** `lua_rawgeti` on the registry (pushes a ref). */
  pushref(L: number, ref: number): void {
    this.m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(ref));
  }
  /** Pushes `chunk:line:` of the function at `level` (1 = the caller of the running C function). */
  where(L: number, level: number): void {
    this.m._luaL_where(L, level);
  }
  /** `lua_concat`. */
  concat(L: number, n: number): void {
    this.m._lua_concat(L, n);
  }
  /** Raises the value on top of the stack. Never returns normally (it longjmps). */
  error(L: number): number {
    return this.m._lua_error(L);
  }
  /**
   * Loads `source` as a chunk named `chunkname` (`luaL_loadbufferx`); pushes the function or the
   * message. `mode` is "t" (text only, the default: user code never loads bytecode) or "b"
   * (bytecode only, for the runtime's precompiled chunks).
   */
  load(L: number, source: Uint8Array, chunkname: string, mode: "t" | "b" = "t"): number {
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
  newthread(L: number): number {
    return this.m._lua_newthread(L);
  }
  /** Resumes `co`; returns the status and the number of values it left on its stack. */
  resume(co: number, from: number, nargs: number): { status: number; nresults: number } {
    const status = this.m._lua_resume(co, from, nargs, this.#lenPtr);
    return { status, nresults: this.m.HEAPU32[this.#lenPtr >> 2] };
  }
  /** `lua_sethook`. */
  sethook(L: number, fn: number, mask: number, count: number): void {
    this.m._lua_sethook(L, fn, mask, count);
  }
  /**
   * The chunk name (`source`, e.g. `=ab:runtime`) of the Lua function running at the top of
   * `L`'s stack (`lua_getstack` level 0, `lua_getinfo "S"`), or undefined when there is none.
   * Offsets are wasm32's `lua_Debug`: `event`, then four pointers, `source` the fourth.
   */
  runningSource(L: number): string | undefined {
    this.#debug ||= this.m._malloc(DEBUG_SIZE);
    if (this.m._lua_getstack(L, 0, this.#debug) === 0) return undefined;
    this.m._lua_getinfo(L, this.cstr("S"), this.#debug);
    const src = this.m.HEAPU32[(this.#debug + 16) >> 2];
    const len = this.m.HEAPU32[(this.#debug + 20) >> 2];
    return src ? new TextDecoder().decode(this.m.HEAPU8.subarray(src, src + len)) : undefined;
  }
  /** `luaL_traceback`. */
  traceback(L: number, L1: number, msg: string | null, level: number): void {
    this.m._luaL_traceback(L, L1, msg === null ? 0 : this.cstr(msg), level);
  }

  /** A NUL-terminated copy of `s` in the wasm heap, kept for the life of the module. */
  cstr(s: string): number {
    let p = this.#interned.get(s);
    if (p === undefined) {
      p = this.m._malloc(encoder.encode(s).length + 1);
      this.#writeCString(p, s);
      this.#interned.set(s, p);
    }
    return p;
  }

  #writeCString(ptr: number, s: string): void {
    const bytes = encoder.encode(s);
    this.m.HEAPU8.set(bytes, ptr);
    this.m.HEAPU8[ptr + bytes.length] = 0;
  }

  #ensureScratch(size: number): number {
    if (size > this.#scratchSize) {
      if (this.#scratch) this.m._free(this.#scratch);
      const want = Math.max(size, 4096);
      this.#scratch = this.m._malloc(want);
      if (!this.#scratch) throw new RangeError(`cannot allocate ${want} bytes in the Lua heap`);
      this.#scratchSize = want;
    }
    return this.#scratch;
  }
}
