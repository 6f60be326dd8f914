/**
 * The embedding SDK in process (`mod.ts`: `BlockConfig` → `runBlock` → `BlockReport`): extra
 * globals, host handlers and artifacts, host tools (through `tool.call` and through a model
 * loop), the injected model `fetch`, store paths, sessions, cancellation and timeouts, config
 * errors, error codes, `autoServeBus`, observers of a run, and many blocks at once without shared
 * state.
 *
 * Every run gets `env(testEnv(...))`, so nothing of the developer's environment reaches it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  BlockConfig,
  type BlockReport,
  BusHost,
  closeStore,
  listSessions,
  openExistingStore,
  RESERVED_GLOBALS,
  runBlock,
  type RunEvent,
  ScriptSource,
} from "../../mod.ts";
import { REPO_ROOT, tempDir, testEnv, waitFor } from "../helpers.ts";
import { anthropicError, anthropicMessage, MockLlm } from "../host/llm/mock_llm.ts";

const quiet = { out: [] as string[], err: [] as string[] };
const dec = new TextDecoder();

/** A builder for inline `source` in a fresh project, with a clean environment and captured output. */
async function inline(source: string, env: Record<string, string> = {}) {
  const root = await tempDir();
  return {
    root,
    b: BlockConfig.builder(ScriptSource.inline(source, "t.lua"), root)
      .env(testEnv(env))
      .cwd(root)
      .stdout((b) => quiet.out.push(dec.decode(b)))
      .stderr((b) => quiet.err.push(dec.decode(b))),
  };
}

function returned(r: BlockReport): string {
  assert.equal(r.outcome.status, "returned", JSON.stringify(r.outcome));
  return r.value ?? "";
}

Deno.test("extraGlobals: nested JSON arrives as Lua tables, after std; the inputs are _PROMPT and _CONTEXT", async () => {
  const { b } = await inline(`
    return std.json.encode({
      id = _TASK_METADATA.ticket.id, tags = _TASK_METADATA.ticket.tags, n = _AGENT_CTX.depth.n,
      float = math.type(_AGENT_CTX.ratio), flag = _AGENT_CTX.flag, prompt = _PROMPT, context = _CONTEXT,
      std_ok = type(std.json) })`);
  const r = await runBlock(
    b.prompt("p").context("c")
      .extraGlobals({ _TASK_METADATA: { ticket: { id: "T-1", tags: ["a", "b"] } } })
      .extraGlobals({ _AGENT_CTX: { depth: { n: 3 }, ratio: 0.5, flag: true } })
      .build(),
  );
  assert.deepEqual(JSON.parse(returned(r)), {
    id: "T-1",
    tags: ["a", "b"],
    n: 3,
    float: "float",
    flag: true,
    prompt: "p",
    context: "c",
    std_ok: "table",
  });
});

Deno.test("RESERVED_GLOBALS holds every global a fresh run defines (so extraGlobals cannot replace one)", async () => {
  const { b } = await inline(`
    local names = {}
    for k in pairs(_G) do if type(k) == "string" then names[#names + 1] = k end end
    table.sort(names)
    return table.concat(names, " ")`);
  const names = returned(await runBlock(b.prompt("x").context("y").build())).split(" ");
  const unreserved = names.filter((n) => !RESERVED_GLOBALS.has(n) && !n.startsWith("__"));
  assert.deepEqual(unreserved, [], "globals a run defines that extraGlobals could replace");
});

Deno.test("host handlers: per kind and for any kind get { kind, id, payload, meta } at once; artifacts are staged", async () => {
  const got: string[] = [];
  const { b } = await inline(`
    bus.emit("artifact", { name = "verdict", content = "PASS" })
    bus.emit("progress", { step = 1 }, "my-id")
    bus.emit("artifact", { name = "notes", content = { lines = 2 } })
    bus.emit("result", { content = "done" })
    return "end"`);
  const r = await runBlock(
    b.hostHandler("progress", (e) => {
      got.push(`${e.kind}:${e.id}:${JSON.stringify(e.payload)}:${JSON.stringify(e.meta)}`);
    })
      .hostHandler((e) => void got.push(`any:${e.kind}`))
      .build(),
  );
  assert.equal(returned(r), "end");
  assert.deepEqual(got, ["any:artifact", 'progress:my-id:{"step":1}:{}', "any:artifact", "any:result"]);
  assert.deepEqual(r.artifacts.map((a) => [a.name, a.content]), [["verdict", "PASS"], ["notes", {
    lines: 2,
  }]]);
});

