--- Tests response with multiple content types (text, image, resource)
---@tool test_multiple_content_types
return {
  content = {
    { type = "text", text = "Multiple content types test:" },
    { type = "image", data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC", mimeType = "image/png" },
    {
      type = "resource",
      resource = {
        uri = "test://mixed-content-resource",
        mimeType = "application/json",
        text = std.json.encode({ test = "data", value = 123 }),
      },
    },
  },
}
