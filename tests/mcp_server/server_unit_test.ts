/**
 * The pure parts of the MCP server: checking `run_block` arguments, the tool definition, and
 * mapping how a run ended (an `Outcome`) to a tool result; and one call through the in-process
 * runner, whose events drive the progress notifications and whose artifacts follow the text.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  callRunBlock,
  outcomeWord,
  parseRunBlockArgs,
  registryJson,
  runBlockTool,
  toolResultOf,
} from "../../src/mcp_server/server.ts";
import { RegistryWatcher } from "../../src/mcp_server/watch.ts";
import { Logger } from "../../src/obs/log.ts";
import type { BlockEntry } from "../../src/blocks/registry.ts";
import { Server } from "@modelcontextprotocol/server";
import { InProcessRunner } from "../../src/runner/in_process.ts";
import { REPO_ROOT, tempProject, testEnv } from "../helpers.ts";

Deno.test("run_block arguments are checked with named errors", () => {
  assert.deepEqual(parseRunBlockArgs({ block: "a", prompt: "p" }), {
    block: "a",
    prompt: "p",
    context: undefined,
  });
  assert.deepEqual(parseRunBlockArgs({ block: "a", context: null }), {
    block: "a",
    prompt: undefined,
    context: undefined,
  });
  assert.match((parseRunBlockArgs({}) as { error: string }).error, /'block' must be a string, got nothing/);
  assert.match(
    (parseRunBlockArgs({ block: 3 }) as { error: string }).error,
    /'block' must be a string, got number/,
  );
  assert.match(
    (parseRunBlockArgs({ block: "a", prompt: {} }) as { error: string }).error,
    /'prompt' must be a string/,
  );
  assert.match(
    (parseRunBlockArgs({ block: "a", extra: 1 }) as { error: string }).error,
    /unknown argument 'extra'/,
  );
  assert.match((parseRunBlockArgs([]) as { error: string }).error, /must be an object/);
});

Deno.test("the run_block tool lists the blocks in its enum and description", () => {
  const blocks = [
    { name: "a", tier: "project" as const, path: "/p/blocks/a.lua", description: "Does A." },
    { name: "b", tier: "user" as const, path: "/h/blocks/b/init.lua", description: "" },
  ];
  const t = runBlockTool(blocks);
  assert.equal(t.name, "run_block");
  const props = t.inputSchema.properties as Record<string, { enum?: string[] }>;
  assert.deepEqual(props.block.enum, ["a", "b"]);
  assert.deepEqual(t.inputSchema.required, ["block"]);
  assert.match(t.description ?? "", /- a: Does A\.\n- b: \(no description\)/);
  const empty = runBlockTool([]);
  assert.equal((empty.inputSchema.properties as Record<string, { enum?: string[] }>).block.enum, undefined);
  assert.match(empty.description ?? "", /no blocks are registered/);
  assert.deepEqual(JSON.parse(registryJson(blocks))[1], blocks[1]);
});

Deno.test("how a run ended maps to one tool result", () => {
  const txt = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;
  assert.deepEqual(toolResultOf("a", { status: "returned", value: '{"ok":true}' }), {
    content: [{ type: "text", text: '{"ok":true}' }],
  });
  assert.equal(txt(toolResultOf("a", { status: "returned", value: undefined })), "");
  assert.equal(txt(toolResultOf("a", { status: "returned", value: new Uint8Array([0x68, 0x69]) })), "hi");
  const failed = toolResultOf("a", {
    status: "raised",
    code: "script",
    message: "a.lua:1: boom",
    traceback: "tb",
  });
  assert.equal(failed.isError, true);
  assert.equal(txt(failed), "a.lua:1: boom");
  const deferred = toolResultOf("a", { status: "deferred", reason: "db down" });
  assert.equal(deferred.isError, undefined);
  assert.match(txt(deferred), /^block 'a' deferred: db down/);
  const timeout = toolResultOf("a", { status: "timed_out", seconds: 2 });
  assert.equal(timeout.isError, true);
  assert.equal(txt(timeout), "block 'a' ran past its timeout of 2 s and was stopped");
  const cancelled = toolResultOf("a", { status: "cancelled", reason: "cancelled" }, { cancelled: true });
  assert.equal(cancelled.isError, true);
  assert.equal(txt(cancelled), "block 'a' was cancelled");
  assert.equal(outcomeWord({ status: "cancelled", reason: "cancelled" }, { cancelled: true }), "cancelled");
  const stopped = toolResultOf("a", { status: "cancelled", reason: "the server is shutting down" });
  assert.equal(txt(stopped), "block 'a' was stopped: the server is shutting down");
  assert.equal(outcomeWord({ status: "cancelled", reason: "x" }), "stopped");
  const exited = toolResultOf("a", { status: "exited", code: 3 }, { stderrTail: "last words" });
  assert.equal(exited.isError, true);
  assert.equal(txt(exited), "block 'a' exited with code 3:\nlast words");
});

Deno.test("registry watcher: notifies on a change only, drops instances that cannot send", async () => {
  let blocks: BlockEntry[] = [{ name: "a", tier: "project", path: "/p/a.lua", description: "A" }];
  const w = new RegistryWatcher(() => blocks, new Logger("test", "off"));
  let extra = 0;
  w.alsoNotify(() => extra++);
  // A real but unconnected instance: its sends fail, so it is dropped at the first change.
  w.track(new Server({ name: "x", version: "0" }, { capabilities: { tools: { listChanged: true } } }));
  assert.equal(w.tracked, 1);
  assert.equal(w.check(), false);
  blocks = [...blocks, { name: "b", tier: "user", path: "/h/b.lua", description: "" }];
  assert.equal(w.check(), true);
  assert.equal(extra, 1);
  assert.equal(w.check(), false);
  blocks = [{ ...blocks[0], description: "A, reworded" }];
  assert.equal(w.check(), true);
  assert.equal(extra, 2);
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(w.tracked, 0);
});

Deno.test("run_block: progress follows the run's own events (turns, tools, tokens); artifacts follow the text", async () => {
  const hello = Deno.readTextFileSync(join(REPO_ROOT, "blocks/hello_agent.lua"));
  const root = await tempProject({
    "blocks/hello_agent.lua": 'bus.emit("artifact", { name = "notes.md", content = "# Notes" })\n' +
      'bus.emit("artifact", { name = "stats", content = { words = 5 } })\n' + hello,
    "blocks/hello_agent.replay.jsonl": Deno.readTextFileSync(
      join(REPO_ROOT, "blocks/hello_agent.replay.jsonl"),
    ),
  });
  const notes: [number, string][] = [];
  const result = await callRunBlock(
    {
      projectRoot: root,
      home: join(root, ".home"),
      blockDirs: [],
      runTimeoutSecs: 60,
      log: new Logger("test", "off"),
      runner: new InProcessRunner({ stdout: () => {}, stderr: () => {} }),
      env: testEnv({ AGENT_BLOCK_KNL_PATH: ":memory:" }),
    },
    { block: "hello_agent" },
    new AbortController().signal,
    (n, message) => notes.push([n, message]),
  );
  assert.equal(result.isError, undefined, JSON.stringify(result));
  assert.deepEqual(notes.map(([n]) => n), notes.map((_, i) => i + 1), JSON.stringify(notes));
  const messages = notes.map(([, m]) => m);
  assert.ok(
    messages.includes("block 'hello_agent': turn 1; 1 turn, 120 tokens in / 30 out, 0 tool calls"),
    messages.join("\n"),
  );
  assert.ok(
    messages.includes("block 'hello_agent': tool word_count; 1 turn, 120 tokens in / 30 out, 1 tool call"),
  );
  assert.equal(messages.at(-1), "block 'hello_agent': turn 2; 2 turns, 290 tokens in / 38 out, 1 tool call");
  assert.deepEqual(result.content.slice(1), [
    {
      type: "resource",
      resource: { uri: "agent-block://artifacts/notes.md", mimeType: "text/plain", text: "# Notes" },
    },
    {
      type: "resource",
      resource: { uri: "agent-block://artifacts/stats", mimeType: "application/json", text: '{"words":5}' },
    },
  ]);
});