Deno.test("an artifact without a string name raises in the script, naming the rule", async () => {
  const { b } = await inline(`bus.emit("artifact", { content = "x" })`);
  const r = await runBlock(b.build());
  assert.equal(r.error?.code, "script");
  assert.match(r.error!.message, /'artifact' payload must be a table with a string 'name'/);
});

Deno.test("a BusHost given to the config emits into the script's bus.on handler; its ack comes back", async () => {
  const bus = new BusHost();
  let ack: Promise<unknown> | undefined;
  const { b } = await inline(`
    bus.on("ask", function(ev) return { doubled = ev.payload.n * 2 } end)
    bus.emit("ready", true)
    bus.serve({ until_idle = true })
    return "served"`);
  bus.on("ready", () => {
    ack = bus.emit("ask", { n: 21 });
  });
  assert.equal(returned(await runBlock(b.bus(bus).build())), "served");
  assert.deepEqual(await ack, { doubled: 42 });
});

Deno.test("autoServeBus: bus.on handlers run without bus.serve; until_idle waits; a plain serve is refused", async () => {
  const { b } = await inline(`
    local seen = {}
    bus.on("job", function(ev) seen[#seen + 1] = ev.payload end)
    for i = 1, 3 do bus.emit("job", i) end
    bus.serve({ until_idle = true })
    local ok, err = pcall(bus.serve)
    return table.concat(seen, ",") .. " " .. tostring(ok) .. " " .. tostring(err):match("autoServeBus") `);
  assert.equal(returned(await runBlock(b.autoServeBus().build())), "1,2,3 false autoServeBus");
});

Deno.test("host tools: tool.call reaches TypeScript with the input and a signal; errors raise naming the tool; the report lists tools", async () => {
  const seen: unknown[] = [];
  const { b } = await inline(`
    tool.register("lua_tool", { description = "mine" }, function() return 1 end, { group = "local" })
    local sum = tool.call("add", { a = 2, b = 3 })
    local ok, err = pcall(tool.call, "broken", {})
    return std.json.encode({ sum = sum.sum, ok = ok, err = tostring(err) })`);
  const r = await runBlock(
    b.hostTool({
      name: "add",
      description: "Adds a and b.",
      inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
      group: "math",
      handler: (input, cx) => {
        seen.push(input, cx.tool, cx.signal instanceof AbortSignal);
        const { a, b } = input as { a: number; b: number };
        return { sum: a + b };
      },
    })
      .hostTool({
        name: "broken",
        description: "fails",
        handler: () => Promise.reject(new Error("disk full")),
      })
      .build(),
  );
  const out = JSON.parse(returned(r));
  assert.equal(out.sum, 5);
  assert.equal(out.ok, false);
  assert.match(out.err, /tool 'broken': disk full/);
  assert.deepEqual(seen, [{ a: 2, b: 3 }, "add", true]);
  assert.deepEqual(
    r.tools.map((t) => [t.name, t.source, t.group ?? null, t.description]),
    [["add", "host", "math", "Adds a and b."], ["broken", "host", null, "fails"], [
      "lua_tool",
      "block",
      "local",
      "mine",
    ]],
  );
});

Deno.test({
  name:
    "a model loop calls a host tool; model traffic goes through the injected fetch; the session is reported",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const mock = new MockLlm();
    try {
      mock.push(
        {
          kind: "json",
          body: anthropicMessage(
            [{ type: "tool_use", id: "toolu_1", name: "lookup", input: { key: "k" } }],
            "tool_use",
          ),
        },
        { kind: "json", body: anthropicMessage([{ type: "text", text: "the value is v" }]) },
      );
      const urls: string[] = [];
      const recording: typeof fetch = (input, init) => {
        urls.push(String(input instanceof Request ? input.url : input));
        return fetch(input, init);
      };
      const root = await tempDir();
      const knl = join(root, "records", "knl.sqlite");
      const r = await runBlock(
        BlockConfig.builder(ScriptSource.defaultAgent({ agentOptions: { max_retries: 0 } }), root)
          .prompt("what is k?")
          .context("You look things up.")
          .env(testEnv({ ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: "sk-ant-test" }))
          .cwd(root)
          .stores({ kernel: knl })
          .label("team", "qa")
          .hostTool({ name: "lookup", description: "Looks a key up.", handler: () => ({ value: "v" }) })
          .hostHandler("agent_result", () => {})
          .stderr(() => {})
          .fetch(recording)
          .build(),
      );
      assert.equal(returned(r), "the value is v");
      assert.equal(urls.length, 2, "both model requests went through the injected fetch");
      assert.ok(urls.every((u) => u.startsWith(mock.url)));
      const tools = mock.requests[0].body.tools as { name: string }[];
      assert.deepEqual(tools.map((t) => t.name), ["lookup"]);
      assert.match(JSON.stringify(mock.requests[0].body.system), /You look things up\./);
      assert.equal(r.sessions.length >= 1, true);
      const store = openExistingStore(knl);
      const listed = listSessions(store);
      assert.ok(listed.some((s) => s.id === r.sessions[0]), JSON.stringify(listed));
    } finally {
      await mock.close();
    }
  },
});

