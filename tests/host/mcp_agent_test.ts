/**
 * `agent.run` with MCP servers, end to end: real echo servers (stdio child and HTTP peer) and
 * server-everything, the model played by the `replay` provider (scripted `tool_use` blocks and
 * request expectations) or the local Anthropic mock (captured wire requests).
 *
 * What is proved: stdio and HTTP entries in one `mcp_servers` list are connected before the first
 * model call and disconnected when the run returns, on success and on error (the stdio child is
 * gone: its unique marker argument is on no process's command line); tool names `server__tool`,
 * groups (`_meta.group`, else the server, Lua tools `default`) and `tool_groups` filtering, read
 * from the tools each `llm_request` event recorded and from the mock's captured request; the meta
 * tools behind the resources / prompts capabilities; the progress, log and sampling callbacks and
 * their envelopes; `progress_to_log` / `log_to_stderr`; a `tools/list_changed` refreshing the
 * tools before the next model call; `required = true` through the real CLI (exit 1, the server's
 * stderr tail); MCP calls as `tool_call` / `tool_result` pairs in the session log and in
 * `agent-block knl export`.
 */
import { join } from "node:path";
import assert from "node:assert/strict";
import { agentRunKinds, REPO_ROOT, resultOf, runCli, runLua } from "../helpers.ts";
import {
  DENO,
  ECHO,
  EVERYTHING,
  FIXTURES,
  lq,
  type Peer,
  startEchoHttp,
  startEverything,
} from "./mcp/peers.ts";
import { anthropicMessage, MockLlm } from "./llm/mock_llm.ts";

type Json = Record<string, unknown>;

