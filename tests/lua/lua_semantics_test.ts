/**
 * Where the runtime must answer as Lua itself does: `error()` with no value reports `nil`
 * (src/lua/runtime.lua `describe_error`); a host function whose answer is "nothing there" returns
 * one explicit nil, so `tostring(f())` and `select("#", f())` see a value (the engine pushes no
 * value for a JavaScript `undefined`: a host function returns `LuaMulti([undefined])` for nil);
 * a script whose first line is a lone `#` keeps its second line (src/runtime/run.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resultOf, runLua, tempDir, testEnv } from "../helpers.ts";

Deno.test("error() and error(nil) report nil, as Lua does, not JSON's null", async () => {
  for (const src of ["error()", "error(nil)", "local function f() error() end\nf()"]) {
    const r = await runLua(src);
    assert.equal(r.outcome.status, "raised", src);
    const o = r.outcome as { message: string; error?: unknown };
    assert.equal(o.message, "nil", src);
    assert.equal(o.error, undefined, src);
  }
  const caught = await runLua(`local ok, e = pcall(error) return tostring(ok) .. " " .. tostring(e)`);
  assert.deepEqual(caught.outcome, { status: "returned", value: "false nil" });
  const task = await runLua(`std.task.spawn(function() error() end) std.task.sleep(0.01) return "x"`);
  assert.match(task.stderr, /task \d+ failed and was never joined: nil\n/);
});

Deno.test("host functions answer one nil for 'nothing there', so tostring and select see it", async () => {
  const home = await tempDir();
  const dir = await tempDir();
  Deno.writeTextFileSync(join(dir, "one_line.txt"), "x");
  Deno.writeTextFileSync(join(dir, "null.json"), "null");
  const r = await runLua(
    `local function one(label, ...)
       assert(select("#", ...) == 1, label .. ": " .. select("#", ...) .. " values")
       return tostring((...))
     end
     local f = io.open("one_line.txt")
     f:read("a")
     local lines = io.lines("one_line.txt")
     lines()
     return std.json.encode({
       one("os.getenv", os.getenv("AB_SURELY_UNSET_VARIABLE")),
       one("std.env.get", std.env.get("AB_SURELY_UNSET_VARIABLE")),
       one("std.kv.get", std.kv.get("ns", "missing")),
       one("std.ts.last", std.ts.last("no_series")),
       one("std.json.decode", std.json.decode("null")),
       one("std.json.read_file", std.json.read_file("null.json")),
       one("f:read at EOF", f:read("l")),
       one("f:read(n) at EOF", f:read(1)),
       one("io.lines at EOF", lines()),
     })`,
    { cwd: dir, home, env: testEnv({ AGENT_BLOCK_HOME: home }) },
  );
  assert.deepEqual(resultOf(r), Array(9).fill("nil"));
});

Deno.test("a first line that is a lone '#' is blanked and the second line kept", async () => {
  for (
    const [src, expected] of [
      ["#\nreturn 'second'", "second"],
      ["#\r\nreturn 'crlf'", "crlf"],
      ["#!/usr/bin/env agent-block\nreturn 'shebang'", "shebang"],
      ["#\nerror('on line two')", "test.lua:2: on line two"],
    ]
  ) {
    const r = await runLua(src);
    const got = r.outcome.status === "returned"
      ? r.outcome.value
      : (r.outcome as { message: string }).message;
    assert.equal(got, expected, JSON.stringify(src));
  }
  const dir = await tempDir();
  Deno.writeTextFileSync(join(dir, "lib.lua"), "#\nreturn 'from dofile'");
  const r = await runLua(`return dofile("lib.lua") .. " / " .. loadfile("lib.lua")()`, { cwd: dir });
  assert.deepEqual(r.outcome, { status: "returned", value: "from dofile / from dofile" });
});
