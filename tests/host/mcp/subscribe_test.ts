/**
 * Resource subscriptions against the subscribe smoke server in both eras: `resources/subscribe`
 * (2025) and `subscriptions/listen` (2026-07-28) deliver `on_resource_update` events; after
 * `unsubscribe_resource` the periodic updates stop reaching the callback (while a control
 * subscription keeps ticking); a server without the capability answers `subscribe_resource` with
 * `ok = false`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runCli, runLua, tempDir, testEnv } from "../../helpers.ts";
import { lq, type Peer, startEchoHttp, startSubscribe } from "./peers.ts";

// Whether updates stopped is decided by events, not by a stretch of silence: `sub://clock` stays
// subscribed as a control, and once the clock has ticked three more times after the first tick
// that followed the unsubscribe, the counter must not have moved.
const SCRIPT = (url: string, era: string) => `
  local hits, last = { ["sub://counter"] = 0, ["sub://clock"] = 0 }, nil
  local label = "sub"
  mcp.on_resource_update("s", function(ev)
    hits[ev.uri] = (hits[ev.uri] or 0) + 1
    if ev.uri == "sub://counter" then last = label .. ":" .. ev.type .. ":" .. ev.server .. ":" .. ev.uri end
  end)
  assert(mcp.connect_http("s", ${lq(url)}, { era = ${lq(era)} }))
  local era = mcp.server_info("s").server_info.era
  local ok = mcp.subscribe_resource("s", "sub://counter").ok
  assert(mcp.subscribe_resource("s", "sub://clock").ok)
  local deadline = os.time() + 20
  local function wait(uri, n)
    while hits[uri] < n and os.time() < deadline do std.task.sleep(0.02) end
    return hits[uri] >= n
  end
  wait("sub://counter", 2)
  local got = hits["sub://counter"]
  local un = mcp.unsubscribe_resource("s", "sub://counter").ok
  local ticked = wait("sub://clock", hits["sub://clock"] + 1) -- an update in flight has landed by now
  local settled = hits["sub://counter"]
  ticked = ticked and wait("sub://clock", hits["sub://clock"] + 3)
  return std.json.encode({ era = era, ok = ok, got = got, last = last, un = un, ticked = ticked,
    stopped = hits["sub://counter"] == settled })
`;

Deno.test("resource subscriptions in both eras", async (t) => {
  let sub: Peer | undefined;
  let echo: Peer | undefined;
  try {
    sub = await startSubscribe(["--interval", "100"]);
    for (const [era, name] of [["auto", "modern"], ["legacy", "legacy"]]) {
      await t.step(`${name} era`, async () => {
        const out = await runLua(SCRIPT(sub!.url, era));
        assert.deepEqual(out.outcome.status, "returned", out.stderr);
        const r = JSON.parse(String((out.outcome as { value: string }).value));
        assert.deepEqual(r.era, name);
        assert.deepEqual(r.ok, true);
        assert.deepEqual(r.got >= 2, true, `updates: ${r.got}`);
        assert.deepEqual(r.last, "sub:resource_update:s:sub://counter");
        assert.deepEqual(r.un, true);
        assert.deepEqual(r.ticked, true, "the control subscription kept delivering");
        assert.deepEqual(r.stopped, true);
      });
    }
    echo = await startEchoHttp();
    await t.step("a server without resources.subscribe answers ok = false (2026-07-28 era too)", async () => {
      const out = await runLua(`
        assert(mcp.connect_http("e", ${lq(echo!.url)}))
        return std.json.encode({ era = mcp.server_info("e").server_info.era, r = mcp.subscribe_resource("e", "text://hello") })
      `);
      const r = JSON.parse(String((out.outcome as { value: string }).value));
      assert.deepEqual(r.era, "modern");
      assert.deepEqual(r.r.ok, false);
      assert.match(r.r.error, /does not offer resource subscriptions \(capability resources\.subscribe\)/);
    });
    await t.step("a server without resources.subscribe answers ok = false (2025 era)", async () => {
      const out = await runLua(`
        assert(mcp.connect_http("e", ${lq(echo!.url)}, { era = "legacy" }))
        return std.json.encode(mcp.subscribe_resource("e", "text://hello"))
      `);
      const r = JSON.parse(String((out.outcome as { value: string }).value));
      assert.deepEqual(r.ok, false);
      assert.match(r.error, /resources\/subscribe 'text:\/\/hello' on server 'e' failed/);
    });
  } finally {
    await sub?.stop();
    await echo?.stop();
  }
});

Deno.test("the seed's subscribe smoke: the fixture prints SUBSCRIBE_OK, RESOURCE_UPDATE_EV_OK, UPDATE_HITS=1, FIXTURE_DONE", async () => {
  const fixture = join(REPO_ROOT, "tests", "fixtures", "mcp_on_resource_update_callback.lua");
  let sub: Peer | undefined;
  let echo: Peer | undefined;
  try {
    // Step 2 of docs/runbooks/e2e-mcp-resource-subscribe.md: the positive shell check
    sub = await startSubscribe();
    const ok = await runCli(["-s", fixture], {
      cwd: await tempDir(),
      env: testEnv({ MCP_HTTP_URL: sub.url }),
    });
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.equal(ok.stdout, "SUBSCRIBE_OK\nRESOURCE_UPDATE_EV_OK\nUPDATE_HITS=1\nFIXTURE_DONE\n");
    // Step 3: the negative one, a server without resources.subscribe
    echo = await startEchoHttp();
    const no = await runCli(["-s", fixture], {
      cwd: await tempDir(),
      env: testEnv({ MCP_HTTP_URL: echo.url, MCP_RESOURCE_URI: "text://hello" }),
    });
    assert.equal(no.code, 1, no.stdout + no.stderr);
    assert.match(
      no.stdout,
      /^SUBSCRIBE_FAILED: .*'text:\/\/hello'.*the server does not offer resource subscriptions/,
    );
    assert.doesNotMatch(no.stdout, /FIXTURE_DONE/);
  } finally {
    await sub?.stop();
    await echo?.stop();
  }
});
