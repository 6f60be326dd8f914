--- agent-block: the library calls that could run for long without a Lua instruction, made
-- interruptible — string matching and `table.sort` with a comparator.
--
-- Why: the watchdog (src/lua/watchdog.ts) sees a run only at Lua instructions. A C library call
-- runs none: a pathological pattern (`("a"):rep(5000):find("a*a*a*b")`, hours in C) could not be
-- ended by the CPU limit or a signal, and Lua called back from C (a sort comparator, a gsub
-- callback) cannot yield, so the run could not return to the event loop in between.
--
-- Owns:
-- - `string.find`, `match`, `gmatch`, `gsub`: the C functions when the call is cheap — the
--   pattern is well formed and its worst case on this subject is at most `limits.cheap` steps (see
--   src/lua/interruptible.ts, `str_info`) — else the ported matcher (src/lua/lpattern.ts), which
--   counts its steps: it stops between two start positions when the run is due to return to the
--   event loop (this side then yields and goes on), and ends a match that backtracks past the
--   bound with an error. Answers and errors are the C functions' (tests/lua/lpattern_test.ts).
-- - `gsub` with a function or a table runs its loop here, in Lua: the callback may yield (make
--   host calls) and is preempted like any Lua.
-- - `table.sort` with a comparator: lua 5.4's quicksort (ltablib.c) in Lua, same comparisons in
--   the same order (the pivot randomisation aside), so the comparator may yield too. Without a
--   comparator the C sort runs (its comparisons run no Lua unless elements have `__lt`).
--
-- Invariants:
-- - Argument errors read as the C functions' ("bad argument #1 to 'find' (string expected, got
--   nil)") and point at the caller's line.
-- - The runtime and the prelude keep the C functions (`R.cstring`): their patterns are their own.
--
-- Loaded by src/lua/engine.ts right after the runtime, with the runtime and the primitives table.
local R, H = ...
local type, tostring, tonumber, select, error, pcall, rawget = type, tostring, tonumber, select, error, pcall, rawget
local sformat, sbyte, ssub = string.format, string.byte, string.sub
local cfind, cmatch, cgmatch, cgsub = string.find, string.match, string.gmatch, string.gsub
local csort, tconcat, pack, unpack = table.sort, table.concat, table.pack, table.unpack
local math_type, tointeger = math.type, math.tointeger
local co_yield = coroutine.yield
local getinfo, rawmeta = debug.getinfo, debug.getmetatable
local str_info, str_search, str_batch, str_gsub = H.str_info, H.str_search, H.str_batch, H.str_gsub
local preempt_now = H.preempt_now

R.cstring = { find = cfind, match = cmatch, gmatch = cgmatch, gsub = cgsub }

--- Most steps the C matcher may take in one call (its worst case): about 10 to 50 ms. A table so
-- that a test can send every call to the ported matcher (tests/lua/lpattern_test.ts).
local limits = { cheap = 2 ^ 22 }
R.matcher_limits = limits

-- Arguments -------------------------------------------------------------------------------------

local function typename(v, present)
  if not present then return "no value" end
  local mt = rawmeta(v)
  if type(mt) == "table" then
    local name = rawget(mt, "__name")
    if type(name) == "string" then return name end
  end
  if type(v) == "userdata" then return "light userdata" end
  return type(v)
end

--- Raises `bad argument #n to 'fname' (msg)` as luaL_argerror does. `depth` is the number of
-- helper frames between this function and the library function.
local function argerror(n, qualified, msg, depth)
  local ar = getinfo(2 + depth, "n")
  local name = ar and ar.name
  if ar and ar.namewhat == "method" then
    n = n - 1
    if n == 0 then error(sformat("calling '%s' on bad self (%s)", name, msg), 3 + depth) end
  end
  if name == nil then name = qualified end
  error(sformat("bad argument #%d to '%s' (%s)", n, name, msg), 3 + depth)
end

local function checkstr(v, n, qualified, present)
  local t = type(v)
  if t == "string" then return v end
  if t == "number" then return tostring(v) end
  argerror(n, qualified, sformat("string expected, got %s", typename(v, present)), 1)
