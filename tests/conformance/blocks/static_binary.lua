--- A static binary resource (image) for testing
---@resource test://static-binary Static Binary Resource
---@mime image/png
return { blob = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC" }
