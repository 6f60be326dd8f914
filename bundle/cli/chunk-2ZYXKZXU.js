import {
  Args,
  LUA_TNIL,
  LUA_TNONE,
  LUA_TTABLE,
  LUA_TYPE_NAMES,
  LuaArgError,
  LuaCallbackError,
  LuaEngine,
  McpError,
  optField,
  runEnding,
  unknownServer
} from "./chunk-AWGGZNFJ.js";
import {
  Deadlines,
  LlmError
} from "./chunk-GAVNBGPF.js";
import {
  MEMORY,
  PUBLISHED_COLUMNS,
  commitWindowMs,
  defaultStorePath,
  openStore,
  readOnlyQuery,
  storePathFrom
} from "./chunk-PENIMNON.js";
import {
  LuaFloat,
  LuaMulti,
  NullsAsNil,
  luaTypeName,
  parseJson,
  stringifyJson
} from "./chunk-J4FUTWHQ.js";
import {
  ProcessGroups,
  agentBlockHome,
  userHome
} from "./chunk-ZP6N6HXR.js";
import {
  ModuleResolver,
  displayPath,
  libTiers
} from "./chunk-VKEBFTIZ.js";
import {
  VERSION
} from "./chunk-HI6AAJID.js";
import {
  Logger,
  UsageError,
  writeStderr,
  writeStdout
} from "./chunk-C44UDHAF.js";

// src/cli/args.ts
import { parseArgs } from "node:util";
function parseFlags(argv, options, opts = {}) {
  try {
    const r = parseArgs({
      args: argv,
      options,
      strict: true,
      allowPositionals: opts.allowPositionals ?? false
    });
    return {
      values: {
        ...r.values
      },
      positionals: r.positionals
    };
  } catch (e) {
    throw new UsageError(e.message.replace(/\n/g, " "));
  }
}

// src/runtime/run.ts
import { basename as basename2, dirname as dirname5, resolve as resolve3 } from "node:path";

// src/lua/prelude.lua
var prelude_default = `--- agent-block prelude: the Lua standard library made real, and the globals every script sees.
--
-- Owns the Lua half of: \`print\`, \`io.*\` (files, pipes and the standard streams, backed by host
-- handles), \`os.*\` (real environment, filesystem and processes; \`os.exit\` ending the run after
-- cleanup), \`load\` restricted to text chunks, \`loadfile\`/\`dofile\` on the real filesystem, the
-- yield-safe \`require\` over the host's module resolver, \`std.json\` markers and \`std.task\`.
--
-- Invariants:
-- - File objects buffer reads in Lua and ask the host for chunks: a regular file answers
--   synchronously, a pipe or stdin through \`host_call\`, so the rest of the script keeps running.
-- - \`require\` is written in Lua so a module's top level may make host calls (the C \`require\`
--   cannot yield). A module being loaded is marked, so a cyclic require fails with a message
--   naming the cycle instead of a C stack overflow.
-- - Nothing here writes to the real stdout except \`print\`/\`io.write\` through the host.
local R, H = ...
local host_call, user_level = R.host_call, R.user_level
local type, tostring, tonumber, select, error, setmetatable, getmetatable, rawequal =
  type, tostring, tonumber, select, error, setmetatable, getmetatable, rawequal
local sformat, ssub, sfind, concat, pack, unpack = string.format, string.sub, string.find,
  table.concat, table.pack, table.unpack
local math_type = math.type

-- std --------------------------------------------------------------------------------------------
std = std or {}
std.json = std.json or {}
local json = std.json
json.null = H.null
json.array_mt = H.array_mt
json.object_mt = H.object_mt
--- Marks \`t\` (default a new table) as a JSON array, so an empty one encodes as \`[]\`.
function json.array(t) return setmetatable(t or {}, H.array_mt) end
--- Marks \`t\` (default a new table) as a JSON object.
function json.object(t) return setmetatable(t or {}, H.object_mt) end
function json.is_array(t) return type(t) == "table" and getmetatable(t) == H.array_mt end
function json.is_null(v) return rawequal(v, H.null) end
std.task = R.task

-- print / io ----------------------------------------------------------------------------------------
local function fmt_value(v)
  if math_type(v) == "float" then return sformat("%.14g", v) end
  return tostring(v)
end

function print(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = tostring((select(i, ...))) end
  H.write(1, concat(parts, "\\t") .. "\\n")
end

local File = {}
File.__index = File
File.__name = "FILE*"
File.__tostring = function(f)
  if f.closed then return "file (closed)" end
  return sformat("file (%s)", f.label)
end

local function new_file(h, label, async, writable)
  return setmetatable({ h = h, label = label, async = async, writable = writable, buf = "", pos = 1,
    eof = false, closed = false }, File)
end

local function check_file(f, fname)
  if getmetatable(f) ~= File then
    error(sformat("bad argument #1 to '%s' (FILE* expected, got %s)", fname, type(f)), 3)
  end
  if f.closed then error("attempt to use a closed file", 3) end
  return f
end

local function fill(f)
  if f.eof then return false end
  local chunk
  if f.async then chunk = host_call("io.read_chunk", f.h) else chunk = H.io_read_chunk(f.h) end
  if chunk == nil then
    f.eof = true
    return false
  end
  if f.pos > #f.buf then f.buf = chunk else f.buf = ssub(f.buf, f.pos) .. chunk end
  f.pos = 1
  return true
end

local function read_line(f, keep)
  while true do
    local nl = sfind(f.buf, "\\n", f.pos, true)
    if nl then
      local line = ssub(f.buf, f.pos, keep and nl or nl - 1)
      f.pos = nl + 1
      return line
    end
    if not fill(f) then
      if f.pos > #f.buf then return nil end
      local rest = ssub(f.buf, f.pos)
      f.pos = #f.buf + 1
      return rest
    end
  end
end

local function read_all(f)
  while fill(f) do end
  local rest = ssub(f.buf, f.pos)
  f.buf, f.pos = "", 1
  return rest
end

local function read_count(f, n)
  while #f.buf - f.pos + 1 < n do
    if not fill(f) then break end
  end
  if f.pos > #f.buf and n > 0 then return nil end
  if n == 0 then
    if f.pos > #f.buf and not fill(f) then return nil end
    return ""
  end
  local s = ssub(f.buf, f.pos, f.pos + n - 1)
  f.pos = f.pos + #s
  return s
end

local function read_number(f)
  while true do
    local s = sfind(f.buf, "[^%s]", f.pos)
    if s then
      f.pos = s
      break
    end
    f.pos = #f.buf + 1
    if not fill(f) then return nil end
  end
  -- make sure the whole numeral is buffered
  while not sfind(f.buf, "[^%w%.%+%-]", f.pos) and fill(f) do end
  local numeral = string.match(f.buf, "^[%+%-]?[%w%.]*[eEpP]?[%+%-]?[%w%.]*", f.pos) or ""
  f.pos = f.pos + #numeral
  return tonumber(numeral)
end

local function read_one(f, fmt)
  if type(fmt) == "number" then return read_count(f, math.floor(fmt)) end
  fmt = tostring(fmt):gsub("^%*", "")
  local c = ssub(fmt, 1, 1)
  if c == "l" then return read_line(f, false) end
  if c == "L" then return read_line(f, true) end
  if c == "a" then return read_all(f) end
  if c == "n" then return read_number(f) end
  error(sformat("bad argument to 'read' (invalid format '%s')", fmt), 4)
end

function File:read(...)
  check_file(self, "read")
  local n = select("#", ...)
  if n == 0 then return read_line(self, false) end
  local out = {}
  for i = 1, n do
    local v = read_one(self, (select(i, ...)))
    out[i] = v
    if v == nil then return unpack(out, 1, i) end
  end
  return unpack(out, 1, n)
end

function File:lines(...)
  check_file(self, "lines")
  local fmts = pack(...)
  return function()
    if self.closed then error("file is already closed", 2) end
    if fmts.n == 0 then return read_line(self, false) end
    return self:read(unpack(fmts, 1, fmts.n))
  end
end

function File:write(...)
  check_file(self, "write")
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do
    local v = select(i, ...)
    local tv = type(v)
    if tv == "number" then
      parts[i] = fmt_value(v)
    elseif tv == "string" then
      parts[i] = v
    else
      error(sformat("bad argument #%d to 'write' (string expected, got %s)", i, tv), 2)
    end
  end
  local data = concat(parts)
  local ok, err, code
  if self.async then
    ok, err, code = host_call("io.write_pipe", self.h, data)
  else
    ok, err, code = H.io_write(self.h, data)
  end
  if not ok then return nil, err, code end
  return self
end

function File:seek(whence, offset)
  check_file(self, "seek")
  whence = whence or "cur"
  offset = offset or 0
  if whence ~= "set" and whence ~= "cur" and whence ~= "end" then
    error(sformat("bad argument #1 to 'seek' (invalid option '%s')", tostring(whence)), 2)
  end
  if self.async then return nil, "Illegal seek", 29 end
  if whence == "cur" then offset = offset - (#self.buf - self.pos + 1) end
  self.buf, self.pos, self.eof = "", 1, false
  return H.io_seek(self.h, whence, offset)
end

function File:flush()
  check_file(self, "flush")
  return self
end

function File:setvbuf() return true end

function File:close()
  check_file(self, "close")
  if self.std then return nil, "cannot close standard file" end
  self.closed = true
  if self.pipe then return host_call("io.pclose", self.h) end
  return H.io_close(self.h)
end

File.__close = function(f) if not f.closed and not f.std then f:close() end end
File.__gc = function(f) if not f.closed and not f.std and not f.pipe then pcall(H.io_close, f.h) end end

local stdin = new_file(0, "stdin", true, false)
local stdout = new_file(1, "stdout", false, true)
local stderr = new_file(2, "stderr", false, true)
stdin.std, stdout.std, stderr.std = true, true, true
local default_in, default_out = stdin, stdout
io.stdin, io.stdout, io.stderr = stdin, stdout, stderr

local VALID_MODE = { r = true, w = true, a = true, ["r+"] = true, ["w+"] = true, ["a+"] = true }

function io.open(path, mode)
  if type(path) ~= "string" then
    error(sformat("bad argument #1 to 'open' (string expected, got %s)", type(path)), 2)
  end
  mode = mode or "r"
  local m = tostring(mode):gsub("b$", "")
  if not VALID_MODE[m] then error(sformat("bad argument #2 to 'open' (invalid mode '%s')", tostring(mode)), 2) end
  local h, err, code = H.io_open(path, m)
  if not h then return nil, err, code end
  return new_file(h, path, false, m ~= "r")
end

function io.popen(cmd, mode)
  if type(cmd) ~= "string" then
    error(sformat("bad argument #1 to 'popen' (string expected, got %s)", type(cmd)), 2)
  end
  mode = mode or "r"
  if mode ~= "r" and mode ~= "w" then error(sformat("bad argument #2 to 'popen' (invalid mode '%s')", mode), 2) end
  local h, err = H.io_popen(cmd, mode)
  if not h then return nil, err end
  local f = new_file(h, "pipe", true, mode == "w")
  f.pipe = true
  return f
end

function io.close(f)
  return (f or default_out):close()
end

function io.type(f)
  if getmetatable(f) ~= File then return nil end
  return f.closed and "closed file" or "file"
end

function io.input(f)
  if f == nil then return default_in end
  if type(f) == "string" then
    local nf, err = io.open(f, "r")
    if not nf then error(err, 2) end
    default_in = nf
  else
    default_in = check_file(f, "input")
  end
  return default_in
end

function io.output(f)
  if f == nil then return default_out end
  if type(f) == "string" then
    local nf, err = io.open(f, "w")
    if not nf then error(err, 2) end
    default_out = nf
  else
    default_out = check_file(f, "output")
  end
  return default_out
end

function io.read(...) return default_in:read(...) end
function io.write(...) return default_out:write(...) end

function io.lines(path, ...)
  if path == nil then return default_in:lines(...) end
  local f, err = io.open(path, "r")
  if not f then error(err, 2) end
  local fmts = pack(...)
  return function()
    if f.closed then return nil end
    local v
    if fmts.n == 0 then v = read_line(f, false) else v = f:read(unpack(fmts, 1, fmts.n)) end
    if v == nil then f:close() end
    return v
  end, nil, nil, f
end

-- os -------------------------------------------------------------------------------------------
os.getenv = H.getenv
os.remove = H.os_remove
os.rename = H.os_rename
os.tmpname = H.os_tmpname

function os.execute(cmd)
  if cmd == nil then return true end
  if type(cmd) ~= "string" then
    error(sformat("bad argument #1 to 'execute' (string expected, got %s)", type(cmd)), 2)
  end
  return host_call("os.execute", cmd)
end

function os.exit(code)
  if code == nil or code == true then
    code = 0
  elseif code == false then
    code = 1
  elseif math_type(code) ~= "integer" then
    error(sformat("bad argument #1 to 'exit' (integer or boolean expected, got %s)", type(code)), 2)
  end
  R.request_exit(code)
end

-- chunks ---------------------------------------------------------------------------------------
local raw_load = load
string.dump = nil

function load(chunk, chunkname, _mode, ...)
  if select("#", ...) > 0 then return raw_load(chunk, chunkname, "t", ...) end
  return raw_load(chunk, chunkname, "t")
end

function loadfile(path, _mode, ...)
  local src, err = H.read_source(path)
  if not src then return nil, err end
  src = src:gsub("^#[^\\n]*", "")
  if select("#", ...) > 0 then return raw_load(src, "@" .. path, "t", ...) end
  return raw_load(src, "@" .. path, "t")
end

function dofile(path)
  local f, err = loadfile(path)
  if not f then error(err, 2) end
  return f()
end

-- require --------------------------------------------------------------------------------------
local loaded = package.loaded
local preload = package.preload
local LOADING = setmetatable({}, { __name = "module being loaded" })
package.path, package.cpath = "", ""
package.searchers = nil
package.searchpath = nil
package.loadlib = function() return nil, "C modules are not supported", "absent" end

function require(name)
  if type(name) ~= "string" then
    error(sformat("bad argument #1 to 'require' (string expected, got %s)", type(name)), 2)
  end
  local v = loaded[name]
  if v == LOADING then error(sformat("cyclic require: module '%s' requires itself while loading", name), 2) end
  if v ~= nil then return v end
  local loader, where = preload[name], ":preload:"
  if not loader then
    local src, chunkname, info = H.resolve_module(name)
    if not src then
      error(sformat("module '%s' not found:\\n\\tno field package.preload['%s']%s", name, name, chunkname), 2)
    end
    local fn, err = raw_load(src, chunkname, "t")
    if not fn then error(sformat("error loading module '%s' from file '%s':\\n\\t%s", name, info, err), 2) end
    loader, where = fn, info
  end
  loaded[name] = LOADING
  local ok, res = pcall(loader, name, where)
  if not ok then
    loaded[name] = nil
    error(res, 0)
  end
  if res ~= nil then
    loaded[name] = res
  elseif loaded[name] == LOADING then
    loaded[name] = true
  end
  return loaded[name], where
end

-- job ------------------------------------------------------------------------------------------
job = job or {}
--- Ends the run with exit 75 (EX_TEMPFAIL): what it needs is not there, nothing was done.
function job.defer(reason)
  if type(reason) ~= "string" then
    error(sformat("job.defer: argument 1 (reason) must be a string, got %s", type(reason)), 2)
  end
  R.request_exit(75, reason)
end
`;

// src/host/core.ts
function installCore(engine, run2, resolver) {
  engine.define("@resolve_module", {
    sync: (a) => {
      const r = resolver.resolve(a.string(1, "name"));
      if (r.found) return new LuaMulti([
        r.source,
        r.chunkname,
        r.info
      ]);
      return new LuaMulti([
        void 0,
        r.searched.map((s) => `
	${s}`).join("")
      ]);
    }
  });
  engine.define("std.json.encode", {
    pure: true,
    raw: (L) => {
      if (engine.api.type(L, 1) === LUA_TNONE) {
        throw new Error("std.json.encode: argument 1 (value) is missing");
      }
      const fast = engine.converter.toJson(L, 1);
      if (fast !== void 0) {
        engine.api.pushstring(L, fast);
        return 1;
      }
      const v = wrapJson("std.json.encode", () => engine.toJs(L, 1, {
        floats: "tagged"
      }));
      engine.api.pushstring(L, wrapJson("std.json.encode", () => stringifyJson(v)));
      return 1;
    }
  });
  engine.define("std.json.encode_pretty", {
    pure: true,
    raw: (L) => {
      const v = wrapJson("std.json.encode_pretty", () => engine.toJs(L, 1, {
        floats: "tagged"
      }));
      engine.api.pushstring(L, wrapJson("std.json.encode_pretty", () => stringifyJson(v, 2)));
      return 1;
    }
  });
  engine.define("std.json.decode", {
    pure: true,
    sync: (a) => {
      const text = a.string(1, "text");
      const opts = a.optTable(2, "opts");
      let value;
      try {
        value = parseJson(text);
      } catch (e) {
        throw new Error(`std.json.decode: ${e.message}`);
      }
      return opts?.null === true ? value : new NullsAsNil(value);
    }
  });
  const logFn = (level) => ({
    sync: (a) => {
      const parts = a.values.map((v) => typeof v === "string" ? v : v instanceof Uint8Array ? new TextDecoder().decode(v) : stringifyJsonSafe(v));
      run2.log.log(level, parts.join(" ").replace(/\r?\n/g, "\\n"));
    }
  });
  engine.define("log.debug", logFn("debug"));
  engine.define("log.info", logFn("info"));
  engine.define("log.warn", logFn("warn"));
  engine.define("log.error", logFn("error"));
  engine.define("std.env.project_root", {
    sync: () => run2.projectRoot
  });
}
function stringifyJsonSafe(v) {
  if (v === void 0) return "nil";
  try {
    return typeof v === "object" && v !== null ? stringifyJson(v) : String(v);
  } catch {
    return String(v);
  }
}
function wrapJson(fn, f) {
  try {
    return f();
  } catch (e) {
    throw new Error(`${fn}: ${e.message}`);
  }
}

// src/host/lazy.ts
function lazily(triggers, module) {
  const lazy = (engine, run2) => engine.defineLazy(triggers, () => module(engine, run2));
  Object.defineProperty(lazy, "name", {
    value: `lazily(${module.name})`
  });
  return lazy;
}

