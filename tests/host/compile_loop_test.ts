/**
 * `require("compile_loop")`, the compatibility module over `coding.run` (seed 002): `make(conf)`
 * registers the tool and returns `{ name, schema, handler }`; the handler runs the loop against a
 * scripted model (the replay provider: the model writes the target, the runner checks it) and
 * answers the older JSON result; bad inputs raise as they did.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resultOf, runLua, tempProject } from "../helpers.ts";

const line = (o: unknown) => JSON.stringify(o);

Deno.test("compile_loop.make: the tool writes the target until the runner passes, and answers the old JSON", async () => {
  const root = await tempProject({
    "model.jsonl": [
      // iteration 1: a wrong file, then done
      line({
        content: [{
          type: "tool_use",
          id: "w1",
          name: "fs_write",
          input: { path: "out/answer.lua", content: "return 41\n" },
        }],
      }),
      line({ content: "written" }),
      // iteration 2: the fix
      line({
        content: [{
          type: "tool_use",
          id: "w2",
          name: "fs_write",
          input: { path: "out/answer.lua", content: "return 42\n" },
        }],
      }),
      line({ content: "fixed" }),
    ].join("\n") + "\n",
  });
  const r = await runLua(
    `
local cl = require("compile_loop")
local runs, iters = {}, 0
local t = cl.make({
  llm = { provider = "replay", replay = "model.jsonl" },
  max_iters = 3,
  on_iter = function() iters = iters + 1 end,
  runner = function(path)
    runs[#runs + 1] = path
    local v = dofile(path)
    return { ok = v == 42, stdout = "got " .. tostring(v), stderr = v == 42 and "" or "expected 42", code = v == 42 and 0 or 1 }
  end,
})
local out = std.json.decode(t.handler({ spec = "return the answer", target_file = "out/answer.lua" }))
local registered = false
for _, x in ipairs(tool.list()) do if x == "compile_loop" then registered = true end end
local both = pcall(t.handler, { spec = "x", target_file = "a.lua", target_files = { "b.lua" } })
local _, neither = pcall(t.handler, { spec = "x" })
local _, outside = pcall(t.handler, { spec = "x", target_file = "/etc/passwd" })
local _, norunner = pcall(cl.make, {})
return std.json.encode({ out = out, name = t.name, registered = registered, runs = runs, iters = iters,
  both = both, neither = neither, outside = outside, norunner = norunner, required = t.schema.required })
`,
    { projectRoot: root },
  );
  const v = resultOf(r.outcome);
  const target = join(Deno.realPathSync(root), "out", "answer.lua");
  assert.deepEqual(v.out, {
    ok: true,
    artifact_path: target,
    modified_files: ["out/answer.lua"],
    iters: 2,
    summary: "PASS in 2 iters",
  });
  assert.equal(Deno.readTextFileSync(target), "return 42\n");
  assert.deepEqual(v.runs, [target, target]);
  assert.equal(v.iters, 1, "on_iter after the failed iteration");
  assert.equal(v.name, "compile_loop");
  assert.equal(v.registered, true);
  assert.deepEqual(v.required, ["spec"]);
  assert.equal(v.both, false);
  assert.match(v.neither, /target_file or target_files is required/);
  assert.match(v.outside, /outside the project root/);
  assert.match(v.norunner, /conf.runner must be a function/);
});

Deno.test("compile_loop: a loop that runs out of iterations gives up with the old summary and the last error", async () => {
  const root = await tempProject({
    "model.jsonl": [
      line({
        content: [{
          type: "tool_use",
          id: "w1",
          name: "fs_write",
          input: { path: "a.lua", content: "return 1\n" },
        }],
      }),
      line({ content: "done" }),
    ].join("\n") + "\n",
  });
  const r = await runLua(
    `
local t = require("compile_loop").make({ name = "cl2", max_iters = 1, llm = { provider = "replay", replay = "model.jsonl" },
  runner = function() return { ok = false, stderr = "still wrong", code = 2 } end })
return t.handler({ spec = "x", target_file = "a.lua" })`,
    { projectRoot: root },
  );
  const v = resultOf(r.outcome);
  assert.equal(v.ok, false);
  assert.equal(v.summary, "give-up: max_iters reached (1)");
  assert.equal(v.failure_reason, "max_iters");
  assert.equal(v.last_error, "still wrong");
});
