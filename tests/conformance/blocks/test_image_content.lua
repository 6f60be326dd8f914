--- Tests image content response
---@tool test_image_content
return { content = { { type = "image", data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC", mimeType = "image/png" } } }
