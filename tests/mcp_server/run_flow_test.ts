/**
 * `agent-block mcp`'s `run_flow` tool over stdio: a flow of the project's `flows/` runs through its
 * blocks and answers with its context; a waiting run is resumed with an answer; unknown flows and
 * bad arguments are error results.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeTree } from "../helpers.ts";
import { connectStdio, freshProject, resultText } from "./mcp_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const P = (at: string) => ({ op: "path", at });

Deno.test({
  name: "mcp run_flow: runs a flows/ Blueprint, lists it, resumes a waiting run with an answer",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    writeTree(p.root, {
      "flows/echo.bp.json": JSON.stringify({
        id: "echo-flow",
        agents: [
          { name: "echo", kind: "block", spec: { block: "echo" } },
          { name: "defers", kind: "block", spec: { block: "defers", on_defer: "wait" } },
        ],
        flow: {
          kind: "seq",
          children: [
            { kind: "step", ref: "echo", in: P("$.msg"), out: P("$.echoed") },
            {
              kind: "branch",
              cond: { op: "eq", lhs: P("$.echoed.prompt"), rhs: { op: "lit", value: "wait" } },
              then: { kind: "step", ref: "defers", in: { op: "lit", value: "" }, out: P("$.db") },
              else: { kind: "seq", children: [] },
            },
          ],
        },
      }),
      "flows/notes.txt": "not a flow",
    });
    const s = await connectStdio(p.root, p.home);
    try {
      const tool = (await s.client.listTools()).tools.find((t) => t.name === "run_flow");
      assert.deepEqual((tool?.inputSchema.properties?.flow as { enum: string[] }).enum, ["echo.bp.json"]);

      const done = await s.client.callTool({
        name: "run_flow",
        arguments: { flow: "echo.bp.json", init: { msg: "hi" } },
      });
      assert.ok(!done.isError, resultText(done));
      const body = JSON.parse(resultText(done));
      assert.equal(body.status, "completed");
      assert.deepEqual(body.ctx, { msg: "hi", echoed: { prompt: "hi", context: null } });
      assert.ok(
        Deno.statSync(join(p.root, ".agent-block", "knl.sqlite")).isFile,
        "recorded in the project's kernel",
      );

      const waiting = JSON.parse(resultText(
        await s.client.callTool({
          name: "run_flow",
          arguments: { flow: "echo.bp.json", init: { msg: "wait" } },
        }),
      ));
      assert.equal(waiting.status, "waiting");
      assert.deepEqual(waiting.waiting, { step: "defers", reason: "the database is not reachable" });
      const answered = await s.client.callTool({
        name: "run_flow",
        arguments: { run_id: waiting.run_id, answer: { rows: 3 } },
      });
      assert.ok(!answered.isError, resultText(answered));
      assert.deepEqual(JSON.parse(resultText(answered)).ctx.db, { rows: 3 });

      const unknown = await s.client.callTool({ name: "run_flow", arguments: { flow: "../secrets.json" } });
      assert.ok(unknown.isError);
      assert.match(resultText(unknown), /unknown flow '\.\.\/secrets\.json'; flows\/ has: echo\.bp\.json/);
      const bad = await s.client.callTool({
        name: "run_flow",
        arguments: { flow: "echo.bp.json", extra: 1 },
      });
      assert.ok(bad.isError);
      assert.match(resultText(bad), /unknown argument 'extra'/);
      const noRun = await s.client.callTool({ name: "run_flow", arguments: { run_id: "flow-nope" } });
      assert.ok(noRun.isError);
      assert.match(resultText(noRun), /no flow run 'flow-nope'/);
    } finally {
      await s.close();
    }
  },
});

Deno.test({
  name: "attack: mcp --sandbox runs run_flow's steps confined (a step cannot plant a library in the home)",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    Deno.mkdirSync(join(p.home, "lib"), { recursive: true });
    writeTree(p.root, {
      "blocks/plant.lua": `local f, err = io.open(os.getenv("AGENT_BLOCK_HOME") .. "/lib/planted.lua", "w")
if f then f:write("return 1") f:close() return "planted" end
return "refused: " .. tostring(err)`,
      "flows/plant.bp.json": JSON.stringify({
        id: "plant-flow",
        agents: [{ name: "plant", kind: "block", spec: { block: "plant" } }],
        flow: { kind: "step", ref: "plant", in: { op: "lit", value: "" }, out: P("$.out") },
      }),
    });
    const s = await connectStdio(p.root, p.home, { extraArgs: ["--sandbox"] });
    try {
      const done = await s.client.callTool({ name: "run_flow", arguments: { flow: "plant.bp.json" } });
      assert.ok(!done.isError, resultText(done) + s.stderr());
      const body = JSON.parse(resultText(done));
      assert.equal(body.status, "completed");
      assert.match(String(body.ctx.out), /^refused: /);
      assert.throws(() => Deno.statSync(join(p.home, "lib", "planted.lua")), Deno.errors.NotFound);
    } finally {
      await s.close();
    }
  },
});
