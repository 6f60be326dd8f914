/**
 * `mcp.*` end to end against our echo server (a v2 SDK server serving both eras), over stdio and
 * Streamable HTTP, negotiated automatically (2026-07-28) and pinned to the 2025 era: every
 * function of the seed's list, handlers with their closures, progress counts, logs, list changes.
 */
import assert from "node:assert/strict";
import { runLua } from "../../helpers.ts";
import { DENO, ECHO, lq, type Peer, startEchoHttp } from "./peers.ts";

/** The Lua walk: connects with `connectExpr`, exercises everything, returns a JSON report. */
function walk(connectExpr: string): string {
  return `
local R = {}
local function wait_until(pred, secs)
  local deadline = os.time() + (secs or 20)
  while not pred() do
    if os.time() > deadline then return false end
    std.task.sleep(0.02)
  end
  return true
end
local tools_changed = 0
mcp.on_tools_list_changed("echo", function(ev) tools_changed = tools_changed + 1; R.tools_ev = ev end)
${connectExpr}
local info = mcp.server_info("echo")
R.version = info.server_info.protocolVersion
R.era = info.server_info.era
R.server_name = info.server_info.serverInfo.name
R.has_tools_cap = info.server_info.capabilities.tools ~= nil

local tl = mcp.list_tools("echo")
R.tools = {}
for _, t in ipairs(tl.tools) do R.tools[#R.tools + 1] = t.name end
R.noop_group = nil
for _, t in ipairs(tl.tools) do if t.name == "noop" then R.noop_group = t._meta and t._meta.group end end
R.resources = #mcp.list_resources("echo").resources
R.templates = mcp.list_resource_templates("echo").resource_templates[1].uriTemplate
R.hello = mcp.read_resource("echo", "text://hello").contents[1].text
R.prompts = mcp.list_prompts("echo").prompts[1].name
local gp = mcp.get_prompt("echo", "greet", { name = "bob" })
R.greet = gp.messages[1].content.text
R.complete_prompt = mcp.complete("echo", { type = "ref/prompt", name = "greet" }, "name", "wa").values
R.complete_resource = mcp.complete("echo", { type = "ref/resource", uri = "note://{id}" }, "id", "a").values
R.bad_ref = mcp.complete("echo", { type = "ref/nope" }, "x", "y").error

local r = mcp.call("echo", "echo", { msg = "hello" })
R.echo = r.content[1].text
R.echo_is_error = r.is_error

-- progress: 20 calls x 5 steps, every notification seen before its call returns
local seen, last_ok = 0, true
local current = 0
mcp.on_progress("echo", function(token, progress, total, message)
  seen = seen + 1
  current = progress
  R.progress_sample = { token = token, progress = progress, total = total, message = message }
end)
for i = 1, 20 do
  current = 0
  local res = mcp.call("echo", "slow_echo", { msg = "m" .. i, steps = 5 })
  if not res.ok or current ~= 5 then last_ok = false end
end
R.progress_seen = seen
R.progress_last_before_result = last_ok

-- sampling, with an upvalue
local model_name = "lua-model"
local sampled_params
mcp.set_sampling_handler("echo", function(params, server)
  sampled_params = params
  return { model = model_name, stop_reason = "endTurn", content = "answer to " .. params.messages[1].content.text }
end)
R.sample = mcp.call("echo", "sample", { prompt = "q1" }).content[1].text
R.sample_max_tokens = sampled_params.maxTokens

-- elicitation (form), closure intact; decline; handler error answered as an error
local asked = 0
mcp.set_elicitation_handler("echo", function(server, message, schema_json)
  asked = asked + 1
  local schema = std.json.decode(schema_json)
  return { action = "accept", content = { name = "Ann via " .. server .. " " .. message .. " " .. schema.required[1] } }
end)
R.ask = mcp.call("echo", "ask", { message = "who?" }).content[1].text
mcp.set_elicitation_handler("echo", function() return { action = "decline" } end)
R.ask_decline = mcp.call("echo", "ask", { message = "who?" }).content[1].text
mcp.set_elicitation_handler("echo", function() error("handler exploded") end)
local bad = mcp.call("echo", "ask", { message = "who?" })
R.ask_error = (not bad.ok) or bad.is_error
R.ask_error_text = bad.error or (bad.content and bad.content[1] and bad.content[1].text)
-- URL mode never reaches the handler
asked = 0
mcp.set_elicitation_handler("echo", function() asked = asked + 1; return { action = "accept", content = {} } end)
R.ask_url = mcp.call("echo", "ask_url", {}).content[1].text
R.ask_url_handler_calls = asked

-- roots
local root_uri = "file:///projects/demo"
mcp.set_roots_handler("echo", function(server) return { { uri = root_uri, name = server } } end)
R.roots = mcp.call("echo", "roots", {}).content[1].text

-- era-specific functions
local p = mcp.ping("echo")
R.ping_ok = p.ok
R.ping_error = p.error
R.ping_latency = p.latency_ms
local ll = mcp.set_log_level("echo", "debug")
R.set_level_ok = ll.ok
R.set_level_error = ll.error

-- list changes
local before = mcp.tools_epoch("echo")
local added = mcp.call("echo", "bump", {}).content[1].text
R.tools_changed = wait_until(function() return tools_changed > 0 end)
R.epoch_moved = mcp.tools_epoch("echo") > before
local found = false
for _, t in ipairs(mcp.list_tools("echo").tools) do if t.name == added then found = true end end
R.new_tool_listed = found
R.tools_ev_type = R.tools_ev and R.tools_ev.type
R.tools_ev = nil

local lists = {}
mcp.on_resources_list_changed("echo", function(ev) lists[ev.type] = ev.server end)
mcp.on_prompts_list_changed("echo", function(ev) lists[ev.type] = ev.server end)
mcp.call("echo", "bump_lists", {})
R.lists_changed = wait_until(function() return lists.resources_list_changed and lists.prompts_list_changed end)
R.lists = lists

-- 2025 era: unsolicited resource updates reach on_resource_update
if R.era == "legacy" then
  local upd
  mcp.on_resource_update("echo", function(ev) upd = ev end)
  mcp.call("echo", "touch", { uri = "text://note" })
  R.touched = wait_until(function() return upd ~= nil end) and upd.uri
end

-- cancel and notify are fire-and-forget
mcp.cancel("echo", 999999)
mcp.notify_roots_list_changed("echo")
R.arg_array = mcp.call("echo", "echo", { "not", "an", "object" }).error

mcp.disconnect("echo")
R.after = mcp.call("echo", "echo", { msg = "x" }).error
R.after_info = mcp.server_info("echo").ok
mcp.disconnect("echo") -- unknown name: fine
return std.json.encode(R)
`;
}

