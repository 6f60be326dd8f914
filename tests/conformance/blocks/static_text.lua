--- A static text resource for testing
---@resource test://static-text Static Text Resource
return "This is the content of the static text resource."
