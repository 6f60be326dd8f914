--- A prompt that includes an embedded resource
---@prompt test_prompt_with_embedded_resource
---@param resourceUri string URI of the resource to embed
return {
  messages = {
    {
      role = "user",
      content = {
        type = "resource",
        resource = { uri = _ARGS.resourceUri, mimeType = "text/plain", text = "Embedded resource content for testing." },
      },
    },
    { role = "user", content = "Please process the embedded resource above." },
  },
}
