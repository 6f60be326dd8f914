/**
 * MCP failure paths, each against a real process or HTTP server: a wrong command, a server that
 * writes garbage to stdout, one that dies at start-up (stderr tail in the error), one that exits
 * mid-call, one that never answers (timeout, and the cancellation proven to reach the server),
 * HTTP 404 and 500, the environment given to stdio servers, and cleanup at run end.
 */
import { join } from "node:path";
import assert from "node:assert/strict";
import { assertIncludes, resultOf, returnedValue, runCli, runLua, testEnv, waitFor } from "../../helpers.ts";
import { DENO, ECHO, FIXTURES, lq, type Peer, startEchoHttp, startSubscribe } from "./peers.ts";

function result(out: { outcome: { status: string } }): string {
  const o = out.outcome as { status: string; value?: unknown; message?: string };
  if (o.status === "returned") return String(o.value);
  return `${o.status}: ${o.message ?? ""}`;
}

Deno.test("a wrong command raises naming the server and the command; required=false returns false, err", async () => {
  const out = await runLua(`
    local ok, err = pcall(mcp.connect, "ghost", "/nonexistent/mcp-server", {})
    local ok2, err2 = mcp.connect("ghost2", "/nonexistent/mcp-server", {}, { required = false })
    return std.json.encode({ ok = ok, err = tostring(err), ok2 = ok2, err2 = err2,
      fields = { err.server, err.method, err.kind, err.code == nil }, matches = err:find("no such command") ~= nil })
  `);
  const r = JSON.parse(result(out));
  assert.deepEqual(r.ok, false);
  assert.deepEqual(r.fields, ["ghost", "initialize", "failed", true], "the raise is an error table");
  assert.deepEqual(r.matches, true, "string methods read the message");
  assert.match(
    r.err,
    /cannot start server 'ghost' \(command '\/nonexistent\/mcp-server'\): no such command/,
  );
  assert.deepEqual(r.ok2, false);
  assert.match(r.err2, /cannot start server 'ghost2'/);
  assert.match(out.stderr, /\[warn\]/);
});

