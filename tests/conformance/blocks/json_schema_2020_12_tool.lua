--- Tool with JSON Schema 2020-12 features
---@tool json_schema_2020_12_tool
---@input {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
---  "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
---  "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
---  "additionalProperties": false}
return "Received: " .. std.json.encode(_ARGS)
