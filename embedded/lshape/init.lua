--- lshape: schemas as plain Lua data, validation, reflection and LuaCATS generation.
--
-- Owns the entry table: `lshape.t` (combinators), `lshape.check` (validation), `lshape.reflect`
-- (walking a schema) and `lshape.luacats` (annotations for editors), each also reachable as its
-- own module (`require("lshape.check")`). Pure Lua, no host calls, so a schema is a value that
-- can be built at load time, stored in a device, and read by another module.
--
-- Sealed with the kernel: `knl_types` declares the kernel's shapes with it, and the kernel
-- checks what crosses its boundary (Port responses, devices) against those declarations.
local M = {}
M.t = require("lshape.t")
M.check = require("lshape.check")
M.reflect = require("lshape.reflect")
M.luacats = require("lshape.luacats")
M.VERSION = "1.0"
return M
