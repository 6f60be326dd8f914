--- knl_types: the kernel's shapes, declared once with lshape.
--
-- Owns the declarations the kernel checks at its boundary and publishes for editors:
-- `Event` (a row of the published table), `Usage`, `ContentBlock`, `Response` (what a Port's
-- `chat` must return), `Request` (what a beat sends), `ToolSpec`, `Budget`, `SessionOpts`,
-- `DeviceSpec` and `Outcome`. `luacats()` renders them as LuaCATS classes prefixed `knl.`.
--
-- Sealed with `knl`: a Port that answers outside `Response` makes the beat an `error` outcome
-- naming the field, instead of a confusing failure three calls later. Changing a shape here is a
-- change of the kernel's contract, which is why a project cannot shadow this module.
local lshape = require("lshape")
local T = lshape.t
local M = {}

M.Usage = T.named("Usage", T.shape({
  input_tokens = T.number,
  output_tokens = T.number,
  total_tokens = T.number:optional(),
  cache_read_input_tokens = T.number:optional(),
  cache_creation_input_tokens = T.number:optional(),
  thinking_tokens = T.number:optional(),
}))

M.ContentBlock = T.named("ContentBlock", T.discriminated("type", {
  text = T.shape({ type = T.literal("text"), text = T.string }),
  tool_use = T.shape({ type = T.literal("tool_use"), id = T.string, name = T.string, input = T.table }),
  thinking = T.shape({ type = T.literal("thinking"), thinking = T.string, signature = T.string:optional() }),
  tool_result = T.shape({ type = T.literal("tool_result"), tool_use_id = T.string, content = T.any,
    is_error = T.boolean:optional() }),
}))

M.Response = T.named("Response", T.shape({
  content = T.array_of(M.ContentBlock):describe("normalised content blocks"),
  stop_reason = T.string:optional(),
  usage = M.Usage:optional(),
  model = T.string:optional(),
  context_management = T.table:optional()
    :describe("what the server reports it did to the context (Anthropic context editing); kept in llm_response"),
}))

M.Message = T.named("Message", T.shape({
  role = T.one_of("user", "assistant"),
  content = T.any_of(T.string, T.array_of(M.ContentBlock)),
}))

M.ToolSpec = T.named("ToolSpec", T.shape({
  name = T.pattern("^[%w_%-%.]+$"),
  description = T.string,
  input_schema = T.table:optional(),
}))

M.Request = T.named("Request", T.shape({
  messages = T.array_of(M.Message),
  system = T.string:optional(),
  tools = T.array_of(M.ToolSpec):optional(),
  tool_choice = T.any:optional(),
  max_tokens = T.integer:optional(),
}))

M.Budget = T.named("Budget", T.shape({
  amount = T.number:describe("what the owner granted"),
  tag = T.string:optional():describe("unit: beats (default), tokens, or anything a device's cost returns"),
}))

M.SessionOpts = T.named("SessionOpts", T.shape({
  owner = T.string:optional(),
  budget = M.Budget:optional(),
  scope = T.any:optional(),
  labels = T.map_of(T.string, T.any):optional(),
  store = T.any:optional():describe('nil (the project database), "mem", or { sqlite = path }'),
  children = T.array_of(T.table):optional(),
}))

M.DeviceSpec = T.named("DeviceSpec", T.shape({
  llm = T.table:describe("a Port: port:chat(request) -> Response"),
  tools = T.table:optional():describe("a ToolPort (knl_adapter.tools) or a list of flat specs"),
  tool_policy = T.any_of(T.func, T.table):optional(),
  fold = T.func:optional(),
  filters = T.array_of(T.func):optional(),
  system = T.string:optional(),
  cost = T.func:optional(),
}))

M.Event = T.named("Event", T.shape({
  position = T.integer,
  stream = T.string,
  seq = T.integer,
  epoch_ms = T.integer,
  kind = T.string,
  schema_version = T.integer,
  meta = T.table,
  data = T.table,
}))

M.Outcome = T.named("Outcome", T.shape({
  kind = T.one_of("ok", "refused", "error", "stopped"),
  beat = T.integer:optional(),
  out = T.table:optional(),
  reason = T.string:optional(),
  error = T.string:optional(),
}))

--- The declarations as LuaCATS classes (`knl.Event`, ...).
function M.luacats()
  local shapes = {}
  for name, s in pairs(M) do
    if lshape.t.is_schema(s) then shapes[name] = s end
  end
  return lshape.luacats.gen(shapes, "knl.")
end

return M