Deno.test("the default agent with the offline replay provider: a host tool answers, the result is emitted and returned", async () => {
  const root = await tempDir();
  let emitted: unknown;
  const r = await runBlock(
    BlockConfig.builder(
      ScriptSource.defaultAgent({
        agentOptions: {
          provider: "replay",
          replay: join(REPO_ROOT, "blocks", "hello_agent.replay.jsonl"),
          max_iterations: 4,
        },
      }),
      root,
    )
      .prompt("How many words are in 'the quick brown fox jumps'?")
      .context("You are a precise assistant.")
      .env(testEnv())
      .cwd(root)
      .stores({ kernel: ":memory:" })
      .hostTool({
        name: "word_count",
        description: "Counts the words in a text.",
        inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
        handler: (input) => ({ words: String((input as { text: string }).text).split(/\s+/).length }),
      })
      .hostHandler("agent_result", (e) => void (emitted = (e.payload as { content: string }).content))
      .stderr(() => {})
      .build(),
  );
  assert.equal(returned(r), "There are 5 words.");
  assert.equal(emitted, "There are 5 words.");
});

Deno.test("store paths: kv, sql and ts files go where the config says", async () => {
  const { root, b } = await inline(`
    std.kv.set("ns", "k", "v")
    std.sql.execute("create table t (x)")
    std.ts.append("m", 1)
    return std.kv.get("ns", "k")`);
  const at = (n: string) => join(root, "stores", n);
  const r = await runBlock(b.stores({ kv: at("kv.db"), sql: at("sql.db"), ts: at("ts.db") }).build());
  assert.equal(returned(r), "v");
  for (const n of ["kv.db", "sql.db", "ts.db"]) assert.ok(Deno.statSync(at(n)).isFile, n);
});

Deno.test("signal: an abort cancels a waiting run (cancelled, exit 130); timeoutMs ends one as timed_out (124)", async () => {
  const { b } = await inline(`std.task.sleep(60) return "slept"`);
  const stop = new AbortController();
  const running = runBlock(b.signal(stop.signal).build());
  stop.abort("the engine is shutting down");
  const r = await running;
  assert.equal(r.outcome.status, "cancelled");
  assert.equal(r.error?.code, "cancelled");
  assert.equal(r.exitCode, 130);
  assert.match(r.error!.message, /the engine is shutting down/);

  const { b: b2 } = await inline(`std.task.sleep(60) return "slept"`);
  const t = await runBlock(b2.timeoutMs(100).build());
  assert.deepEqual(t.outcome, { status: "timed_out", seconds: 0.1 });
  assert.equal(t.error?.code, "timeout");
  assert.equal(t.exitCode, 124);
});

Deno.test("a run that cannot start is raised with code config, naming the file; nothing rejects", async () => {
  const { b } = await inline(`return _PROMPT`);
  const r = await runBlock(b.prompt({ file: "missing-prompt.txt" }).build());
  assert.equal(r.outcome.status, "raised");
  assert.equal(r.error?.code, "config");
  assert.match(r.error!.message, /cannot read the prompt file missing-prompt\.txt: no such file/);
  const root = await tempDir();
  const p = await runBlock(
    BlockConfig.builder(ScriptSource.path("nope.lua"), root).env(testEnv()).cwd(root).build(),
  );
  assert.equal(p.error?.code, "config");
  assert.match(p.error!.message, /cannot read script nope\.lua: no such file/);
  await Deno.writeTextFile(join(root, "prompt.txt"), "from a file");
  const f = await runBlock(
    BlockConfig.builder(ScriptSource.inline("return _PROMPT", "p.lua"), root)
      .env(testEnv()).cwd(root).prompt({ file: "prompt.txt" }).build(),
  );
  assert.equal(f.value, "from a file");
});

