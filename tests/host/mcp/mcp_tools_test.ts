/**
 * The embedded `mcp_tools` module (the contract `agent.run` codes against), against real
 * servers: stdio and HTTP entries in one list, required and non-required failures, namespaced
 * tools with groups, meta tools behind capability gates, progress / log envelopes, sampling for
 * every server, callback errors swallowed, the tool list refreshed after `tools/list_changed`,
 * and `close`.
 */
import { join } from "node:path";
import assert from "node:assert/strict";
import { resultOf, runLua } from "../../helpers.ts";
import { DENO, ECHO, FIXTURES, lq, type Peer, startEchoHttp } from "./peers.ts";

Deno.test("mcp_tools: connect, tools, call, refresh, close", async (t) => {
  let http: Peer | undefined;
  try {
    http = await startEchoHttp();
    await t.step("the whole contract", async () => {
      const out = await runLua(`
        local mcp_tools = require("mcp_tools")
        local progress, logs = {}, {}
        local conn = mcp_tools.connect({
          { name = "echo", command = ${lq(DENO)},
            args = { "run", "-A", "--quiet", ${
        lq(ECHO)
      }, "--test-tools", "--emit-logs", "--log-interval-ms", "5", "--step-ms", "5" } },
          { name = "ghost", command = "/nonexistent/server" },
          { name = "web", url = ${
        lq(http!.url)
      }, transport_opts = { transport = "http", headers = { ["X-Test"] = "1" } } },
        }, {
          enable_resources = true,
          enable_prompts = true,
          on_progress = function(ev) progress[#progress + 1] = ev end,
          on_log = function(ev) logs[#logs + 1] = ev end,
          sampling = function(params) return { model = "shared", content = "s:" .. params.messages[1].content.text } end,
        })
        local R = { servers = conn:server_names() }
        local by = {}
        for _, t in ipairs(conn:tools()) do by[t.name] = t end
        R.has = {}
        for _, n in ipairs({ "echo__echo", "echo__slow_echo", "echo__mcp_list_resources", "echo__mcp_read_resource",
                             "echo__mcp_list_prompts", "echo__mcp_get_prompt", "web__echo", "web__mcp_read_resource" }) do
          R.has[#R.has + 1] = by[n] ~= nil
        end
        R.group_echo = by["echo__echo"].group
        R.group_noop = by["echo__noop"].group
        R.group_meta = by["echo__mcp_read_resource"].group
        R.schema_type = by["echo__echo"].input_schema.type
        R.required_msg = by["echo__echo"].input_schema.required[1]

        R.echo = { conn:call("echo__echo", { msg = "hi" }) }
        R.logs = #logs
        R.log_ev = logs[1]
        R.slow = { conn:call("echo__slow_echo", { msg = "s", steps = 3 }) }
        R.progress = #progress
        R.progress_ev = progress[3]
        R.read = { conn:call("echo__mcp_read_resource", { uri = "text://hello" }) }
        R.read_missing = { conn:call("echo__mcp_read_resource", {}) }
        R.prompts = { conn:call("echo__mcp_list_prompts", {}) }
        R.prompt = { conn:call("echo__mcp_get_prompt", { name = "greet", args = { name = "lua" } }) }
        R.sample = { conn:call("echo__sample", { prompt = "p" }) }
        R.web_sample = { conn:call("web__echo", { msg = "over http" }) }
        R.unknown = { conn:call("echo__nope_tool", {}) }
        R.tool_error = { conn:call("echo__echo", {}) }

        local added = conn:call("echo__bump", {})
        local deadline, found = os.time() + 20, false
        while not found and os.time() < deadline do
          for _, t in ipairs(conn:tools()) do if t.name == "echo__" .. added then found = true end end
          if not found then std.task.sleep(0.02) end
        end
        R.refreshed = found
        R.added_call = { conn:call("echo__" .. added, {}) }

        conn:close()
        R.after_close = mcp.server_info("echo").ok
        R.after_close_web = mcp.server_info("web").ok
        return std.json.encode(R)
      `);
      const r = resultOf(out);
      assert.deepEqual(r.servers, ["echo", "web"]);
      assert.match(out.stderr, /mcp_tools: skipping server 'ghost'/);
      assert.deepEqual(r.has, [true, true, true, true, true, true, true, true]);
      assert.deepEqual(r.group_echo, "echo");
      assert.deepEqual(r.group_noop, "bench");
      assert.deepEqual(r.group_meta, "echo");
      assert.deepEqual(r.schema_type, "object");
      assert.deepEqual(r.required_msg, "msg");
      assert.deepEqual(r.echo, ["hi", false]);
      assert.deepEqual(r.logs, 5);
      assert.deepEqual(r.log_ev, {
        type: "log",
        server: "echo",
        level: "info",
        logger: "echo",
        data: "tick 1",
      });
      assert.deepEqual(r.slow, ["s", false]);
      assert.deepEqual(r.progress, 3);
      const pev = r.progress_ev as Record<string, unknown>;
      assert.deepEqual([pev.type, pev.server, pev.progress, pev.total, pev.message], [
        "progress",
        "echo",
        3,
        3,
        "step 3/3",
      ]);
      const [readText, readErr] = r.read as [string, boolean];
      assert.deepEqual(readErr, false);
      assert.deepEqual(JSON.parse(readText)[0].text, "hello world");
      assert.deepEqual(r.read_missing, ["mcp_read_resource: 'uri' (string) is required", true]);
      assert.match((r.prompts as string[])[0], /greet/);
      assert.match((r.prompt as string[])[0], /hello, lua/);
      assert.deepEqual(r.sample, ["shared: s:p", false]);
      assert.deepEqual(r.web_sample, ["over http", false]);
      assert.deepEqual(r.unknown, ["unknown MCP tool 'echo__nope_tool'", true]);
      assert.deepEqual((r.tool_error as unknown[])[1], true);
      assert.deepEqual(r.refreshed, true);
      assert.deepEqual((r.added_call as unknown[])[1], false);
      assert.deepEqual(r.after_close, false);
      assert.deepEqual(r.after_close_web, false);
    });
  } finally {
    await http?.stop();
  }
});