/** Writes a replay script (one scripted response a line) and returns its path. */
async function replayScript(dir: string, lines: unknown[]): Promise<string> {
  const path = join(dir, `replay_${crypto.randomUUID()}.jsonl`);
  await Deno.writeTextFile(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return path;
}

function use(id: string, name: string, input: Json = {}) {
  return { type: "tool_use", id, name, input };
}

/** A string no other process carries: passed to the stdio echo server as `--cancel-log`. */
function marker(dir: string): string {
  return join(dir, `mark_${crypto.randomUUID().replaceAll("-", "")}`);
}

/** The Lua args table of a stdio echo server with `flags`, tagged with `mark`. */
function echoArgs(mark: string, flags: string[] = []): string {
  return `{ "run", "-A", "--quiet", ${lq(ECHO)}, "--cancel-log", ${lq(mark)}${
    flags.map((f) => ", " + lq(f)).join("")
  } }`;
}

/**
 * Lua: `alive(mark)` → number of live processes whose command line carries `mark` (the pattern
 * is bracketed so the shell running pgrep does not count itself).
 */
const ALIVE_LUA = `
local function alive(mark)
  local pat = mark:sub(1, -2) .. "[" .. mark:sub(-1) .. "]"
  local p = io.popen("pgrep -f -c '" .. pat .. "'")
  local n = tonumber((p:read("a") or ""):match("%d+")) or 0
  p:close()
  return n
end
`;

/** Lua: `log_of(r)` → the session's events as `{ kind, data }` (the knl log). */
const LOG_LUA = `
local function log_of(r)
  local out = {}
  for _, e in ipairs(r.session:events()) do out[#out + 1] = { kind = e.kind, data = e.data } end
  return out
end
`;

interface Ev {
  kind: string;
  data: Json;
}

function toolsOffered(log: Ev[]): string[][] {
  return log.filter((e) => e.kind === "llm_request").map((e) => (e.data.tools as string[]).slice().sort());
}

Deno.test({
  name: "agent.run with MCP servers (stdio + HTTP, replay model)",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await Deno.makeTempDir({ prefix: "ab_mcp_agent_" });
    let http: Peer | undefined;
    try {
      http = await startEchoHttp([
        "--request-sampling",
        "--emit-logs",
        "--log-interval-ms",
        "5",
        "--step-ms",
        "5",
      ]);

      await t.step(
        "mixed list: tools, meta tools, callbacks, sampling, session log, disconnect",
        async () => {
          const mark = marker(dir);
          const script = await replayScript(dir, [
            {
              expect: {
                tools: [
                  "echo__echo",
                  "echo__slow_echo",
                  "web__echo",
                  "echo__mcp_read_resource",
                  "web__mcp_get_prompt",
                  "lua_tool",
                ],
              },
              content: [
                use("c1", "echo__echo", { msg: "from stdio" }),
                use("c2", "web__echo", { msg: "from http" }),
                use("c3", "echo__slow_echo", { msg: "slow", steps: 3 }),
                use("c3w", "web__slow_echo", { msg: "slow web", steps: 2 }),
              ],
            },
            {
              expect: { last_message_contains: "sampling: sampled:" },
              content: [
                use("c4", "echo__mcp_read_resource", { uri: "text://hello" }),
                use("c5", "web__mcp_get_prompt", { name: "greet", args: { name: "agent" } }),
                use("c6", "echo__mcp_list_resources", {}),
              ],
            },
            { expect: { last_message_contains: "hello, agent" }, content: "all done" },
          ]);
          const run = await runLua(
            `
          ${ALIVE_LUA}
          ${LOG_LUA}
          tool.register("lua_tool", { description = "a Lua tool" }, function() return "lua" end)
          local progress, logs, samples, connected_at_first_call, alive_during = {}, {}, {}, nil, nil
          local r = require("agent").run({
            provider = "replay", replay = ${lq(script)}, prompt = "go", store = "mem",
            mcp_servers = {
              { name = "echo", command = ${lq(DENO)}, args = ${
              echoArgs(mark, [
                "--emit-logs",
                "--log-interval-ms",
                "5",
                "--step-ms",
                "5",
                "--request-sampling",
              ])
            } },
              { name = "web", url = ${lq(http!.url)}, transport_opts = { transport = "http" } },
            },
            enable_resources = true, enable_prompts = true,
            sampling = function(params)
              samples[#samples + 1] = params.messages[1].content.text
              return { model = "lua-sampler", content = "sampled:" .. #samples }
            end,
            on_progress = function(ev) progress[#progress + 1] = ev end,
            on_log = function(ev) logs[#logs + 1] = ev end,
            -- ignored: the callbacks take priority
            progress_to_log = true, log_to_stderr = true,
            on_turn = function(info)
              if info.turn_number == 1 then
                connected_at_first_call = mcp.server_info("echo").ok and mcp.server_info("web").ok
                alive_during = alive(${lq(mark)})
              end
            end,
          })
          local after = mcp.server_info("echo")
          local after_web = mcp.server_info("web")
          return std.json.encode({
            ok = r.ok, err = r.error, content = r.content, stop = r.stop_reason,
            log = log_of(r), progress = progress, logs = logs, samples = samples,
            connected_at_first_call = connected_at_first_call, alive_during = alive_during,
            after = after, after_web = after_web, alive = alive(${lq(mark)}),
          })
        `,
            { projectRoot: dir },
          );
          const r = resultOf(run);
          assert.deepEqual(r.err, undefined, run.stderr);
          assert.deepEqual(r.ok, true);
          assert.deepEqual(r.content, "all done");
          assert.deepEqual(r.connected_at_first_call, true);
          assert.deepEqual(r.alive_during, 1, "the marker finds the live stdio server");

          const log = r.log as Ev[];
          // Every model request offered the same namespaced list (meta tools of both servers).
          const offered = toolsOffered(log);
          assert.deepEqual(offered.length, 3);
          for (const o of offered) {
            for (
              const n of [
                "echo__echo",
                "echo__slow_echo",
                "echo__mcp_list_resources",
                "echo__mcp_read_resource",
                "echo__mcp_list_prompts",
                "echo__mcp_get_prompt",
                "web__echo",
                "web__slow_echo",
                "web__mcp_list_resources",
                "web__mcp_get_prompt",
                "lua_tool",
              ]
            ) assert(o.includes(n), `${n} offered: ${o}`);
          }

          // MCP calls as tool_call / tool_result pairs, like Lua tools.
          const calls = log.filter((e) => e.kind === "tool_call");
          const results = log.filter((e) => e.kind === "tool_result");
          assert.deepEqual(calls.map((e) => e.data.name), [
            "echo__echo",
            "web__echo",
            "echo__slow_echo",
            "web__slow_echo",
            "echo__mcp_read_resource",
            "web__mcp_get_prompt",
            "echo__mcp_list_resources",
          ]);
          assert.deepEqual(results.map((e) => e.data.id), ["c1", "c2", "c3", "c3w", "c4", "c5", "c6"]);
          for (const e of results) assert.deepEqual(e.data.is_error, false, JSON.stringify(e.data));
          const content = results.map((e) => String(e.data.content));
          assert.match(content[0], /^from stdio\nsampling: sampled:\d$/);
          assert.match(content[1], /^from http\nsampling: sampled:\d$/);
          assert.deepEqual(content[2], "slow");
          assert.deepEqual(content[3], "slow web");
          assert.match(content[4], /hello world/);
          assert.match(content[5], /hello, agent/);
          assert.match(content[6], /text:\/\/note/);
          assert.deepEqual(calls[0].data.input, { msg: "from stdio" });

          // sampling = fn answered both servers
          assert.deepEqual((r.samples as string[]).length, 2);
          // progress envelopes, the last one included
          const progress = r.progress as Json[];
          assert.deepEqual(progress.length, 5);
          assert.deepEqual(progress.map((p) => [p.server, p.progress, p.total]), [
            ["echo", 1, 3],
            ["echo", 2, 3],
            ["echo", 3, 3],
            ["web", 1, 2],
            ["web", 2, 2],
          ]);
          assert.deepEqual(Object.keys(progress[2]).sort(), [
            "message",
            "progress",
            "server",
            "token",
            "total",
            "type",
          ]);
          assert.deepEqual(progress[2].type, "progress");
          assert.deepEqual(progress[2].server, "echo");
          assert.deepEqual(progress[2].progress, 3);
          assert.deepEqual(progress[2].total, 3);
          assert.deepEqual(progress[2].message, "step 3/3");
          // log envelopes: 5 per echo call, from each server
          const logs = r.logs as Json[];
          assert.deepEqual(logs.filter((l) => l.server === "echo").length, 5);
          assert.deepEqual(logs.filter((l) => l.server === "web").map((l) => l.data), [
            "tick 1",
            "tick 2",
            "tick 3",
            "tick 4",
            "tick 5",
          ]);
          assert.deepEqual(logs[0], {
            type: "log",
            server: "echo",
            level: "info",
            logger: "echo",
            data: "tick 1",
          });

          assert(!run.stderr.includes("mcp progress:") && !run.stderr.includes("mcp log:"), run.stderr);

          // disconnected once the run returned, the stdio child gone
          assert.deepEqual((r.after as Json).ok, false);
          assert.match(String((r.after as Json).error), /no server named 'echo'/);
          assert.deepEqual((r.after_web as Json).ok, false);
          assert.deepEqual(r.alive, 0);
        },
      );

      await t.step("tool groups: _meta.group, server name, default; tool_groups filters", async () => {
        const mark = marker(dir);
        const script = await replayScript(dir, [
          { content: [use("g1", "echo__noop"), use("g2", "web__echo", { msg: "w" })] },
          { content: "ok" },
        ]);
        const run = await runLua(
          `
          ${ALIVE_LUA}
          ${LOG_LUA}
          tool.register("lua_default", { description = "default group" }, function() return "d" end)
          tool.register("lua_math", { description = "math group" }, function() return "m" end, { group = "math" })
          local r = require("agent").run({
            provider = "replay", replay = ${lq(script)}, prompt = "go", store = "mem",
            mcp_servers = {
              { name = "echo", command = ${lq(DENO)}, args = ${echoArgs(mark, ["--test-tools"])} },
              { name = "web", url = ${lq(http!.url)}, transport_opts = { transport = "http" } },
            },
            tool_groups = { "bench", "web", "default" },
            sampling = function() return { model = "m", content = "x" } end,
          })
          local mt = require("mcp_tools")
          return std.json.encode({ ok = r.ok, err = r.error, log = log_of(r), alive = alive(${lq(mark)}),
            g_meta = mt.resolve_group({ _meta = { group = "bench" } }, "echo"),
            g_server = mt.resolve_group({ _meta = { group = "" } }, "echo") })
        `,
          { projectRoot: dir },
        );
        const r = resultOf(run);
        assert.deepEqual(r.err, undefined, run.stderr);
        assert.deepEqual(r.ok, true);
        const [first] = toolsOffered(r.log as Ev[]);
        // bench = echo's noop (_meta.group), web = every tool of the HTTP server, default = lua_default
        assert.deepEqual(first, ["echo__noop", "lua_default", "web__echo", "web__slow_echo"]);
        assert.deepEqual(r.g_meta, "bench");
        assert.deepEqual(r.g_server, "echo");
        const results = (r.log as Ev[]).filter((e) => e.kind === "tool_result");
        assert.deepEqual(results.map((e) => [e.data.name, e.data.is_error]), [["echo__noop", false], [
          "web__echo",
          false,
        ]]);
        assert.deepEqual(r.alive, 0);
      });

      await t.step("tools/list_changed refreshes the tools before the next model call", async () => {
        const mark = marker(dir);
        const script = await replayScript(dir, [
          { content: [use("b1", "echo__bump")] },
          // `bump` answers with the new tool's name; the next request must already offer it
          { expect: { last_message_contains: "extra_" }, content: [use("b2", "echo__noop")] },
          { content: "ok" },
        ]);
        const run = await runLua(
          `
          ${ALIVE_LUA}
          ${LOG_LUA}
          local r = require("agent").run({
            provider = "replay", replay = ${lq(script)}, prompt = "go", store = "mem",
            mcp_servers = { { name = "echo", command = ${lq(DENO)}, args = ${
            echoArgs(mark, ["--test-tools"])
          } } },
          })
          return std.json.encode({ ok = r.ok, err = r.error, log = log_of(r), alive = alive(${lq(mark)}) })
        `,
          { projectRoot: dir },
        );
        const r = resultOf(run);
        assert.deepEqual(r.err, undefined, run.stderr);
        const log = r.log as Ev[];
        const added = String(log.find((e) => e.kind === "tool_result")!.data.content);
        assert.match(added, /^extra_/);
        const offered = toolsOffered(log);
        assert(!offered[0].includes("echo__" + added), "not offered before the bump");
        assert(offered[1].includes("echo__" + added), `offered after the bump: ${offered[1]}`);
        assert.deepEqual(r.alive, 0);
      });

      await t.step("a failing run still disconnects every server", async () => {
        const mark = marker(dir);
        // one scripted response: the second model call fails (the script ran out)
        const script = await replayScript(dir, [{ content: [use("e1", "echo__echo", { msg: "x" })] }]);
        const run = await runLua(
          `
          ${ALIVE_LUA}
          local r = require("agent").run({
            provider = "replay", replay = ${lq(script)}, prompt = "go", store = "mem",
            mcp_servers = {
              { name = "echo", command = ${lq(DENO)}, args = ${echoArgs(mark)} },
              { name = "web", url = ${lq(http!.url)}, transport_opts = { transport = "http" } },
            },
            sampling = function() return { model = "m", content = "x" } end,
          })
          return std.json.encode({ ok = r.ok, err = r.error, stop = r.stop_reason, echo = mcp.server_info("echo").ok,
            web = mcp.server_info("web").ok, alive = alive(${lq(mark)}) })
        `,
          { projectRoot: dir },
        );
        const r = resultOf(run);
        assert.deepEqual(r.ok, false);
        assert.deepEqual(r.stop, "error");
        assert.match(String(r.err), /ran out/);
        assert.deepEqual([r.echo, r.web, r.alive], [false, false, 0]);
      });

      await t.step("a cancelled agent.run task disconnects its servers; the script goes on", async () => {
        const mark = marker(dir);
        const script = await replayScript(dir, [{ content: [use("h1", "echo__hang")] }, {
          content: "never",
        }]);
        const run = await runLua(
          `
          ${ALIVE_LUA}
          local t = std.task.spawn(function()
            return require("agent").run({
              provider = "replay", replay = ${lq(script)}, prompt = "go", store = "mem",
              mcp_servers = { { name = "echo", command = ${lq(DENO)}, args = ${
            echoArgs(mark, ["--test-tools"])
          } } },
            })
          end)
          local deadline = os.time() + 60
          while os.time() < deadline do
            local f = io.open(${lq(mark)}, "r")
            local text = f and f:read("a") or ""
            if f then f:close() end
            if text:find("started") then break end
            std.task.sleep(0.02)
          end
          local alive_before = alive(${lq(mark)})
          t:cancel()
          local ok, err = pcall(t.join, t)
          -- the disconnect runs as a task of its own: wait for it (event: the child is gone)
          local gone_by = os.time() + 60
          while (mcp.server_info("echo").ok or alive(${lq(mark)}) > 0) and os.time() < gone_by do
            std.task.sleep(0.02)
          end
          return std.json.encode({ ok = ok, err = tostring(err), echo = mcp.server_info("echo").ok,
            alive_before = alive_before, alive = alive(${lq(mark)}) })
        `,
          { projectRoot: dir },
        );
        const r = resultOf(run);
        assert.deepEqual(r.ok, false);
        assert.match(String(r.err), /cancelled/);
        assert.deepEqual(r.alive_before, 1);
        assert.deepEqual([r.echo, r.alive], [false, 0], run.stderr);
        assert(!run.stderr.includes("[warn]"), run.stderr);
      });
    } finally {
      await http?.stop();
    }
  },
});

