--- A prompt that includes image content
---@prompt test_prompt_with_image
return {
  messages = {
    { role = "user", content = { type = "image", data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC", mimeType = "image/png" } },
    { role = "user", content = "Please analyze the image above." },
  },
}
