--- A resource template with parameter substitution
---@resource test://template/{id}/data Resource Template
---@mime application/json
return std.json.encode({ id = _ARGS.id, templateTest = true, data = "Data for ID: " .. _ARGS.id })