Deno.test({
  name: "agent.run: capability gates, progress_to_log and log_to_stderr",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ab_mcp_agent_" });
    const mark = marker(dir);
    const script = await replayScript(dir, [
      {
        content: [
          use("p1", "echo__slow_echo", { msg: "s", steps: 2 }),
          use("p2", "echo__echo", { msg: "e" }),
        ],
      },
      { content: "done" },
    ]);
    const run = await runLua(
      `
      ${LOG_LUA}
      local r = require("agent").run({
        provider = "replay", replay = ${lq(script)}, prompt = "go", store = "mem",
        mcp_servers = {
          { name = "plain", command = ${lq(DENO)}, args = { "run", "-A", ${
        lq(join(FIXTURES, "env_server.ts"))
      } } },
          { name = "echo", command = ${lq(DENO)}, args = ${
        echoArgs(mark, ["--emit-logs", "--log-interval-ms", "5", "--step-ms", "5"])
      } },
        },
        enable_resources = true, enable_prompts = true, progress_to_log = true, log_to_stderr = true,
      })
      return std.json.encode({ ok = r.ok, err = r.error, log = log_of(r) })
    `,
      { projectRoot: dir },
    );
    const r = resultOf(run);
    assert.deepEqual(r.err, undefined, run.stderr);
    const [offered] = toolsOffered(r.log as Ev[]);
    assert.deepEqual(offered.filter((n) => n.startsWith("plain__")), [
      "plain__args",
      "plain__cwd",
      "plain__env",
    ]);
    assert(
      offered.includes("echo__mcp_read_resource") && offered.includes("echo__mcp_get_prompt"),
      String(offered),
    );
    assert.match(
      run.stderr,
      /\[info\] test\.lua: mcp_tools: server 'plain' does not declare resources; enable_resources skipped/,
    );
    assert.match(run.stderr, /server 'plain' does not declare prompts; enable_prompts skipped/);
    assert.match(run.stderr, /server 'plain' does not declare logging; log options skipped/);
    assert.match(run.stderr, /mcp progress: server=echo token=/);
    assert.match(run.stderr, /p=2\/2 msg=step 2\/2/);
    assert.match(run.stderr, /mcp log: server=echo logger=echo data=tick 5/);
    assert(!run.stderr.includes("[warn]") && !run.stderr.includes("[error]"), run.stderr);
  },
});

