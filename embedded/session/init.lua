--- session: carrying a conversation from one run to the next, over the kernel's log.
--
-- `session.load(id, opts?)` returns a message list for `agent.run({ history = ... })`:
-- - when `id` is a kernel session id, the conversation folded from that session's events
--   (user messages, responses, tool results), exactly as a beat saw it;
-- - otherwise the messages last saved under the name `id` (`{}` when nothing was, or when the
--   name was cleared since).
-- `session.save(id, messages, opts?)` records the messages under the name `id`;
-- `session.clear(id, opts?)` records that the name is empty again (true if it held something).
--
-- Saving is an append like any other fact: each save or clear is a small kernel session (owner
-- `session`) whose event carries `meta.conversation = id`, so a saved conversation is found with
-- the published table alone and nothing is ever overwritten. `opts.store` picks the database
-- (`nil` = the project's, `"mem"`, `{ sqlite = path }`).
local knl = require("knl")
local types = require("knl_types")
local lcheck = require("lshape.check").check

local M = {}

local function check_id(fn, id)
  if type(id) ~= "string" or id == "" then
    error(string.format("session.%s: argument 1 (id) must be a non-empty string, got %s", fn,
      type(id) == "string" and "an empty string" or type(id)), 3)
  end
end

local function latest(store, id)
  local rows = store:query([[SELECT kind, data FROM events
    WHERE kind IN ('conversation_saved', 'conversation_cleared') AND json_extract(meta, '$.conversation') = ?
    ORDER BY position DESC LIMIT 1]], { id })
  return rows[1]
end

--- The conversation of kernel session `id`, or the messages last saved under the name `id`.
function M.load(id, opts)
  check_id("load", id)
  local store = knl.open(opts)
  if store:has(id) then
    local msgs = {}
    for _, ev in ipairs(store:events(id)) do knl.fold_event(msgs, ev.kind, ev.data) end
    return msgs
  end
  local row = latest(store, id)
  if not row or row.kind == "conversation_cleared" then return {} end
  return row.data.messages or {}
end

--- Records `messages` under the name `id`; returns the kernel session id that holds the save.
function M.save(id, messages, opts)
  check_id("save", id)
  if type(messages) ~= "table" then
    error("session.save: argument 2 (messages) must be a table, got " .. type(messages), 2)
  end
  for i, m in ipairs(messages) do
    local ok, why = lcheck(m, types.Message)
    if not ok then error(string.format("session.save: message %d: %s", i, why), 2) end
  end
  return knl.session({ owner = "session", store = opts and opts.store, labels = { conversation = id } }, function(s)
    s:append({ kind = "conversation_saved", data = { messages = std.json.array(messages) },
      meta = { conversation = id } })
    return s.id
  end)
end

--- Records that the name `id` holds nothing; true when it held something before.
function M.clear(id, opts)
  check_id("clear", id)
  local store = knl.open(opts)
  local row = latest(store, id)
  local had = row ~= nil and row.kind == "conversation_saved"
  knl.session({ owner = "session", store = opts and opts.store, labels = { conversation = id } }, function(s)
    s:append({ kind = "conversation_cleared", data = {}, meta = { conversation = id } })
  end)
  return had
end

--- The module's pure, I/O-free helpers, for specs (`session._test_helpers().check_id(...)`): a fresh table
-- each call, not part of the API (names and shapes may change with the code they test).
function M._test_helpers()
  return {
    check_id = check_id,
  }
end

return M
