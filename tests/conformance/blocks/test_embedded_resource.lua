--- Tests embedded resource content response
---@tool test_embedded_resource
return {
  content = {
    {
      type = "resource",
      resource = { uri = "test://embedded-resource", mimeType = "text/plain", text = "This is an embedded resource content." },
    },
  },
}
