--- compile_loop: the older tool factory for an edit → run → fix loop, kept as a compatibility
-- module over `coding.run` (seed 002's changelog: "Embed the compile_loop StdPkg into core").
--
-- `make(conf)` registers a tool (`tool.register`, default name `compile_loop`) and returns it as
-- `{ name, schema, handler }`, as the older API did. `conf`: `runner` (required: a function given
-- the target's absolute path — a list of them for `target_files` — answering `{ ok, stdout,
-- stderr, code }`; `ok` nil means `code == 0`), `llm = { provider, base_url, api_key, api_key_env,
-- model, max_tokens, temperature, disable_thinking, timeout, replay }` (the provider defaults to
-- `openai`, as it did), `max_iters` (default 5), `lang` (default `lua`), `name`, `system`,
-- `on_iter(entry)` (called after each iteration with `coding.run`'s iteration info) and
-- `edit_mode`, `target_func` (accepted; the loop's edits are `coding`'s file tools either way).
-- The tool's input: `spec` (required), `target_file` XOR `target_files`, `lang`. Relative target
-- paths are taken from the run's working directory (the project root unless the caller named
-- another); a target must lie inside the project root, where `coding`'s file tools may write.
--
-- The handler answers a JSON string `{ ok, artifact_path, modified_files, iters, summary,
-- failure_reason, last_error }` (`summary`: "PASS in N iters", or "give-up: ..."), never raises
-- for what the loop did; a bad input raises, as it did.
local coding = require("coding")

local type, ipairs, tostring, error, pcall, sformat, concat = type, ipairs, tostring, error, pcall, string.format, table.concat

local M = {}

local SCHEMA = {
  type = "object",
  properties = {
    spec = { type = "string", description = "What the code must do" },
    target_file = { type = "string", description = "The file to write (or target_files)" },
    target_files = { type = "array", items = { type = "string" }, description = "The files to write" },
    lang = { type = "string", description = "The language (default: the tool's)" },
  },
  required = { "spec" },
}

local LLM_FIELDS = { "base_url", "api_key", "api_key_env", "model", "max_tokens", "temperature", "timeout", "replay" }

local function targets_of(input)
  local one, many = input.target_file, input.target_files
  if one ~= nil and many ~= nil then error("compile_loop: give target_file or target_files, not both", 0) end
  if one == nil and many == nil then error("compile_loop: target_file or target_files is required", 0) end
  local list = one ~= nil and { one } or many
  if type(list) ~= "table" or #list == 0 then error("compile_loop: target_files must be a non-empty list", 0) end
  local root = std.env.project_root()
  local abs, rel = {}, {}
  for i, p in ipairs(list) do
    if type(p) ~= "string" or p == "" then error(sformat("compile_loop: target %d must be a non-empty string", i), 0) end
    abs[i] = std.path.abs(p)
    if abs[i]:sub(1, #root + 1) ~= root .. "/" then
      error(sformat("compile_loop: %s is outside the project root %s", p, root), 0)
    end
    rel[i] = abs[i]:sub(#root + 2)
  end
  return abs, rel, one == nil
end

local function summary_of(r, max)
  if r.ok then return sformat("PASS in %d iters", r.iterations), nil end
  local reason = r.stop_reason
  if reason == "stagnated" then
    return sformat("give-up: stagnation at iter %d/%d (the same failure twice)", r.iterations, max), "stagnation"
  elseif reason == "max_iterations" then
    return sformat("give-up: max_iters reached (%d)", max), "max_iters"
  elseif reason == "error" then
    return sformat("give-up: llm_call failed at iter %d/%d", r.iterations, max), "llm_call"
  end
  return "give-up: " .. tostring(reason), tostring(reason)
end

--- The tool (see the header): registered, and returned as `{ name, schema, handler }`.
function M.make(conf)
  if type(conf) ~= "table" or type(conf.runner) ~= "function" then
    error("compile_loop.make: conf.runner must be a function", 2)
  end
  local name = conf.name or "compile_loop"
  local max = conf.max_iters or 5
  local llm = conf.llm or {}
  local function handler(input)
    if type(input) ~= "table" or type(input.spec) ~= "string" or input.spec == "" then
      error("compile_loop: spec is required", 0)
    end
    local abs, rel, multi = targets_of(input)
    local lang = input.lang or conf.lang or "lua"
    local opts = {
      prompt = sformat("%s\n\nWrite it in %s, in %s.", input.spec, lang, concat(rel, ", ")),
      files = rel,
      allow_write = true,
      verify_first = false,
      max_iterations = max,
      system = conf.system,
      provider = llm.provider or "openai",
      verify = function()
        local r = conf.runner(multi and abs or abs[1])
        if type(r) ~= "table" then r = { ok = r == true } end
        local code = r.code or r.exit_code
        local ok = r.ok
        if ok == nil then ok = code == 0 end
        return { code = ok and 0 or ((code ~= nil and code ~= 0) and code or 1), stdout = r.stdout or "", stderr = r.stderr or "" }
      end,
      on_iteration = conf.on_iter and function(info) conf.on_iter(info) end or nil,
    }
    for _, k in ipairs(LLM_FIELDS) do opts[k] = llm[k] end
    if llm.disable_thinking then opts.thinking = false end
    local r = coding.run(opts)
    local summary, reason = summary_of(r, max)
    local lv = r.last_verify or {}
    local out = {
      ok = r.ok,
      artifact_path = abs[1],
      modified_files = r.modified_files,
      iters = r.iterations,
      summary = summary,
      failure_reason = reason,
      last_error = (not r.ok) and (r.stop_reason == "error" and r.error
        or (lv.stderr_tail ~= nil and lv.stderr_tail ~= "" and lv.stderr_tail) or lv.stdout_tail or r.error) or nil,
    }
    local ok, text = pcall(std.json.encode, out)
    return ok and text or '{"ok":false,"failure_reason":"encode_failed","summary":"give-up: encode_failed"}'
  end
  tool.register(name, { description = "Writes code from a spec, runs it, and fixes it until the runner passes.", input_schema = SCHEMA }, handler)
  return { name = name, schema = SCHEMA, handler = handler }
end

return M
