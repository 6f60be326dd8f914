--- Asks the client's model a question (one input request, key capital_question)
---@tool test_input_required_result_sampling
local a = mcp.client.ask({
  capital_question = {
    method = "sampling/createMessage",
    params = {
      messages = { { role = "user", content = { type = "text", text = "What is the capital of France?" } } },
      maxTokens = 100,
    },
  },
})
local c = a.capital_question.content
return "Sampling response: " .. tostring(type(c) == "table" and c.text or "(no text)")