Deno.test({
  name: "agent.run: a resources-only server serves its meta tools; a server whose listing fails is dropped",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ab_mcp_agent_" });
    const server = join(FIXTURES, "resources_only_server.ts");
    const script = await replayScript(dir, [
      {
        expect: { tools: ["docs__mcp_list_resources", "docs__mcp_read_resource"] },
        content: [use("d1", "docs__mcp_read_resource", { uri: "docs://readme" })],
      },
      { expect: { last_message_contains: "read me first" }, content: "done" },
    ]);
    const run = await runLua(
      `
      ${LOG_LUA}
      local r = require("agent").run({
        provider = "replay", replay = ${lq(script)}, prompt = "go", store = "mem",
        mcp_servers = {
          { name = "docs", command = ${lq(DENO)}, args = { "run", "-A", "--quiet", ${lq(server)} } },
          { name = "broken", command = ${lq(DENO)}, args = { "run", "-A", "--quiet", ${
        lq(server)
      }, "--broken-tools" } },
        },
        enable_resources = true,
      })
      -- mcp.list_* for a capability the server lacks: an empty list, and nothing on stdout
      mcp.connect("docs2", ${lq(DENO)}, { "run", "-A", "--quiet", ${lq(server)} })
      local empty = { mcp.list_tools("docs2"), mcp.list_prompts("docs2") }
      print("stdout is the script's")
      return std.json.encode({ ok = r.ok, err = r.error, log = log_of(r), empty = empty })
    `,
      { projectRoot: dir },
    );
    const r = resultOf(run);
    assert.deepEqual(r.err, undefined, run.stderr);
    assert.deepEqual(run.stdout, "stdout is the script's\n");
    assert.deepEqual(r.empty, [{ ok: true, tools: [] }, { ok: true, prompts: [] }]);
    const offered = toolsOffered(r.log as Ev[]);
    // the broken server is gone from the list, its meta tools included, on every turn
    assert.deepEqual(offered, [
      ["docs__mcp_list_resources", "docs__mcp_read_resource"],
      ["docs__mcp_list_resources", "docs__mcp_read_resource"],
    ]);
    const warns = run.stderr.split("\n").filter((l) => l.includes("[warn]"));
    assert.deepEqual(warns.length, 1, run.stderr);
    assert.match(warns[0], /skipping server 'broken'/);
    assert.match(warns[0], /tool registry unavailable/);
  },
});