interface Report {
  [k: string]: unknown;
}

async function runWalk(connectExpr: string): Promise<{ r: Report; stderr: string }> {
  const out = await runLua(walk(connectExpr));
  if (out.outcome.status !== "returned") {
    throw new Error(`walk failed: ${JSON.stringify(out.outcome)}\n${out.stderr}`);
  }
  return { r: JSON.parse(String(out.outcome.value)), stderr: out.stderr };
}

function check(r: Report, stderr: string, modern: boolean): void {
  assert.deepEqual(r.version, modern ? "2026-07-28" : "2025-11-25");
  assert.deepEqual(r.era, modern ? "modern" : "legacy");
  assert.deepEqual(r.server_name, "echo-mcp-server");
  assert((r.tools as string[]).includes("echo") && (r.tools as string[]).includes("slow_echo"));
  assert.deepEqual(r.noop_group, "bench");
  assert.deepEqual(r.resources, 2);
  assert.deepEqual(r.templates, "note://{id}");
  assert.deepEqual(r.hello, "hello world");
  assert.deepEqual(r.prompts, "greet");
  assert.deepEqual(r.greet, "hello, bob");
  assert.deepEqual(r.complete_prompt, ["wanda", "walter"]);
  assert.deepEqual(r.complete_resource, ["alpha"]);
  assert.match(String(r.bad_ref), /invalid ref kind 'ref\/nope'/);
  assert.deepEqual(r.echo, "hello");
  assert.deepEqual(r.echo_is_error, false);
  assert.deepEqual(r.progress_seen, 100);
  assert.deepEqual(r.progress_last_before_result, true);
  const ps = r.progress_sample as Report;
  assert.deepEqual([ps.progress, ps.total, ps.message], [5, 5, "step 5/5"]);
  assert.match(String(ps.token), /^ab-\d+$/);
  assert.deepEqual(r.sample, "lua-model: answer to q1");
  assert.deepEqual(r.sample_max_tokens, 100);
  assert.deepEqual(JSON.parse(String(r.ask)), {
    action: "accept",
    content: { name: "Ann via echo who? name" },
  });
  assert.deepEqual(JSON.parse(String(r.ask_decline)), { action: "decline", content: null });
  assert.deepEqual(r.ask_error, true);
  assert.match(stderr, /elicitation handler for server 'echo' failed/);
  assert.match(stderr, /handler exploded/);
  assert.deepEqual(r.ask_url, "decline");
  assert.deepEqual(r.ask_url_handler_calls, 0);
  assert.deepEqual(JSON.parse(String(r.roots)), [{ uri: "file:///projects/demo", name: "echo" }]);
  if (modern) {
    assert.deepEqual(r.ping_ok, false);
    assert.match(String(r.ping_error), /2026-07-28/);
    assert.match(String(r.ping_error), /no ping/);
    assert.deepEqual(r.set_level_ok, false);
    assert.match(String(r.set_level_error), /2026-07-28/);
  } else {
    assert.deepEqual(r.touched, "text://note");
    assert.deepEqual(r.ping_ok, true);
    assert(typeof r.ping_latency === "number");
    assert.deepEqual(r.set_level_ok, true);
  }
  assert.deepEqual(r.tools_changed, true);
  assert.deepEqual(r.epoch_moved, true);
  assert.deepEqual(r.new_tool_listed, true);
  assert.deepEqual(r.tools_ev_type, "tools_list_changed");
  assert.deepEqual(r.lists_changed, true);
  assert.deepEqual(r.lists, { resources_list_changed: "echo", prompts_list_changed: "echo" });
  assert.match(String(r.arg_array), /arguments must be a JSON object \(got array\)/);
  assert.match(String(r.after), /no server named 'echo'/);
  assert.deepEqual(r.after_info, false);
}

