/**
 * `mcp.*` against the MCP reference server, `@modelcontextprotocol/server-everything` (a
 * 2025-era server on the v1 SDK), over stdio, Streamable HTTP and legacy SSE: era fallback,
 * tools, resources, templates, prompts, completion, progress counts, logging, sampling,
 * elicitation (form, and URL mode declined without reaching the handler), roots,
 * subscriptions and list changes.
 */
import assert from "node:assert/strict";
import { runLua } from "../../helpers.ts";
import { DENO, EVERYTHING, lq, type Peer, startEverything } from "./peers.ts";

const WALK = `
local R = {}
local function wait_until(pred, secs)
  local deadline = os.time() + (secs or 30)
  while not pred() do
    if os.time() > deadline then return false end
    std.task.sleep(0.05)
  end
  return true
end
local function all_text(r)
  if not r.ok then return "ERROR " .. r.error end
  local parts = {}
  for _, b in ipairs(r.content) do if b.type == "text" then parts[#parts + 1] = b.text end end
  return table.concat(parts, " | ")
end
local tools_changed, updates, logs = 0, 0, 0
mcp.on_tools_list_changed("ev", function(ev) tools_changed = tools_changed + 1 end)
mcp.on_resource_update("ev", function(ev) updates = updates + 1; R.update_ev = ev end)
mcp.on_log("ev", function(level, logger, data) logs = logs + 1 end)
local root = "file:///work/demo"
mcp.set_roots_handler("ev", function(server) return { { uri = root, name = "demo-" .. server } } end)
local sampling_model = "lua-sampler"
mcp.set_sampling_handler("ev", function(params)
  return { model = sampling_model, content = "sampled: " .. params.messages[1].content.text, stop_reason = "endTurn" }
end)
local url_asked = 0
mcp.set_elicitation_handler("ev", function(server, message, schema_json)
  if message:find("http") then url_asked = url_asked + 1 end
  local schema = std.json.decode(schema_json)
  R.elicit_has_email = schema.properties.email ~= nil
  return { action = "accept", content = { name = "Ann Lua", check = true, email = "ann@example.com" } }
end)

CONNECT()

local info = mcp.server_info("ev").server_info
R.version = info.protocolVersion
R.name = info.serverInfo.name
R.ping = mcp.ping("ev").ok

-- tools registered after initialize (conditional on our capabilities) show up
wait_until(function()
  for _, t in ipairs(mcp.list_tools("ev").tools) do if t.name == "trigger-sampling-request" then return true end end
  return false
end, 10)
local names = {}
for _, t in ipairs(mcp.list_tools("ev").tools) do names[t.name] = true end
R.has_echo = names["echo"] == true
R.has_sampling_tool = names["trigger-sampling-request"] == true
R.has_url_tool = names["trigger-url-elicitation"] == true

R.echo = mcp.call("ev", "echo", { message = "hi" }).content[1].text
R.sum_invalid = mcp.call("ev", "get-sum", { a = "x" }).is_error

R.resources = #mcp.list_resources("ev").resources
R.templates = #mcp.list_resource_templates("ev").resource_templates
local first = mcp.list_resources("ev").resources[1].uri
R.read = mcp.read_resource("ev", first).contents[1].uri == first
R.prompts = #mcp.list_prompts("ev").prompts
R.args_prompt = mcp.get_prompt("ev", "args-prompt", { city = "Oslo", state = "N/A" }).messages[1].content.text
R.complete = mcp.complete("ev", { type = "ref/prompt", name = "completable-prompt" }, "department", "E").values
R.complete_ctx = mcp.complete("ev", { type = "ref/prompt", name = "completable-prompt" }, "name", "",
  { department = "Engineering" }).values

-- progress: every notification arrives, the last one included
local seen = 0
mcp.on_progress("ev", function(token, progress, total, message) seen = seen + 1; R.last_progress = { progress, total } end)
for i = 1, 3 do
  local r = mcp.call("ev", "trigger-long-running-operation", { duration = 0.3, steps = 5 })
  assert(r.ok, r.error)
end
R.progress_seen = seen

R.sampling = all_text(mcp.call("ev", "trigger-sampling-request", { prompt = "tell me", maxTokens = 50 }))
R.elicit = all_text(mcp.call("ev", "trigger-elicitation-request", {}))
if R.has_url_tool then
  R.url_elicit = all_text(mcp.call("ev", "trigger-url-elicitation", { url = "https://example.com/consent" }))
end
R.url_asked = url_asked

-- roots: the server asks for them after initialize and again after list_changed
R.roots = wait_until(function()
  local r = mcp.call("ev", "get-roots-list", {})
  return r.ok and r.content[1].text:find(root, 1, true) ~= nil
end, 15)
mcp.notify_roots_list_changed("ev")

-- logging
R.set_level = mcp.set_log_level("ev", "debug").ok
mcp.call("ev", "toggle-simulated-logging", {})
R.logs = wait_until(function() return logs > 0 end, 15)
mcp.call("ev", "toggle-simulated-logging", {})

-- subscriptions
R.subscribe = mcp.subscribe_resource("ev", first).ok
mcp.call("ev", "toggle-subscriber-updates", {})
R.updates = wait_until(function() return updates > 0 end, 15)
mcp.call("ev", "toggle-subscriber-updates", {})
R.update_uri_ok = R.update_ev and R.update_ev.uri == first and R.update_ev.type == "resource_update" and R.update_ev.server == "ev"
R.update_ev = nil
R.unsubscribe = mcp.unsubscribe_resource("ev", first).ok
R.tools_changed = tools_changed
mcp.disconnect("ev")
return std.json.encode(R)
`;