Deno.test({
  name: "agent.run through the CLI: a required server that fails ends the run at start (exit 1, stderr tail)",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ab_mcp_agent_cli_" });
    const mark = marker(dir);
    // the model would be called only if the run went on: the script has nothing for it
    await Deno.writeTextFile(join(dir, "never.jsonl"), "");
    await Deno.writeTextFile(
      join(dir, "required.lua"),
      `
local r = require("agent").run({
  provider = "replay", replay = "never.jsonl", prompt = "go",
  mcp_servers = {
    { name = "echo", command = ${lq(DENO)}, args = ${echoArgs(mark)} },
    { name = "crashy", command = ${lq(DENO)}, args = { "run", "-A", ${
        lq(join(FIXTURES, "crash_server.ts"))
      } }, required = true },
  },
})
print(std.json.encode({ session = r.session_id, turns = r.num_turns }))
local p = io.popen("pgrep -f -c '${mark.slice(0, -1)}[${mark.slice(-1)}]'")
print("alive=" .. ((p:read("a") or ""):match("%d+") or "0"))
p:close()
if not r.ok then error(r.error, 0) end
`,
    );
    const r = await runCli(["-s", "required.lua", "-p", "."], { cwd: dir });
    assert.deepEqual(r.code, 1, r.stderr);
    assert.ok(
      r.stderr.includes(
        "agent.run: mcp_tools.connect: required server 'crashy' failed: mcp.connect: initialize 'crashy' failed: " +
          "server 'crashy' exited with code 2; stderr tail:",
      ),
      r.stderr,
    );
    assert(!r.stderr.includes("embedded/"), `no position inside the embedded modules: ${r.stderr}`);
    assert.match(r.stderr, /boom: missing config file \/etc\/weather\.conf/);
    const lines = r.stdout.trim().split("\n");
    const info = JSON.parse(lines[0]);
    assert.deepEqual(info.turns, 0);
    assert.deepEqual(lines[1], "alive=0", "the server connected before the failure is gone");
    // the session log: opened, closed as error, no model call
    const ex = await runCli(["knl", "export", "--session", info.session, "--as", "events"], { cwd: dir });
    assert.deepEqual(ex.code, 0, ex.stderr);
    const kinds = ex.stdout.trim().split("\n").map((l) => JSON.parse(l).kind);
    assert.deepEqual(kinds, ["session_open", "msg_user", "agent_result", "session_close"]);
  },
});