Deno.test("a server printing only non-protocol text on stdout times out, the error quoting what it printed", async () => {
  const out = await runLua(`
    local ok, err = pcall(mcp.connect, "weather", ${lq(DENO)}, { "run", "-A", ${
    lq(join(FIXTURES, "garbage_server.ts"))
  } }, { timeout = 10 })
    return tostring(err)
  `);
  const err = returnedValue(out);
  // 10 s, not 1: the error quotes what the server printed, so the server must have started and
  // printed before the timeout, which a loaded machine may not manage within 1 s
  assert.match(err, /initialize 'weather' timed out after 10 s/);
  assert.match(err, /server 'weather' wrote a line on stdout that is not JSON-RPC \(skipped;/);
  assert.match(err, /Weather server v1\.2 starting up/);
});

Deno.test("non-JSON-RPC lines on a stdio server's stdout are skipped, with one warning", async (t) => {
  for (const era of ["auto", "legacy"]) {
    await t.step(`era ${era}`, async () => {
      const out = await runLua(
        `
        assert(mcp.connect("weather", ${lq(DENO)}, { "run", "-A", "--quiet", ${
          lq(join(FIXTURES, "banner_server.ts"))
        } }, { era = ${lq(era)} }))
        local a = mcp.call("weather", "noisy", {})
        local b = mcp.call("weather", "noisy", {})
        local c = mcp.call("weather", "echo", { msg = "still here" })
        return std.json.encode({ a = a.content[1].text, b = b.content[1].text, c = c.content[1].text,
          era = mcp.server_info("weather").server_info.era })
      `,
        { env: testEnv({ AGENT_BLOCK_LOG: "debug" }) },
      );
      const r = resultOf(out);
      assert.deepEqual([r.a, r.b, r.c], ["quiet now", "quiet now", "still here"]);
      assert.deepEqual(r.era, era === "auto" ? "modern" : "legacy");
      const warns = out.stderr.split("\n").filter((l) => /\[warn\].*not JSON-RPC/.test(l));
      assert.equal(warns.length, 1, `one warning, for the first line:\n${out.stderr}`);
      assert.match(warns[0], /server 'weather' wrote a line on stdout that is not JSON-RPC, skipped/);
      assert.match(warns[0], /Weather server v1\.2 starting up/, "the first line is the banner");
      // The later ones (2 per `noisy` call) are at debug level, each once.
      const later = out.stderr.split("\n").filter((l) => /\[debug\].*non-JSON-RPC line on stdout/.test(l));
      assert.equal(later.length, 4, out.stderr);
      assert.match(later.join("\n"), /debug: handling noisy/);
      assert.match(later.join("\n"), /json, but not json-rpc/);
    });
  }
});

Deno.test("a server dying at start-up: exit code and stderr tail in the error", async () => {
  const out = await runLua(`
    local ok, err = pcall(mcp.connect, "crashy", ${lq(DENO)}, { "run", "-A", ${
    lq(join(FIXTURES, "crash_server.ts"))
  } })
    return tostring(err)
  `);
  const err = returnedValue(out);
  assert.match(err, /initialize 'crashy' failed/);
  assert.match(err, /server 'crashy' exited with code 2/);
  assert.match(err, /boom: missing config file \/etc\/weather\.conf/);
});

Deno.test("a silent server: initialize times out after opts.timeout, naming the server", async () => {
  const out = await runLua(`
    local ok, err = pcall(mcp.connect, "mute", ${lq(DENO)}, { "run", "-A", ${
    lq(join(FIXTURES, "silent_server.ts"))
  } }, { timeout = 0.5 })
    return tostring(err) .. " | kind=" .. err.kind
  `);
  assertIncludes(result(out), "mcp.connect: initialize 'mute' timed out after 0.5 s");
  assertIncludes(result(out), " | kind=timeout");
});

Deno.test("--mcp-timeout-secs is the default request timeout", async () => {
  const out = await runLua(
    `local ok, err = pcall(mcp.connect, "mute", ${lq(DENO)}, { "run", "-A", ${
      lq(join(FIXTURES, "silent_server.ts"))
    } }); return tostring(err)`,
    { mcpTimeoutMs: 1000 },
  );
  assert.match(returnedValue(out), /initialize 'mute' timed out after 1 s/);
});

Deno.test("a server exiting mid-call: the call fails with its exit code and stderr", async () => {
  const out = await runLua(`
    assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${lq(ECHO)}, "--test-tools" }))
    local r = mcp.call("echo", "exit_now", {})
    local again = mcp.call("echo", "echo", { msg = "x" })
    return std.json.encode({ ok = r.ok, error = r.error, again = again.error })
  `);
  const r = resultOf(out);
  assert.deepEqual(r.ok, false);
  assert.match(r.error, /tools\/call 'exit_now' on server 'echo' failed/);
  assert.match(r.error, /server 'echo' exited with code 3/);
  assert.match(r.error, /exiting mid-call/);
  assert.match(r.again, /server 'echo' exited with code 3/);
});

/**
 * The request timeouts of the hang tests, seconds. A timeout covers every request of the server,
 * the connect's `initialize` and the call after the hang included, so over stdio it must be
 * generous enough for a loaded machine to start a Deno server (it tells "never answers" from
 * "answers late"); the HTTP server is started, and answering, before the run connects, so 3 s
 * hold there (1 s was not always enough for a loaded machine). A loaded machine can still stall
 * the server past them, so that it gets to the 2026-era `hang` call only after the client closed
 * it: the server then never starts the tool, and records `cancelled <id> before it started`
 * (`examples/lib/mcp_http_serve.ts`), which is the cancellation reaching the server as well.
 * The longer wait also lets a garbage collection of this long-lived test process fall between
 * the hang's response headers and its timeout, which once lost the 2026-era cancellation (the
 * closing of the exchange) in Deno's fetch; `tests/clients/mcp/http_abort_test.ts` forces it.
 */
const HANG_TIMEOUT = { stdio: 8, http: 3 };

async function hangAndProveCancel(
  connect: string,
  cancelLog: string,
  timeout: number,
  serverOutput: () => string = () => "",
): Promise<void> {
  const out = await runLua(`
    ${connect}
    local t0 = os.time()
    local r = mcp.call("echo", "hang", {})
    local after = mcp.call("echo", "echo", { msg = "still alive" })
    return std.json.encode({ ok = r.ok, error = r.error, after = after.content and after.content[1].text })
  `);
  const r = resultOf(out);
  assert.deepEqual(r.ok, false);
  assert.match(
    r.error,
    new RegExp(
      `tools/call 'hang' on server 'echo' timed out after ${timeout} s \\(cancellation sent\\)`,
    ),
  );
  assert.deepEqual(r.after, "still alive");
  // The server saw the cancellation of that request.
  await waitFor(
    async () => {
      try {
        return (await Deno.readTextFile(cancelLog)).includes("cancelled");
      } catch {
        return false;
      }
    },
    {
      what: () => {
        let log: string;
        try {
          log = Deno.readTextFileSync(cancelLog);
        } catch (e) {
          log = `(unreadable: ${(e as Error).message})`;
        }
        return `the server to record the cancellation; its log: ${
          JSON.stringify(log)
        }; its output:\n${serverOutput()}`;
      },
    },
  );
}

Deno.test("a tool that never answers: timeout, and the cancellation reaches the server", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "ab_mcp_cancel_" });
  let http: Peer | undefined;
  try {
    // The two stdio eras at once (each its own run, server and log): each waits out its timeout,
    // so one after the other only doubled the test's time.
    await t.step("stdio, eras auto and legacy", async () => {
      await Promise.all(["auto", "legacy"].map((era) => {
        const log = join(dir, `stdio-${era}.log`);
        return hangAndProveCancel(
          `assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${
            lq(ECHO)
          }, "--test-tools", "--cancel-log", ${lq(log)} }, { timeout = ${HANG_TIMEOUT.stdio}, era = ${
            lq(era)
          } }))`,
          log,
          HANG_TIMEOUT.stdio,
        );
      }));
    });
    const httpLog = join(dir, "http.log");
    http = await startEchoHttp(["--test-tools", "--cancel-log", httpLog]);
    // One call before the timed ones, with the default timeout: a fresh server's first answers
    // took up to 0.94 s on a loaded machine, and the hang's 1 s covers the connect too.
    resultOf(
      await runLua(`
        assert(mcp.connect_http("echo", ${lq(http.url)}))
        return std.json.encode(mcp.call("echo", "echo", { msg = "warm" }))
      `),
    );
    for (const era of ["auto", "legacy"]) {
      await t.step(`Streamable HTTP, era ${era}`, async () => {
        await Deno.remove(httpLog).catch(() => undefined);
        await hangAndProveCancel(
          `assert(mcp.connect_http("echo", ${lq(http!.url)}, { timeout = ${HANG_TIMEOUT.http}, era = ${
            lq(era)
          } }))`,
          httpLog,
          HANG_TIMEOUT.http,
          () => http!.output(),
        );
      });
    }
  } finally {
    await http?.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("HTTP servers answering 404 or 500: connect errors name the server, the status and the URL", async () => {
  const ac = new AbortController();
  let port = 0;
  const ready = Promise.withResolvers<void>();
  const srv = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: ac.signal,
    onListen: (a) => {
      port = a.port;
      ready.resolve();
    },
  }, (req) => {
    const status = new URL(req.url).pathname.startsWith("/missing") ? 404 : 500;
    return new Response(status === 404 ? "no such endpoint" : "internal failure", { status });
  });
  await ready.promise;
  try {
    for (const transport of ["http", "sse"]) {
      const out = await runLua(`
        local a_ok, a = pcall(mcp.connect_http, "remote", "http://user:pw@127.0.0.1:${port}/missing/mcp?token=s3cret", { transport = ${
        lq(transport)
      }, era = "legacy" })
        local b_ok, b = pcall(mcp.connect_http, "broken", "http://127.0.0.1:${port}/mcp", { transport = ${
        lq(transport)
      } })
        return std.json.encode({ a = tostring(a), b = tostring(b), a_server = a.server, a_method = a.method })
      `);
      const r = JSON.parse(result(out));
      assertIncludes(r.a, "'remote'");
      assert.deepEqual([r.a_server, r.a_method], ["remote", "initialize"]);
      assertIncludes(r.a, "404");
      assertIncludes(r.a, `http://127.0.0.1:${port}/missing/mcp`);
      assert.ok(!r.a.includes("s3cret") && !r.a.includes("pw@"), r.a);
      assert.match(r.b, /'broken'/);
      assert.match(r.b, /500/);
    }
  } finally {
    ac.abort();
    await srv.finished;
  }
});

