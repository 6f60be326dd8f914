--- Tests audio content response
---@tool test_audio_content
return { content = { { type = "audio", data = "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA", mimeType = "audio/wav" } } }