Deno.test({
  name: "agent.run over the Anthropic mock with an HTTP echo server: wire tools, pairs in knl export",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const mock = new MockLlm();
    const http = await startEchoHttp();
    const dir = await Deno.makeTempDir({ prefix: "ab_mcp_agent_cli_" });
    try {
      mock.push(
        {
          kind: "json",
          body: anthropicMessage([
            { type: "text", text: "Echoing." },
            { type: "tool_use", id: "toolu_e1", name: "web__echo", input: { msg: "over the wire" } },
            { type: "tool_use", id: "toolu_e2", name: "web__echo", input: {} },
          ], "tool_use"),
        },
        { kind: "json", body: anthropicMessage([{ type: "text", text: "Echoed." }]) },
      );
      await Deno.writeTextFile(
        join(dir, "wire.lua"),
        `
tool.register("lua_math", { description = "math", input_schema = { type = "object" } }, function() return 1 end,
  { group = "math" })
local r = require("agent").run({
  prompt = "echo it", model = "claude-haiku-4-5-20251001", max_retries = 0,
  mcp_servers = { { name = "web", url = os.getenv("ECHO_URL"), transport_opts = { transport = "http" } } },
  tool_groups = { "web" },
})
print(std.json.encode({ ok = r.ok, err = r.error, session = r.session_id, content = r.content }))
`,
      );
      const r = await runCli(["-s", "wire.lua", "-p", "."], {
        cwd: dir,
        env: { ECHO_URL: http.url, ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: "sk-ant-test" },
      });
      assert.deepEqual(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout.trim());
      assert.deepEqual(out.ok, true, out.err);
      assert.deepEqual(out.content, "Echoed.");
      assert.deepEqual(mock.requests.length, 2);
      const tools = mock.requests[0].body.tools as { name: string; input_schema: Json }[];
      assert.deepEqual(tools.map((x) => x.name).sort(), ["web__echo", "web__slow_echo"]);
      const echo = tools.find((x) => x.name === "web__echo")!;
      assert.deepEqual(echo.input_schema.type, "object");
      assert.deepEqual(echo.input_schema.required, ["msg"]);
      // what the second request carried back
      const sent = mock.requests[1].body.messages as { role: string; content: Json[] }[];
      const results = sent[2].content;
      assert.deepEqual(results[0], {
        type: "tool_result",
        tool_use_id: "toolu_e1",
        content: "over the wire",
        is_error: false,
      });
      assert.deepEqual(results[1].tool_use_id, "toolu_e2");
      assert.deepEqual(results[1].is_error, true);

      const ex = await runCli(["knl", "export", "--session", out.session, "--as", "events"], { cwd: dir });
      assert.deepEqual(ex.code, 0, ex.stderr);
      const events = ex.stdout.trim().split("\n").map((l) => JSON.parse(l) as Ev);
      assert.deepEqual(events.map((e) => e.kind), agentRunKinds({ turns: [2, 0] }));
      assert.deepEqual(events[2].data.tools, ["web__echo", "web__slow_echo"]);
      assert.deepEqual(events[4].data, {
        id: "toolu_e1",
        name: "web__echo",
        input: { msg: "over the wire" },
      });
      assert.deepEqual(events[5].data.id, "toolu_e1");
      assert.deepEqual(events[5].data.content, "over the wire");
      assert.deepEqual(events[5].data.is_error, false);
      assert.deepEqual(events[7].data.id, "toolu_e2");
      assert.deepEqual(events[7].data.is_error, true);
    } finally {
      await http.stop();
      await mock.close();
    }
  },
});

Deno.test({
  name: "agent.run against server-everything over stdio, Streamable HTTP and SSE in one list",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ab_mcp_agent_ev_" });
    const evh = await startEverything("streamableHttp");
    let evs: Peer | undefined;
    try {
      evs = await startEverything("sse");
      const script = await replayScript(dir, [
        {
          expect: {
            tools: [
              "ev__get-sum",
              "evh__echo",
              "evs__echo",
              "ev__mcp_list_prompts",
              "evh__mcp_read_resource",
            ],
          },
          content: [
            use("v0", "evs__echo", { message: "over sse" }),
            use("v1", "ev__get-sum", { a: 2, b: 3 }),
            use("v2", "evh__trigger-long-running-operation", { duration: 0.3, steps: 3 }),
            use("v3", "ev__toggle-simulated-logging", {}),
          ],
        },
        {
          // registered by the server after initialize and announced with tools/list_changed
          expect: { tools: ["ev__trigger-sampling-request", "evh__trigger-sampling-request"] },
          content: [
            use("v4", "ev__trigger-sampling-request", { prompt: "over stdio", maxTokens: 20 }),
            use("v5", "evh__trigger-sampling-request", { prompt: "over http", maxTokens: 20 }),
            use("v6", "ev__toggle-simulated-logging", {}),
          ],
        },
        { content: "done" },
      ]);
      const run = await runLua(
        `
        ${LOG_LUA}
        local function wait_until(pred)
          local deadline = os.time() + 60
          while not pred() and os.time() < deadline do std.task.sleep(0.05) end
          return pred()
        end
        local function has_tool(server, name)
          for _, t in ipairs(mcp.list_tools(server).tools or {}) do if t.name == name then return true end end
          return false
        end
        local progress, logs, samples, waited = {}, {}, {}, {}
        local r = require("agent").run({
          provider = "replay", replay = ${lq(script)}, prompt = "go", store = "mem",
          mcp_servers = {
            { name = "ev", command = ${lq(DENO)}, args = { "run", "-A", "--quiet", ${
          lq(EVERYTHING)
        }, "stdio" } },
            { name = "evh", url = ${lq(evh.url)}, transport_opts = { transport = "http" } },
            { name = "evs", url = ${lq(evs.url)}, transport_opts = { transport = "sse" } },
          },
          enable_resources = true, enable_prompts = true,
          sampling = function(params)
            samples[#samples + 1] = params.messages[1].content.text
            return { model = "lua-sampler", content = "sampled " .. params.messages[1].content.text, stop_reason = "endTurn" }
          end,
          on_progress = function(ev) progress[#progress + 1] = ev end,
          on_log = function(ev) logs[#logs + 1] = ev end,
          on_turn = function(info)
            if info.turn_number == 1 then
              waited.tools = wait_until(function()
                return has_tool("ev", "trigger-sampling-request") and has_tool("evh", "trigger-sampling-request")
              end)
            elseif info.turn_number == 2 then
              waited.logs = wait_until(function() return #logs > 0 end)
            end
          end,
        })
        return std.json.encode({ ok = r.ok, err = r.error, log = log_of(r), progress = progress, logs = logs,
          samples = samples, waited = waited, ev = mcp.server_info("ev").ok, evh = mcp.server_info("evh").ok,
          evs = mcp.server_info("evs").ok })
      `,
        { projectRoot: dir },
      );
      const r = resultOf(run);
      assert.deepEqual(r.err, undefined, run.stderr);
      assert.deepEqual(r.waited, { tools: true, logs: true });
      const log = r.log as Ev[];
      const results = log.filter((e) => e.kind === "tool_result");
      assert.deepEqual(results.map((e) => [e.data.id, e.data.is_error]), [
        ["v0", false],
        ["v1", false],
        ["v2", false],
        ["v3", false],
        ["v4", false],
        ["v5", false],
        ["v6", false],
      ]);
      assert.match(String(results[0].data.content), /over sse/);
      assert.match(String(results[1].data.content), /5/);
      assert.match(String(results[4].data.content), /sampled/);
      assert.match(String(results[5].data.content), /sampled/);
      assert.deepEqual((r.samples as string[]).length, 2);
      const progress = r.progress as Json[];
      assert.deepEqual(progress.length, 3);
      assert.deepEqual([progress[2].server, progress[2].progress, progress[2].total], ["evh", 3, 3]);
      const logs = r.logs as Json[];
      assert.deepEqual(logs[0].type, "log");
      assert.deepEqual(logs[0].server, "ev");
      assert(typeof logs[0].level === "string", JSON.stringify(logs[0]));
      assert.deepEqual([r.ev, r.evh, r.evs], [false, false, false]);
    } finally {
      await evs?.stop();
      await evh.stop();
    }
  },
});