Deno.test("attack: an MCP stdio server reads the host's credentials (opts.env applied after; cwd the project root)", async () => {
  // The host's own environment is the subprocess's: the credential is really there to be stripped.
  const project = await Deno.makeTempDir({ prefix: "ab_mcp_proj_" });
  try {
    await Deno.writeTextFile(
      join(project, "env_check.lua"),
      `
      local srv = ${lq(join(FIXTURES, "env_server.ts"))}
      assert(mcp.connect("a", ${lq(DENO)}, { "run", "-A", srv }))
      assert(mcp.connect("b", ${
        lq(DENO)
      }, { "run", "-A", srv }, { env = { ANTHROPIC_API_KEY = "given", EXTRA = "x" }, cwd = "/tmp" }))
      local function env(s, n) return mcp.call(s, "env", { name = n }).content[1].text end
      local bad_ok, bad = pcall(mcp.connect, "c", ${
        lq(DENO)
      }, { "run", "-A", srv }, { env = { PORT = 8080 } })
      print(std.json.encode({
        a_key = env("a", "ANTHROPIC_API_KEY"), a_inh = env("a", "AB_MCP_TEST_INHERITED"),
        b_key = env("b", "ANTHROPIC_API_KEY"), b_extra = env("b", "EXTRA"),
        a_cwd = mcp.call("a", "cwd", {}).content[1].text, b_cwd = mcp.call("b", "cwd", {}).content[1].text,
        bad = bad,
      }))
    `,
    );
    const out = await runCli(["-s", join(project, "env_check.lua"), "-p", project], {
      env: { ANTHROPIC_API_KEY: "host-secret", AB_MCP_TEST_INHERITED: "inherited" },
    });
    assert.deepEqual(out.code, 0, out.stderr);
    const r = JSON.parse(out.stdout.trim().split("\n").pop()!);
    assert.deepEqual(r.a_key, "<unset>");
    assert.deepEqual(r.a_inh, "inherited");
    assert.deepEqual(r.b_key, "given");
    assert.deepEqual(r.b_extra, "x");
    assert.deepEqual(r.a_cwd, await Deno.realPath(project));
    assert.deepEqual(r.b_cwd, "/tmp");
    assert.match(
      r.bad,
      /mcp\.connect: argument 4 \(opts\) field 'env' value for 'PORT' must be a string, got number/,
    );
  } finally {
    await Deno.remove(project, { recursive: true });
  }
});

