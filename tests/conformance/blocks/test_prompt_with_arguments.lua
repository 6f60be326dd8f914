--- A prompt with required arguments
---@prompt test_prompt_with_arguments
---@param arg1 string First test argument
---@param arg2 string Second test argument
return string.format("Prompt with arguments: arg1='%s', arg2='%s'", _ARGS.arg1, _ARGS.arg2)
