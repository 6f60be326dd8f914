/**
 * Secrets masked wherever text from outside is kept (issue 14, §5), attacked from outside:
 *
 * - a model server whose 401 body echoes the key it was sent: through the real CLI with the
 *   host's `ANTHROPIC_API_KEY`, then in-process with an `api_key` and an `api_key_env` the block
 *   passes — the key is in no byte of the kernel's database files, in no line of `knl export` /
 *   `knl sessions`, in neither stderr nor the `--outcome` file, and `[redacted]` shows the echo
 *   was there;
 * - a log that holds a key unmasked (written by a run that did not know it) read back by a
 *   process that has the key in the project's `.env`: the sessions table and JSON lines, the
 *   transcript of `knl show` (cut to a width) and `knl export` show none of it;
 * - a block that writes the host's key into a kernel event itself: stored masked;
 * - MCP servers that echo a secret (the host's key, or a token the block handed them in
 *   `opts.env`) in a log notification, on their stderr and in a JSON-RPC error: the run's log (at
 *   debug level, where the client logs all of it), the errors Lua gets and what the run's
 *   observer is told of its connects and calls carry none of it;
 * - `http.request` to a URL with userinfo, a token in the query and the key in the path: the
 *   error keeps the host and the harmless parameters, loses the rest.
 *
 * Servers are local (127.0.0.1, ephemeral ports) and stop with the test file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { RunEvent } from "../../src/obs/run_events.ts";
import {
  assertIncludes,
  jsonLines,
  REPO_ROOT,
  runCli,
  runLua,
  tempDir,
  tempProject,
  testEnv,
} from "../helpers.ts";

/** A model server that refuses every request with a 401 whose message repeats the key sent. */
const echoing = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  await req.text();
  const sent = req.headers.get("x-api-key") ?? req.headers.get("authorization") ?? "";
  return Response.json(
    { type: "error", error: { type: "authentication_error", message: `invalid x-api-key: ${sent}` } },
    { status: 401 },
  );
});
const MODEL_URL = `http://127.0.0.1:${echoing.addr.port}`;
Deno.test.afterAll(async () => await echoing.shutdown());

/** Every byte of every file under `dir` (the database, its WAL and shared memory), as text. */
function bytesUnder(dir: string): string {
  let all = "";
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    all += e.isDirectory ? bytesUnder(p) : new TextDecoder("latin1").decode(Deno.readFileSync(p));
  }
  return all;
}

const AGENT = `
local agent = require("agent")
local r = agent.run({ prompt = "hi", model = "claude-haiku-4-5-20251001", max_retries = 0 })
io.stderr:write("agent error: ", tostring(r.error), "\\n")
error(r.error)
`;

Deno.test("attack: a model server's 401 body echoes the host's key: not in knl.sqlite, knl export, --outcome or stderr", async () => {
  const key = "sk-ant-api03-HOSTKEY-0123456789abcdef";
  const root = await tempProject({ "leak.lua": AGENT });
  const env = { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: MODEL_URL, AGENT_BLOCK_LOG: "debug" };
  const run = await runCli(["-s", "leak.lua", "--outcome", "outcome.json"], { cwd: root, env });
  assert.equal(run.code, 1, run.stderr);
  assertIncludes(run.stderr, "invalid x-api-key: [redacted]", "the echo reached the run, masked");
  assert.ok(!run.stderr.includes(key), `stderr holds the key:\n${run.stderr}`);
  const outcome = Deno.readTextFileSync(join(root, "outcome.json"));
  assertIncludes(outcome, "[redacted]");
  assert.ok(!outcome.includes(key), `the outcome file holds the key: ${outcome}`);

  const db = bytesUnder(join(root, ".agent-block"));
  assertIncludes(db, "invalid x-api-key: [redacted]", "the failed call is in the log, masked");
  assert.ok(!db.includes(key), "the kernel's database files hold the key");

  // Read back by a process that does not have the key: nothing to mask there, nothing to find.
  const sessions = await runCli(["knl", "sessions", "--json"], { cwd: root, env: { ANTHROPIC_API_KEY: "" } });
  assert.equal(sessions.code, 0, sessions.stderr);
  const [session] = jsonLines(sessions.stdout);
  for (const as of ["events", "messages"]) {
    const exp = await runCli(["knl", "export", "--session", session.id, "--as", as], {
      cwd: root,
      env: { ANTHROPIC_API_KEY: "" },
    });
    assert.equal(exp.code, 0, exp.stderr);
    assert.ok(!exp.stdout.includes(key), `knl export --as ${as} holds the key`);
    if (as === "events") assertIncludes(exp.stdout, "[redacted]");
  }
});