Deno.test("servers are disconnected at run end, after an error too; no child survives", async () => {
  const marker = `/tmp/ab-mcp-marker-${crypto.randomUUID()}`;
  const out = await runLua(`
    assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${
    lq(ECHO)
  }, "--test-tools", "--cancel-log", ${lq(marker)} }))
    error("script failed on purpose")
  `);
  assert.deepEqual(out.outcome.status, "raised");
  const ps = await new Deno.Command("pgrep", { args: ["-f", marker], stdout: "piped" }).output();
  assert.deepEqual(new TextDecoder().decode(ps.stdout).trim(), "", "an MCP server outlived the run");
});

Deno.test("a failing disconnect at exit never changes the exit code", async () => {
  const sub = await startSubscribe();
  try {
    const dir = await Deno.makeTempDir({ prefix: "ab_mcp_cli_" });
    const script = join(dir, "s.lua");
    await Deno.writeTextFile(
      script,
      `assert(mcp.connect_http("sub", ${lq(sub.url)}, { era = "legacy" }))
       os.execute("kill -9 ${sub.pid}")
       print("script done")`,
    );
    const r = await runCli(["-s", script, "--project", dir]);
    assert.deepEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /script done/);
    await Deno.remove(dir, { recursive: true });
  } finally {
    await sub.stop();
  }
});