const stdioConnect = (era: string) =>
  `assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${
    lq(ECHO)
  }, "--test-tools", "--step-ms", "5" }, { era = ${lq(era)} }))`;

Deno.test("mcp.* against the echo server", async (t) => {
  let http: Peer | undefined;
  try {
    await t.step("stdio, negotiated 2026-07-28", async () => {
      const { r, stderr } = await runWalk(stdioConnect("auto"));
      check(r, stderr, true);
    });
    await t.step("stdio, 2025 era", async () => {
      const { r, stderr } = await runWalk(stdioConnect("legacy"));
      check(r, stderr, false);
    });
    http = await startEchoHttp(["--test-tools", "--step-ms", "5"]);
    const url = http.url;
    await t.step("Streamable HTTP, negotiated 2026-07-28", async () => {
      const { r, stderr } = await runWalk(`assert(mcp.connect_http("echo", ${lq(url)}))`);
      check(r, stderr, true);
    });
    await t.step("Streamable HTTP, 2025 era", async () => {
      const { r, stderr } = await runWalk(
        `assert(mcp.connect_http("echo", ${lq(url)}, { era = "legacy" }))`,
      );
      check(r, stderr, false);
    });
  } finally {
    await http?.stop();
  }
});

Deno.test("mcp.on_log receives the server's log notifications in both eras", async () => {
  for (const era of ["auto", "legacy"]) {
    const out = await runLua(`
      local logs = {}
      local prefix = "got"
      mcp.on_log("echo", function(level, logger, data) logs[#logs + 1] = prefix .. ":" .. level .. ":" .. logger .. ":" .. tostring(data) end)
      assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${
      lq(ECHO)
    }, "--emit-logs", "--log-interval-ms", "10" }, { era = ${lq(era)} }))
      local r = mcp.call("echo", "echo", { msg = "x" })
      assert(r.ok, r.error)
      return table.concat(logs, ",")
    `);
    assert.deepEqual(out.outcome.status, "returned", out.stderr);
    assert.deepEqual(
      String((out.outcome as { value: string }).value),
      [1, 2, 3, 4, 5].map((n) => `got:info:echo:tick ${n}`).join(","),
    );
  }
});

Deno.test("without mcp.on_log, server logs go to the run's log at the mapped level", async () => {
  const out = await runLua(`
    assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${
    lq(ECHO)
  }, "--emit-logs", "--log-interval-ms", "10" }))
    assert(mcp.call("echo", "echo", { msg = "x" }).ok)
    return "done"
  `);
  assert.deepEqual(out.outcome.status, "returned");
  assert.match(out.stderr, /\[info\] test\.lua: mcp server 'echo' \(echo\): tick 5/);
});

Deno.test("sampling through the echo tool (--request-sampling), and no handler → method not found", async () => {
  const out = await runLua(`
    assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${lq(ECHO)}, "--request-sampling" }))
    local none = mcp.call("echo", "echo", { msg = "a" })
    local text_none = none.ok and not none.is_error and "unexpected" or (none.error or none.content[1].text)
    mcp.set_sampling_handler("echo", function(params) return { model = "m", content = "hi there" } end)
    local r = mcp.call("echo", "echo", { msg = "b" })
    return std.json.encode({ none = text_none, b1 = r.content[1].text, b2 = r.content[2].text })
  `);
  assert.deepEqual(out.outcome.status, "returned", out.stderr);
  const r = JSON.parse(String((out.outcome as { value: string }).value));
  assert.match(r.none, /no sampling handler is set for server 'echo'/);
  assert.deepEqual(r.b1, "b");
  assert.deepEqual(r.b2, "sampling: hi there");
});