Deno.test({
  name:
    "the seed's 'Verify from Lua' snippet and verify_echo_harness.lua through the CLI against the HTTP echo server",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const http = await startEchoHttp();
    const dir = await Deno.makeTempDir({ prefix: "ab_mcp_agent_verify_" });
    try {
      // verbatim from the seed README's MCP Echo Harness section
      await Deno.writeTextFile(
        join(dir, "verify.lua"),
        `local url = os.getenv("ECHO_MCP_URL")
mcp.connect_http("echo", url)
print(mcp.list_tools("echo")) -- 2 tools: echo, slow_echo
print(mcp.list_resources("echo")) -- 2 resources: text://hello, text://note
print(mcp.list_prompts("echo")) -- 1 prompt: greet
-- call slow_echo to exercise progress notifications
mcp.on_progress("echo", function(tok, prog, total, msg)
print("progress", prog, total, msg)
end)
print(mcp.call("echo", "slow_echo", { msg = "hi", steps = 3 }))
`,
      );
      const r = await runCli(["-s", "verify.lua", "-p", "."], { cwd: dir, env: { ECHO_MCP_URL: http.url } });
      assert.deepEqual(r.code, 0, r.stderr);
      const lines = r.stdout.trim().split("\n");
      assert.deepEqual(lines.filter((l) => l.startsWith("progress")), [
        "progress\t1\t3\tstep 1/3",
        "progress\t2\t3\tstep 2/3",
        "progress\t3\t3\tstep 3/3",
      ]);
      assert.deepEqual(lines.filter((l) => l.startsWith("table: ")).length, 4, r.stdout);

      const harness = join(REPO_ROOT, "examples/verify_echo_harness.lua");
      const h = await runCli(["-s", harness, "-p", dir], { env: { ECHO_MCP_URL: http.url } });
      assert.deepEqual(h.code, 0, h.stderr);
      assert.ok(h.stdout.includes("connected over HTTP to " + http.url), h.stdout);
      assert.match(h.stdout, /VERIFY_ECHO_HARNESS_OK/);
      assert(!h.stdout.includes("FAIL"), h.stdout);
    } finally {
      await http.stop();
    }
  },
});

Deno.test("agent.run: MCP options of the wrong type are errors before anything starts", async () => {
  const r = resultOf(
    await runLua(`
    local agent = require("agent")
    local out, never = {}, os.tmpname() -- an empty script: no model call may happen
    for _, o in ipairs({
      { mcp_servers = "echo" },
      { mcp_servers = {}, sampling = "yes" },
      { mcp_servers = {}, on_progress = true },
      { mcp_servers = {}, on_log = {} },
      { mcp_servers = { { command = "x" } } },
    }) do
      o.prompt, o.provider, o.replay, o.store = "go", "replay", never, "mem"
      local r = agent.run(o)
      out[#out + 1] = { ok = r.ok, err = r.error }
    end
    return std.json.encode(out)
  `),
  ) as unknown as { ok: boolean; err: string }[];
  assert.deepEqual(r.map((x) => x.ok), [false, false, false, false, false]);
  assert.deepEqual(r[0].err, "agent.run: opts.mcp_servers must be an array of server entries, got string");
  assert.deepEqual(r[1].err, "agent.run: opts.sampling must be a function, got string");
  assert.deepEqual(r[2].err, "agent.run: opts.on_progress must be a function, got boolean");
  assert.deepEqual(r[3].err, "agent.run: opts.on_log must be a function, got table");
  assert.match(r[4].err, /^agent\.run: .*element 1 field 'name' must be a non-empty string/);
});