Deno.test({
  name: "error codes: an uncaught model failure is llm, an uncaught MCP failure mcp, anything else script",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const mock = new MockLlm();
    try {
      mock.push({ kind: "json", status: 401, body: anthropicError("authentication_error", "bad key") });
      const { b } = await inline(
        `llm.chat("hi", { max_retries = 0 })`,
        { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: "sk-ant-test" },
      );
      const l = await runBlock(b.build());
      assert.equal(l.error?.code, "llm", JSON.stringify(l.outcome));
      assert.equal((l.error?.value as { provider: string }).provider, "anthropic");
    } finally {
      await mock.close();
    }
    const { b: m } = await inline(`mcp.connect("ghost", "/nonexistent/mcp-server", {})`);
    const e = await runBlock(m.build());
    assert.equal(e.error?.code, "mcp", JSON.stringify(e.outcome));
    const { b: s } = await inline(`error({ reason = "mine" })`);
    const x = await runBlock(s.build());
    assert.equal(x.error?.code, "script");
    assert.deepEqual(x.error?.value, { reason: "mine" });
  },
});

Deno.test("eight blocks at once: no shared globals, tools, environment overlays, working directories or kernel writers", async () => {
  const runs = await Promise.all(Array.from({ length: 8 }, async (_, i) => {
    const root = await tempDir();
    await Deno.mkdir(join(root, `own-${i}`));
    const cwd = join(root, `own-${i}`);
    const source = `
      tool.register("who", { description = "who" }, function() return ${i} end)
      std.env.set("MINE", tostring(_ME.i))
      _G.shared_counter = (_G.shared_counter or 0) + 1
      std.task.sleep(0.02)                              -- let the others run in between
      local knl = require("knl")
      local s = knl.session({ owner = "t${i}" })
      s:close({})
      local f = io.open("here.txt", "w") f:write("${i}") f:close() -- relative: the run's cwd
      return std.json.encode({ who = tool.call("who", {}), env = std.env.get("MINE"), counter = shared_counter,
        tools = #tool.list(), root = std.env.project_root() })`;
    const r = await runBlock(
      BlockConfig.builder(ScriptSource.inline(source, `b${i}.lua`), root)
        .env(testEnv())
        .cwd(cwd)
        .extraGlobals({ _ME: { i } })
        .build(),
    );
    return { i, root, cwd, r };
  }));
  for (const { i, root, cwd, r } of runs) {
    const out = JSON.parse(returned(r));
    assert.deepEqual(out, { who: i, env: String(i), counter: 1, tools: 1, root: Deno.realPathSync(root) });
    assert.equal(Deno.readTextFileSync(join(cwd, "here.txt")), String(i));
    assert.equal(r.sessions.length, 1);
    const sessions = listSessions(openExistingStore(join(root, ".agent-block", "knl.sqlite")));
    assert.deepEqual(sessions.map((s) => s.id), r.sessions, `run ${i} sees only its own session`);
  }
  assert.equal(Deno.env.get("MINE"), undefined, "std.env.set never reaches the process");
});

Deno.test("a config runs many times; a run's own bus is fresh each time", async () => {
  const { b } = await inline(`bus.emit("n", _PROMPT) return _PROMPT`);
  const got: unknown[] = [];
  const config = b.hostHandler("n", (e) => void got.push(e.payload)).prompt("x").build();
  const [a, c] = await Promise.all([runBlock(config), runBlock(config)]);
  assert.equal(a.value, "x");
  assert.equal(c.value, "x");
  await waitFor(() => got.length === 2, { what: "both runs' emits" });
});

Deno.test({
  name: "a cancel during a run with an MCP server connected ends the run and the server's process",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const root = await tempDir();
    const pidFile = join(root, "server.pid");
    const server = join(root, "server.sh");
    const envServer = join(REPO_ROOT, "tests", "fixtures", "mcp", "env_server.ts");
    await Deno.writeTextFile(
      server,
      `#!/bin/sh\necho $$ > "${pidFile}"\nexec "${Deno.execPath()}" run -A "${envServer}"\n`,
    );
    await Deno.chmod(server, 0o755);
    const stop = new AbortController();
    const running = runBlock(
      BlockConfig.builder(
        ScriptSource.inline(
          `assert(mcp.connect("env", ${JSON.stringify(server)}, {}))
           bus.emit("connected", mcp.call("env", "cwd", {}).content[1].text)
           std.task.sleep(60)`,
          "mcp.lua",
        ),
        root,
      )
        .env(testEnv())
        .cwd(root)
        .signal(stop.signal)
        .hostHandler("connected", (e) => {
          assert.equal(e.payload, Deno.realPathSync(root), "an MCP server's default cwd is the project root");
          stop.abort("done waiting");
        })
        .stderr(() => {})
        .build(),
    );
    const r = await running;
    assert.equal(r.outcome.status, "cancelled", JSON.stringify(r.outcome));
    const pid = Number(Deno.readTextFileSync(pidFile).trim());
    const alive = () => {
      try {
        return !/^\d+ \S+ Z/.test(Deno.readTextFileSync(`/proc/${pid}/stat`).replace(/\(.*\)/, "x"));
      } catch {
        return false;
      }
    };
    await waitFor(() => !alive(), {
      what: `the MCP server (pid ${pid}) to end with the run`,
      timeoutMs: 20_000,
    });
  },
});

