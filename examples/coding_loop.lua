-- coding_loop: a block over `coding.run` — edit the project's files until a verify command passes.
--
--   agent-block -s examples/coding_loop.lua -p <project> --prompt "make the failing spec pass" \
--     -c "agent-block test spec/calc_spec.lua"
--
-- The prompt is the task. The context (`-c`) is the verify command, or a JSON object
-- { "verify": "...", "files": ["src/**/*.lua"], "max_iterations": 5, "budget_tokens": 200000,
--   "budget_usd": 0.5, "rollback": true, "provider": "anthropic", "model": "...", "replay": "..." }.
-- Prints one line per iteration and the result as JSON; exits 0 when verify passed, else 1.
local coding = require("coding")
local policy = require("policy")

local task = _PROMPT
if type(task) ~= "string" or task == "" then
  io.stderr:write("coding_loop: pass the task as the prompt (--prompt)\n")
  os.exit(2)
end

local ctx = {}
if type(_CONTEXT) == "string" and _CONTEXT ~= "" then
  local ok, v = pcall(std.json.decode, _CONTEXT)
  if ok and type(v) == "table" then ctx = v else ctx = { verify = _CONTEXT } end
end
if type(ctx.verify) ~= "string" or ctx.verify == "" then
  io.stderr:write("coding_loop: pass the verify command as the context (-c \"<command>\" or -c '{\"verify\": ...}')\n")
  os.exit(2)
end

local budget
if ctx.budget_usd then budget = policy.budget.usd(ctx.budget_usd)
elseif ctx.budget_tokens then budget = policy.budget.tokens(ctx.budget_tokens) end

local r = coding.run({
  prompt = task,
  verify = ctx.verify,
  files = ctx.files,
  max_iterations = ctx.max_iterations,
  budget = budget,
  rollback = ctx.rollback == true,
  provider = ctx.provider,
  model = ctx.model,
  replay = ctx.replay,
  base_url = ctx.base_url,
  filters = { policy.filters.redact(), policy.filters.cap_tool_output(20000) },
  on_iteration = function(info)
    io.stderr:write(string.format("iteration %d: %d edit(s), verify exit %s\n", info.iteration, info.edits,
      tostring(info.last_verify.code)))
  end,
})
print(std.json.encode(r))
if not r.ok then os.exit(1) end