// src/host/os_error.ts
var BY_CLASS = {
  NotFound: [
    "No such file or directory",
    2
  ],
  PermissionDenied: [
    "Permission denied",
    13
  ],
  NotCapable: [
    "Permission denied",
    13
  ],
  AlreadyExists: [
    "File exists",
    17
  ],
  IsADirectory: [
    "Is a directory",
    21
  ],
  NotADirectory: [
    "Not a directory",
    20
  ],
  DirectoryNotEmpty: [
    "Directory not empty",
    39
  ],
  InvalidData: [
    "Invalid argument",
    22
  ],
  BrokenPipe: [
    "Broken pipe",
    32
  ]
};
function osError(e) {
  if (e instanceof Error) {
    const m = /\(os error (\d+)\)/.exec(e.message);
    const known = BY_CLASS[e.name];
    if (known) return {
      message: known[0],
      errno: m ? Number(m[1]) : known[1]
    };
    if (m) return {
      message: e.message.replace(/\s*\(os error \d+\).*$/, ""),
      errno: Number(m[1])
    };
    return {
      message: e.message,
      errno: 5
    };
  }
  return {
    message: String(e),
    errno: 5
  };
}

// src/host/io.ts
var CHUNK = 64 * 1024;
var enc = new TextEncoder();
function toBytes(v) {
  return typeof v === "string" ? enc.encode(v) : v;
}
function openOptions(mode) {
  switch (mode) {
    case "r":
      return {
        read: true
      };
    case "w":
      return {
        write: true,
        create: true,
        truncate: true
      };
    case "a":
      return {
        append: true,
        create: true
      };
    case "r+":
      return {
        read: true,
        write: true
      };
    case "w+":
      return {
        read: true,
        write: true,
        create: true,
        truncate: true
      };
    default:
      return {
        read: true,
        append: true,
        create: true
      };
  }
}
function installIo(engine, run2) {
  const handles = /* @__PURE__ */ new Map([
    [
      0,
      {
        kind: "stdin"
      }
    ]
  ]);
  let next = 3;
  const failure = (what, e) => {
    const { message, errno } = osError(e);
    return new LuaMulti([
      void 0,
      `${what}: ${message}`,
      errno
    ]);
  };
  const get = (h) => {
    const handle = handles.get(h);
    if (!handle) throw new Error(`file handle ${h} is closed`);
    return handle;
  };
  run2.onCleanup(() => {
    for (const [, h] of handles) {
      if (h.kind === "file") {
        try {
          h.file.close();
        } catch {
        }
      }
    }
    handles.clear();
  });
  engine.define("@write", {
    sync: (a) => {
      const fd = a.integer(1, "fd");
      const data = toBytes(a.bytes(2, "data"));
      (fd === 2 ? run2.stderr : run2.stdout)(data);
    }
  });
  engine.define("@io_open", {
    sync: (a) => {
      const path = a.string(1, "path");
      try {
        const file = Deno.openSync(path, openOptions(a.string(2, "mode")));
        if (file.statSync().isDirectory && a.string(2, "mode") !== "r") {
          file.close();
          return new LuaMulti([
            void 0,
            `${path}: Is a directory`,
            21
          ]);
        }
        const id = next++;
        handles.set(id, {
          kind: "file",
          file
        });
        return id;
      } catch (e) {
        return failure(path, e);
      }
    }
  });
  engine.define("@io_read_chunk", {
    sync: (a) => {
      const h = get(a.integer(1, "handle"));
      if (h.kind !== "file") throw new Error("not a regular file");
      const buf = new Uint8Array(CHUNK);
      try {
        const n = h.file.readSync(buf);
        return n === null ? void 0 : buf.subarray(0, n);
      } catch (e) {
        const { message } = osError(e);
        throw new Error(`read failed: ${message}`);
      }
    }
  });
  engine.define("@io_write", {
    sync: (a) => {
      const id = a.integer(1, "handle");
      const data = toBytes(a.bytes(2, "data"));
      if (id === 1 || id === 2) {
        (id === 2 ? run2.stderr : run2.stdout)(data);
        return true;
      }
      const h = get(id);
      if (h.kind !== "file") throw new Error("not a regular file");
      try {
        let off = 0;
        while (off < data.length) off += h.file.writeSync(data.subarray(off));
        return true;
      } catch (e) {
        const { message, errno } = osError(e);
        return new LuaMulti([
          void 0,
          message,
          errno
        ]);
      }
    }
  });
  engine.define("@io_seek", {
    sync: (a) => {
      const h = get(a.integer(1, "handle"));
      if (h.kind !== "file") return new LuaMulti([
        void 0,
        "Illegal seek",
        29
      ]);
      const whence = a.string(2, "whence");
      const w = whence === "set" ? Deno.SeekMode.Start : whence === "end" ? Deno.SeekMode.End : Deno.SeekMode.Current;
      try {
        return h.file.seekSync(a.integer(3, "offset"), w);
      } catch (e) {
        const { message, errno } = osError(e);
        return new LuaMulti([
          void 0,
          message,
          errno
        ]);
      }
    }
  });
  engine.define("@io_close", {
    sync: (a) => {
      const id = a.integer(1, "handle");
      const h = handles.get(id);
      handles.delete(id);
      if (h?.kind === "file") h.file.close();
      return true;
    }
  });
  engine.define("@io_popen", {
    sync: (a) => {
      const cmd = a.string(1, "command");
      const mode = a.string(2, "mode");
      try {
        const proc = run2.procs.spawn({
          cmd: [
            "/bin/sh",
            "-c",
            cmd
          ],
          stdin: mode === "w" ? "piped" : "null",
          stdout: mode === "r" ? "piped" : "inherit",
          stderr: "inherit"
        });
        const id = next++;
        handles.set(id, {
          kind: "pipe",
          proc,
          reader: mode === "r" ? proc.child.stdout.getReader() : void 0,
          writer: mode === "w" ? proc.child.stdin.getWriter() : void 0
        });
        return id;
      } catch (e) {
        return failure(cmd, e);
      }
    }
  });
  engine.defineOp("io.read_chunk", {
    async: async (a) => {
      const id = a.integer(1, "handle");
      const h = get(id);
      if (h.kind === "stdin") {
        h.reader ??= Deno.stdin.readable.getReader();
        const r2 = await h.reader.read();
        return r2.done ? void 0 : r2.value;
      }
      if (h.kind !== "pipe" || !h.reader) throw new Error("pipe is not open for reading");
      const r = await h.reader.read();
      return r.done ? void 0 : r.value;
    }
  });
  engine.defineOp("io.write_pipe", {
    async: async (a) => {
      const h = get(a.integer(1, "handle"));
      if (h.kind !== "pipe" || !h.writer) throw new Error("pipe is not open for writing");
      try {
        await h.writer.write(toBytes(a.bytes(2, "data")));
        return true;
      } catch (e) {
        return new LuaMulti([
          void 0,
          osError(e).message,
          32
        ]);
      }
    }
  });
  engine.defineOp("io.pclose", {
    async: async (a) => {
      const id = a.integer(1, "handle");
      const h = get(id);
      handles.delete(id);
      if (h.kind !== "pipe") throw new Error("not a pipe");
      await h.writer?.close().catch(() => void 0);
      await h.reader?.cancel().catch(() => void 0);
      const status = await h.proc.status;
      return exitTriple(status);
    }
  });
}
function exitTriple(status) {
  if (status.signal) {
    return new LuaMulti([
      void 0,
      "signal",
      signalNumber(status.signal)
    ]);
  }
  return new LuaMulti([
    status.success ? true : void 0,
    "exit",
    status.code
  ]);
}
var SIGNALS = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15
};
function signalNumber(name) {
  return SIGNALS[name] ?? 0;
}

