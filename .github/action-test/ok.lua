-- action-test.yml: a block that returns, for the action's `result` output.
return std.json.encode({ prompt = _PROMPT, context = _CONTEXT })
