/**
 * Smaller `mcp.*` behaviours against real peers: `opts.headers` reach the HTTP server,
 * `opts.trace_context` injects `__ab_obs`, cancelling the Lua task that awaits `mcp.call` sends
 * the cancellation to the server, and `mcp.disconnect` fails a call in flight with a message
 * naming the server.
 */
import { join } from "node:path";
import assert from "node:assert/strict";
import { assertIncludes, resultOf, runLua, testEnv } from "../../helpers.ts";
import { DENO, ECHO, FIXTURES, lq } from "./peers.ts";

Deno.test("opts.headers are sent with every HTTP request", async () => {
  const seen: string[] = [];
  const ac = new AbortController();
  const ready = Promise.withResolvers<number>();
  const srv = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: ac.signal,
    onListen: (a) => ready.resolve(a.port),
  }, (req) => {
    seen.push(`${req.method} ${req.headers.get("x-api-token")}`);
    return new Response("nope", { status: 500 });
  });
  const port = await ready.promise;
  try {
    for (const transport of ["http", "sse"]) {
      await runLua(
        `pcall(mcp.connect_http, "h", "http://127.0.0.1:${port}/mcp", { transport = ${
          lq(transport)
        }, headers = { ["X-Api-Token"] = "t-123" } })`,
      );
    }
    assert.deepEqual(seen.length > 0, true);
    for (const s of seen) assert.match(s, /t-123/);
    assert.deepEqual(seen.some((s) => s.startsWith("GET")), true, "the SSE GET carries the header too");
  } finally {
    ac.abort();
    await srv.finished;
  }
});

Deno.test("opts.trace_context injects __ab_obs into tool arguments", async () => {
  {
    const out = await runLua(
      `
      local srv = ${lq(join(FIXTURES, "env_server.ts"))}
      assert(mcp.connect("t", ${lq(DENO)}, { "run", "-A", srv }, { trace_context = true }))
      assert(mcp.connect("p", ${lq(DENO)}, { "run", "-A", srv }))
      return std.json.encode({
        t = std.json.decode(mcp.call("t", "args", { x = 1 }).content[1].text),
        own = std.json.decode(mcp.call("t", "args", { __ab_obs = { trace_id = "mine" } }).content[1].text),
        p = std.json.decode(mcp.call("p", "args", { x = 1 }).content[1].text),
      })
    `,
      { env: testEnv({ AGENT_BLOCK_TRACE_ID: "trace-42", AGENT_BLOCK_RUN_ID: "run-7" }) },
    );
    const r = resultOf(out);
    assert.deepEqual(r.t, { x: 1, __ab_obs: { trace_id: "trace-42", run_id: "run-7" } });
    assert.deepEqual(r.own, { __ab_obs: { trace_id: "mine" } });
    assert.deepEqual(r.p, { x: 1 });
  }
});

Deno.test("cancelling the task awaiting mcp.call cancels the request on the server", async () => {
  const log = await Deno.makeTempFile({ prefix: "ab_mcp_taskcancel_" });
  try {
    const out = await runLua(`
      assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${
      lq(ECHO)
    }, "--test-tools", "--cancel-log", ${lq(log)} }))
      local function wait_log(word)
        local deadline, text = os.time() + 20, ""
        while os.time() < deadline do
          local f = io.open(${lq(log)}, "r")
          text = f and f:read("a") or ""
          if f then f:close() end
          if text:find(word) then break end
          std.task.sleep(0.02)
        end
        return text
      end
      local t = std.task.spawn(function() return mcp.call("echo", "hang", {}) end)
      wait_log("started") -- the server is running the call
      t:cancel()
      -- the server records the cancellation; wait for it while the connection is still up
      local text = wait_log("cancelled")
      return std.json.encode({ log = text, still = mcp.call("echo", "echo", { msg = "alive" }).content[1].text })
    `);
    const r = resultOf(out);
    assert.match(String(r.log), /cancelled/);
    assert.deepEqual(r.still, "alive");
  } finally {
    await Deno.remove(log);
  }
});