for (const era of ["2026-07-28", "legacy"]) {
  Deno.test({
    name: `agent.run: tools/list_changed from an HTTP server (${era} era) refreshes the next request's tools`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const http = await startEchoHttp(["--test-tools"]);
      const dir = await Deno.makeTempDir({ prefix: "ab_mcp_agent_" });
      try {
        const script = await replayScript(dir, [
          { content: [use("b1", "web__bump")] },
          { content: [use("b2", "web__noop")] },
          { content: [use("b3", "web__bump")] },
          { content: "ok" },
        ]);
        const run = await runLua(
          `
          ${LOG_LUA}
          local r = require("agent").run({
            provider = "replay", replay = ${lq(script)}, prompt = "go", store = "mem",
            mcp_servers = { { name = "web", url = ${lq(http.url)}, transport_opts = { era = ${lq(era)} } } },
            on_turn = function(info)
              if info.turn_number == 1 then era_seen = mcp.server_info("web").server_info.era end
            end,
          })
          return std.json.encode({ ok = r.ok, err = r.error, log = log_of(r), era = era_seen })
        `,
          { projectRoot: dir },
        );
        const r = resultOf(run);
        assert.deepEqual(r.err, undefined, run.stderr);
        assert.deepEqual(r.era, era === "legacy" ? "legacy" : "modern");
        const log = r.log as Ev[];
        const added = log.filter((e) => e.kind === "tool_result" && e.data.name === "web__bump").map((e) =>
          String(e.data.content)
        );
        assert.deepEqual(added.length, 2);
        const offered = toolsOffered(log);
        assert(!offered[0].includes("web__" + added[0]), String(offered[0]));
        assert(offered[1].includes("web__" + added[0]), `request 2 offers ${added[0]}: ${offered[1]}`);
        assert(!offered[2].includes("web__" + added[1]), String(offered[2]));
        assert(offered[3].includes("web__" + added[1]), `request 4 offers ${added[1]}: ${offered[3]}`);
      } finally {
        await http.stop();
      }
    },
  });
}

Deno.test({
  name:
    "agent.run: a server that fails to start is skipped; one that dies mid-run turns its calls into errors",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ab_mcp_agent_" });
    const mark = marker(dir);
    const script = await replayScript(dir, [
      { content: [use("x1", "echo__exit_now")] },
      { content: [use("x2", "echo__echo", { msg: "anyone?" })] },
      { expect: { last_message_contains: "'echo' exited with code 3" }, content: "gave up" },
    ]);
    const run = await runLua(
      `
      ${ALIVE_LUA}
      ${LOG_LUA}
      local r = require("agent").run({
        provider = "replay", replay = ${lq(script)}, prompt = "go", store = "mem",
        mcp_servers = {
          { name = "ghost", command = "/nonexistent/mcp-server" },
          { name = "echo", command = ${lq(DENO)}, args = ${echoArgs(mark, ["--test-tools"])} },
        },
      })
      return std.json.encode({ ok = r.ok, err = r.error, content = r.content, log = log_of(r),
        alive = alive(${lq(mark)}) })
    `,
      { projectRoot: dir },
    );
    const r = resultOf(run);
    assert.deepEqual(r.err, undefined, run.stderr);
    assert.deepEqual(r.content, "gave up");
    assert.match(run.stderr, /mcp_tools: skipping server 'ghost'/);
    const log = r.log as Ev[];
    assert(!toolsOffered(log)[0].some((n) => n.startsWith("ghost__")));
    const results = log.filter((e) => e.kind === "tool_result");
    assert.deepEqual(results.map((e) => [e.data.id, e.data.is_error]), [["x1", true], ["x2", true]]);
    assert.match(String(results[1].data.content), /exiting mid-call/);
    assert.deepEqual(r.alive, 0);
  },
});

Deno.test({
  name: "agent.run: a required HTTP server that answers 404 fails the run before any model call",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const http = await startEchoHttp();
    try {
      const wrong = http.url.replace(/\/mcp$/, "/nope");
      const r = resultOf(
        await runLua(`
        ${LOG_LUA}
        local r = require("agent").run({
          provider = "replay", replay = os.tmpname(), prompt = "go", store = "mem",
          mcp_servers = { { name = "web", url = ${lq(wrong)}, required = true } },
        })
        return std.json.encode({ ok = r.ok, err = r.error, stop = r.stop_reason, turns = r.num_turns,
          kinds = (function() local k = {} for _, e in ipairs(log_of(r)) do k[#k + 1] = e.kind end return k end)() })
      `),
      );
      assert.deepEqual([r.ok, r.stop, r.turns], [false, "error", 0]);
      assert.match(
        String(r.err),
        /agent\.run: mcp_tools\.connect: required server 'web' failed: mcp\.connect_http:/,
      );
      assert.match(String(r.err), /404/);
      assert.ok(String(r.err).includes(wrong), String(r.err));
      assert.deepEqual(r.kinds, ["session_open", "msg_user", "agent_result", "session_close"]);
    } finally {
      await http.stop();
    }
  },
});
