-- An end-to-end agent.run example that needs no network: the model is the shipped replay script
-- hello_agent.replay.jsonl, which calls the Lua tool `word_count` once and then answers.
--
-- Run it:  agent-block -b hello_agent
-- Read what it did:  agent-block knl export --session <session_id> --as messages
-- Point it at a real model by dropping `provider`/`replay` (ANTHROPIC_API_KEY) or setting
-- provider = "openai" (OPENAI_API_KEY, or base_url for a local server).
local agent = require("agent")

tool.register("word_count", {
  description = "Counts the words in a text.",
  input_schema = {
    type = "object",
    properties = { text = { type = "string", description = "The text to count" } },
    required = { "text" },
  },
}, function(input)
  local n = 0
  for _ in tostring(input.text):gmatch("%S+") do n = n + 1 end
  return { words = n }
end)

local result = agent.run({
  provider = "replay",
  replay = "hello_agent.replay.jsonl", -- resolved beside this block, then at the project root
  prompt = _PROMPT or "How many words are in 'the quick brown fox jumps'?",
  system = "You are a precise assistant. Use tools to count.",
  max_iterations = 4,
})

local out = std.json.encode({
  ok = result.ok,
  stop_reason = result.stop_reason,
  content = result.content,
  num_turns = result.num_turns,
  usage = result.usage,
  error = result.error,
  session_id = result.session_id, -- the run's session in the project's kernel database
})
print(out)
return out
