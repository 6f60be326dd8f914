/**
 * `BlockConfig` and `ScriptSource` checks: every refused setting is a `BlockError` with code
 * `config` whose message names the field and the value; a built config is frozen; the builder
 * accumulates what it says it adds.
 */
import assert from "node:assert/strict";
import { BlockConfig, BlockError, blockErrorOf, ScriptSource } from "../../mod.ts";

const src = ScriptSource.inline("return 1", "t.lua");
const base = () => BlockConfig.builder(src, "/tmp");

function refused(fn: () => unknown, re: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof BlockError, String(e));
    assert.equal(e.code, "config");
    assert.equal(e.exitCode, 1);
    assert.match(e.message, re);
    return true;
  });
}

Deno.test("extraGlobals: reserved names, non-Lua names and non-JSON values are refused, naming them", () => {
  for (
    const name of ["std", "_PROMPT", "_CONTEXT", "tool", "string", "bus", "__internal", "_DEFAULT_AGENT"]
  ) {
    refused(
      () => base().extraGlobals({ [name]: 1 }).build(),
      new RegExp(`'${name}' is defined by the runtime`),
    );
  }
  for (const name of ["a b", "1x", "end", ""]) {
    refused(() => base().extraGlobals({ [name]: 1 }).build(), /is not a Lua name/);
  }
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const cases: [unknown, RegExp][] = [
    [{ f: () => 1 }, /extraGlobals\._X\.f must be a JSON value, got function/],
    [{ n: NaN }, /extraGlobals\._X\.n must be a finite number, got NaN/],
    [{ when: new Date(0) }, /extraGlobals\._X\.when must be a plain object, array or scalar, got Date/],
    [[1, undefined], /extraGlobals\._X\[1\] must be a JSON value, got undefined/],
    [cyclic, /refers back to itself/],
  ];
  for (const [value, re] of cases) {
    refused(() => base().extraGlobals({ _X: value as never }).build(), re);
  }
  const ok = base().extraGlobals({ _TASK_METADATA: { a: [1, { b: null }] } }).extraGlobals({ _AGENT_CTX: {} })
    .build();
  assert.deepEqual(Object.keys(ok.extraGlobals), ["_TASK_METADATA", "_AGENT_CTX"]);
});

Deno.test("every other field is checked, naming it and the value", () => {
  refused(() => base().cwd("relative/dir").build(), /cwd must be an absolute path, got "relative\/dir"/);
  refused(() => base().mcpRpcTimeoutMs(0).build(), /mcpRpcTimeoutMs must be a positive number, got number 0/);
  refused(() => base().timeoutMs(-5).build(), /timeoutMs must be a positive number, got number -5/);
  refused(() => base().limits({ memoryMb: 0 }).build(), /limits\.memoryMb must be a positive number/);
  refused(
    () => base().limits({ cpuSeconds: Infinity }).build(),
    /limits\.cpuSeconds must be a positive number/,
  );
  refused(() => base().env({ A: 1 as never }).build(), /env\.A must be a string, got number 1/);
  refused(
    () => base().labels({ team: true as never }).build(),
    /labels\.team must be a string, got boolean true/,
  );
  refused(
    () => base().stores({ disk: "x" } as never).build(),
    /stores\.disk is not a store \(kv, sql, ts, kernel\)/,
  );
  refused(() => base().stores({ kv: " " }).build(), /stores\.kv must be a path or ":memory:"/);
  refused(() => base().prompt({ file: "" }).build(), /prompt must be a string or \{ file: <path> \}/);
  refused(
    () => base().hostHandler("kind", 3 as never).build(),
    /hostHandlers\.kind must be a function, got number 3/,
  );
  refused(
    () => BlockConfig.builder({ kind: "url" } as never, "/tmp").build(),
    /script must come from ScriptSource/,
  );
  refused(() => BlockConfig.builder(src, "").build(), /projectRoot must be a non-empty path/);
});