Deno.test("attack: a log holding a key (written before it was a secret) is read by a process that has it in .env: knl sessions, show and export print none of it", async () => {
  const key = "sk-ant-api03-READER-KNOWS-0123456789abcdef";
  const root = await tempDir();
  // Written by a run that does not have the key (an older version, another key in place): kept as is.
  const w = await runLua(
    `local knl = require("knl")
     local s = knl.session({ owner = "test", labels = { note = KEY } })
     s:append({ kind = "msg_user", data = { content = "my key is " .. KEY } })
     s:append({ kind = "note", data = { text = string.rep("x", 30) .. KEY } })
     s:close()
     return s.id`,
    { projectRoot: root, globals: { KEY: key }, env: testEnv() },
  );
  assert.equal(w.outcome.status, "returned", w.stderr);
  const id = w.outcome.value as string;
  assertIncludes(bytesUnder(join(root, ".agent-block")), key, "the log holds the key unmasked");

  // The reader's key comes from the project's .env (the edge environment), not its own variables.
  Deno.writeTextFileSync(join(root, ".env"), `ANTHROPIC_API_KEY=${key}\n`);
  const read = async (...args: string[]) => {
    const r = await runCli(["knl", ...args, "-p", root], { env: testEnv(), clearEnv: true });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.includes(key), `knl ${args.join(" ")} prints the key:\n${r.stdout}`);
    // no part of the key at a cut either
    assert.ok(!r.stdout.includes(key.slice(0, 10)), `knl ${args.join(" ")} prints part of the key`);
    assertIncludes(r.stdout, "[redacted]", `knl ${args.join(" ")}`);
    return r.stdout;
  };
  const table = await read("sessions");
  assert.match(table, /^ID +SCRIPT +LABELS/);
  await read("sessions", "--json");
  const shown = await read("show", id, "--width", "60");
  assertIncludes(shown, "my key is [redacted]");
  for (const as of ["events", "messages"]) await read("export", "--session", id, "--as", as);
});

Deno.test("attack: a 401 body echoes the api_key (or api_key_env's value) a block passed: not in the log, the database or the outcome", async () => {
  const passed = "sk-passed-by-the-block-0123456789";
  const named = "sk-named-by-api-key-env-9876543210";
  const root = await tempDir();
  const r = await runLua(
    `local agent = require("agent")
     local a = agent.run({ prompt = "hi", model = "claude-haiku-4-5-20251001", max_retries = 0,
       base_url = URL, api_key = ${JSON.stringify(passed)} })
     local b = agent.run({ prompt = "hi", model = "claude-haiku-4-5-20251001", max_retries = 0,
       base_url = URL, api_key_env = "MY_MODEL_KEY" })
     print(a.error, b.error)
     error({ message = "both failed", first = a.error, second = b.error })`,
    {
      projectRoot: root,
      globals: { URL: MODEL_URL },
      env: testEnv({ MY_MODEL_KEY: named, AGENT_BLOCK_LOG: "debug" }),
    },
  );
  assert.equal(r.outcome.status, "raised");
  // What the block printed itself is its own business, but the error it got was masked already.
  assert.equal(
    r.stdout,
    "llm: anthropic HTTP 401 (authentication_error): invalid x-api-key: [redacted]\t" +
      "llm: anthropic HTTP 401 (authentication_error): invalid x-api-key: [redacted]\n",
  );
  const everything = JSON.stringify(r.outcome) + r.stderr + bytesUnder(join(root, ".agent-block"));
  for (const key of [passed, named]) assert.ok(!everything.includes(key), `${key} was kept somewhere`);
});