end

local function optint(v, n, qualified, default)
  if v == nil then return default end
  if math_type(v) == "integer" then return v end
  local x = type(v) == "string" and tonumber(v) or v
  if type(x) == "number" then
    local i = tointeger(x)
    if i then return i end
    argerror(n, qualified, "number has no integer representation", 1)
  end
  argerror(n, qualified, sformat("number expected, got %s", typename(v, true)), 1)
end

local function posrelat(pos, len)
  if pos > 0 then return pos end
  if pos == 0 or pos < -len then return 1 end
  return len + pos + 1
end

-- Choosing a matcher ----------------------------------------------------------------------------

local infos, ginfos, ninfos = {}, {}, 0

--- { captures, k } of pattern `p` when well formed, else false (see str_info).
local function info(p, gm)
  local cache = gm and ginfos or infos
  local i = cache[p]
  if i == nil then
    if ninfos >= 512 then
      infos, ginfos, ninfos = {}, {}, 0
      cache = gm and ginfos or infos
    end
    local valid, captures, k = str_info(p, gm)
    i = valid and { captures, k } or false
    cache[p] = i
    ninfos = ninfos + 1
  end
  return i
end

--- Whether the C matcher is safe for pattern info `i` on `n` bytes of subject.
local function cheap(i, n, anchored, plen)
  if not i then return false end
  local limit = limits.cheap
  local w = (anchored and 1 or (n + 1)) * (plen + 1)
  for _ = 1, i[2] do
    w = w * (n + 1)
    if w > limit then return false end
  end
  return w <= limit
end

local SPECIALS = "[%^%$%*%+%?%.%(%[%%%-]"

--- Yields towards the host for the watchdog's preemption (src/lua/watchdog.ts).
local function preempt()
  preempt_now()
  co_yield()
end

--- The ported matcher's answer, calling again after each preemption: `start, end, captures...`
-- or nil. `level` places its errors (frames above the function that called this one).
local function search(s, p, init, anchor, last, whole, plain, level, a, ...)
  if a == true then
    preempt()
    return search(s, p, init, anchor, last, whole, plain, level,
      str_search(s, p, (...), anchor, last, whole, plain, level))
  end
  if a == false then return nil end
  return a, ...
end

local function drop2(_, _, ...) return ... end

-- string.find / match ---------------------------------------------------------------------------