Deno.test("host tools: names, duplicates, schemas, groups and handlers are checked", () => {
  const tool = { name: "t", description: "d", handler: () => 1 };
  refused(
    () => base().hostTool({ ...tool, name: "has space" }).build(),
    /hostTools\[0\]\.name must be 1-128/,
  );
  refused(() => base().hostTool(tool).hostTool(tool).build(), /hostTools\[1\]\.name 't' is given twice/);
  refused(
    () => base().hostTool({ ...tool, description: 1 as never }).build(),
    /\('t'\)\.description must be a string/,
  );
  refused(
    () => base().hostTool({ ...tool, inputSchema: [] as never }).build(),
    /\('t'\)\.inputSchema must be an object/,
  );
  refused(() => base().hostTool({ ...tool, group: "" }).build(), /\('t'\)\.group must be a non-empty string/);
  refused(
    () => base().hostTool({ ...tool, handler: "x" as never }).build(),
    /\('t'\)\.handler must be a function/,
  );
});

Deno.test("ScriptSource: each constructor checks its arguments; the default agent's servers and options too", () => {
  refused(() => ScriptSource.path(""), /ScriptSource\.path: the file must be a non-empty string/);
  refused(
    () => ScriptSource.inline(3 as never, "x.lua"),
    /the source must be a string or bytes, got number 3/,
  );
  refused(() => ScriptSource.inline("x", ""), /the name must be a non-empty string/);
  refused(
    () =>
      ScriptSource.defaultAgent({ mcpServers: [{ name: "a", command: "x" }, { name: "a", command: "y" }] }),
    /mcpServers\[1\]\.name 'a' is given twice/,
  );
  refused(
    () => ScriptSource.defaultAgent({ mcpServers: [{ name: "a", command: "x", url: "http://h" }] }),
    /mcpServers\[0\] \('a'\) needs exactly one of 'command' and 'url'/,
  );
  refused(
    () => ScriptSource.defaultAgent({ agentOptions: { prompt: "x" } }),
    /agentOptions\.prompt is set by the SDK/,
  );
  const a = ScriptSource.defaultAgent({ mcpServers: [{ name: "notes", command: "notes-mcp" }] });
  assert.equal(a.kind, "default_agent");
  assert.ok(Object.isFrozen(a));
});

Deno.test("a built config is frozen; the builder adds handlers, tools and labels and replaces the rest", () => {
  const h = () => {};
  const c = base()
    .label("a", "1").label("b", "2")
    .hostHandler("x", h).hostHandler("y", h).hostHandler(h)
    .hostTool({ name: "one", description: "", handler: h }).hostTool({
      name: "two",
      description: "",
      handler: h,
    })
    .prompt("first").prompt("second")
    .build();
  assert.ok(Object.isFrozen(c));
  assert.deepEqual(c.labels, { a: "1", b: "2" });
  assert.deepEqual(Object.keys(c.hostHandlers), ["x", "y"]);
  assert.equal(c.hostHandler, h);
  assert.deepEqual(c.hostTools.map((t) => t.name), ["one", "two"]);
  assert.equal(c.prompt, "second");
  assert.equal(c.mcpRpcTimeoutMs, 30_000);
  assert.equal(c.autoServeBus, false);
  assert.throws(() => ((c as { prompt?: string }).prompt = "x"), TypeError);
});

Deno.test("blockErrorOf: raised keeps code, traceback and value; cancelled is 130, timed out 124; others none", () => {
  const e = blockErrorOf({
    status: "raised",
    code: "mcp",
    message: "m",
    traceback: "tb",
    error: { server: "s" },
  })!;
  assert.deepEqual([e.code, e.message, e.traceback, e.value, e.exitCode], [
    "mcp",
    "m",
    "tb",
    { server: "s" },
    1,
  ]);
  assert.equal(blockErrorOf({ status: "cancelled", reason: "r" })?.exitCode, 130);
  assert.equal(blockErrorOf({ status: "timed_out", seconds: 2 })?.exitCode, 124);
  assert.equal(blockErrorOf({ status: "deferred", reason: "later" }), undefined);
  assert.equal(blockErrorOf({ status: "exited", code: 3 }), undefined);
});
