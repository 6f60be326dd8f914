--- Tests elicitation with enum schema improvements per SEP-1330
---@tool test_elicitation_sep1330_enums
local r = mcp.client.elicit("Please select options from the enum fields", {
  type = "object",
  properties = {
    untitledSingle = { type = "string", description = "Select one option", enum = { "option1", "option2", "option3" } },
    titledSingle = {
      type = "string",
      description = "Select one option with titles",
      oneOf = {
        { const = "value1", title = "First Option" },
        { const = "value2", title = "Second Option" },
        { const = "value3", title = "Third Option" },
      },
    },
    legacyEnum = {
      type = "string",
      description = "Select one option (legacy)",
      enum = { "opt1", "opt2", "opt3" },
      enumNames = { "Option One", "Option Two", "Option Three" },
    },
    untitledMulti = {
      type = "array",
      description = "Select multiple options",
      items = { type = "string", enum = { "option1", "option2", "option3" } },
    },
    titledMulti = {
      type = "array",
      description = "Select multiple options with titles",
      items = {
        anyOf = {
          { const = "value1", title = "First Choice" },
          { const = "value2", title = "Second Choice" },
          { const = "value3", title = "Third Choice" },
        },
      },
    },
  },
})
return "Elicitation completed: action=" .. r.action .. ", content=" .. std.json.encode(r.content or {})