Deno.test("mcp.disconnect fails a call in flight, naming the server", async () => {
  const log = await Deno.makeTempFile({ prefix: "ab_mcp_disc_" });
  const out = await runLua(`
    assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${
    lq(ECHO)
  }, "--test-tools", "--cancel-log", ${lq(log)} }))
    local t = std.task.spawn(function() return mcp.call("echo", "hang", {}) end)
    local deadline = os.time() + 20
    while os.time() < deadline do -- until the server is running the call
      local f = io.open(${lq(log)}, "r")
      local text = f and f:read("a") or ""
      if f then f:close() end
      if text:find("started") then break end
      std.task.sleep(0.02)
    end
    mcp.disconnect("echo")
    local r = t:join()
    return std.json.encode(r)
  `);
  await Deno.remove(log);
  const r = resultOf(out);
  assert.deepEqual(r.ok, false);
  assert.match(String(r.error), /'echo'/);
});

Deno.test("reconnecting under the same name replaces the connection; a pinned era a server lacks fails", async () => {
  const out = await runLua(`
    local echo = { "run", "-A", "--quiet", ${lq(ECHO)} }
    assert(mcp.connect("x", ${lq(DENO)}, echo, { era = "legacy" }))
    local first = mcp.server_info("x").server_info.protocolVersion
    assert(mcp.connect("x", ${lq(DENO)}, echo))
    local second = mcp.server_info("x").server_info.protocolVersion
    local ok, err = pcall(mcp.connect, "old", ${lq(DENO)}, { "run", "-A", ${
    lq(join(FIXTURES, "everything.ts"))
  }, "stdio" },
      { era = "2026-07-28" })
    return std.json.encode({ first = first, second = second, echo = mcp.call("x", "echo", { msg = "y" }).content[1].text, err = tostring(err) })
  `);
  const r = resultOf(out);
  assert.deepEqual([r.first, r.second, r.echo], ["2025-11-25", "2026-07-28", "y"]);
  assert.match(String(r.err), /initialize 'old' failed/);
  assert.match(String(r.err), /2026-07-28/);
});

Deno.test("a stdio server's stderr lines are logged at debug level", async () => {
  const out = await runLua(
    `
    pcall(mcp.connect, "crashy", ${lq(DENO)}, { "run", "-A", ${
      lq(join(FIXTURES, "crash_server.ts"))
    } }, { era = "legacy" })
  `,
    { env: testEnv({ AGENT_BLOCK_LOG: "debug" }) },
  );
  assertIncludes(
    out.stderr,
    "[debug] test.lua: mcp server 'crashy' stderr: boom: missing config file",
  );
});

Deno.test("time spent in a Lua handler does not count against the request timeout", async () => {
  // The two eras run at once (each its own engine and server): the test waits on the slow handler
  // and the hang, not on the CPU, so running them one after the other only doubled its time.
  await Promise.all(["auto", "legacy"].map(async (era) => {
    const out = await runLua(`
      assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${lq(ECHO)}, "--test-tools" },
        { timeout = 2, era = ${lq(era)} }))
      mcp.set_sampling_handler("echo", function(params)
        std.task.sleep(4.0) -- a slow model: twice the request timeout (which is roomy: a loaded machine starts servers slowly)
        return { model = "slow", content = "late but fine" }
      end)
      local r = mcp.call("echo", "sample", { prompt = "p" })
      local t = mcp.call("echo", "hang", {})
      return std.json.encode({ r = r, t = t.error, kind = t.kind, code = t.code })
    `);
    const r = resultOf(out);
    assert.deepEqual((r.r as { ok: boolean }).ok, true, JSON.stringify(r));
    assert.deepEqual((r.r as { content: { text: string }[] }).content[0].text, "slow: late but fine");
    assertIncludes(String(r.t), "timed out after 2 s (cancellation sent)");
    assert.deepEqual((r as { kind?: string }).kind, "timeout");
  }));
});

Deno.test("a failed RPC says what kind of failure: the server's JSON-RPC code, or the client's kind", async () => {
  const out = await runLua(`
    assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${lq(ECHO)} }))
    local p = mcp.get_prompt("echo", "no_such_prompt", {})
    local u = mcp.call("nobody", "echo", {})
    return std.json.encode({ p = p, u = u })
  `);
  const r = resultOf(out) as Record<string, Record<string, unknown>>;
  assert.deepEqual(r.p.ok, false);
  assert.deepEqual(typeof r.p.code, "number", JSON.stringify(r.p));
  assert.deepEqual(r.p.kind, undefined, "a server's answer has no local kind");
  assertIncludes(
    String(r.p.error),
    "mcp.get_prompt: prompts/get 'no_such_prompt' on server 'echo' failed",
  );
  assert.deepEqual([r.u.ok, r.u.kind, r.u.code, r.u.error], [
    false,
    "unknown",
    undefined,
    "mcp.call: no server named 'nobody'",
  ]);
});