Deno.test("attack: a block writes the host's key into a kernel event: the database stores it masked", async () => {
  const key = "sk-ant-host-credential-written-by-a-block";
  const root = await tempDir();
  const r = await runLua(
    `local knl = require("knl")
     local s = knl.session({ owner = "test", labels = { note = "k=" .. os.getenv("ANTHROPIC_API_KEY") } })
     s:append({ kind = "note", data = { body = "the server said " .. os.getenv("ANTHROPIC_API_KEY"),
       nested = { os.getenv("ANTHROPIC_API_KEY") }, n = 3.0 } })
     s:close({ why = os.getenv("ANTHROPIC_API_KEY") })
     return s.id`,
    { projectRoot: root, env: testEnv({ ANTHROPIC_API_KEY: key }) },
  );
  assert.equal(r.outcome.status, "returned", r.stderr);
  const db = bytesUnder(join(root, ".agent-block"));
  assert.ok(!db.includes(key), "the database holds the key");
  assertIncludes(db, `"body":"the server said [redacted]"`);
});

Deno.test("attack: MCP servers echo the host's key, or a token handed to them, in log messages, stderr and errors: the run keeps none of it", async () => {
  const key = "sk-ant-echoed-by-an-mcp-server-42";
  const handed = "svc-token-handed-in-opts-env-7";
  const server = join(REPO_ROOT, "tests/fixtures/mcp/leak_server.ts");
  const root = await tempDir();
  const seen: RunEvent[] = [];
  const r = await runLua(
    `-- a connect that fails with the key in its error (the command named after it)
     local ok, why = mcp.connect("gone", "/nonexistent/" .. os.getenv("ANTHROPIC_API_KEY"), {},
       { required = false })
     assert(not ok and why:find("[redacted]", 1, true), why)
     assert(mcp.connect("leak", DENO, { "run", "-A", "--quiet", SERVER, os.getenv("ANTHROPIC_API_KEY") },
       { era = "legacy" }))
     local res = mcp.call("leak", "leak", {})
     -- a token handed to a second server on purpose, which it echoes back
     assert(mcp.connect("given", DENO, { "run", "-A", "--quiet", SERVER, ${JSON.stringify(handed)} },
       { era = "legacy", env = { SERVICE_TOKEN = ${JSON.stringify(handed)} } }))
     local res2 = mcp.call("given", "leak", {})
     assert(res2.error:find("[redacted]", 1, true), res2.error)
     local knl = require("knl")
     local s = knl.session({ owner = "test" })
     s:append({ kind = "tool_result", data = { error = res.error } })
     s:close()
     mcp.disconnect("leak")
     return res.error`,
    {
      projectRoot: root,
      globals: { DENO: Deno.execPath(), SERVER: server },
      env: testEnv({ ANTHROPIC_API_KEY: key, AGENT_BLOCK_LOG: "debug" }),
      observe: (e) => seen.push(e),
    },
  );
  assert.equal(r.outcome.status, "returned", r.stderr);
  // What a watched run is told (--progress, --events): the failures, masked.
  const told = seen.filter((e) => e.type === "mcp_connect" || e.type === "mcp_call");
  assert.deepEqual(told.map((e) => `${e.type} ${e.server} ${e.ok}`), [
    "mcp_connect gone false",
    "mcp_connect leak true",
    "mcp_call leak false",
    "mcp_connect given true",
    "mcp_call given false",
  ]);
  for (const e of told.filter((e) => !e.ok)) assertIncludes(String(e.error), "[redacted]");
  for (const secret of [key, handed]) {
    assert.ok(!JSON.stringify(seen).includes(secret), `the run's observer was told ${secret}`);
  }
  const error = r.outcome.value as string;
  assertIncludes(error, "refused the key [redacted]");
  assertIncludes(r.stderr, "the key I was sent is [redacted]", "the log notification was logged, masked");
  assertIncludes(r.stderr, "key=[redacted]", "the server's stderr was logged, masked");
  for (const secret of [key, handed]) {
    assert.ok(!r.stderr.includes(secret), `the run's log holds ${secret}:\n${r.stderr}`);
  }
  assert.ok(!bytesUnder(join(root, ".agent-block")).includes(key), "the database holds the key");
});