Deno.test("autoServeBus: an event the host emits before the script's bus.on waits for the handler", async () => {
  const bus = new BusHost();
  const { b } = await inline(`
    std.task.sleep(0.01)                 -- the host's emit is queued before the handler exists
    local got
    bus.on("hello", function(ev) got = ev.payload return "hi " .. ev.payload end)
    bus.serve({ until_idle = true })
    return got`);
  const running = runBlock(b.bus(bus).autoServeBus().build());
  const ack = bus.emit("hello", "host");
  assert.equal(returned(await running), "host");
  assert.equal(await ack, "hi host");
});

Deno.test("observe: several observers see the same events in order, the end last, a run that never started too", async () => {
  const { b, root } = await inline(`
    local s = require("knl").open()
    s:session({ owner = "watched" }, function(sess)
      sess:append({ kind = "note", data = { n = 1 } }, { defer = true })
      std.task.sleep(0) -- an effect: the deferred note commits before it
    end)
    return "ok"`);
  const a: string[] = [];
  const c: RunEvent[] = [];
  const r = await runBlock(
    b.observe((e) => a.push(e.type === "events" ? e.rows.map((x) => x.kind).join("+") : e.type))
      .observe((e) => c.push(e))
      .build(),
  );
  assert.equal(returned(r), "ok");
  // the session's opening as it opens, then one entry per commit: the deferred open and note at
  // the sleep (an effect), then the close
  assert.deepEqual(a, ["session_open", "session_open+note", "session_close", "end"]);
  assert.equal(c.length, a.length);
  const end = c.at(-1)!;
  assert.ok(end.type === "end" && end.outcome.status === "returned" && end.ms > 0);
  // the rows are what a reader of the log gets
  const rows = c.flatMap((e) => e.type === "events" ? e.rows : []);
  const kernel = join(root, ".agent-block", "knl.sqlite");
  assert.deepEqual(rows, openExistingStore(kernel).read(r.sessions[0]));
  closeStore(kernel);

  const never: RunEvent[] = [];
  const n = await runBlock(
    BlockConfig.builder(ScriptSource.path("nope.lua"), root).env(testEnv()).cwd(root)
      .observe((e) => never.push(e)).build(),
  );
  assert.equal(n.error?.code, "config");
  assert.deepEqual(never.map((e) => e.type === "end" && e.outcome.status), ["raised"]);

  assert.throws(
    () =>
      new BlockConfig({
        script: ScriptSource.inline("", "x.lua"),
        projectRoot: ".",
        observers: [1 as never],
      }),
    /observers\[0\] must be a function, got number 1/,
  );
});

Deno.test("a TypeScript handler's return is the ack of a BusHost.emit; a Lua bus.emit gets the event id", async () => {
  const host = new BusHost();
  const report = await runBlock(
    BlockConfig.builder(
      ScriptSource.inline(
        `local id = bus.emit("ask", { q = 1 }, "ev-1")
         local ack = bus.emit("ask", { q = 2 })
         return id .. " " .. type(ack)`,
        "acks.lua",
      ),
      ".",
    )
      .hostHandler("ask", () => "the ack")
      .bus(host)
      .env({})
      .build(),
  );
  assert.equal(report.value, "ev-1 string", "the script gets ids, not the handler's return");
  // what the ack is for: a TypeScript emitter awaiting it (the same handler answers it)
  assert.equal(await host.emit("ask", { q: 3 }).catch((e) => (e as Error).message), "bus: the run has ended");
  const live = new BusHost();
  let ack: unknown;
  const r2 = await runBlock(
    BlockConfig.builder(ScriptSource.inline('bus.emit("go", true) return "ok"', "s.lua"), ".")
      .hostHandler("go", async () => void (ack = await live.emit("ask", { q: 4 })))
      .hostHandler("ask", () => "the ack")
      .bus(live)
      .env({})
      .build(),
  );
  assert.equal(r2.value, "ok");
  await waitFor(() => ack !== undefined, { what: "the ack of BusHost.emit" });
  assert.equal(ack, "the ack");
});