async function walk(connect: string): Promise<Record<string, unknown>> {
  const out = await runLua(WALK.replace("CONNECT()", connect));
  if (out.outcome.status !== "returned") {
    throw new Error(`walk failed: ${JSON.stringify(out.outcome)}\n${out.stderr}`);
  }
  return JSON.parse(String(out.outcome.value));
}

function check(r: Record<string, unknown>, transport: string): void {
  assert.deepEqual(r.version, "2025-11-25", "auto negotiation falls back to the 2025 era");
  assert.match(String(r.name), /everything/);
  assert.deepEqual(r.ping, true);
  assert.deepEqual(r.has_echo, true);
  assert.deepEqual(r.has_sampling_tool, true);
  assert.deepEqual(r.echo, "Echo: hi");
  assert.deepEqual(r.sum_invalid, true);
  assert((r.resources as number) > 0 && (r.templates as number) >= 2 && (r.prompts as number) >= 3);
  assert.deepEqual(r.read, true);
  assert.match(String(r.args_prompt), /Oslo/);
  assert.deepEqual(r.complete, ["Engineering"]);
  assert((r.complete_ctx as string[]).length > 0);
  assert.deepEqual(r.progress_seen, 15);
  assert.deepEqual(r.last_progress, [5, 5]);
  assert.match(String(r.sampling), /lua-sampler/);
  assert.match(String(r.sampling), /sampled: /);
  assert.deepEqual(r.elicit_has_email, true);
  assert.match(String(r.elicit), /Ann Lua/);
  assert.deepEqual(r.has_url_tool, true);
  assert.match(String(r.url_elicit), /declined/);
  assert.deepEqual(r.url_asked, 0);
  assert.deepEqual(r.roots, true);
  assert.deepEqual(r.set_level, true);
  assert.deepEqual(r.logs, true);
  assert.deepEqual(r.subscribe, true);
  assert.deepEqual(r.updates, true);
  assert.deepEqual(r.update_uri_ok, true);
  assert.deepEqual(r.unsubscribe, true);
  assert((r.tools_changed as number) > 0, `tools/list_changed seen over ${transport}`);
}

Deno.test("mcp.* against server-everything (2025 era) over stdio, Streamable HTTP and SSE", async (t) => {
  const peers: Peer[] = [];
  try {
    await t.step("stdio", async () => {
      check(
        await walk(
          `assert(mcp.connect("ev", ${lq(DENO)}, { "run", "-A", "--quiet", ${lq(EVERYTHING)}, "stdio" }))`,
        ),
        "stdio",
      );
    });
    const http = await startEverything("streamableHttp");
    peers.push(http);
    await t.step("Streamable HTTP", async () => {
      check(await walk(`assert(mcp.connect_http("ev", ${lq(http.url)}))`), "http");
    });
    const sse = await startEverything("sse");
    peers.push(sse);
    await t.step("SSE", async () => {
      check(await walk(`assert(mcp.connect_http("ev", ${lq(sse.url)}, { transport = "sse" }))`), "sse");
    });
  } finally {
    for (const p of peers) await p.stop();
  }
});