Deno.test("attack: http.request to a URL with userinfo, a token query and the key in its path: the error shows none of them", async () => {
  const key = "sk-ant-in-the-url-path-0123456789";
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close(); // nothing listens there now: the request is refused
  const urls = [
    `http://alice:hunter2-password@127.0.0.1:${port}/v1?page=2&access_token=tok-0123456789&api_key=ak-0123456789`,
    `http://127.0.0.1:${port}/keys/${key}?token=tok-0123456789#frag`,
  ];
  const r = await runLua(
    `local out = {}
     for _, u in ipairs(URLS) do out[#out + 1] = http.request(u).error end
     return table.concat(out, "\\n")`,
    {
      globals: { URLS: urls },
      env: testEnv({ ANTHROPIC_API_KEY: key, AGENT_BLOCK_LOG: "debug" }),
    },
  );
  assert.equal(r.outcome.status, "returned", r.stderr);
  const [first, second] = (r.outcome.value as string).split("\n");
  assertIncludes(
    first,
    `http.request: GET http://127.0.0.1:${port}/v1?page=2&access_token=[redacted]&api_key=[redacted]`,
  );
  assertIncludes(second, `http.request: GET http://127.0.0.1:${port}/keys/[redacted]?token=[redacted]#frag`);
  for (const leak of ["alice", "hunter2", "tok-0123456789", "ak-0123456789", key]) {
    assert.ok(!(r.outcome.value as string).includes(leak), `the error shows ${leak}: ${r.outcome.value}`);
  }
});

Deno.test("attack: a base_url's user:password reaches the server as a Basic header it echoes: masked in that encoded form too", async () => {
  // a model server that echoes the Authorization header (the Basic form of the URL's userinfo)
  const basicEcho = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.text();
    const sent = req.headers.get("authorization") ?? "none";
    return Response.json(
      { type: "error", error: { type: "authentication_error", message: `bad credentials: ${sent}` } },
      { status: 401 },
    );
  });
  try {
    const user = "model-user";
    const password = "pa55word-in-the-url";
    const basic = btoa(`${user}:${password}`);
    const root = await tempDir();
    const r = await runLua(
      `local agent = require("agent")
       local a = agent.run({ prompt = "hi", model = "claude-haiku-4-5-20251001", max_retries = 0,
         base_url = URL, api_key = "sk-some-key-0123456789" })
       error({ message = "failed", first = a.error })`,
      {
        projectRoot: root,
        globals: { URL: `http://${user}:${password}@127.0.0.1:${basicEcho.addr.port}` },
        env: testEnv({ AGENT_BLOCK_LOG: "debug" }),
      },
    );
    assert.equal(r.outcome.status, "raised");
    const everything = JSON.stringify(r.outcome) + r.stderr + r.stdout +
      bytesUnder(join(root, ".agent-block"));
    assert.ok(everything.includes("bad credentials"), "the echo was there");
    for (const form of [password, basic, basic.replace(/=+$/, "")]) {
      assert.ok(!everything.includes(form), `${form} was kept somewhere:\n${everything.slice(0, 2000)}`);
    }
  } finally {
    await basicEcho.shutdown();
  }
});