// src/host/mcp/callbacks.ts
var ServerCallbacks = class {
  #fns = /* @__PURE__ */ new Map();
  get(kind) {
    return this.#fns.get(kind);
  }
  /** Sets (or, with `undefined`, clears) a callback; the replaced function's slot is freed. */
  set(kind, fn) {
    const old = this.#fns.get(kind);
    if (old && old !== fn) old.release();
    if (fn) this.#fns.set(kind, fn);
    else this.#fns.delete(kind);
  }
  releaseAll() {
    for (const fn of this.#fns.values()) fn.release();
    this.#fns.clear();
  }
};
var CallbackRegistry = class {
  #byName = /* @__PURE__ */ new Map();
  /** The callbacks of `name`, created empty on first use. */
  of(name) {
    let cb = this.#byName.get(name);
    if (!cb) this.#byName.set(name, cb = new ServerCallbacks());
    return cb;
  }
  /** The callbacks of `name`, if any were ever set. */
  peek(name) {
    return this.#byName.get(name);
  }
  /** Frees every callback of every name (run end). */
  releaseAll() {
    for (const cb of this.#byName.values()) cb.releaseAll();
    this.#byName.clear();
  }
};

// src/host/mcp.ts
var LOG_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency"
];
function installMcp(engine, run2) {
  const callbacks = new CallbackRegistry();
  let loaded;
  let loading;
  let ending = false;
  const managerFor = async (fn, name) => {
    if (ending) throw runEnding(fn, name);
    loading ??= import("./manager-A4ARSSDA.js").then((m) => loaded = new m.McpManager(run2, {
      call: (f, args) => engine.callLua(f, args)
    }, callbacks));
    return await loading;
  };
  const manager = {
    get: (fn, name) => {
      if (!loaded) throw unknownServer(fn, name);
      return loaded.get(fn, name);
    },
    peek: (name) => loaded?.peek(name)
  };
  run2.onCleanup(async () => {
    ending = true;
    const m = loaded ?? await loading?.catch(() => void 0);
    await m?.closeAll();
    callbacks.releaseAll();
  });
  const rpc = (fn, body) => ({
    async: async (a, cx) => {
      try {
        return {
          ok: true,
          ...await body(a, cx.signal)
        };
      } catch (e) {
        if (e instanceof LuaArgError || cx.signal.aborted) throw e;
        const error = e instanceof McpError ? e.message : `${fn}: ${await errorText(e)}`;
        run2.log.debug(error);
        return {
          ok: false,
          error
        };
      }
    }
  });
  const connectFn = (open, optsAt) => ({
    async: async (a, cx) => {
      const opts = a.optTable(optsAt, "opts");
      const common = {
        ...commonOptions(a, optsAt, opts),
        signal: cx.signal
      };
      const required = optField(a, optsAt, "opts", opts, "required", "boolean") ?? true;
      try {
        await open(a, common, opts);
        return true;
      } catch (e) {
        if (e instanceof LuaArgError || required || cx.signal.aborted) throw e;
        const msg = await errorText(e);
        run2.log.warn(msg);
        return new LuaMulti([
          false,
          msg
        ]);
      }
    }
  });
  engine.define("mcp.connect", connectFn(async (a, common, opts) => {
    const name = a.string(1, "name");
    const command = a.string(2, "command");
    const args = stringList(a, 3, "args");
    const cwd = optField(a, 4, "opts", opts, "cwd", "string");
    const env2 = stringMap(a, 4, opts, "env");
    await (await managerFor("mcp.connect", name)).connectStdio("mcp.connect", name, command, args, {
      ...common,
      cwd,
      env: env2
    });
  }, 4));
  engine.define("mcp.connect_http", connectFn(async (a, common, opts) => {
    const name = a.string(1, "name");
    const url = a.string(2, "url");
    const transport = optField(a, 3, "opts", opts, "transport", "string") ?? "http";
    if (transport !== "http" && transport !== "sse") {
      throw new LuaArgError(`mcp.connect_http: argument 3 (opts) field 'transport' must be "http" or "sse", got "${transport}"`);
    }
    const headers = stringMap(a, 3, opts, "headers");
    await (await managerFor("mcp.connect_http", name)).connectHttp("mcp.connect_http", name, url, {
      ...common,
      transport,
      headers
    });
  }, 3));
  engine.define("mcp.disconnect", {
    async: async (a) => {
      const name = a.string(1, "name");
      await loaded?.disconnect(name);
    }
  });
  engine.define("mcp.call", rpc("mcp.call", async (a, signal) => {
    const c = manager.get("mcp.call", a.string(1, "name"));
    const tool = a.string(2, "tool_name");
    const raw = a.at(3);
    if (raw !== void 0 && (luaTypeName(raw) !== "table" || Array.isArray(raw))) {
      throw new McpError(`mcp.call: arguments must be a JSON object (got ${Array.isArray(raw) ? "array" : luaTypeName(raw)})`);
    }
    const r = await c.callTool("mcp.call", tool, raw ?? {}, signal);
    const out = {
      content: r.content ?? [],
      is_error: r.isError === true
    };
    if (r.structuredContent !== void 0) out.structured_content = r.structuredContent;
    return out;
  }));
  const list = (fn, key, method, call, field) => engine.define(fn, rpc(fn, async (a, signal) => {
    const c = manager.get(fn, a.string(1, "name"));
    const cap = method.split("/")[0];
    if (c.capabilities[cap] === void 0) return {
      [key]: []
    };
    const r = await c.request(fn, method, "", (o) => call(c, o), signal);
    return {
      [key]: r[field] ?? []
    };
  }));
  list("mcp.list_tools", "tools", "tools/list", (c, o) => c.client.listTools(void 0, o), "tools");
  list("mcp.list_resources", "resources", "resources/list", (c, o) => c.client.listResources(void 0, o), "resources");
  list("mcp.list_resource_templates", "resource_templates", "resources/templates/list", (c, o) => c.client.listResourceTemplates(void 0, o), "resourceTemplates");
  list("mcp.list_prompts", "prompts", "prompts/list", (c, o) => c.client.listPrompts(void 0, o), "prompts");
  engine.define("mcp.read_resource", rpc("mcp.read_resource", async (a, signal) => {
    const c = manager.get("mcp.read_resource", a.string(1, "name"));
    const uri = a.string(2, "uri");
    const r = await c.request("mcp.read_resource", "resources/read", ` '${uri}'`, (o, meta) => c.client.readResource({
      uri,
      ...Object.keys(meta).length ? {
        _meta: meta
      } : {}
    }, o), signal);
    return {
      contents: r.contents ?? []
    };
  }));
  engine.define("mcp.get_prompt", rpc("mcp.get_prompt", async (a, signal) => {
    const c = manager.get("mcp.get_prompt", a.string(1, "name"));
    const prompt = a.string(2, "prompt_name");
    const raw = a.at(3);
    if (raw !== void 0 && (luaTypeName(raw) !== "table" || Array.isArray(raw))) {
      throw new McpError(`mcp.get_prompt: arguments must be a JSON object (got ${Array.isArray(raw) ? "array" : luaTypeName(raw)})`);
    }
    const args = Object.fromEntries(Object.entries(raw ?? {}).map(([k, v]) => [
      k,
      typeof v === "string" ? v : JSON.stringify(v)
    ]));
    const r = await c.request("mcp.get_prompt", "prompts/get", ` '${prompt}'`, (o, meta) => c.client.getPrompt({
      name: prompt,
      arguments: args,
      ...Object.keys(meta).length ? {
        _meta: meta
      } : {}
    }, o), signal);
    const out = {
      messages: r.messages ?? []
    };
    if (r.description !== void 0) out.description = r.description;
    return out;
  }));
  engine.define("mcp.complete", rpc("mcp.complete", async (a, signal) => {
    const c = manager.get("mcp.complete", a.string(1, "name"));
    const ref = a.table(2, "ref");
    const argName = a.string(3, "arg_name");
    const argValue = a.string(4, "arg_value");
    const context = a.optTable(5, "context");
    let reference;
    if (ref.type === "ref/prompt" && typeof ref.name === "string") {
      reference = {
        type: "ref/prompt",
        name: ref.name
      };
    } else if (ref.type === "ref/resource" && typeof ref.uri === "string") {
      reference = {
        type: "ref/resource",
        uri: ref.uri
      };
    } else if (ref.type === void 0) throw new McpError("mcp.complete: ref object has no 'type' field");
    else {
      throw new McpError(`mcp.complete: invalid ref kind '${String(ref.type)}' (want {type="ref/prompt", name=...} or {type="ref/resource", uri=...})`);
    }
    const r = await c.request("mcp.complete", "completion/complete", "", (o) => c.client.complete({
      ref: reference,
      argument: {
        name: argName,
        value: argValue
      },
      ...context ? {
        context: {
          arguments: context
        }
      } : {}
    }, o), signal);
    const out = {
      values: r.completion.values
    };
    if (r.completion.total !== void 0) out.total = r.completion.total;
    if (r.completion.hasMore !== void 0) out.has_more = r.completion.hasMore;
    return out;
  }));
  engine.define("mcp.ping", rpc("mcp.ping", async (a, signal) => {
    const c = manager.get("mcp.ping", a.string(1, "name"));
    c.requireLegacy("mcp.ping", "ping");
    const t0 = performance.now();
    await c.request("mcp.ping", "ping", "", (o) => c.client.ping(o), signal);
    return {
      latency_ms: Math.round(performance.now() - t0)
    };
  }));
  engine.define("mcp.set_log_level", rpc("mcp.set_log_level", async (a, signal) => {
    const c = manager.get("mcp.set_log_level", a.string(1, "name"));
    const level = a.string(2, "level");
    if (!LOG_LEVELS.includes(level)) a.fail(2, "level", `one of ${LOG_LEVELS.join(", ")}`, `'${level}'`);
    c.requireLegacy("mcp.set_log_level", "logging/setLevel (the level travels with each request: opts.log_level)");
    await c.request("mcp.set_log_level", "logging/setLevel", "", (o) => c.client.setLoggingLevel(level, o), signal);
    return {};
  }));
  engine.define("mcp.subscribe_resource", rpc("mcp.subscribe_resource", async (a) => {
    const c = manager.get("mcp.subscribe_resource", a.string(1, "server"));
    await c.subscribe("mcp.subscribe_resource", a.string(2, "uri"));
    return {};
  }));
  engine.define("mcp.unsubscribe_resource", rpc("mcp.unsubscribe_resource", async (a) => {
    const c = manager.get("mcp.unsubscribe_resource", a.string(1, "server"));
    await c.unsubscribe("mcp.unsubscribe_resource", a.string(2, "uri"));
    return {};
  }));
  engine.define("mcp.server_info", {
    sync: (a) => {
      const name = a.string(1, "name");
      const c = manager.peek(name);
      if (!c || c.closed) return {
        ok: false,
        error: `mcp.server_info: no server named '${name}'`
      };
      return {
        ok: true,
        server_info: c.serverInfo()
      };
    }
  });
  engine.define("mcp.cancel", {
    sync: (a) => {
      const name = a.string(1, "name");
      const v = a.at(2);
      if (typeof v !== "string" && typeof v !== "number") a.fail(2, "request_id", "a string or an integer");
      const c = manager.peek(name);
      if (!c) run2.log.warn(`mcp.cancel: no server named '${name}'`);
      else c.cancel(v);
    }
  });
  engine.define("mcp.notify_roots_list_changed", {
    sync: (a) => {
      const name = a.string(1, "name");
      const c = manager.peek(name);
      if (!c) run2.log.warn(`mcp.notify_roots_list_changed: no server named '${name}'`);
      else c.notifyRootsChanged();
    }
  });
  engine.define("mcp.tools_epoch", {
    sync: (a) => manager.peek(a.string(1, "name"))?.toolsEpoch ?? 0
  });
  const setter = (fn, kind) => engine.define(fn, {
    functions: "ref",
    sync: (a) => {
      const name = a.string(1, "server_name");
      const f = a.at(2) === void 0 ? void 0 : a.func(2, "handler");
      callbacks.of(name).set(kind, f);
    }
  });
  setter("mcp.on_progress", "progress");
  setter("mcp.on_log", "log");
  setter("mcp.on_resource_update", "resource_update");
  setter("mcp.on_resources_list_changed", "resources_list_changed");
  setter("mcp.on_tools_list_changed", "tools_list_changed");
  setter("mcp.on_prompts_list_changed", "prompts_list_changed");
  setter("mcp.set_sampling_handler", "sampling");
  setter("mcp.set_elicitation_handler", "elicitation");
  setter("mcp.set_roots_handler", "roots");
}
async function errorText(e) {
  return (await import("./sdk_errors-IMNZ657U.js")).errorText(e);
}
function commonOptions(a, i, opts) {
  const timeout = optField(a, i, "opts", opts, "timeout", "number");
  if (timeout !== void 0 && !(timeout > 0)) {
    throw new LuaArgError(`${a.fn}: argument ${i} (opts) field 'timeout' must be a positive number of seconds, got ${timeout}`);
  }
  const era = optField(a, i, "opts", opts, "era", "string");
  if (era !== void 0 && era !== "auto" && era !== "legacy" && !/^\d{4}-\d{2}-\d{2}$/.test(era)) {
    throw new LuaArgError(`${a.fn}: argument ${i} (opts) field 'era' must be "auto", "legacy" or a protocol version, got "${era}"`);
  }
  const logLevel = optField(a, i, "opts", opts, "log_level", "string");
  if (logLevel !== void 0 && !LOG_LEVELS.includes(logLevel)) {
    throw new LuaArgError(`${a.fn}: argument ${i} (opts) field 'log_level' must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  }
  return {
    timeoutMs: timeout === void 0 ? void 0 : timeout * 1e3,
    era,
    logLevel,
    traceContext: optField(a, i, "opts", opts, "trace_context", "boolean")
  };
}
function stringList(a, i, name) {
  const v = a.at(i);
  if (v === void 0) return [];
  const t = a.table(i, name);
  const arr = Array.isArray(t) ? t : Object.keys(t).length === 0 ? [] : void 0;
  if (!arr) a.fail(i, name, "an array of strings", "a table with non-array keys");
  return arr.map((x, k) => {
    if (typeof x === "string") return x;
    if (typeof x === "number") return String(x);
    throw new LuaArgError(`${a.fn}: argument ${i} (${name}) element ${k + 1} must be a string, got ${luaTypeName(x)}`);
  });
}
function stringMap(a, i, opts, key) {
  const t = optField(a, i, "opts", opts, key, "table");
  if (!t) return {};
  const out = {};
  for (const [k, v] of Object.entries(t)) {
    if (typeof v !== "string") {
      throw new LuaArgError(`${a.fn}: argument ${i} (opts) field '${key}' value for '${k}' must be a string, got ${luaTypeName(v)}`);
    }
    out[k] = v;
  }
  return out;
}

// src/host/os.ts
function installOs(engine, run2) {
  const failure = (what, e) => {
    const { message, errno } = osError(e);
    return new LuaMulti([
      void 0,
      `${what}: ${message}`,
      errno
    ]);
  };
  engine.define("@getenv", {
    sync: (a) => Deno.env.get(a.string(1, "name"))
  });
  engine.define("@os_remove", {
    sync: (a) => {
      const path = a.string(1, "path");
      try {
        Deno.removeSync(path);
        return true;
      } catch (e) {
        return failure(path, e);
      }
    }
  });
  engine.define("@os_rename", {
    sync: (a) => {
      const from = a.string(1, "oldname");
      try {
        Deno.renameSync(from, a.string(2, "newname"));
        return true;
      } catch (e) {
        return failure(from, e);
      }
    }
  });
  engine.define("@os_tmpname", {
    sync: () => Deno.makeTempFileSync({
      prefix: "lua_"
    })
  });
  engine.define("@read_source", {
    sync: (a) => {
      const path = a.string(1, "path");
      try {
        return Deno.readFileSync(path);
      } catch (e) {
        return new LuaMulti([
          void 0,
          `cannot open ${path}: ${osError(e).message}`
        ]);
      }
    }
  });
  engine.defineOp("os.execute", {
    async: async (a) => {
      const proc = run2.procs.spawn({
        cmd: [
          "/bin/sh",
          "-c",
          a.string(1, "command")
        ],
        stdin: "null",
        stdout: "inherit",
        stderr: "inherit"
      });
      return exitTriple(await proc.status);
    }
  });
}

// src/host/tool.lua
var tool_default = '--- tool.*: the registry of Lua tools a model can call (`agent.run`, `knl` devices, MCP-facing code).\n--\n-- Owns registration order (`tool.list()` and `tool.schema()` answer in the order names were first\n-- registered; re-registering a name replaces its entry in place), the Anthropic tools format of\n-- `tool.schema()` (`{ name, description, input_schema, group? }`), and dispatch (`tool.call`), which\n-- runs the handler in the calling task so it may make host calls, and lets its error propagate.\n-- `tool.revision()` changes whenever a registration changes the registry, so a loop that offers\n-- the registry every turn (agent.run) rebuilds its tools list only when it changed.\nlocal R = ...\nlocal type, error, sformat, concat = type, error, string.format, table.concat\n\ntool = tool or {}\nlocal entries, order = {}, {}\nlocal revision = 0\n\nlocal function arg_error(fn, i, name, expected, v)\n  error(sformat("%s: argument %d (%s) must be %s, got %s", fn, i, name, expected, type(v)), 3)\nend\n\n--- Registers `handler(input)` under `name`. `schema = { description, input_schema? }`;\n-- `meta = { group = "..." }` puts the tool in a group for `agent.run({ tool_groups = ... })`.\nfunction tool.register(name, schema, handler, meta)\n  if type(name) ~= "string" or name == "" then arg_error("tool.register", 1, "name", "a non-empty string", name) end\n  if type(schema) ~= "table" then arg_error("tool.register", 2, "schema", "a table", schema) end\n  if type(schema.description) ~= "string" then\n    error(sformat("tool.register: argument 2 (schema) field \'description\' must be a string, got %s",\n      type(schema.description)), 2)\n  end\n  if schema.input_schema ~= nil and type(schema.input_schema) ~= "table" then\n    error(sformat("tool.register: argument 2 (schema) field \'input_schema\' must be a table, got %s",\n      type(schema.input_schema)), 2)\n  end\n  if type(handler) ~= "function" then arg_error("tool.register", 3, "handler", "a function", handler) end\n  if meta ~= nil and type(meta) ~= "table" then arg_error("tool.register", 4, "meta", "a table", meta) end\n  local group = meta and meta.group\n  if group ~= nil and (type(group) ~= "string" or group == "") then\n    error(sformat("tool.register: argument 4 (meta) field \'group\' must be a non-empty string, got %s", type(group)), 2)\n  end\n  if not entries[name] then order[#order + 1] = name end\n  revision = revision + 1\n  entries[name] = {\n    name = name,\n    description = schema.description,\n    input_schema = schema.input_schema or { type = "object", properties = std.json.object() },\n    handler = handler,\n    group = group,\n  }\nend\n\n--- Calls the tool `name` with `input`; returns what the handler returns, raises what it raises.\nfunction tool.call(name, input)\n  if type(name) ~= "string" then arg_error("tool.call", 1, "name", "a string", name) end\n  local e = entries[name]\n  if not e then\n    error(sformat("tool.call: unknown tool \'%s\'; known tools: %s", name,\n      #order > 0 and concat(order, ", ") or "(none)"), 2)\n  end\n  return e.handler(input)\nend\n\n--- Names of the registered tools, in registration order.\nfunction tool.list()\n  local out = std.json.array()\n  for i = 1, #order do out[i] = order[i] end\n  return out\nend\n\n--- The registered tools in the Anthropic tools format, in registration order.\nfunction tool.schema()\n  local out = std.json.array()\n  for i = 1, #order do\n    local e = entries[order[i]]\n    out[i] = { name = e.name, description = e.description, input_schema = e.input_schema, group = e.group }\n  end\n  return out\nend\n\n--- A number that changes whenever a registration changes the registry.\nfunction tool.revision() return revision end\n\n--- True when a tool named `name` is registered.\nfunction tool.exists(name) return entries[name] ~= nil end\n';

// src/host/tool.ts
function installTool(engine) {
  engine.exec(tool_default, "=ab:tool");
}

// src/host/knl.lua
var knl_default = '--- The knl syscall table: hands the host\'s `@knl_*` primitives to the sealed `knl` module as\n-- `require("knl.host")`. Nothing else sees them; the kernel\'s public surface is `knl` itself.\nlocal _, H = ...\npackage.loaded["knl.host"] = {\n  open = H.knl_open,\n  session_open = H.knl_session_open,\n  session_close = H.knl_session_close,\n  append = H.knl_append,\n  append_many = H.knl_append_many,\n  events = H.knl_events,\n  tail = H.knl_tail,\n  has = H.knl_has,\n  query = H.knl_query,\n  schema = H.knl_schema,\n  clock = H.knl_clock,\n}\n';

// src/host/knl.ts
var CORRELATION_IDS = [
  [
    "AGENT_BLOCK_TRACE_ID",
    "trace_id"
  ],
  [
    "AGENT_BLOCK_RUN_ID",
    "run_id"
  ],
  [
    "AGENT_BLOCK_AGENT_ID",
    "agent_id"
  ],
  [
    "AGENT_BLOCK_AGENT_NAME",
    "agent_name"
  ]
];
function seedMeta(labels) {
  const meta = {
    ...labels
  };
  for (const [env2, key] of CORRELATION_IDS) {
    const v = Deno.env.get(env2);
    if (v !== void 0 && v !== "") meta[key] = v;
  }
  return meta;
}
function newSessionId() {
  const rnd = crypto.getRandomValues(new Uint8Array(6));
  return `s_${Date.now().toString(36)}_${[
    ...rnd
  ].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
function jsonObject(fn, i, name, v) {
  if (v === void 0) return "{}";
  if (v === null || typeof v !== "object" || Array.isArray(v) || v instanceof Uint8Array) {
    throw new Error(`${fn}: argument ${i} (${name}) must be a table with string keys`);
  }
  try {
    return stringifyJson(v);
  } catch (e) {
    throw new Error(`${fn}: argument ${i} (${name}) cannot be stored: ${e.message}`);
  }
}
function installKnl(engine, run2) {
  const rawArgs = (L, fn, tagged) => {
    const top = engine.api.gettop(L);
    const values = [];
    for (let i = 1; i <= top; i++) {
      values.push(engine.toJs(L, i, tagged.includes(i) ? {
        floats: "tagged"
      } : {}));
    }
    return new Args(fn, values);
  };
  const handles = [];
  let memory;
  const open = /* @__PURE__ */ new Map();
  const store = (a, i = 1) => {
    const h = a.integer(i, "store");
    const s = handles[h - 1];
    if (!s) a.fail(i, "store", "an open store handle", String(h));
    if (s.closed) throw new Error(`${a.fn}: the store ${s.path} is closed`);
    return s;
  };
  const openFor = (spec) => {
    if (spec === void 0 || spec === "default") {
      const path = defaultStorePath(run2.projectRoot, (k) => Deno.env.get(k));
      return path === MEMORY ? memory ??= memStore() : openStore(path);
    }
    if (spec === "mem") return memory ??= memStore();
    if (spec !== null && typeof spec === "object" && typeof spec.sqlite === "string") {
      const path = storePathFrom(run2.projectRoot, spec.sqlite);
      return path === MEMORY ? memory ??= memStore() : openStore(path);
    }
    throw new Error(`knl.open: 'store' must be nil, "mem" or { sqlite = <path> }, got ${describe(spec)}`);
  };
  const memStore = () => {
    const s = openStore(MEMORY);
    run2.onCleanup(() => s.close());
    return s;
  };
  engine.define("@knl_open", {
    pure: true,
    sync: (a) => {
      const s = openFor(a.at(1));
      let h = handles.indexOf(s) + 1;
      if (h === 0) h = handles.push(s);
      return new LuaMulti([
        h,
        s.path
      ]);
    }
  });
  engine.define("@knl_session_open", {
    pure: true,
    raw: (L) => {
      const a = rawArgs(L, "knl.session", [
        2
      ]);
      const defer = a.at(3) === true;
      const s = store(a);
      const nodes = a.table(2, "nodes");
      const base = seedMeta(run2.labels);
      const ids = [];
      const events = nodes.map((n, k) => {
        const id = newSessionId();
        ids.push(id);
        const data = {
          owner: n.owner ?? null
        };
        if (n.budget !== void 0) data.budget = n.budget;
        if (n.scope !== void 0) data.scope = n.scope;
        const parent = typeof n.parent_index === "number" ? ids[n.parent_index - 1] : n.parent;
        if (parent !== void 0) data.parent = parent;
        if (n.data !== void 0) Object.assign(data, n.data);
        const meta = {
          ...base,
          ...n.labels ?? {}
        };
        return {
          stream: id,
          kind: "session_open",
          data: jsonObject("knl.session", 1, `node ${k + 1}`, data),
          meta: stringifyJson(meta)
        };
      });
      s.appendMany(events, {
        defer
      });
      if (defer) engine.effectPending();
      for (const id of ids) open.set(`${s.path}\0${id}`, {
        store: s,
        id
      });
      return engine.pushResult(L, ids);
    }
  });
  engine.define("@knl_session_close", {
    pure: true,
    raw: (L) => {
      const a = rawArgs(L, "knl.session", [
        3
      ]);
      const s = store(a);
      const ids = a.table(2, "ids");
      const data = jsonObject("knl.session", 3, "data", a.at(3));
      s.appendMany(ids.map((id) => ({
        stream: id,
        kind: "session_close",
        data,
        meta: "{}"
      })));
      for (const id of ids) open.delete(`${s.path}\0${id}`);
      return 0;
    }
  });
  const metaJson = (fn, meta, beat) => {
    if (typeof beat !== "number") return jsonObject(fn, 1, "event.meta", meta);
    if (meta === void 0) return `{"beat":${beat}}`;
    const m = {
      ...meta,
      beat
    };
    return jsonObject(fn, 1, "event.meta", m);
  };
  const api = engine.api;
  const objectAt = (L, idx, fn, name) => {
    if (api.type(L, idx) === LUA_TTABLE) {
      const fast = engine.converter.toJson(L, idx);
      if (fast !== void 0 && fast.charCodeAt(0) === 123) return fast;
    }
    return jsonObject(fn, 1, name, engine.toJs(L, idx, {
      floats: "tagged"
    }));
  };
  const metaAt = (L, idx, fn, beat) => {
    if (typeof beat === "number" && api.type(L, idx) !== LUA_TNIL) {
      return metaJson(fn, engine.toJs(L, idx, {
        floats: "tagged"
      }), beat);
    }
    const meta = objectAt(L, idx, fn, "event.meta");
    if (typeof beat !== "number") return meta;
    return `{"beat":${beat}}`;
  };
  const scalarArgs = (L, fn, n) => {
    const values = [];
    for (let i = 1; i <= n; i++) {
      values.push(api.type(L, i) === LUA_TTABLE ? void 0 : engine.toJs(L, i));
    }
    return new Args(fn, values);
  };
  engine.define("@knl_append", {
    pure: true,
    raw: (L) => {
      const a = scalarArgs(L, "s:append", 3);
      const s = store(a);
      const stream = a.string(2, "stream");
      const kind = a.string(3, "kind");
      const beat = engine.toJs(L, 6);
      const defer = api.toboolean(L, 7);
      const ev = {
        stream,
        kind,
        data: objectAt(L, 4, "s:append", "event.data"),
        meta: metaAt(L, 5, "s:append", beat)
      };
      if (defer) {
        s.appendMany([
          ev
        ], {
          defer
        });
        engine.effectPending();
        return 0;
      }
      const r = s.append(ev);
      return engine.pushResult(L, new LuaMulti([
        r.seq,
        r.position,
        r.epoch_ms
      ]));
    }
  });
  engine.define("@knl_append_many", {
    pure: true,
    raw: (L) => {
      const a = scalarArgs(L, "knl.beat", 2);
      const defer = api.toboolean(L, 5);
      const s = store(a);
      const stream = a.string(2, "stream");
      if (api.type(L, 3) !== LUA_TTABLE) {
        a.fail(3, "events", "a table", LUA_TYPE_NAMES[api.type(L, 3)] ?? "no value");
      }
      const beat = engine.toJs(L, 4);
      const n = api.rawlen(L, 3);
      const events = [];
      for (let i = 1; i <= n; i++) {
        api.rawgeti(L, 3, i);
        const e = api.gettop(L);
        api.pushstring(L, "kind");
        api.rawget(L, e);
        const kind = String(engine.toJs(L, -1));
        api.pushstring(L, "data");
        api.rawget(L, e);
        const data = objectAt(L, api.gettop(L), "knl.beat", "event.data");
        api.pushstring(L, "meta");
        api.rawget(L, e);
        const meta = metaAt(L, api.gettop(L), "knl.beat", beat);
        api.settop(L, e - 1);
        events.push({
          stream,
          kind,
          data,
          meta
        });
      }
      const r = s.appendMany(events, {
        defer
      });
      if (defer) engine.effectPending();
      return engine.pushResult(L, r.length ? r[r.length - 1].seq : void 0);
    }
  });
  engine.define("@knl_events", {
    pure: true,
    sync: (a) => new NullsAsNil(store(a).read(a.string(2, "stream"), a.optInteger(3, "from") ?? 1, a.optInteger(4, "limit")))
  });
  engine.define("@knl_tail", {
    pure: true,
    sync: (a) => new NullsAsNil(store(a).tail(a.string(2, "stream"), a.integer(3, "n")))
  });
  engine.define("@knl_has", {
    pure: true,
    sync: (a) => store(a).hasStream(a.string(2, "stream"))
  });
  engine.define("@knl_query", {
    pure: true,
    sync: (a) => {
      const s = store(a);
      const sql = a.string(2, "sql");
      const params = a.at(3);
      const opts = a.optTable(4, "opts") ?? {};
      if (params !== void 0 && (params === null || typeof params !== "object")) {
        a.fail(3, "params", "a table");
      }
      const rows = readOnlyQuery(s, sql, params ?? [], {
        raw: opts.raw === true,
        limit: typeof opts.limit === "number" ? opts.limit : void 0
      });
      return new NullsAsNil(rows);
    }
  });
  engine.define("@knl_schema", {
    pure: true,
    sync: () => PUBLISHED_COLUMNS.map((c) => ({
      name: c.name,
      type: c.type,
      doc: c.doc
    }))
  });
  const flushAll = (onError) => {
    for (const s of handles) {
      if (s.pending === 0 || s.closed) continue;
      try {
        s.flush();
      } catch (e) {
        onError(s, e);
      }
    }
  };
  engine.onBeforeEffect(() => flushAll(() => {
  }));
  const t0 = performance.now();
  engine.define("@knl_clock", {
    pure: true,
    raw: (L) => {
      engine.api.pushnumber(L, performance.now() - t0);
      return 1;
    }
  });
  run2.onCleanup((ending) => {
    const exited = ending === "exit";
    flushAll((s, e) => run2.log.warn(`knl: committing the deferred events of ${s.path} failed: ${e.message}`));
    for (const { store: s, id } of open.values()) {
      if (s.closed) continue;
      try {
        s.append({
          stream: id,
          kind: "session_close",
          data: stringifyJson(exited ? {
            status: "exit",
            error: "the run ended with os.exit or job.defer"
          } : {
            status: "interrupted",
            error: "the run ended before the session's bracket closed"
          }),
          meta: "{}"
        });
      } catch (e) {
        run2.log.warn(`knl: could not close session ${id}: ${e.message}`);
      }
    }
    open.clear();
  });
  engine.exec(knl_default, "=ab:knl");
}
function describe(v) {
  if (typeof v === "string") return `"${v}"`;
  if (v === null) return "json null";
  return typeof v === "object" ? "a table" : typeof v;
}

// src/host/llm/install.ts
import { isAbsolute, join } from "node:path";

// src/host/llm/endpoint.ts
var ANTHROPIC_VERSION = "2026-10-21";
var DEFAULTS = {
  anthropic: {
    base: "https://api.anthropic.com",
    baseEnv: "ANTHROPIC_BASE_URL",
    keyEnv: "ANTHROPIC_API_KEY",
    path: "/v1/messages"
  },
  openai: {
    base: "https://api.openai.com/v1",
    baseEnv: "OPENAI_BASE_URL",
    keyEnv: "OPENAI_API_KEY",
    path: "/chat/completions"
  }
};
function env(name) {
  const v = Deno.env.get(name);
  return v === void 0 || v === "" ? void 0 : v;
}
function baseUrl(provider, opts) {
  const d = DEFAULTS[provider];
  return (opts.base_url || env(d.baseEnv) || d.base).replace(/\/+$/, "");
}
function endpointUrl(provider, opts) {
  return baseUrl(provider, opts) + DEFAULTS[provider].path;
}
function authHeaders(provider, opts, betas = []) {
  const d = DEFAULTS[provider];
  const keyEnv = opts.api_key_env || d.keyEnv;
  const key = opts.api_key || env(keyEnv);
  const base = baseUrl(provider, opts);
  const h = {
    "user-agent": `agent-block/${VERSION}`
  };
  if (key) h.authorization = `Bearer ${key}`;
  else if (base === d.base) {
    throw new Error(`llm: no API key for provider '${provider}': set ${keyEnv}${opts.api_key_env ? "" : " or pass api_key / api_key_env"}`);
  }
  if (provider === "anthropic") {
    h["anthropic-version"] = ANTHROPIC_VERSION;
    if (betas.length) h["anthropic-beta"] = betas.join(",");
  }
  return h;
}

// src/host/llm/llm.lua
var llm_default = '--- llm.*: one model call from a script, and the transport `llm_proto` reaches through.\n--\n-- Owns `llm.chat(messages, opts)` \u2014 a Port opened for the call (`opts.provider`: anthropic\n-- (default) | openai | replay; every Port option and request field is accepted in `opts`),\n-- returning the normalised response \u2014 and the internal module `llm_proto.transport` (host\n-- functions: `send`, `base_url`, `read_replay`, `env`, `encode`, `release`), preloaded so that a vendored\n-- `llm_proto` keeps reaching the host\'s HTTP layer.\nlocal R, H = ...\nlocal type, error, sformat = type, error, string.format\n\nlocal transport = {\n  send = H.llm_send,\n  base_url = H.llm_base_url,\n  read_replay = H.llm_read_replay,\n  env = H.llm_env,\n  encode = H.llm_encode,\n  release = H.llm_release,\n}\npackage.preload["llm_proto.transport"] = function() return transport end\n\nllm = llm or {}\n\n--- One model call. `messages` is a string (one user message) or a messages array.\nfunction llm.chat(messages, opts)\n  if type(messages) == "string" then\n    messages = { { role = "user", content = messages } }\n  elseif type(messages) ~= "table" then\n    error(sformat("llm.chat: argument 1 (messages) must be a string or a table, got %s", type(messages)), 2)\n  end\n  if opts ~= nil and type(opts) ~= "table" then\n    error(sformat("llm.chat: argument 2 (opts) must be a table, got %s", type(opts)), 2)\n  end\n  opts = opts or {}\n  local provider = opts.provider or "anthropic"\n  local ports = require("llm_proto.port")\n  local P = ports[provider]\n  if not P then\n    error(sformat("llm.chat: opts.provider must be anthropic, openai or replay, got %q", tostring(provider)), 2)\n  end\n  local o = {}\n  for k, v in pairs(opts) do if k ~= "provider" then o[k] = v end end\n  return P:open(o):chat({ messages = messages })\nend\n';

// src/host/llm/install.ts
function wireProvider(a, v) {
  if (v === "anthropic" || v === "openai") return v;
  throw new Error(`${a.fn}: field 'provider' must be "anthropic" or "openai", got ${JSON.stringify(v)}`);
}
function endpointOpts(a, t) {
  const out = {};
  for (const k of [
    "base_url",
    "api_key",
    "api_key_env"
  ]) {
    const v = t[k];
    if (v === void 0) continue;
    if (typeof v !== "string") throw new Error(`${a.fn}: field '${k}' must be a string, got ${typeof v}`);
    out[k] = v;
  }
  return out;
}
function num(a, t, k, dflt) {
  const v = t[k];
  if (v === void 0) return dflt;
  const n = typeof v === "bigint" ? Number(v) : Number(v);
  if (typeof v === "string" || !Number.isFinite(n) || n < 0) {
    throw new Error(`${a.fn}: field '${k}' must be a non-negative number, got ${String(v)}`);
  }
  return n;
}
function installLlm(engine, run2) {
  const texts = /* @__PURE__ */ new Map();
  let nextText = 0;
  engine.define("@llm_encode", {
    pure: true,
    raw: (L) => {
      const text = engine.toJson(L, 1);
      const id = ++nextText;
      texts.set(id, text);
      engine.api.pushinteger(L, BigInt(id));
      return 1;
    }
  });
  engine.define("@llm_release", {
    pure: true,
    sync: (a) => {
      texts.delete(a.integer(1, "id"));
    }
  });
  const textOf = (a, v) => {
    const s = texts.get(Number(v));
    if (s === void 0) throw new Error(`${a.fn}: encoded text ${String(v)} is not live`);
    return s;
  };
  engine.define("@llm_base_url", {
    pure: true,
    sync: (a) => {
      const t = a.table(1, "opts");
      return baseUrl(wireProvider(a, t.provider), endpointOpts(a, t));
    }
  });
  let transportModule;
  const deadlines = new Deadlines();
  run2.onCleanup(() => deadlines.stop());
  engine.define("@llm_send", {
    functions: "ref",
    // A request is not an act the kernel's log must precede (asking again is harmless): with a
    // commit window, what a beat deferred commits while the request is in flight.
    deferCommit: commitWindowMs() > 0,
    async: async (a, cx) => {
      const t = a.table(1, "request");
      const onDelta = a.optFunc(2, "on_delta");
      try {
        const provider = wireProvider(a, t.provider);
        const ep = endpointOpts(a, t);
        const betas = Array.isArray(t.betas) ? t.betas.map(String) : [];
        const headers = authHeaders(provider, ep, betas);
        const { sendLlmRequest } = transportModule ?? (transportModule = await import("./transport-6CCWP7II.js"));
        const res = await sendLlmRequest({
          provider,
          url: endpointUrl(provider, ep),
          headers,
          body: t.body,
          rawMessages: Array.isArray(t.raw_messages) ? t.raw_messages.map((id) => textOf(a, id)) : void 0,
          rawTools: t.raw_tools !== void 0 ? textOf(a, t.raw_tools) : void 0,
          timeoutSecs: num(a, t, "timeout", 120),
          maxRetries: Math.floor(num(a, t, "max_retries", 2)),
          stream: t.stream === true,
          onDelta: onDelta ? async (d) => {
            try {
              await engine.callLua(onDelta, [
                d
              ]);
            } catch (e) {
              const why = e instanceof LuaCallbackError ? e.message : String(e);
              throw new LlmError(`llm: on_delta raised: ${why}`);
            }
          } : void 0,
          signal: cx.signal,
          deadlines,
          obs: (level, line) => {
            if (run2.log.enabled(level)) run2.log.log(level, line());
          }
        });
        return new LuaMulti([
          new NullsAsNil(res.body),
          {
            status: res.status,
            attempts: res.attempts,
            latency_ms: res.latencyMs
          }
        ]);
      } finally {
        onDelta?.release();
      }
    }
  });
  engine.define("@llm_read_replay", {
    sync: (a) => {
      const p = a.string(1, "path");
      const candidates = isAbsolute(p) ? [
        p
      ] : [
        join(run2.scriptDir, p),
        join(run2.projectRoot, p)
      ];
      for (const c of candidates) {
        try {
          return new LuaMulti([
            Deno.readTextFileSync(c),
            c
          ]);
        } catch (e) {
          if (!(e instanceof Deno.errors.NotFound)) {
            throw new Error(`replay: cannot read '${c}': ${e.message}`);
          }
        }
      }
      throw new Error(`replay: script '${p}' not found (looked in ${candidates.join(", ")})`);
    }
  });
  engine.define("@llm_env", {
    sync: (a) => {
      const v = Deno.env.get(a.string(1, "name"));
      return v === "" ? void 0 : v;
    }
  });
  engine.exec(llm_default, "=ab:llm");
}

// src/host/fs.ts
import { dirname, join as join2, relative } from "node:path";
var enc2 = new TextEncoder();
var strictUtf8 = new TextDecoder("utf-8", {
  fatal: true
});
function fsFailure(fn, path, e) {
  return new Error(`${fn}: ${path}: ${osError(e).message}`);
}
function toBytes2(v) {
  return typeof v === "string" ? enc2.encode(v) : v;
}
function installFs(engine, _run) {
  const def = (name, fn) => engine.define(`std.fs.${name}`, {
    sync: fn
  });
  def("read", (a) => {
    const path = a.string(1, "path");
    let bytes;
    try {
      bytes = Deno.readFileSync(path);
    } catch (e) {
      throw fsFailure("std.fs.read", path, e);
    }
    try {
      return strictUtf8.decode(bytes);
    } catch {
      throw new Error(`std.fs.read: ${path}: not valid UTF-8 text (use std.fs.read_binary)`);
    }
  });
  def("read_binary", (a) => {
    const path = a.string(1, "path");
    try {
      return Deno.readFileSync(path);
    } catch (e) {
      throw fsFailure("std.fs.read_binary", path, e);
    }
  });
  const writer = (fn) => (a) => {
    const path = a.string(1, "path");
    const content = a.bytes(2, fn.endsWith("binary") ? "bytes" : "content");
    try {
      Deno.writeFileSync(path, toBytes2(content));
      return true;
    } catch (e) {
      throw fsFailure(fn, path, e);
    }
  };
  def("write", writer("std.fs.write"));
  def("write_binary", writer("std.fs.write_binary"));
  const statOr = (path) => {
    try {
      return Deno.statSync(path);
    } catch {
      return void 0;
    }
  };
  def("exists", (a) => {
    const path = a.string(1, "path");
    try {
      Deno.lstatSync(path);
      return true;
    } catch {
      return false;
    }
  });
  def("is_file", (a) => statOr(a.string(1, "path"))?.isFile ?? false);
  def("is_dir", (a) => statOr(a.string(1, "path"))?.isDirectory ?? false);
  def("stat", (a) => {
    const path = a.string(1, "path");
    let info;
    let link;
    try {
      link = Deno.lstatSync(path);
      info = link.isSymlink ? Deno.statSync(path) : link;
    } catch (e) {
      throw fsFailure("std.fs.stat", path, e);
    }
    return {
      size: info.size,
      is_file: info.isFile,
      is_dir: info.isDirectory,
      is_symlink: link.isSymlink,
      mode: info.mode ?? void 0,
      mtime: info.mtime ? info.mtime.getTime() / 1e3 : void 0,
      atime: info.atime ? info.atime.getTime() / 1e3 : void 0,
      ctime: info.ctime ? info.ctime.getTime() / 1e3 : void 0
    };
  });
  def("mkdir", (a) => {
    const path = a.string(1, "path");
    try {
      Deno.mkdirSync(path, {
        recursive: true
      });
      return true;
    } catch (e) {
      throw fsFailure("std.fs.mkdir", path, e);
    }
  });
  def("remove", (a) => {
    const path = a.string(1, "path");
    const opts = a.optTable(2, "opts");
    const recursive = optField(a, 2, "opts", opts, "recursive", "boolean") ?? false;
    try {
      Deno.removeSync(path, {
        recursive
      });
      return true;
    } catch (e) {
      if (!recursive && e instanceof Error && /Directory not empty|os error 39/.test(e.message)) {
        throw new Error(`std.fs.remove: ${path}: Directory not empty (pass { recursive = true } to remove a tree)`);
      }
      throw fsFailure("std.fs.remove", path, e);
    }
  });
  def("copy", (a) => {
    const src = a.string(1, "src");
    const dst = a.string(2, "dst");
    try {
      Deno.copyFileSync(src, dst);
      return true;
    } catch (e) {
      const srcBad = statOr(src) === void 0 || statOr(src)?.isDirectory;
      throw fsFailure("std.fs.copy", srcBad ? src : dst, e);
    }
  });
  def("walk", (a) => {
    const dir = a.string(1, "dir");
    const out = [];
    try {
      if (!Deno.statSync(dir).isDirectory) throw new Deno.errors.NotADirectory("not a directory");
    } catch (e) {
      throw fsFailure("std.fs.walk", dir, e);
    }
    walkFiles(dir, out, 0, "std.fs.walk");
    return out.sort();
  });
  def("glob", (a) => glob(a.string(1, "pattern")));
}
var WALK_MAX_DEPTH = 256;
var WALK_MAX_ENTRIES = 1e5;
function walkFiles(dir, out, depth, fn) {
  if (depth > WALK_MAX_DEPTH) throw new Error(`${fn}: ${dir}: deeper than ${WALK_MAX_DEPTH} levels`);
  let entries;
  try {
    entries = [
      ...Deno.readDirSync(dir)
    ];
  } catch (e) {
    throw fsFailure(fn, dir, e);
  }
  for (const e of entries) {
    const p = join2(dir, e.name);
    if (e.isDirectory) walkFiles(p, out, depth + 1, fn);
    else if (e.isFile || e.isSymlink) out.push(p);
    if (out.length > WALK_MAX_ENTRIES) throw new Error(`${fn}: ${dir}: more than ${WALK_MAX_ENTRIES} files`);
  }
}
function segmentRegex(seg) {
  let re = "";
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i];
    if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const end = seg.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        let body = seg.slice(i + 1, end);
        if (body.startsWith("!")) body = "^" + body.slice(1);
        re += `[${body.replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}
var WILD = /[*?[]/;
function glob(pattern) {
  const abs = pattern.startsWith("/");
  const segs = pattern.split("/").filter((s, i) => s !== "" && !(s === "." && i === 0));
  let base = abs ? "/" : "";
  let k = 0;
  while (k < segs.length - 1 && !WILD.test(segs[k])) {
    base = base === "" ? segs[k] : join2(base, segs[k]);
    k++;
  }
  const rest = segs.slice(k);
  const out = /* @__PURE__ */ new Set();
  if (rest.length === 0) return [];
  const matchers = rest.map((s) => s === "**" ? "**" : WILD.test(s) ? segmentRegex(s) : s);
  const visit = (dir, i, depth) => {
    if (depth > WALK_MAX_DEPTH) return;
    const m = matchers[i];
    const last = i === matchers.length - 1;
    const fsDir = dir === "" ? "." : dir;
    if (m === "**") {
      if (last) {
        for (const f of listAll(fsDir)) out.add(dir === "" ? f : join2(dir, f));
        return;
      }
      visit(dir, i + 1, depth + 1);
      for (const e of readDir(fsDir)) {
        if (e.isDirectory && !e.name.startsWith(".")) {
          visit(dir === "" ? e.name : join2(dir, e.name), i, depth + 1);
        }
      }
      return;
    }
    if (typeof m === "string") {
      const p = dir === "" ? m : join2(dir, m);
      if (last) {
        if (lexists(p)) out.add(p);
      } else visit(p, i + 1, depth + 1);
      return;
    }
    for (const e of readDir(fsDir)) {
      if (e.name.startsWith(".") && !rest[i].startsWith(".")) continue;
      if (!m.test(e.name)) continue;
      const p = dir === "" ? e.name : join2(dir, e.name);
      if (last) out.add(p);
      else if (e.isDirectory) visit(p, i + 1, depth + 1);
    }
  };
  visit(base, 0, 0);
  return [
    ...out
  ].sort();
}
function readDir(dir) {
  try {
    return [
      ...Deno.readDirSync(dir)
    ];
  } catch {
    return [];
  }
}
function lexists(p) {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}
function listAll(dir) {
  const files = [];
  const rec = (d, depth) => {
    if (depth > WALK_MAX_DEPTH) return;
    for (const e of readDir(d)) {
      if (e.name.startsWith(".")) continue;
      const p = join2(d, e.name);
      files.push(relative(dir, p));
      if (e.isDirectory) rec(p, depth + 1);
    }
  };
  rec(dir, 0);
  return files;
}

// src/host/fs_tools.ts
import { basename, dirname as dirname2, isAbsolute as isAbsolute2, join as join3, relative as relative2, resolve, sep } from "node:path";

// src/host/fs_tools.lua
var fs_tools_default = '--- std.fs.tool_specs / std.fs.register_tools: the file tools a model is offered.\n--\n-- Owns the tool names, descriptions and input schemas, and which tools a set contains: `fs_read`\n-- and `fs_edit` always; `fs_write`, `fs_rollback` and `fs_search_replace` only when named in\n-- `opts.allowed`. `opts.roots` (extra directories besides the project root) and the confinement\n-- rules live in fs_tools.ts. `tool_specs(opts)` answers `{ name, description, input_schema,\n-- handler }` entries for a caller\'s own registry; `register_tools(opts)` registers them through\n-- `tool.register` (with `opts.group` as meta.group) and answers their names. A tool failure raises\n-- its message without a position: it is written for the model.\nlocal R, H = ...\nlocal user_level = R.user_level\nlocal type, error, sformat, ipairs = type, error, string.format, ipairs\n\nlocal DEFAULT = { "fs_read", "fs_edit" }\nlocal OPTIONAL = { fs_write = true, fs_rollback = true, fs_search_replace = true }\n\nlocal function props(t) return { type = "object", properties = t.p, required = t.r } end\nlocal path = { type = "string", description = "File path, relative to the project root" }\n\nlocal SPECS = {\n  fs_read = {\n    description = "Read a text file with line numbers. Optionally only lines start_line..end_line (inclusive).",\n    input_schema = props({ p = { path = path,\n      start_line = { type = "integer", description = "First line to show (1-based)" },\n      end_line = { type = "integer", description = "Last line to show (inclusive)" } }, r = { "path" } }),\n  },\n  fs_edit = {\n    description = "Replace lines start_line..end_line (inclusive, 1-based) of a file with content. expect must be "\n      .. "the exact current text of those lines (copy it from fs_read, without the line numbers); the edit is refused "\n      .. "otherwise. Empty content deletes the lines; end_line = start_line - 1 with expect = \\"\\" inserts before start_line.",\n    input_schema = props({ p = { path = path,\n      start_line = { type = "integer" }, end_line = { type = "integer" },\n      expect = { type = "string", description = "Current text of the lines being replaced" },\n      content = { type = "string", description = "New text for those lines" } },\n      r = { "path", "start_line", "end_line", "expect", "content" } }),\n  },\n  fs_write = {\n    description = "Create or overwrite a file with content (parent directories are created).",\n    input_schema = props({ p = { path = path, content = { type = "string" } }, r = { "path", "content" } }),\n  },\n  fs_rollback = {\n    description = "Undo the most recent remaining edit this run made to a file (fs_edit, fs_write or fs_search_replace).",\n    input_schema = props({ p = { path = path }, r = { "path" } }),\n  },\n  fs_search_replace = {\n    description = "Replace one snippet of a file: search must occur exactly once, verbatim (include enough "\n      .. "surrounding text to make it unique); it is replaced by replace.",\n    input_schema = props({ p = { path = path, search = { type = "string" }, replace = { type = "string" } },\n      r = { "path", "search", "replace" } }),\n  },\n}\n\nlocal function build(fname, opts)\n  if opts ~= nil and type(opts) ~= "table" then\n    error(sformat("%s: argument 1 (opts) must be a table, got %s", fname, type(opts)), user_level())\n  end\n  opts = opts or {}\n  local names = { DEFAULT[1], DEFAULT[2] }\n  if opts.allowed ~= nil then\n    if type(opts.allowed) ~= "table" then\n      error(sformat("%s: argument 1 (opts) field \'allowed\' must be a table, got %s", fname, type(opts.allowed)), user_level())\n    end\n    for i, name in ipairs(opts.allowed) do\n      if not OPTIONAL[name] and name ~= "fs_read" and name ~= "fs_edit" then\n        error(sformat("%s: argument 1 (opts) field \'allowed\' element %d must be one of fs_write, fs_rollback, "\n          .. "fs_search_replace, got %s", fname, i, tostring(name)), user_level())\n      end\n      if OPTIONAL[name] then\n        local dup = false\n        for _, n in ipairs(names) do if n == name then dup = true end end\n        if not dup then names[#names + 1] = name end\n      end\n    end\n  end\n  local ok, set = pcall(H.fs_tools_new, opts)\n  if not ok then error((tostring(set):gsub("^fs_tools_new", fname)), user_level()) end\n  local out = std.json.array()\n  for _, name in ipairs(names) do\n    local spec = SPECS[name]\n    out[#out + 1] = {\n      name = name,\n      description = spec.description,\n      input_schema = spec.input_schema,\n      handler = function(input)\n        local result, err = H.fs_tool(set, name, input)\n        if result == nil then error(err, 0) end\n        return result\n      end,\n    }\n  end\n  return out\nend\n\nfunction std.fs.tool_specs(opts) return build("std.fs.tool_specs", opts) end\n\nfunction std.fs.register_tools(opts)\n  local specs = build("std.fs.register_tools", opts)\n  local group = opts and opts.group\n  if group ~= nil and type(group) ~= "string" then\n    error(sformat("std.fs.register_tools: argument 1 (opts) field \'group\' must be a string, got %s", type(group)), user_level())\n  end\n  local names = std.json.array()\n  for i, s in ipairs(specs) do\n    tool.register(s.name, { description = s.description, input_schema = s.input_schema }, s.handler,\n      group and { group = group } or nil)\n    names[i] = s.name\n  end\n  return names\nend\n';

// src/host/fs_tools.ts
var READ_MAX_LINES = 2e3;
var strictUtf82 = new TextDecoder("utf-8", {
  fatal: true
});
var enc3 = new TextEncoder();
var ToolError = class extends Error {
};
function within(root, p) {
  return p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
}
function splitLines(text) {
  if (text === "") return {
    lines: [],
    finalNewline: false,
    crlf: false
  };
  const finalNewline = text.endsWith("\n");
  let lines = (finalNewline ? text.slice(0, -1) : text).split("\n");
  const ended = finalNewline ? lines : lines.slice(0, -1);
  const crlf = ended.length > 0 && ended.every((l) => l.endsWith("\r"));
  if (crlf) lines = lines.map((l, i) => i < ended.length ? l.slice(0, -1) : l);
  return {
    lines,
    finalNewline,
    crlf
  };
}
function numbered(lines, first) {
  return lines.map((l, i) => `${String(first + i).padStart(6)}	${l}`).join("\n");
}
function stripOneNewline(s) {
  return s.endsWith("\n") ? s.slice(0, -1) : s;
}
function installFsTools(engine, run2) {
  const sets = [];
  const history = /* @__PURE__ */ new Map();
  const show = (abs) => {
    const rel = relative2(run2.projectRoot, abs);
    return rel && !rel.startsWith("..") && !isAbsolute2(rel) ? rel : abs;
  };
  const confine = (set, tool, path) => {
    if (typeof path !== "string" || path === "") {
      throw new ToolError(`${tool}: input field 'path' must be a non-empty string, got ${luaTypeName(path)}`);
    }
    const abs = resolve(run2.projectRoot, path);
    const outside = () => new ToolError(`${tool}: path '${path}' is outside the allowed roots (${set.roots.join(", ")})`);
    if (!set.roots.some((r) => within(r, abs))) throw outside();
    let existing = abs;
    const rest = [];
    while (true) {
      let isLink = false;
      try {
        isLink = Deno.lstatSync(existing).isSymlink;
      } catch {
        rest.unshift(basename(existing));
        existing = dirname2(existing);
        continue;
      }
      try {
        existing = Deno.realPathSync(existing);
        break;
      } catch (e) {
        if (isLink) throw new ToolError(`${tool}: path '${path}' goes through a dangling symbolic link`);
        throw new ToolError(`${tool}: ${path}: ${osError(e).message}`);
      }
    }
    const real = rest.length ? join3(existing, ...rest) : existing;
    if (!set.roots.some((r) => within(r, real))) throw outside();
    return real;
  };
  const readText = (tool, abs) => {
    let bytes;
    try {
      if (Deno.statSync(abs).isDirectory) throw new ToolError(`${tool}: ${show(abs)} is a directory`);
      bytes = Deno.readFileSync(abs);
    } catch (e) {
      if (e instanceof ToolError) throw e;
      throw new ToolError(`${tool}: ${show(abs)}: ${osError(e).message}`);
    }
    try {
      return strictUtf82.decode(bytes);
    } catch {
      throw new ToolError(`${tool}: ${show(abs)} is not UTF-8 text`);
    }
  };
  const remember = (abs) => {
    let before = null;
    try {
      before = Deno.readFileSync(abs);
    } catch {
    }
    const h = history.get(abs) ?? [];
    h.push(before);
    history.set(abs, h);
  };
  const writeText = (tool, abs, text) => {
    try {
      Deno.mkdirSync(dirname2(abs), {
        recursive: true
      });
      remember(abs);
      Deno.writeFileSync(abs, enc3.encode(text));
    } catch (e) {
      history.get(abs)?.pop();
      throw new ToolError(`${tool}: ${show(abs)}: ${osError(e).message}`);
    }
  };
  const int = (tool, input, k, required) => {
    const v = input[k];
    if (v === void 0 && !required) return void 0;
    if (typeof v !== "number" || !Number.isInteger(v)) {
      throw new ToolError(`${tool}: input field '${k}' must be an integer, got ${luaTypeName(v)}`);
    }
    return v;
  };
  const str = (tool, input, k) => {
    const v = input[k];
    if (typeof v !== "string") {
      throw new ToolError(`${tool}: input field '${k}' must be a string, got ${luaTypeName(v)}`);
    }
    return v;
  };
  const edit = (tool, abs, start, end, expect, content) => {
    const { lines, finalNewline, crlf } = splitLines(readText(tool, abs));
    if (crlf) {
      expect = expect.replace(/\r\n/g, "\n");
      content = content.replace(/\r\n/g, "\n");
    }
    const n = lines.length;
    const insert = end === start - 1;
    if (start < 1 || start > n + 1 || !insert && (end < start || end > n)) {
      throw new ToolError(`${tool}: lines ${start}-${end} are not in ${show(abs)}, which has ${n} line(s) (to insert before line L, use start_line = L, end_line = L - 1, expect = "")`);
    }
    const current = lines.slice(start - 1, end).join("\n");
    if (stripOneNewline(expect) !== current) {
      throw new ToolError(insert ? `${tool}: an insertion (end_line = start_line - 1) needs expect = "", got ${JSON.stringify(expect)}` : `${tool}: expect does not match lines ${start}-${end} of ${show(abs)}; their current text is:
` + numbered(lines.slice(start - 1, end), start));
    }
    const body = stripOneNewline(content);
    const replacement = content === "" ? [] : body.split("\n");
    const next = [
      ...lines.slice(0, start - 1),
      ...replacement,
      ...lines.slice(end)
    ];
    const keepNewline = finalNewline || n === 0 && content.endsWith("\n") || end === n && content.endsWith("\n");
    const eol = crlf ? "\r\n" : "\n";
    writeText(tool, abs, next.join(eol) + (keepNewline && next.length ? eol : ""));
    const shown = replacement.length ? `:
${numbered(replacement, start)}` : "";
    return `${tool}: ${show(abs)}: lines ${start}-${end} replaced by ${replacement.length} line(s); the file now has ${next.length} line(s)${shown}`;
  };
  const ops = {
    fs_read: (set, input) => {
      const abs = confine(set, "fs_read", input.path);
      const { lines } = splitLines(readText("fs_read", abs));
      const n = lines.length;
      if (n === 0) return `${show(abs)}: (empty file)`;
      const start = int("fs_read", input, "start_line", false) ?? 1;
      const askedEnd = int("fs_read", input, "end_line", false);
      if (start < 1 || start > n) {
        throw new ToolError(`fs_read: start_line ${start} is not in ${show(abs)}, which has ${n} line(s)`);
      }
      if (askedEnd !== void 0 && askedEnd < start) {
        throw new ToolError(`fs_read: end_line ${askedEnd} is before start_line ${start}`);
      }
      const end = Math.min(askedEnd ?? start + READ_MAX_LINES - 1, n, start + READ_MAX_LINES - 1);
      const more = end < n && askedEnd === void 0 ? `
(${n - end} more line(s); read on with start_line = ${end + 1})` : "";
      return `${show(abs)}: lines ${start}-${end} of ${n}
${numbered(lines.slice(start - 1, end), start)}${more}`;
    },
    fs_edit: (set, input) => {
      const abs = confine(set, "fs_edit", input.path);
      return edit("fs_edit", abs, int("fs_edit", input, "start_line", true), int("fs_edit", input, "end_line", true), str("fs_edit", input, "expect"), str("fs_edit", input, "content"));
    },
    fs_write: (set, input) => {
      const abs = confine(set, "fs_write", input.path);
      const content = str("fs_write", input, "content");
      writeText("fs_write", abs, content);
      return `fs_write: wrote ${show(abs)} (${enc3.encode(content).length} bytes)`;
    },
    fs_rollback: (set, input) => {
      const abs = confine(set, "fs_rollback", input.path);
      const h = history.get(abs);
      if (!h || h.length === 0) {
        throw new ToolError(`fs_rollback: this run has no edit of ${show(abs)} to undo`);
      }
      const before = h.pop();
      try {
        if (before === null) Deno.removeSync(abs);
        else Deno.writeFileSync(abs, before);
      } catch (e) {
        h.push(before);
        throw new ToolError(`fs_rollback: ${show(abs)}: ${osError(e).message}`);
      }
      return `fs_rollback: ${show(abs)} ${before === null ? "removed (this run created it)" : "restored"}; ${h.length} earlier edit(s) of it can still be undone`;
    },
    fs_search_replace: (set, input) => {
      const abs = confine(set, "fs_search_replace", input.path);
      const search = str("fs_search_replace", input, "search");
      const replace = str("fs_search_replace", input, "replace");
      if (search === "") throw new ToolError("fs_search_replace: input field 'search' must not be empty");
      const text = readText("fs_search_replace", abs);
      const hits = [];
      for (let i = text.indexOf(search); i >= 0; i = text.indexOf(search, i + search.length)) hits.push(i);
      const lineOf = (off) => text.slice(0, off).split("\n").length;
      if (hits.length === 0) {
        throw new ToolError(`fs_search_replace: the search text was not found in ${show(abs)} (it must match verbatim)`);
      }
      if (hits.length > 1) {
        throw new ToolError(`fs_search_replace: the search text occurs ${hits.length} times in ${show(abs)} (starting on lines ${hits.map(lineOf).join(", ")}); include more surrounding text to make it unique`);
      }
      const m = hits[0];
      const lineStart = (line) => {
        let off = 0;
        for (let l = 1; l < line; l++) off = text.indexOf("\n", off) + 1;
        return off;
      };
      const s = lineOf(m);
      let e = lineOf(m + search.length - 1);
      const { lines } = splitLines(text);
      const regionEnd = (line) => line >= lines.length ? text.length : lineStart(line + 1);
      let newRegion;
      while (true) {
        const rs = lineStart(s);
        const re = regionEnd(e);
        newRegion = text.slice(rs, m) + replace + text.slice(m + search.length, re);
        if (!text.slice(rs, re).endsWith("\n") || newRegion === "" || newRegion.endsWith("\n") || e >= lines.length) break;
        e++;
      }
      const expect = lines.slice(s - 1, e).join("\n");
      const content = newRegion === "" ? "" : newRegion;
      return edit("fs_search_replace", abs, s, e, expect, content);
    }
  };
  engine.define("@fs_tools_new", {
    sync: (a) => {
      const opts = a.optTable(1, "opts");
      const roots = [
        run2.projectRoot
      ];
      const extra = opts?.roots;
      if (extra !== void 0) {
        if (!Array.isArray(extra)) {
          throw new LuaArgError(`${a.fn}: argument 1 (opts) field 'roots' must be an array of strings, got ${luaTypeName(extra)}`);
        }
        extra.forEach((r, i) => {
          if (typeof r !== "string") {
            throw new LuaArgError(`${a.fn}: argument 1 (opts) field 'roots' element ${i + 1} must be a string, got ${luaTypeName(r)}`);
          }
          try {
            roots.push(Deno.realPathSync(resolve(run2.projectRoot, r)));
          } catch (e) {
            throw new Error(`${a.fn}: root '${r}': ${osError(e).message}`);
          }
        });
      }
      sets.push({
        roots
      });
      return sets.length;
    }
  });
  engine.define("@fs_tool", {
    sync: (a) => {
      const set = sets[a.integer(1, "set") - 1];
      const op = ops[a.string(2, "tool")];
      const input = a.at(3);
      if (!set || !op) throw new Error(`fs tool: unknown tool set or tool`);
      if (luaTypeName(input) !== "table") {
        return new LuaMulti([
          void 0,
          `${a.at(2)}: input must be an object, got ${luaTypeName(input)}`
        ]);
      }
      try {
        return op(set, input);
      } catch (e) {
        if (e instanceof ToolError) return new LuaMulti([
          void 0,
          e.message
        ]);
        throw e;
      }
    }
  });
  engine.exec(fs_tools_default, "=ab:fs_tools");
}

// src/host/json_file.ts
import { dirname as dirname3, join as join4 } from "node:path";
function installJsonFile(engine) {
  engine.define("std.json.read_file", {
    sync: (a) => {
      const path = a.string(1, "path");
      const opts = a.optTable(2, "opts");
      let text;
      try {
        text = Deno.readTextFileSync(path);
      } catch (e) {
        throw fsFailure("std.json.read_file", path, e);
      }
      let value;
      try {
        value = parseJson(text);
      } catch (e) {
        throw new Error(`std.json.read_file: ${path}: ${e.message}`);
      }
      return opts?.null === true ? value : new NullsAsNil(value);
    }
  });
  engine.define("std.json.write_file", {
    floats: "tagged",
    sync: (a) => {
      const path = a.string(1, "path");
      if (a.length < 2) a.fail(2, "value", "a value");
      let text;
      try {
        text = stringifyJson(a.at(2), 2) + "\n";
      } catch (e) {
        throw new Error(`std.json.write_file: ${e.message}`);
      }
      const tmp = join4(dirname3(path), `.${crypto.randomUUID()}.tmp`);
      try {
        Deno.writeTextFileSync(tmp, text);
        Deno.renameSync(tmp, path);
      } catch (e) {
        try {
          Deno.removeSync(tmp);
        } catch {
        }
        throw fsFailure("std.json.write_file", path, e);
      }
      return true;
    }
  });
}

// src/host/env.ts
var PROCESS_AGENT_ID = `ab-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
function agentId() {
  const v = Deno.env.get("AGENT_BLOCK_AGENT_ID");
  return v && v.trim() ? v : PROCESS_AGENT_ID;
}
var NAME = /^[^=\0]+$/;
function installEnv(engine) {
  const name = (a) => {
    const n = a.string(1, "name");
    if (!NAME.test(n)) a.fail(1, "name", "a variable name (non-empty, no '=' or NUL)", `'${n}'`);
    return n;
  };
  engine.define("std.env.get", {
    sync: (a) => new LuaMulti([
      Deno.env.get(name(a))
    ])
  });
  engine.define("std.env.get_or", {
    sync: (a) => {
      const v = Deno.env.get(name(a));
      if (v !== void 0) return v;
      if (a.at(2) === void 0) a.fail(2, "default", "a value");
      return a.at(2);
    }
  });
  engine.define("std.env.set", {
    sync: (a) => {
      const n = name(a);
      if (a.at(2) === void 0) {
        Deno.env.delete(n);
        return;
      }
      const v = a.string(2, "value");
      if (v.includes("\0")) a.fail(2, "value", "a string without NUL bytes", "a string with a NUL byte");
      Deno.env.set(n, v);
    }
  });
  engine.define("std.env.home", {
    sync: () => userHome()
  });
  engine.define("std.env.agent_id", {
    sync: () => agentId()
  });
}

// src/host/path.ts
import { posix } from "node:path";
function installPath(engine) {
  const def = (name, fn) => engine.define(`std.path.${name}`, {
    sync: fn
  });
  def("join", (a) => {
    if (a.length === 0) a.fail(1, "part", "a string");
    const parts = [];
    for (let i = 1; i <= a.length; i++) parts.push(a.string(i, "part"));
    return posix.join(...parts);
  });
  def("basename", (a) => posix.basename(a.string(1, "path")));
  def("dirname", (a) => posix.dirname(a.string(1, "path")));
  def("ext", (a) => posix.extname(a.string(1, "path")).replace(/^\./, ""));
  def("stem", (a) => {
    const base = posix.basename(a.string(1, "path"));
    const ext = posix.extname(base);
    return ext ? base.slice(0, -ext.length) : base;
  });
  def("abs", (a) => posix.resolve(a.string(1, "path")));
  def("normalize", (a) => {
    const p = a.string(1, "path");
    return p === "" ? "." : posix.normalize(p).replace(/(.)\/$/, "$1");
  });
  def("is_absolute", (a) => posix.isAbsolute(a.string(1, "path")));
}

// src/host/time.lua
var time_default = '--- std.time\'s Lua half: sleep (yields the calling task through the scheduler\'s `sleep` host\n--- operation) and measure (runs fn in the calling task, which may yield). Receives the runtime\n--- table R and the primitives table H; `H.time_clock` is the monotonic clock in milliseconds.\n--- 2000000 s is the longest sleep: setTimeout\'s ceiling is ~24.8 days.\nlocal R, H = ...\nlocal host_call, pack, unpack, type, error, tostring = R.host_call, table.pack, table.unpack, type, error, tostring\nstd = std or {}\nstd.time = std.time or {}\nlocal clock = H.time_clock\nfunction std.time.sleep(seconds)\n  if type(seconds) ~= "number" then\n    error("std.time.sleep: argument 1 (seconds) must be a number, got " .. type(seconds), 2)\n  end\n  if seconds ~= seconds or seconds < 0 or seconds > 2000000 then\n    error("std.time.sleep: argument 1 (seconds) must be between 0 and 2000000, got " .. tostring(seconds), 2)\n  end\n  host_call("sleep", seconds * 1000)\nend\nlocal function finish(t0, ...)\n  return (clock() - t0) / 1000, ...\nend\nfunction std.time.measure(fn, ...)\n  if type(fn) ~= "function" then\n    error("std.time.measure: argument 1 (fn) must be a function, got " .. type(fn), 2)\n  end\n  return finish(clock(), fn(...))\nend\n';

// src/host/time.ts
function installTime(engine) {
  engine.define("std.time.now", {
    sync: () => {
      const s = Date.now() / 1e3;
      return Number.isInteger(s) ? new LuaFloat(s) : s;
    }
  });
  engine.define("std.time.millis", {
    sync: () => Date.now()
  });
  engine.define("@time_clock", {
    sync: () => performance.now()
  });
  engine.exec(time_default, "=ab:time");
}

// src/host/sh.ts
import { resolve as resolve2 } from "node:path";
var DRAIN_MS = 250;
var DEFAULT_TIMEOUT_S = 30;
var MAX_TIMER_MS = 2 ** 31 - 1;
function readOptions(a, run2) {
  const opts = a.optTable(2, "opts");
  const field = (k, kind) => optField(a, 2, "opts", opts, k, kind);
  const cwd = resolve2(run2.projectRoot, field("cwd", "string") ?? ".");
  const timeout = field("timeout", "number") ?? DEFAULT_TIMEOUT_S;
  if (!(timeout > 0)) {
    throw new LuaArgError(`sh.exec: argument 2 (opts) field 'timeout' must be a positive number, got ${timeout}`);
  }
  let stdin;
  if (opts?.stdin !== void 0) {
    if (typeof opts.stdin !== "string" && !(opts.stdin instanceof Uint8Array)) {
      throw new LuaArgError(`sh.exec: argument 2 (opts) field 'stdin' must be a string, got ${luaTypeName(opts.stdin)}`);
    }
    stdin = opts.stdin;
  }
  const env2 = {};
  const envTable = field("env", "table");
  for (const [k, v] of Object.entries(envTable ?? {})) {
    if (typeof v !== "string") {
      throw new LuaArgError(`sh.exec: argument 2 (opts) field 'env' value of '${k}' must be a string, got ${luaTypeName(v)}`);
    }
    env2[k] = v;
  }
  const label = field("label", "string");
  return {
    cwd,
    timeoutMs: timeout * 1e3,
    stdin,
    env: env2,
    label
  };
}
async function feed(proc, data) {
  const w = proc.child.stdin.getWriter();
  try {
    await w.write(typeof data === "string" ? new TextEncoder().encode(data) : data);
    await w.close();
  } catch {
    w.abort().catch(() => void 0);
  }
}
function installSh(engine, run2) {
  const killedByUser = /* @__PURE__ */ new WeakSet();
  engine.define("sh.exec", {
    async: async (a) => {
      const cmd = a.string(1, "cmd");
      const o = readOptions(a, run2);
      if (o.label !== void 0 && run2.procs.byLabel(o.label)) {
        throw new Error(`sh.exec: label '${o.label}' is already used by a running command`);
      }
      try {
        if (!Deno.statSync(o.cwd).isDirectory) {
          return {
            ok: false,
            error: `sh.exec: cwd ${o.cwd} is not a directory`
          };
        }
      } catch {
        return {
          ok: false,
          error: `sh.exec: cwd ${o.cwd} does not exist`
        };
      }
      let proc;
      try {
        proc = run2.procs.spawn({
          cmd: [
            "/bin/sh",
            "-c",
            cmd
          ],
          cwd: o.cwd,
          env: o.env,
          stdin: o.stdin !== void 0 ? "piped" : "null",
          stdout: "piped",
          stderr: "piped",
          label: o.label
        });
      } catch (e) {
        return {
          ok: false,
          error: `sh.exec: cannot start /bin/sh: ${e.message}`
        };
      }
      if (o.stdin !== void 0) feed(proc, o.stdin);
      let timedOut = false;
      const timer = o.timeoutMs <= MAX_TIMER_MS ? setTimeout(() => {
        timedOut = true;
        proc.kill().catch(() => void 0);
      }, o.timeoutMs) : void 0;
      const output = proc.child.output();
      let settled = false;
      let drainTimer;
      const drained = proc.status.then(() => new Promise((r) => {
        if (!settled) drainTimer = setTimeout(() => r("drain"), DRAIN_MS);
      }));
      if (await Promise.race([
        output,
        drained
      ]) === "drain") {
        run2.log.debug(`sh.exec: pipes still open ${DRAIN_MS} ms after the command exited; ending its group`);
        await proc.kill();
      }
      const out = await output;
      settled = true;
      clearTimeout(drainTimer);
      const status = out;
      const stdout = out.stdout;
      const stderr = out.stderr;
      clearTimeout(timer);
      const result = {
        ok: true,
        code: status.signal ? void 0 : status.code,
        stdout,
        stderr
      };
      if (status.signal) result.signal = status.signal;
      if (timedOut) {
        Object.assign(result, {
          ok: false,
          timed_out: true,
          error: `sh.exec: timed out after ${o.timeoutMs / 1e3} s (process group killed)`
        });
      } else if (killedByUser.has(proc)) {
        Object.assign(result, {
          ok: false,
          killed: true,
          error: `sh.exec: killed by sh.kill('${o.label}')`
        });
      } else if (status.signal) {
        Object.assign(result, {
          ok: false,
          error: `sh.exec: terminated by ${status.signal}`
        });
      }
      return result;
    }
  });
  engine.define("sh.kill", {
    sync: (a) => {
      const label = a.string(1, "label");
      const proc = run2.procs.byLabel(label);
      if (!proc) return false;
      killedByUser.add(proc);
      proc.terminate(2 * run2.procs.graceMs).catch((e) => run2.log.warn(`sh.kill('${label}'): ${e}`));
      return true;
    }
  });
}

// src/host/stores/sqlite.ts
import { DatabaseSync } from "node:sqlite";
import { dirname as dirname4, join as join5 } from "node:path";
var ENV_VAR = {
  kv: "AGENT_BLOCK_KV_PATH",
  sql: "AGENT_BLOCK_SQL_PATH",
  ts: "AGENT_BLOCK_TS_PATH"
};
function storePath(kind, home) {
  const v = Deno.env.get(ENV_VAR[kind]);
  return v && v.trim() ? v : join5(home, `${kind}.sqlite`);
}
function busyTimeoutMs() {
  const raw = Deno.env.get("AGENT_BLOCK_SQL_BUSY_TIMEOUT_MS");
  const n = raw ? Number(raw) : NaN;
  return Number.isInteger(n) && n >= 0 ? n : 5e3;
}
var sleeper = new Int32Array(new SharedArrayBuffer(4));
function openDatabase(path, busyMs = busyTimeoutMs()) {
  if (path !== ":memory:") {
    try {
      Deno.mkdirSync(dirname4(path), {
        recursive: true
      });
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists) throw new Error(`Not a directory: ${dirname4(path)}`);
      throw e;
    }
  }
  const db = new DatabaseSync(path);
  try {
    db.exec(`pragma busy_timeout = ${busyMs}`);
    if (path !== ":memory:") {
      const deadline = Date.now() + busyMs;
      for (let attempt = 0; ; attempt++) {
        try {
          db.exec("pragma journal_mode = WAL");
          break;
        } catch (e) {
          if (!/locked|busy/i.test(e.message) || Date.now() > deadline) throw e;
          Atomics.wait(sleeper, 0, 0, Math.min(50, 2 + attempt * 5));
        }
      }
      db.exec("pragma synchronous = NORMAL");
    }
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}
function writeTx(db, fn) {
  db.exec("BEGIN IMMEDIATE");
  try {
    const r = fn();
    db.exec("COMMIT");
    return r;
  } catch (e) {
    try {
      db.exec("ROLLBACK");
    } catch {
    }
    throw e;
  }
}
function osMessage(e) {
  return String(e?.message ?? e).replace(/ \(os error \d+\).*$/, "");
}
var LazyDatabase = class {
  kind;
  resolvePath;
  init;
  #db;
  #path;
  constructor(kind, resolvePath, init) {
    this.kind = kind;
    this.resolvePath = resolvePath;
    this.init = init;
  }
  /** The path in use (resolved on first open). */
  get path() {
    return this.#path ??= this.resolvePath();
  }
  /** The open connection; opens it and creates the schema on first use. */
  get db() {
    if (this.#db) return this.#db;
    const path = this.path;
    let db;
    try {
      db = openDatabase(path);
    } catch (e) {
      throw new Error(`cannot open the ${this.kind} store ${path}: ${osMessage(e)}`);
    }
    try {
      this.init(db);
    } catch (e) {
      db.close();
      throw new Error(`cannot open the ${this.kind} store ${path}: ${osMessage(e)}`);
    }
    this.#db = db;
    return db;
  }
  close() {
    try {
      this.#db?.close();
    } catch {
    }
    this.#db = void 0;
  }
};

// src/host/stores/kv.ts
var SCHEMA = `CREATE TABLE IF NOT EXISTS __kv (
  ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (ns, key)
) WITHOUT ROWID`;
function prepare(db) {
  return {
    get: db.prepare("SELECT value FROM __kv WHERE ns = ? AND key = ?"),
    set: db.prepare("INSERT INTO __kv (ns, key, value) VALUES (?, ?, ?) ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value"),
    del: db.prepare("DELETE FROM __kv WHERE ns = ? AND key = ?"),
    list: db.prepare("SELECT key FROM __kv WHERE ns = ? ORDER BY key"),
    listPrefix: db.prepare("SELECT key FROM __kv WHERE ns = ? AND substr(key, 1, length(?2)) = ?2 ORDER BY key")
  };
}
function installKv(engine, run2) {
  let st;
  const store = new LazyDatabase("kv", () => storePath("kv", run2.home), (db) => {
    db.exec(SCHEMA);
  });
  run2.onCleanup(() => store.close());
  const stmts = () => st ??= prepare(store.db);
  const ns = (a) => {
    const v = a.string(1, "ns");
    if (v === "") a.fail(1, "ns", "a non-empty string", "an empty string");
    return v;
  };
  const sqlError = (fn, e) => new Error(`std.kv.${fn}: ${e.message}`);
  engine.define("std.kv.get", {
    sync: (a) => {
      const n = ns(a);
      const key = a.string(2, "key");
      let row;
      try {
        row = stmts().get.get(n, key);
      } catch (e) {
        throw sqlError("get", e);
      }
      return row ? parseJson(row.value) : new LuaMulti([
        void 0
      ]);
    }
  });
  engine.define("std.kv.set", {
    floats: "tagged",
    sync: (a) => {
      const n = ns(a);
      const key = a.string(2, "key");
      if (a.at(3) === void 0) {
        a.fail(3, "value", "a value (use std.kv.delete to remove a key)", "nil");
      }
      let text;
      try {
        text = stringifyJson(a.at(3));
      } catch (e) {
        throw new Error(`std.kv.set: argument 3 (value): ${e.message}`);
      }
      try {
        stmts().set.run(n, key, text);
      } catch (e) {
        throw sqlError("set", e);
      }
    }
  });
  engine.define("std.kv.delete", {
    sync: (a) => {
      const n = ns(a);
      const key = a.string(2, "key");
      try {
        return Number(stmts().del.run(n, key).changes) > 0;
      } catch (e) {
        throw sqlError("delete", e);
      }
    }
  });
  engine.define("std.kv.list", {
    sync: (a) => {
      const n = ns(a);
      const prefix = a.optString(2, "prefix");
      try {
        const rows = prefix ? stmts().listPrefix.all(n, prefix) : stmts().list.all(n);
        return rows.map((r) => r.key);
      } catch (e) {
        throw sqlError("list", e);
      }
    }
  });
}

// src/host/stores/sql.ts
var TX_CONTROL = /(^|;)\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b/im;
function hasSeveralStatements(sql) {
  let i = 0;
  let sawEnd = false;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === "`" || c === "[") {
      if (sawEnd) return true;
      const close = c === "[" ? "]" : c;
      i++;
      while (i < sql.length) {
        if (sql[i] === close) {
          if (close !== "]" && sql[i + 1] === close) {
            i += 2;
            continue;
          }
          break;
        }
        i++;
      }
      i++;
    } else if (c === "-" && sql[i + 1] === "-") {
      while (i < sql.length && sql[i] !== "\n") i++;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === ";") {
      sawEnd = true;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      if (sawEnd) return true;
      i++;
    }
  }
  return false;
}
function bindValue(fn, where, v) {
  if (v === void 0 || v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "string") return v;
  if (v instanceof LuaFloat) return v.value;
  if (v instanceof Uint8Array) return v;
  throw new LuaArgError(`${fn}: argument 2 (params) ${where} must be a string, number, boolean or nil, got ${luaTypeName(v)}`);
}
function readParams(a) {
  const t = a.optTable(2, "params");
  if (!t) return [];
  if (Array.isArray(t)) return t.map((v, i) => bindValue(a.fn, `element ${i + 1}`, v));
  const keys = Object.keys(t);
  if (keys.length > 0 && keys.every((k) => /^[1-9][0-9]*$/.test(k))) {
    const n = Math.max(...keys.map(Number));
    const out = [];
    for (let i = 1; i <= n; i++) out.push(bindValue(a.fn, `element ${i}`, t[String(i)]));
    return out;
  }
  const named = {};
  for (const k of keys) {
    if (/^[0-9]+$/.test(k)) {
      throw new LuaArgError(`${a.fn}: argument 2 (params) mixes positional and named parameters`);
    }
    named[k.replace(/^[:@$]/, "")] = bindValue(a.fn, `field '${k}'`, t[k]);
  }
  return named;
}
function run(db, sql, params, mode) {
  const st = db.prepare(sql);
  st.setReadBigInts(true);
  if (Array.isArray(params)) return mode === "run" ? st.run(...params) : st.all(...params);
  return mode === "run" ? st.run(params) : st.all(params);
}
function toLuaNumber(v) {
  if (typeof v === "bigint") return v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v;
  return v;
}
function installSql(engine, runCx) {
  const store = new LazyDatabase("sql", () => storePath("sql", runCx.home), (db) => {
    db.exec("select 1");
  });
  runCx.onCleanup(() => store.close());
  const fail = (fn, e) => {
    if (e instanceof LuaArgError) return e;
    const msg = e.message;
    return new Error(msg.startsWith("std.sql") ? msg : `${fn}: ${msg}`);
  };
  engine.define("std.sql.execute", {
    sync: (a) => {
      const sql = a.string(1, "sql");
      const params = readParams(a);
      try {
        const db = store.db;
        if (hasSeveralStatements(sql)) {
          const hasParams = Array.isArray(params) ? params.length > 0 : Object.keys(params).length > 0;
          if (hasParams) {
            throw new Error("std.sql.execute: parameters can only be bound to a single statement");
          }
          const before = Number(db.prepare("select total_changes() as n").get().n);
          if (db.isTransaction || TX_CONTROL.test(sql)) db.exec(sql);
          else writeTx(db, () => db.exec(sql));
          const after = Number(db.prepare("select total_changes() as n").get().n);
          const last = db.prepare("select last_insert_rowid() as id").get().id;
          return {
            affected: after - before,
            last_id: toLuaNumber(last)
          };
        }
        const r = run(db, sql, params, "run");
        return {
          affected: toLuaNumber(r.changes),
          last_id: toLuaNumber(r.lastInsertRowid)
        };
      } catch (e) {
        throw fail("std.sql.execute", e);
      }
    }
  });
  engine.define("std.sql.query", {
    sync: (a) => {
      const sql = a.string(1, "sql");
      const params = readParams(a);
      if (hasSeveralStatements(sql)) {
        throw new Error("std.sql.query: only one statement can be queried at a time");
      }
      try {
        const rows = run(store.db, sql, params, "all");
        for (const r of rows) for (const k in r) r[k] = toLuaNumber(r[k]);
        return rows;
      } catch (e) {
        throw fail("std.sql.query", e);
      }
    }
  });
}

// src/host/stores/ts.ts
var NIL = new LuaMulti([
  void 0
]);
var SCHEMA2 = `
CREATE TABLE IF NOT EXISTS ts (
  series TEXT NOT NULL, ts INTEGER NOT NULL, tags TEXT, value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_ts_series_ts ON ts (series, ts);`;
var TAG_KEY = /^[A-Za-z0-9_]+$/;
var AGGS = [
  "count",
  "sum",
  "avg",
  "last"
];
var QUERY_FIELDS = /* @__PURE__ */ new Set([
  "from",
  "to",
  "tags",
  "agg",
  "bucket_ms",
  "limit",
  "offset"
]);
var NUMERIC = "CASE WHEN json_type(value) IN ('integer', 'real') THEN json_extract(value, '$') END";
function num2(v) {
  if (typeof v === "number") return v;
  if (v instanceof LuaFloat) return v.value;
  if (typeof v === "bigint") return Number(v);
  return void 0;
}
function readTags(a, i, name, t) {
  if (t === void 0) return void 0;
  if (t === null || typeof t !== "object" || luaTypeName(t) !== "table") {
    a.fail(i, name, "a table");
  }
  const out = {};
  for (const [k, v] of Object.entries(t)) {
    if (!TAG_KEY.test(k)) {
      throw new LuaArgError(`${a.fn}: argument ${i} (${name}) key '${k}' must match [A-Za-z0-9_]+`);
    }
    const ok = typeof v === "string" || typeof v === "boolean" || num2(v) !== void 0;
    if (!ok) {
      throw new LuaArgError(`${a.fn}: argument ${i} (${name}) value of '${k}' must be a string, number or boolean, got ${luaTypeName(v)}`);
    }
    out[k] = v;
  }
  return out;
}
function tagFilter(tags) {
  let sql = "";
  const params = [];
  for (const [k, v] of Object.entries(tags ?? {})) {
    sql += " AND json_extract(tags, ?) = ?";
    params.push(`$.${k}`, typeof v === "boolean" ? v ? 1 : 0 : num2(v) ?? v);
  }
  return {
    sql,
    params
  };
}
function decodeRow(r) {
  return {
    ts: typeof r.ts === "bigint" ? Number(r.ts) : r.ts,
    value: parseJson(r.value),
    tags: r.tags === null ? void 0 : parseJson(r.tags)
  };
}
function installTs(engine, run2) {
  const store = new LazyDatabase("ts", () => storePath("ts", run2.home), (db) => db.exec(SCHEMA2));
  run2.onCleanup(() => store.close());
  let insert;
  const series = (a) => {
    const s = a.string(1, "series");
    if (s === "") a.fail(1, "series", "a non-empty string", "an empty string");
    return s;
  };
  const sqlFail = (fn, e) => e instanceof LuaArgError ? e : new Error(`std.ts.${fn}: ${e.message}`);
  engine.define("std.ts.append", {
    floats: "tagged",
    sync: (a) => {
      const s = series(a);
      const v = a.at(2);
      if (v === void 0 || v === null || luaTypeName(v) === "function") {
        a.fail(2, "value", "a number or a table");
      }
      const tags = readTags(a, 3, "tags", a.at(3));
      const at = a.at(4) === void 0 ? Date.now() : a.integer(4, "at");
      let valueText;
      try {
        valueText = stringifyJson(v);
      } catch (e) {
        throw new Error(`std.ts.append: argument 2 (value): ${e.message}`);
      }
      const tagsText = tags && Object.keys(tags).length ? stringifyJson(tags) : null;
      try {
        insert ??= store.db.prepare("INSERT INTO ts (series, ts, tags, value) VALUES (?, ?, ?, ?)");
        insert.run(s, at, tagsText, valueText);
      } catch (e) {
        throw sqlFail("append", e);
      }
    }
  });
  engine.define("std.ts.query", {
    sync: (a) => {
      const s = series(a);
      const opts = a.optTable(2, "opts") ?? {};
      for (const k of Object.keys(opts)) {
        if (!QUERY_FIELDS.has(k)) {
          throw new LuaArgError(`std.ts.query: argument 2 (opts) has an unknown field '${k}' (known: ${[
            ...QUERY_FIELDS
          ].join(", ")})`);
        }
      }
      const int = (k, min) => {
        const v = opts[k];
        if (v === void 0) return void 0;
        const n = num2(v);
        if (n === void 0 || !Number.isInteger(n)) {
          throw new LuaArgError(`std.ts.query: argument 2 (opts) field '${k}' must be an integer, got ${n === void 0 ? luaTypeName(v) : String(n)}`);
        }
        if (min !== void 0 && n < min) {
          throw new LuaArgError(`std.ts.query: argument 2 (opts) field '${k}' must be >= ${min}, got ${n}`);
        }
        return n;
      };
      const from = int("from") ?? Number.MIN_SAFE_INTEGER;
      const to = int("to") ?? Number.MAX_SAFE_INTEGER;
      const limit = int("limit", 0) ?? -1;
      const offset = int("offset", 0) ?? 0;
      const bucket = int("bucket_ms", 1);
      let agg;
      if (opts.agg !== void 0) {
        if (typeof opts.agg !== "string" || !AGGS.includes(opts.agg)) {
          throw new LuaArgError(`std.ts.query: argument 2 (opts) field 'agg' must be one of ${AGGS.join(", ")}, got ${typeof opts.agg === "string" ? `'${opts.agg}'` : luaTypeName(opts.agg)}`);
        }
        agg = opts.agg;
      }
      if (bucket !== void 0 && !agg) {
        throw new LuaArgError("std.ts.query: argument 2 (opts) field 'bucket_ms' requires field 'agg'");
      }
      const tf = tagFilter(readTags(a, 2, "opts.tags", opts.tags));
      const where = `series = ? AND ts >= ? AND ts <= ?${tf.sql}`;
      const wp = [
        s,
        from,
        to,
        ...tf.params
      ];
      try {
        const db = store.db;
        if (!agg) {
          const st = db.prepare(`SELECT ts, value, tags FROM ts WHERE ${where} ORDER BY ts ASC, rowid ASC LIMIT ? OFFSET ?`);
          return st.all(...wp, limit, offset).map(decodeRow);
        }
        const aggExpr = agg === "count" ? "count(*)" : agg === "sum" ? `coalesce(sum(${NUMERIC}), 0)` : `avg(${NUMERIC})`;
        if (bucket === void 0) {
          if (agg === "last") {
            const r2 = db.prepare(`SELECT value FROM ts WHERE ${where} ORDER BY ts DESC, rowid DESC LIMIT 1`).get(...wp);
            return [
              {
                value: r2 ? parseJson(r2.value) : void 0
              }
            ];
          }
          const r = db.prepare(`SELECT ${aggExpr} AS v FROM ts WHERE ${where}`).get(...wp);
          return [
            {
              value: r.v ?? void 0
            }
          ];
        }
        const b = `(ts - (((ts % ${bucket}) + ${bucket}) % ${bucket}))`;
        if (agg === "last") {
          const rows2 = db.prepare(`SELECT bucket, value FROM (
               SELECT ${b} AS bucket, value,
                 row_number() OVER (PARTITION BY ${b} ORDER BY ts DESC, rowid DESC) AS rn
               FROM ts WHERE ${where})
             WHERE rn = 1 ORDER BY bucket LIMIT ? OFFSET ?`).all(...wp, limit, offset);
          return rows2.map((r) => ({
            bucket: r.bucket,
            value: parseJson(r.value)
          }));
        }
        const rows = db.prepare(`SELECT ${b} AS bucket, ${aggExpr} AS value FROM ts WHERE ${where}
           GROUP BY bucket ORDER BY bucket LIMIT ? OFFSET ?`).all(...wp, limit, offset);
        return rows.map((r) => ({
          bucket: r.bucket,
          value: r.value ?? void 0
        }));
      } catch (e) {
        throw sqlFail("query", e);
      }
    }
  });
  engine.define("std.ts.last", {
    sync: (a) => {
      const s = series(a);
      const tf = tagFilter(readTags(a, 2, "tags", a.at(2)));
      try {
        const r = store.db.prepare(`SELECT ts, value, tags FROM ts WHERE series = ?${tf.sql} ORDER BY ts DESC, rowid DESC LIMIT 1`).get(s, ...tf.params);
        return r ? decodeRow(r) : NIL;
      } catch (e) {
        throw sqlFail("last", e);
      }
    }
  });
}

// src/host/stores/stores.lua
var stores_default = `--- Model-facing tools of the stores: std.kv.register_tools, std.sql.register_tools, std.ts.register_tools.
--
-- Owns the tool names, schemas and result shapes a model sees (kv_get \u2192 { value }, kv_set \u2192
-- { ok = true }, kv_delete \u2192 { deleted }, kv_list \u2192 { keys }; sql_execute \u2192 { affected, last_id },
-- sql_query \u2192 { rows }; ts_append \u2192 { ok = true }, ts_query \u2192 { rows }, ts_last \u2192 { row }), and the
-- options every register_tools takes: \`allowed\` (subset of the operations, default all),
-- \`prefix\` (default "kv_" / "sql_" / "ts_"), \`group\` (tool.register's meta.group) and, for kv,
-- \`ns_lock\` (every call uses that namespace; the model cannot pick another). Each answers the
-- list of tool names it registered. Tools go through \`tool.register\`, so they are ordinary
-- entries of the run's registry. Also sets \`std.sql.null\` (the same sentinel as \`std.json.null\`).
local R, H = ...
local user_level = R.user_level
local type, error, sformat, ipairs, pairs = type, error, string.format, ipairs, pairs

std.sql.null = H.null

local function obj(props, required)
  local s = { type = "object", properties = props }
  if required and #required > 0 then s.required = required end
  return s
end

local function register(fname, opts, default_prefix, ops)
  if opts ~= nil and type(opts) ~= "table" then
    error(sformat("%s: argument 1 (opts) must be a table, got %s", fname, type(opts)), user_level())
  end
  opts = opts or {}
  local prefix = opts.prefix or default_prefix
  if type(prefix) ~= "string" then
    error(sformat("%s: argument 1 (opts) field 'prefix' must be a string, got %s", fname, type(prefix)), user_level())
  end
  local by_name, order = {}, {}
  for _, op in ipairs(ops) do by_name[op.op] = op; order[#order + 1] = op.op end
  local wanted = order
  if opts.allowed ~= nil then
    if type(opts.allowed) ~= "table" then
      error(sformat("%s: argument 1 (opts) field 'allowed' must be a table, got %s", fname, type(opts.allowed)), user_level())
    end
    wanted = {}
    for i, name in ipairs(opts.allowed) do
      local op = type(name) == "string" and name:gsub("^" .. prefix, "") or name
      if not by_name[op] then
        error(sformat("%s: argument 1 (opts) field 'allowed' element %d must be one of %s, got %s",
          fname, i, table.concat(order, ", "), tostring(name)), user_level())
      end
      wanted[#wanted + 1] = op
    end
  end
  local meta = opts.group and { group = opts.group } or nil
  local names = std.json.array()
  for _, op in ipairs(wanted) do
    local spec = by_name[op]
    local name = prefix .. op
    tool.register(name, { description = spec.description, input_schema = spec.schema }, spec.handler, meta)
    names[#names + 1] = name
  end
  return names
end

local function need(input, tool_name, field, kind)
  local v = type(input) == "table" and input[field] or nil
  if type(v) ~= kind then
    error(sformat("%s: input field '%s' must be a %s, got %s", tool_name, field, kind, type(v)), 0)
  end
  return v
end

function std.kv.register_tools(opts)
  local lock = type(opts) == "table" and opts.ns_lock or nil
  if lock ~= nil and (type(lock) ~= "string" or lock == "") then
    error(sformat("std.kv.register_tools: argument 1 (opts) field 'ns_lock' must be a non-empty string, got %s",
      type(lock)), user_level())
  end
  local function ns_of(input)
    if lock then return lock end
    return need(input, "kv", "ns", "string")
  end
  local function props(extra)
    local p = {}
    if not lock then p.ns = { type = "string", description = "Namespace" } end
    for k, v in pairs(extra) do p[k] = v end
    return p
  end
  local function req(list)
    local r = {}
    if not lock then r[1] = "ns" end
    for _, v in ipairs(list) do r[#r + 1] = v end
    return r
  end
  local key = { type = "string", description = "Key" }
  return register("std.kv.register_tools", opts, "kv_", {
    { op = "get", description = "Read the value stored under a key (null when absent).",
      schema = obj(props({ key = key }), req({ "key" })),
      handler = function(input) return { value = std.kv.get(ns_of(input), need(input, "kv_get", "key", "string")) } end },
    { op = "set", description = "Store a JSON value under a key, replacing any previous value.",
      schema = obj(props({ key = key, value = { description = "Any JSON value" } }), req({ "key", "value" })),
      handler = function(input)
        local v = type(input) == "table" and input.value
        if v == nil then error("kv_set: input field 'value' is missing", 0) end
        std.kv.set(ns_of(input), need(input, "kv_set", "key", "string"), v)
        return { ok = true }
      end },
    { op = "delete", description = "Delete a key; answers whether it existed.",
      schema = obj(props({ key = key }), req({ "key" })),
      handler = function(input) return { deleted = std.kv.delete(ns_of(input), need(input, "kv_delete", "key", "string")) } end },
    { op = "list", description = "List the keys of the namespace, optionally only those starting with a prefix.",
      schema = obj(props({ prefix = { type = "string", description = "Key prefix" } }), req({})),
      handler = function(input)
        local p = type(input) == "table" and input.prefix or nil
        if p ~= nil and type(p) ~= "string" then error("kv_list: input field 'prefix' must be a string", 0) end
        return { keys = std.kv.list(ns_of(input), p) }
      end },
  })
end

local sql_schema = obj({
  sql = { type = "string", description = "One SQLite statement" },
  params = { description = "Positional parameters (array) or named parameters (object)" },
}, { "sql" })

function std.sql.register_tools(opts)
  return register("std.sql.register_tools", opts, "sql_", {
    { op = "execute", description = "Execute an SQLite statement that changes data or schema; answers the number of rows affected.",
      schema = sql_schema,
      handler = function(input)
        local r = std.sql.execute(need(input, "sql_execute", "sql", "string"), input.params)
        return { affected = r.affected, last_id = r.last_id }
      end },
    { op = "query", description = "Run an SQLite query; answers the rows as objects keyed by column name.",
      schema = sql_schema,
      handler = function(input) return { rows = std.sql.query(need(input, "sql_query", "sql", "string"), input.params) } end },
  })
end

local tags_schema = { type = "object", description = "Tags: string keys, scalar values (AND-filter when querying)" }

function std.ts.register_tools(opts)
  return register("std.ts.register_tools", opts, "ts_", {
    { op = "append", description = "Append a data point (a number or a JSON object) to a series.",
      schema = obj({
        series = { type = "string" }, value = { description = "A number or a JSON object" }, tags = tags_schema,
        at = { type = "integer", description = "Unix time in milliseconds (default now)" },
      }, { "series", "value" }),
      handler = function(input)
        std.ts.append(need(input, "ts_append", "series", "string"), input.value, input.tags, input.at)
        return { ok = true }
      end },
    { op = "query", description = "Query a series: raw points, or aggregated (count/sum/avg/last), optionally in time buckets.",
      schema = obj({
        series = { type = "string" },
        from = { type = "integer", description = "Start, ms, inclusive" },
        to = { type = "integer", description = "End, ms, inclusive" },
        tags = tags_schema,
        agg = { type = "string", enum = { "count", "sum", "avg", "last" } },
        bucket_ms = { type = "integer", description = "Bucket width in ms (needs agg)" },
        limit = { type = "integer" }, offset = { type = "integer" },
      }, { "series" }),
      handler = function(input)
        local series = need(input, "ts_query", "series", "string")
        local q = {}
        for _, k in ipairs({ "from", "to", "tags", "agg", "bucket_ms", "limit", "offset" }) do q[k] = input[k] end
        return { rows = std.ts.query(series, q) }
      end },
    { op = "last", description = "The most recent point of a series (optionally matching tags), or null.",
      schema = obj({ series = { type = "string" }, tags = tags_schema }, { "series" }),
      handler = function(input) return { row = std.ts.last(need(input, "ts_last", "series", "string"), input.tags) } end },
  })
end
`;

// src/host/stores/index.ts
function installStores(engine, run2) {
  installKv(engine, run2);
  installSql(engine, run2);
  installTs(engine, run2);
  engine.exec(stores_default, "=ab:stores");
}

// src/host/bus.ts
var BusHost = class {
  #ts = /* @__PURE__ */ new Map();
  #tsAny;
  #lua = /* @__PURE__ */ new Map();
  #luaAny;
  #queue = [];
  #inflight = /* @__PURE__ */ new Set();
  #engine;
  #run;
  #wake;
  #serving = false;
  #stop = false;
  #ended = false;
  /** Registers (or replaces) the TypeScript handler for `kind`. */
  on(kind, handler) {
    this.#ts.set(kind, handler);
    return this;
  }
  /** Registers (or replaces) the TypeScript fallback for kinds nobody else claims. */
  onAny(handler) {
    this.#tsAny = handler;
    return this;
  }
  /**
   * Emits an event from TypeScript; resolves with the handler's ack. A Lua handler receives it
   * while the script runs `bus.serve`.
   */
  emit(kind, payload, opts = {}) {
    if (this.#ended) return Promise.reject(new Error("bus: the run has ended"));
    const event = {
      kind,
      id: opts.id ?? crypto.randomUUID(),
      payload,
      meta: opts.meta ?? {}
    };
    return new Promise((resolve4, reject) => this.#route({
      event,
      ack: {
        resolve: resolve4,
        reject
      }
    }));
  }
  /** Number of events waiting for `bus.serve`. */
  get pending() {
    return this.#queue.length;
  }
  /** Binds the host to the run it serves (once). */
  attach(engine, run2) {
    if (this.#engine) throw new Error("a BusHost serves exactly one run");
    this.#engine = engine;
    this.#run = run2;
    run2.onCleanup(() => this.#close());
  }
  /** `bus.emit` from Lua: queued or delivered, never blocking. Returns the id. */
  emitFromLua(kind, payload, id) {
    const event = {
      kind,
      id: id ?? crypto.randomUUID(),
      payload,
      meta: {}
    };
    this.#route({
      event
    });
    return event.id;
  }
  /** Sets the Lua handler for `kind` (`undefined`: the `bus.on_any` handler), releasing the previous one. */
  setLua(kind, fn) {
    if (kind === void 0) {
      this.#luaAny?.release();
      this.#luaAny = fn;
    } else {
      this.#lua.get(kind)?.release();
      this.#lua.set(kind, fn);
    }
  }
  /** The TypeScript handler an event goes to right now, if the routing says TypeScript. */
  #tsWinner(kind) {
    if (this.#lua.has(kind)) return void 0;
    const h = this.#ts.get(kind);
    if (h) return h;
    if (this.#luaAny) return void 0;
    return this.#tsAny;
  }
  #route(q) {
    const ts = this.#tsWinner(q.event.kind);
    if (ts) {
      this.#deliverTs(ts, q);
      return;
    }
    this.#queue.push(q);
    this.#wakeUp();
  }
  #deliverTs(h, q) {
    const p = (async () => {
      try {
        const v = await h(q.event);
        q.ack?.resolve(v);
      } catch (e) {
        const err = e instanceof Error ? e : new Error(String(e));
        if (q.ack) q.ack.reject(err);
        else this.#run?.log.warn(`bus: handler for '${q.event.kind}' failed: ${err.message}`);
      }
    })();
    this.#inflight.add(p);
    p.finally(() => {
      this.#inflight.delete(p);
      this.#wakeUp();
    });
  }
  #wakeUp() {
    const w = this.#wake;
    this.#wake = void 0;
    w?.();
  }
  /** `bus.stop()`: the running `bus.serve` returns after the handler in flight. */
  stop() {
    const was = this.#serving;
    this.#stop = true;
    this.#wakeUp();
    return was;
  }
  /** `bus.serve(opts)`: dispatches queued events until stopped (or idle, with `untilIdle`). */
  async serve(untilIdle, signal) {
    if (this.#serving) throw new Error("bus.serve: already serving (one bus.serve at a time)");
    this.#serving = true;
    this.#stop = false;
    const onAbort = () => this.#wakeUp();
    signal.addEventListener("abort", onAbort);
    try {
      while (!this.#stop && !signal.aborted) {
        const q = this.#queue.shift();
        if (!q) {
          if (untilIdle && this.#inflight.size === 0) return;
          await new Promise((r) => this.#wake = r);
          continue;
        }
        await this.#dispatch(q);
      }
    } finally {
      this.#serving = false;
      this.#stop = false;
      signal.removeEventListener("abort", onAbort);
    }
  }
  async #dispatch(q) {
    const kind = q.event.kind;
    const lua = this.#lua.get(kind) ?? (this.#ts.has(kind) ? void 0 : this.#luaAny);
    if (!lua) {
      const ts = this.#ts.get(kind) ?? this.#tsAny;
      if (ts) return this.#deliverTs(ts, q);
      const msg = `bus: no handler for kind '${kind}' (event ${q.event.id} dropped)`;
      this.#run?.log.warn(msg);
      q.ack?.reject(new Error(msg));
      return;
    }
    try {
      const values = await this.#engine.callLua(lua, [
        q.event
      ]);
      q.ack?.resolve(values[0]);
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      this.#run?.log.warn(`bus: handler for '${kind}' failed: ${err.message}`);
      q.ack?.reject(err);
    }
  }
  async #close() {
    this.#ended = true;
    const graceMs = 10 * (this.#run?.procs.graceMs ?? 1e3);
    if (this.#inflight.size > 0) {
      let timer;
      const timeout = new Promise((r2) => timer = setTimeout(() => r2("timeout"), graceMs));
      const r = await Promise.race([
        Promise.all(this.#inflight).then(() => "done"),
        timeout
      ]);
      clearTimeout(timer);
      if (r === "timeout") {
        this.#run?.log.warn(`bus: ${this.#inflight.size} TypeScript handler(s) still running after ${graceMs} ms`);
      }
    }
    const left = this.#queue.splice(0);
    for (const q of left) q.ack?.reject(new Error("bus: the run ended before the event was dispatched"));
    if (left.length) {
      this.#run?.log.debug(`bus: ${left.length} event(s) were never dispatched (no bus.serve)`);
    }
    for (const ref of this.#lua.values()) ref.release();
    this.#luaAny?.release();
    this.#lua.clear();
  }
};
function busModule(host) {
  return (engine, run2) => installBusHost(engine, run2, host ?? new BusHost());
}
var installBus = busModule();
function installBusHost(engine, run2, bus) {
  bus.attach(engine, run2);
  const kindArg = (a) => {
    const k = a.string(1, "kind");
    if (k === "") a.fail(1, "kind", "a non-empty string", "an empty string");
    return k;
  };
  engine.define("bus.emit", {
    floats: "tagged",
    sync: (a) => {
      const kind = kindArg(a);
      const id = a.optString(3, "id");
      return bus.emitFromLua(kind, a.at(2), id);
    }
  });
  engine.define("bus.on", {
    functions: "ref",
    sync: (a) => {
      const kind = kindArg(a);
      bus.setLua(kind, a.func(2, "fn"));
    }
  });
  engine.define("bus.on_any", {
    functions: "ref",
    sync: (a) => {
      bus.setLua(void 0, a.func(1, "fn"));
    }
  });
  engine.define("bus.serve", {
    async: async (a, cx) => {
      const opts = a.optTable(1, "opts");
      const untilIdle = optField(a, 1, "opts", opts, "until_idle", "boolean") ?? false;
      await bus.serve(untilIdle, cx.signal);
    }
  });
  engine.define("bus.stop", {
    sync: () => bus.stop()
  });
  engine.define("bus.pending", {
    sync: () => bus.pending
  });
}

// src/host/http.ts
var DEFAULT_TIMEOUT_S2 = 120;
var SseParser = class {
  #buf = "";
  #data = [];
  #event = "";
  #lastId;
  #sawCr = false;
  /** Feeds a chunk; returns the events completed by it. */
  push(text) {
    const out = [];
    let s = this.#buf + text;
    if (this.#sawCr && s.startsWith("\n")) s = s.slice(1);
    this.#sawCr = false;
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (c !== "\n" && c !== "\r") continue;
      this.#line(s.slice(start, i), out);
      if (c === "\r") {
        if (i + 1 < s.length) {
          if (s[i + 1] === "\n") i++;
        } else this.#sawCr = true;
      }
      start = i + 1;
    }
    this.#buf = s.slice(start);
    return out;
  }
  #line(line, out) {
    if (line === "") {
      if (this.#data.length > 0) {
        out.push({
          event: this.#event || "message",
          data: this.#data.join("\n"),
          id: this.#lastId
        });
      }
      this.#data = [];
      this.#event = "";
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#event = value;
    else if (field === "id" && !value.includes("\0")) this.#lastId = value;
  }
};
function readSpec(a) {
  let opts;
  let optsIdx = 1;
  let url;
  if (typeof a.at(1) === "string") {
    url = a.string(1, "url");
    opts = a.optTable(2, "opts") ?? {};
    optsIdx = 2;
  } else {
    opts = a.table(1, "request");
  }
  const name = optsIdx === 1 ? "request" : "opts";
  const field = (k, kind) => optField(a, optsIdx, name, opts, k, kind);
  url ??= field("url", "string");
  if (url === void 0) {
    throw new LuaArgError(`http.request: argument 1 (request) field 'url' must be a string, got nil`);
  }
  const headers = new Headers();
  for (const [k, v] of Object.entries(field("headers", "table") ?? {})) {
    if (typeof v !== "string" && typeof v !== "number") {
      throw new LuaArgError(`http.request: argument ${optsIdx} (${name}) field 'headers' value of '${k}' must be a string, got ${luaTypeName(v)}`);
    }
    try {
      headers.append(k, String(v));
    } catch (e) {
      throw new LuaArgError(`http.request: argument ${optsIdx} (${name}) field 'headers': ${e.message}`);
    }
  }
  let body;
  const rawBody = opts.body;
  if (rawBody === void 0) body = void 0;
  else if (typeof rawBody === "string" || rawBody instanceof Uint8Array) body = rawBody;
  else if (luaTypeName(rawBody) === "table") {
    try {
      body = stringifyJson(rawBody);
    } catch (e) {
      throw new LuaArgError(`http.request: argument ${optsIdx} (${name}) field 'body': ${e.message}`);
    }
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  } else {
    throw new LuaArgError(`http.request: argument ${optsIdx} (${name}) field 'body' must be a string or a table, got ${luaTypeName(rawBody)}`);
  }
  const method = (field("method", "string") ?? (body !== void 0 ? "POST" : "GET")).toUpperCase();
  if (!/^[A-Z]+$/.test(method)) {
    throw new LuaArgError(`http.request: argument ${optsIdx} (${name}) field 'method' is not an HTTP method: '${method}'`);
  }
  const timeout = field("timeout", "number") ?? DEFAULT_TIMEOUT_S2;
  if (!(timeout > 0)) {
    throw new LuaArgError(`http.request: argument ${optsIdx} (${name}) field 'timeout' must be a positive number, got ${timeout}`);
  }
  const onEvent = field("on_event", "function");
  return {
    url,
    method,
    headers,
    body,
    timeoutMs: Math.min(timeout * 1e3, 2 ** 31 - 1),
    onEvent
  };
}
async function readAll(body) {
  if (!body) return new Uint8Array();
  return new Uint8Array(await new Response(body).arrayBuffer());
}
function describe2(e) {
  const err = e;
  const cause = err.cause instanceof Error ? err.cause.message : void 0;
  return cause && cause !== err.message ? `${err.message}: ${cause}` : String(err.message ?? e);
}
function installHttp(engine, _run) {
  engine.define("http.request", {
    functions: "ref",
    floats: "tagged",
    async: async (a, cx) => {
      const spec = readSpec(a);
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(new Error("timeout")), spec.timeoutMs);
      const onCancel = () => ac.abort(new Error("cancelled"));
      cx.signal.addEventListener("abort", onCancel);
      let callbackError;
      try {
        const res = await fetch(spec.url, {
          method: spec.method,
          headers: spec.headers,
          body: spec.body,
          signal: ac.signal
        });
        const headers = {};
        res.headers.forEach((v, k) => headers[k] = v);
        let body = new Uint8Array();
        if (spec.onEvent && res.body) {
          const parser = new SseParser();
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          outer: while (true) {
            const r = await reader.read();
            if (r.done) break;
            for (const ev of parser.push(r.value)) {
              try {
                const [keep] = await engine.callLua(spec.onEvent, [
                  ev
                ]);
                if (keep === false) {
                  await reader.cancel().catch(() => void 0);
                  break outer;
                }
              } catch (e) {
                callbackError = e;
                await reader.cancel().catch(() => void 0);
                throw e;
              }
            }
          }
        } else {
          body = await readAll(res.body);
        }
        return {
          ok: true,
          status: res.status,
          headers,
          body
        };
      } catch (e) {
        if (callbackError !== void 0) throw new Error(`http.request: on_event: ${e.message}`);
        const why = ac.signal.aborted ? String(ac.signal.reason?.message) === "timeout" ? `timed out after ${spec.timeoutMs / 1e3} s` : "cancelled" : describe2(e);
        return {
          ok: false,
          error: `http.request: ${spec.method} ${spec.url}: ${why}`
        };
      } finally {
        clearTimeout(timer);
        cx.signal.removeEventListener("abort", onCancel);
        spec.onEvent?.release();
      }
    }
  });
}

// src/host/standard.ts
var STANDARD_MODULES = [
  installIo,
  installOs,
  installTool,
  lazily({
    preload: [
      "knl.host"
    ]
  }, installKnl),
  lazily({
    tables: [
      "llm"
    ],
    preload: [
      "llm_proto.transport"
    ]
  }, installLlm),
  lazily({
    tables: [
      "std.fs"
    ]
  }, function installFsAndTools(engine, run2) {
    installFs(engine, run2);
    installFsTools(engine, run2);
  }),
  installJsonFile,
  installEnv,
  installPath,
  installTime,
  lazily({
    tables: [
      "sh"
    ]
  }, installSh),
  lazily({
    tables: [
      "std.kv",
      "std.sql",
      "std.ts"
    ]
  }, installStores),
  lazily({
    tables: [
      "bus"
    ]
  }, installBus),
  lazily({
    tables: [
      "http"
    ]
  }, installHttp),
  lazily({
    tables: [
      "mcp"
    ]
  }, installMcp)
];

// src/runtime/run.ts
function loadScript(spec) {
  if ("path" in spec.script) {
    const path = resolve3(spec.script.path);
    try {
      const info = Deno.statSync(path);
      if (info.isDirectory) return {
        error: `cannot read script ${spec.script.path}: it is a directory`
      };
      return {
        source: Deno.readFileSync(path),
        chunkname: "@" + displayPath(path),
        dir: dirname5(path),
        name: basename2(path)
      };
    } catch (e) {
      const why = e instanceof Deno.errors.NotFound ? "no such file" : e.message;
      return {
        error: `cannot read script ${spec.script.path}: ${why}`
      };
    }
  }
  const src = spec.script.source;
  return {
    source: typeof src === "string" ? new TextEncoder().encode(src) : src,
    chunkname: "@" + spec.script.name,
    dir: resolve3(spec.script.dir ?? spec.projectRoot),
    name: basename2(spec.script.name)
  };
}
function failed(message) {
  return {
    status: "failed",
    message,
    traceback: "",
    value: message
  };
}
async function runBlock(spec) {
  let projectRoot;
  try {
    projectRoot = Deno.realPathSync(spec.projectRoot);
    if (!Deno.statSync(projectRoot).isDirectory) {
      return failed(`project ${spec.projectRoot} is not a directory`);
    }
  } catch {
    return failed(`project directory ${spec.projectRoot} does not exist`);
  }
  const script = loadScript(spec);
  if ("error" in script) return failed(script.error);
  const stdout = spec.stdout ?? writeStdout;
  const stderr = spec.stderr ?? writeStderr;
  const log = Logger.fromEnv(script.name, stderr);
  const cleanups = [];
  let ending = "not-started";
  const procs = new ProcessGroups(spec.graceMs ?? graceFromEnv());
  const home = spec.home ?? agentBlockHome();
  const run2 = {
    projectRoot,
    scriptDir: script.dir,
    scriptName: script.name,
    home,
    labels: spec.labels ?? {},
    stdout,
    stderr,
    log,
    procs,
    mcpTimeoutMs: (spec.mcpTimeoutSecs ?? 30) * 1e3,
    onCleanup: (fn) => cleanups.push(fn)
  };
  const resolver = new ModuleResolver(libTiers(script.dir, projectRoot, home), spec.unseal ?? Deno.env.get("AGENT_BLOCK_UNSEAL") === "1", (m) => log.warn(m));
  const violations = resolver.checkSeals();
  if (violations.length && !resolver.unseal) {
    const v = violations[0];
    return failed(`sealed module '${v.module}' cannot be replaced from the filesystem: found ${v.file} (read the embedded one with require("embedded.${v.module}"); AGENT_BLOCK_UNSEAL=1 downgrades this to a warning)`);
  }
  for (const v of violations) {
    log.warn(`sealed module '${v.module}' is shadowed by ${v.file} (AGENT_BLOCK_UNSEAL=1)`);
  }
  let engine;
  try {
    engine = await LuaEngine.create(spec.limits ?? {});
    engine.onWarning = (m) => log.warn(m);
    installCore(engine, run2, resolver);
    for (const install of STANDARD_MODULES) install(engine, run2);
    for (const install of spec.modules ?? []) install(engine, run2);
    engine.exec(prelude_default, "=ab:prelude");
    engine.setGlobal("_SCRIPT_NAME", script.name);
    if (spec.prompt !== void 0) engine.setGlobal("_PROMPT", spec.prompt);
    if (spec.context !== void 0) engine.setGlobal("_CONTEXT", spec.context);
    for (const [k, v] of Object.entries(spec.globals ?? {})) engine.setGlobal(k, v);
    const compiled = engine.compile(stripShebang(script.source), script.chunkname);
    if (!compiled.ok) return failed(compiled.message);
    const r = await engine.runMain(compiled.ref, spec.signal);
    ending = r.kind === "returned" ? "returned" : r.kind;
    switch (r.kind) {
      case "returned":
        return {
          status: "returned",
          result: r.values[0]
        };
      case "exit":
        return r.reason !== void 0 && r.code === 75 ? {
          status: "deferred",
          reason: r.reason
        } : {
          status: "exited",
          code: r.code
        };
      case "stopped":
        return {
          status: "stopped",
          reason: r.reason
        };
      default: {
        let message = r.message;
        if (/not enough memory/.test(message) && spec.limits?.memoryBytes) {
          message = `memory limit exceeded: the script needed more than ${Math.round(spec.limits.memoryBytes / 1048576)} MiB of Lua heap (${message})`;
        }
        return {
          status: "failed",
          message,
          traceback: r.traceback,
          value: r.value
        };
      }
    }
  } finally {
    for (const fn of cleanups.reverse()) {
      try {
        await fn(ending);
      } catch (e) {
        log.warn(`cleanup failed: ${e.message}`);
      }
    }
    await procs.endAll();
    engine?.close();
  }
}
function graceFromEnv() {
  const raw = Deno.env.get("AGENT_BLOCK_TASK_GRACE_MS");
  const n = raw ? Number(raw) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : 1e3;
}
function stripShebang(src) {
  if (src[0] !== 35) return src;
  const out = src.slice();
  for (let i = 0; i < out.length && out[i] !== 10; i++) out[i] = 32;
  out[0] = 45;
  out[1] = 45;
  return out;
}

export {
  parseFlags,
  runBlock
};