function string.find(...)
  local s, p, init, plain = ...
  local na = select("#", ...)
  s = checkstr(s, 1, "string.find", na >= 1)
  p = checkstr(p, 2, "string.find", na >= 2)
  local ls = #s
  init = posrelat(optint(init, 3, "string.find", 1), ls)
  if init > ls + 1 then return nil end
  local n = ls - init + 1
  if plain or not cfind(p, SPECIALS) then
    if (n + 1) * (#p + 1) <= limits.cheap then return cfind(s, p, init, true) end
    return search(s, p, init, true, -1, false, true, 2, str_search(s, p, init, true, -1, false, true, 2))
  end
  if cheap(info(p, false), n, sbyte(p, 1) == 94, #p) then return cfind(s, p, init) end
  return search(s, p, init, true, -1, false, false, 2, str_search(s, p, init, true, -1, false, false, 2))
end

function string.match(...)
  local s, p, init = ...
  local na = select("#", ...)
  s = checkstr(s, 1, "string.match", na >= 1)
  p = checkstr(p, 2, "string.match", na >= 2)
  local ls = #s
  init = posrelat(optint(init, 3, "string.match", 1), ls)
  if init > ls + 1 then return nil end
  if cheap(info(p, false), ls - init + 1, sbyte(p, 1) == 94, #p) then return cmatch(s, p, init) end
  return drop2(search(s, p, init, true, -1, true, false, 3, str_search(s, p, init, true, -1, true, false, 2)))
end

-- string.gmatch ---------------------------------------------------------------------------------

function string.gmatch(...)
  local s, p, init = ...
  local na = select("#", ...)
  s = checkstr(s, 1, "string.gmatch", na >= 1)
  p = checkstr(p, 2, "string.gmatch", na >= 2)
  local ls = #s
  init = posrelat(optint(init, 3, "string.gmatch", 1), ls)
  if init > ls + 1 then init = ls + 2 end
  if cheap(info(p, true), ls - init + 1, false, #p) then return cgmatch(s, p, init) end
  local buf, count, per, bi, state = {}, 0, 2, 0, 1
  local src, last = init, -1
  return function()
    while bi >= count do
      if state == 0 then return nil end
      if state == 2 then preempt() end
      count, per, src, last, state = str_batch(s, p, src, false, last, buf, 2)
      bi = 0
    end
    local base = bi * per
    bi = bi + 1
    return unpack(buf, base + 3, base + per)
  end
end

-- string.gsub -----------------------------------------------------------------------------------

--- Whether replacement string `repl` cannot make the C gsub raise, for a pattern with `ncap`
-- captures: every `%` is followed by `%` or by a digit naming a capture.
local function repl_ok(repl, ncap)
  if not cfind(repl, "%", 1, true) then return true end
  for c in cgmatch(repl, "%%(.?)") do
    if c ~= "%" then
      local d = tonumber(c)
      if not d or (d > ncap and not (d == 1 and ncap == 0)) then return false end
    end
  end
  return true
end

function string.gsub(...)
  local s, p, repl, maxn = ...
  local na = select("#", ...)
  s = checkstr(s, 1, "string.gsub", na >= 1)
  p = checkstr(p, 2, "string.gsub", na >= 2)
  local tr = type(repl)
  if tr ~= "string" and tr ~= "number" and tr ~= "function" and tr ~= "table" then
    argerror(3, "string.gsub", sformat("string/function/table expected, got %s", typename(repl, na >= 3)), 0)
  end
  local ls = #s
  maxn = optint(maxn, 4, "string.gsub", ls + 1)
  local anchored = sbyte(p, 1) == 94
  local i = info(p, false)
  local use_c = cheap(i, ls, anchored, #p)
  if tr == "string" or tr == "number" then
    repl = tostring(repl)
    if use_c and repl_ok(repl, i[1]) then return cgsub(s, p, repl, maxn) end
    local pieces, np = {}, 0
    local src, last, n, done, piece = 0, -1, 0, false, nil
    while true do
      done, piece, src, last, n = str_gsub(s, p, repl, maxn, src, last, n, 2)
      np = np + 1
      pieces[np] = piece
      if done then break end
      preempt()
    end
    if n == 0 then return s, 0 end
    return tconcat(pieces), n
  end
  -- A table or a function: the loop is here, so the callback runs as Lua that can yield.
  local ncap = i and i[1] or 0
  local out, no = {}, 0
  local src, last, n, changed = 1, -1, 0, false
  local function value(a, e, ...)
    if tr == "function" then
      if select("#", ...) == 0 then return repl(ssub(s, a, e)) end
      return repl(...)
    end
    if select("#", ...) == 0 then return repl[ssub(s, a, e)] end
    return repl[(...)]
  end
  local function emit(a, e, v)
    if a > src then
      no = no + 1
      out[no] = ssub(s, src, a - 1)
    end
    if not v then
      no = no + 1
      out[no] = ssub(s, a, e)
    elseif type(v) == "string" or type(v) == "number" then
      changed = true
      no = no + 1
      out[no] = tostring(v)
    else
      error(sformat("invalid replacement value (a %s)", type(v)), 3)
    end
    n = n + 1
    src, last = e + 1, e
  end
  if use_c then
    -- the C matcher, one match at a time (a match ending where the previous one did is passed over)
    local function got(init, a, e, ...)
      if a == nil then return nil end
      if e == last and a == last + 1 then
        if anchored or init > ls then return nil end
        return got(init + 1, cfind(s, p, init + 1))
      end
      return a, e, value(a, e, ...)
    end
    while n < maxn do
      local a, e, v = got(src, cfind(s, p, src))
      if a == nil then break end
      emit(a, e, v)
      if anchored then break end
    end
  else
    local buf, count, per, state, from, blast = {}, 0, 2, 1, 1, -1
    while n < maxn and state ~= 0 do
      if state == 2 then preempt() end
      count, per, from, blast, state = str_batch(s, p, from, true, blast, buf, 2)
      for j = 0, count - 1 do
        if n >= maxn then break end
        local base = j * per
        local a, e = buf[base + 1], buf[base + 2]
        emit(a, e, value(a, e, unpack(buf, base + 3, base + per)))
      end
    end
  end
  if not changed then return s, n end
  if src <= ls then
    no = no + 1
    out[no] = ssub(s, src)
  end
  return tconcat(out), n
end

-- table.sort ------------------------------------------------------------------------------------

local rnd_state = 0x2545F491
local function randomize()
  rnd_state = (rnd_state * 1103515245 + 12345) % 0x80000000
  return rnd_state
end

local sort -- the public table.sort (below)

--- Raises the C sort's error at the line that called `table.sort` (none when a C function did).
local function order_error()
  local level = 2
  while true do
    local ar = getinfo(level, "f")
    if not ar then break end
    if ar.func == sort then
      local caller = getinfo(level + 1, "Sl")
      if caller and caller.what ~= "C" and caller.currentline > 0 then
        error(sformat("%s:%d: invalid order function for sorting", caller.short_src, caller.currentline), 0)
      end
      break
    end
    level = level + 1
  end
  error("invalid order function for sorting", 0)
end

--- ltablib.c's auxsort over `a[lo..up]` with comparator `lt`.
local function auxsort(a, lo, up, lt, rnd)
  while lo < up do
    local x, y = a[lo], a[up]
    if lt(y, x) then a[lo], a[up] = y, x end
    if up - lo == 1 then break end
    local p
    if up - lo < 100 or rnd == 0 then
      p = (lo + up) // 2
    else
      local r4 = (up - lo) // 4
      p = rnd % (r4 * 2) + (lo + r4)
    end
    local ap, alo = a[p], a[lo]
    if lt(ap, alo) then
      a[p], a[lo] = alo, ap
    else
      local aup = a[up]
      if lt(aup, ap) then a[p], a[up] = aup, ap end
    end
    if up - lo == 2 then break end
    local P = a[p]
    a[p], a[up - 1] = a[up - 1], P
    -- partition: a[lo .. i] <= P <= a[j .. up], a[up - 1] == P
    local i, j = lo, up - 1
    while true do
      i = i + 1
      local ai = a[i]
      while lt(ai, P) do
        if i == up - 1 then order_error() end
        i = i + 1
        ai = a[i]
      end
      j = j - 1
      local aj = a[j]
      while lt(P, aj) do
        if j < i then order_error() end
        j = j - 1
        aj = a[j]
      end
      if j < i then
        a[up - 1], a[i] = ai, P
        p = i
        break
      end
      a[i], a[j] = aj, ai
    end
    local n
    if p - lo < up - p then
      auxsort(a, lo, p - 1, lt, rnd)
      n = p - lo
      lo = p + 1
    else
      auxsort(a, p + 1, up, lt, rnd)
      n = up - p
      up = p - 1
    end
    if (up - lo) // 128 > n then rnd = randomize() end
  end
end

function sort(...)
  local t, comp = ...
  local na = select("#", ...)
  if type(t) ~= "table" then
    local mt = rawmeta(t)
    if not (type(mt) == "table" and rawget(mt, "__index") and rawget(mt, "__newindex") and rawget(mt, "__len")) then
      argerror(1, "table.sort", sformat("table expected, got %s", typename(t, na >= 1)), 0)
    end
  end
  if comp ~= nil and type(comp) ~= "function" then
    argerror(2, "table.sort", sformat("function expected, got %s", typename(comp, true)), 0)
  end
  local n = #t
  if math_type(n) ~= "integer" then error("object length is not an integer", 2) end
  if n <= 1 then return end
  if n >= 0x7fffffff then argerror(1, "table.sort", "array too big", 0) end
  if comp == nil then
    local ok, err = pcall(csort, t)
    if ok then return end
    if err == "invalid order function for sorting" then error(err, 2) end
    error(err, 0)
  end
  auxsort(t, 1, n, comp, 0)
end
table.sort = sort
