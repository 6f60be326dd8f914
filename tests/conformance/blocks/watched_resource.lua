--- A resource that can be subscribed to
---@resource test://watched-resource Watched Resource
return "Watched resource content"