Deno.test("mcp_tools: a required server that fails raises with its stderr tail and disconnects the others", async () => {
  const out = await runLua(`
    local mcp_tools = require("mcp_tools")
    local ok, err = pcall(mcp_tools.connect, {
      { name = "echo", command = ${lq(DENO)}, args = { "run", "-A", "--quiet", ${lq(ECHO)} } },
      { name = "crashy", command = ${lq(DENO)}, args = { "run", "-A", ${
    lq(join(FIXTURES, "crash_server.ts"))
  } }, required = true },
    })
    return std.json.encode({ ok = ok, err = tostring(err), echo_left = mcp.server_info("echo").ok })
  `);
  const r = resultOf(out);
  assert.deepEqual(r.ok, false);
  assert.match(String(r.err), /mcp_tools\.connect: required server 'crashy' failed/);
  assert.match(String(r.err), /boom: missing config file \/etc\/weather\.conf/);
  assert.deepEqual(r.echo_left, false);
});

Deno.test("mcp_tools: capability gates, progress_to_log, log_to_stderr, callback errors swallowed", async () => {
  const out = await runLua(`
    local mcp_tools = require("mcp_tools")
    local conn = mcp_tools.connect({
      { name = "plain", command = ${lq(DENO)}, args = { "run", "-A", ${
    lq(join(FIXTURES, "env_server.ts"))
  } } },
    }, { enable_resources = true, enable_prompts = true, on_log = function() end })
    local names = {}
    for _, t in ipairs(conn:tools()) do names[#names + 1] = t.name end
    conn:close()

    local conn2 = mcp_tools.connect({
      { name = "echo", command = ${lq(DENO)}, args = { "run", "-A", "--quiet", ${
    lq(ECHO)
  }, "--emit-logs", "--log-interval-ms", "5", "--step-ms", "5" } },
    }, { on_progress = function(ev) error("progress callback exploded") end, log_to_stderr = true })
    local slow = { conn2:call("echo__slow_echo", { msg = "still fine", steps = 2 }) }
    conn2:call("echo__echo", { msg = "x" })
    conn2:close()

    local conn3 = mcp_tools.connect({
      { name = "echo3", command = ${lq(DENO)}, args = { "run", "-A", "--quiet", ${
    lq(ECHO)
  }, "--step-ms", "5" } },
    }, { progress_to_log = true })
    conn3:call("echo3__slow_echo", { msg = "x", steps = 1 })
    conn3:close()
    return std.json.encode({ names = names, slow = slow })
  `);
  const r = resultOf(out);
  assert.deepEqual((r.names as string[]).sort(), ["plain__args", "plain__cwd", "plain__env"]);
  assert.match(out.stderr, /server 'plain' does not declare resources; enable_resources skipped/);
  assert.match(out.stderr, /server 'plain' does not declare prompts; enable_prompts skipped/);
  assert.match(out.stderr, /server 'plain' does not declare logging; log options skipped/);
  assert.deepEqual(r.slow, ["still fine", false]);
  assert.match(out.stderr, /progress callback for server 'echo' failed/);
  assert.match(out.stderr, /progress callback exploded/);
  assert.match(out.stderr, /\[info\] test\.lua: mcp log: server=echo logger=echo data=tick 5/);
  assert.match(out.stderr, /mcp progress: server=echo3 token=ab-1 p=1\/1 msg=step 1\/1/);
  assert(!out.stderr.includes("[error]"), out.stderr);
});

Deno.test("mcp_tools: a cancel of the calling task travels through conn:call", async () => {
  const log = await Deno.makeTempFile({ prefix: "ab_mcp_tools_cancel_" });
  try {
    const out = await runLua(`
      local mcp_tools = require("mcp_tools")
      local conn = mcp_tools.connect({
        { name = "echo", command = ${lq(DENO)}, args = { "run", "-A", "--quiet", ${
      lq(ECHO)
    }, "--test-tools", "--cancel-log", ${lq(log)} } },
      })
      local returned = nil
      local t = std.task.spawn(function()
        local text = conn:call("echo__hang", {})
        returned = text -- must not happen: the cancel travels on as an error
      end)
      local deadline = os.time() + 20
      while os.time() < deadline do
        local f = io.open(${lq(log)}, "r")
        local text = f and f:read("a") or ""
        if f then f:close() end
        if text:find("started") then break end
        std.task.sleep(0.02)
      end
      t:cancel()
      local ok, err = pcall(t.join, t)
      std.task.sleep(0.1)
      conn:close()
      return std.json.encode({ ok = ok, err = tostring(err), fatal = mcp_tools.is_fatal(err), returned = returned })
    `);
    const r = resultOf(out);
    assert.deepEqual(r.ok, false);
    assert.deepEqual(r.fatal, true, String(r.err));
    assert.deepEqual(r.returned, undefined, "conn:call turned the cancel into a result");
  } finally {
    await Deno.remove(log);
  }
});
