/**
 * `policy.command` against commands that smuggle a second one past a prefix check: each is run
 * by `sh.exec` only when the predicate allows it, in a fresh git project, and none may create its
 * marker file. The same commands pass `policy.matches("^git ")` (the pattern the docs used to
 * show), which is why the predicate exists: that half keeps the test able to fail.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathExists, resultOf, runLua, tempProject } from "../helpers.ts";

const SMUGGLED = [
  "git status; touch pwned1",
  "git status && touch pwned2",
  "git status || touch pwned3; touch pwned3",
  "git status | touch pwned4",
  "git status\ntouch pwned5",
  "git status $(touch pwned6)",
  "git status `touch pwned7`",
  'git status "$(touch pwned8)"',
  "git status & touch pwned9",
];

const SCRIPT = `local policy = require("policy")
local cmds = std.json.decode(_PROMPT)
local guard = policy.args("sh", policy.command({ "git status", "git diff" }))
local naive = policy.args("sh", policy.matches("^git "))
local out = { guarded = {}, naive = {} }
for i, c in ipairs(cmds) do
  local v, why = guard({ name = "sh", input = { command = c } })
  out.guarded[i] = v == false and ("refused: " .. why) or "allowed"
  if v ~= false then sh.exec(c) end
  out.naive[i] = naive({ name = "sh", input = { command = c } }) == false and "refused" or "allowed"
end
return std.json.encode(out)`;

Deno.test("attack: policy.command refuses a second command smuggled past a prefix (;, &&, |, newline, substitutions)", async () => {
  const dir = await tempProject({});
  const g = new Deno.Command("git", { args: ["init", "-q", dir], stdout: "null", stderr: "null" })
    .outputSync();
  assert.ok(g.success);
  const out = resultOf(await runLua(SCRIPT, { projectRoot: dir, prompt: JSON.stringify(SMUGGLED) }));
  SMUGGLED.forEach((c, i) => {
    assert.match(out.guarded[i], /^refused: /, `${JSON.stringify(c)} was allowed`);
    assert.equal(out.naive[i], "allowed", `a pattern lets ${JSON.stringify(c)} through`);
  });
  for (let i = 1; i <= SMUGGLED.length; i++) {
    assert.equal(pathExists(join(dir, `pwned${i}`)), false, `pwned${i} was created`);
  }
});
