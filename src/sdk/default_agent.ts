/**
 * The default agent's Lua source (`ScriptSource.defaultAgent()`): one `agent.run` over the run's
 * input, run as the block's main chunk `default_agent.lua`.
 *
 * `_PROMPT` is the prompt and `_CONTEXT` the system prompt; `_DEFAULT_AGENT` (set by the SDK,
 * converted natively, never spliced into the source) holds the MCP servers to connect and further
 * `agent.run` options. Every registered tool is offered, host tools included. A successful run is
 * emitted as the event `agent_result` (the result table: `content`, `usage`, `num_turns`, ...) and
 * returns its `content`; a failed one raises `agent.run`'s error and emits nothing.
 *
 * Kept as a string here rather than a `.lua` file: it is a block, not a runtime chunk, so it has
 * no place among the precompiled `=ab:` chunks of `src/**\/*.lua`.
 */

/** The chunk name its errors show. */
export const DEFAULT_AGENT_NAME = "default_agent.lua";

/** The source. */
export const DEFAULT_AGENT_SOURCE = `local agent = require("agent")
local config = _DEFAULT_AGENT or {}
local opts = {}
for k, v in pairs(config.agent_options or {}) do opts[k] = v end
opts.prompt = _PROMPT
opts.system = _CONTEXT
if config.mcp_servers and #config.mcp_servers > 0 then opts.mcp_servers = config.mcp_servers end
local result = agent.run(opts)
if not result.ok then error(result.error or "agent.run failed", 0) end
bus.emit("agent_result", result)
return result.content
`;
