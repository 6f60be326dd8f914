/**
 * std.fs.tool_specs / register_tools: the model-facing file tools on real files, called through
 * `tool.call` as a model's tool use would be: numbered reads, checked line edits, insertion,
 * write, rollback (newest first, removal of created files), search/replace with zero, one and
 * several matches, and confinement (`..`, absolute paths, symlinks out, dangling symlinks,
 * `opts.roots`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runFsTools, runLua, tempDir } from "../helpers.ts";

/** Runs `body` with the tools registered (all of them by default) in project `dir`. */
const tools = runFsTools;

Deno.test("fs tools: defaults are fs_read and fs_edit; allowed opts in the others; tool_specs carry handlers", async () => {
  const d = await tempDir();
  const r = await runLua(
    `local a = std.fs.register_tools()
     local specs = std.fs.tool_specs({ allowed = { "fs_search_replace" } })
     local s = tool.schema()
     return table.concat(a, ",") .. "|" .. #specs .. "|" .. specs[3].name .. "|" .. type(specs[3].handler)
       .. "|" .. s[2].input_schema.required[5] .. "|" .. tostring(s[1].group)`,
    { projectRoot: d },
  );
  assert.deepEqual(r.outcome, {
    status: "returned",
    value: "fs_read,fs_edit|3|fs_search_replace|function|content|nil",
  });
  const g = await runLua(`std.fs.register_tools({ group = "files" }) return tool.schema()[1].group`, {
    projectRoot: d,
  });
  assert.deepEqual(g.outcome, { status: "returned", value: "files" });
});

Deno.test("fs tools: fs_read numbers lines and pages", async () => {
  const d = await tempDir();
  await Deno.writeTextFile(join(d, "f.txt"), "one\ntwo\nthree\n");
  const out = await tools(
    d,
    `return call("fs_read", { path = "f.txt" }) .. "\\n--\\n" .. call("fs_read", { path = "f.txt", start_line = 2, end_line = 2 })
      .. "\\n--\\n" .. call("fs_read", { path = "f.txt", start_line = 9 }) .. "\\n--\\n" .. call("fs_read", { path = "nope.txt" })`,
  );
  assert.equal(
    out,
    "f.txt: lines 1-3 of 3\n     1\tone\n     2\ttwo\n     3\tthree\n--\nf.txt: lines 2-2 of 3\n     2\ttwo\n--\n" +
      "ERR fs_read: start_line 9 is not in f.txt, which has 3 line(s)\n--\nERR fs_read: nope.txt: No such file or directory",
  );
});

Deno.test("fs tools: fs_edit checks expect, shows the actual lines on mismatch, inserts and deletes", async () => {
  const d = await tempDir();
  await Deno.writeTextFile(join(d, "f.txt"), "a\nb\nc\n");
  const out = await tools(
    d,
    `local r = {}
     r[1] = call("fs_edit", { path = "f.txt", start_line = 2, end_line = 3, expect = "b\\nX", content = "B" })
     r[2] = call("fs_edit", { path = "f.txt", start_line = 2, end_line = 3, expect = "b\\nc\\n", content = "B\\nC\\nD" })
     r[3] = call("fs_edit", { path = "f.txt", start_line = 1, end_line = 0, expect = "", content = "top" })
     r[4] = call("fs_edit", { path = "f.txt", start_line = 2, end_line = 2, expect = "a", content = "" })
     r[5] = call("fs_edit", { path = "f.txt", start_line = 7, end_line = 7, expect = "", content = "" })
     r[6] = call("fs_edit", { path = "f.txt", start_line = "2", end_line = 2, expect = "", content = "" })
     return table.concat(r, "\\n==\\n")`,
  );
  const parts = out.split("\n==\n");
  assert.equal(
    parts[0],
    "ERR fs_edit: expect does not match lines 2-3 of f.txt; their current text is:\n     2\tb\n     3\tc",
  );
  assert.match(
    parts[1],
    /^fs_edit: f\.txt: lines 2-3 replaced by 3 line\(s\); the file now has 4 line\(s\):\n {5}2\tB/,
  );
  assert.match(parts[2], /lines 1-0 replaced by 1 line/);
  assert.match(parts[3], /lines 2-2 replaced by 0 line/);
  assert.match(parts[4], /^ERR fs_edit: lines 7-7 are not in f\.txt, which has 4 line\(s\)/);
  assert.equal(parts[5], "ERR fs_edit: input field 'start_line' must be an integer, got string");
  assert.equal(await Deno.readTextFile(join(d, "f.txt")), "top\nB\nC\nD\n");
});

Deno.test("fs tools: fs_write, then fs_rollback newest first, removing a file the run created", async () => {
  const d = await tempDir();
  await Deno.writeTextFile(join(d, "f.txt"), "v1\n");
  const out = await tools(
    d,
    `local r = {}
     r[#r+1] = call("fs_write", { path = "f.txt", content = "v2\\n" })
     r[#r+1] = call("fs_search_replace", { path = "f.txt", search = "v2", replace = "v3" })
     r[#r+1] = call("fs_write", { path = "new/dir/g.txt", content = "g" })
     r[#r+1] = std.fs.read(${JSON.stringify(d)} .. "/f.txt")
     r[#r+1] = call("fs_rollback", { path = "f.txt" })
     r[#r+1] = std.fs.read(${JSON.stringify(d)} .. "/f.txt")
     r[#r+1] = call("fs_rollback", { path = "f.txt" })
     r[#r+1] = std.fs.read(${JSON.stringify(d)} .. "/f.txt")
     r[#r+1] = call("fs_rollback", { path = "f.txt" })
     r[#r+1] = call("fs_rollback", { path = "new/dir/g.txt" })
     r[#r+1] = tostring(std.fs.exists(${JSON.stringify(d)} .. "/new/dir/g.txt"))
     return table.concat(r, "|")`,
  );
  assert.equal(
    out,
    "fs_write: wrote f.txt (3 bytes)|" +
      "fs_search_replace: f.txt: lines 1-1 replaced by 1 line(s); the file now has 1 line(s):\n     1\tv3|" +
      "fs_write: wrote new/dir/g.txt (1 bytes)|v3\n|" +
      "fs_rollback: f.txt restored; 1 earlier edit(s) of it can still be undone|v2\n|" +
      "fs_rollback: f.txt restored; 0 earlier edit(s) of it can still be undone|v1\n|" +
      "ERR fs_rollback: this run has no edit of f.txt to undo|" +
      "fs_rollback: new/dir/g.txt removed (this run created it); 0 earlier edit(s) of it can still be undone|false",
  );
});

Deno.test("fs tools: fs_search_replace needs exactly one verbatim match and keeps line structure", async () => {
  const d = await tempDir();
  await Deno.writeTextFile(join(d, "s.lua"), "local x = 1\nlocal y = 1\nreturn x + y\n");
  const out = await tools(
    d,
    `local r = {}
     r[1] = call("fs_search_replace", { path = "s.lua", search = "= 1", replace = "= 2" })
     r[2] = call("fs_search_replace", { path = "s.lua", search = "local z", replace = "" })
     r[3] = call("fs_search_replace", { path = "s.lua", search = "1\\nlocal y", replace = "10\\nlocal yy" })
     r[4] = call("fs_search_replace", { path = "s.lua", search = "local yy = 1\\n", replace = "" })
     return table.concat(r, "\\n==\\n")`,
  );
  const parts = out.split("\n==\n");
  assert.equal(
    parts[0],
    "ERR fs_search_replace: the search text occurs 2 times in s.lua (starting on lines 1, 2); include more surrounding text to make it unique",
  );
  assert.equal(
    parts[1],
    "ERR fs_search_replace: the search text was not found in s.lua (it must match verbatim)",
  );
  assert.match(parts[2], /lines 1-2 replaced by 2 line/);
  assert.match(parts[3], /lines 2-2 replaced by 0 line/);
  assert.equal(await Deno.readTextFile(join(d, "s.lua")), "local x = 10\nreturn x + y\n");
});

Deno.test("fs tools: CRLF files are read and edited without the \\r, and keep CRLF", async () => {
  const d = await tempDir();
  await Deno.writeTextFile(join(d, "w.txt"), "one\r\ntwo\r\nthree\r\n");
  const out = await tools(
    d,
    `local r = {}
     r[1] = call("fs_read", { path = "w.txt", start_line = 2, end_line = 2 })
     r[2] = call("fs_edit", { path = "w.txt", start_line = 2, end_line = 2, expect = "two", content = "TWO\\nTWO+" })
     r[3] = call("fs_search_replace", { path = "w.txt", search = "three", replace = "3" })
     return table.concat(r, "\\n==\\n")`,
  );
  const parts = out.split("\n==\n");
  assert.equal(parts[0], "w.txt: lines 2-2 of 3\n     2\ttwo");
  assert.match(parts[1], /lines 2-2 replaced by 2 line/);
  assert.match(parts[2], /lines 4-4 replaced by 1 line/);
  assert.equal(await Deno.readTextFile(join(d, "w.txt")), "one\r\nTWO\r\nTWO+\r\n3\r\n");
});

Deno.test("attack: fs tools: a path out of the project root (.., absolute, symlinks out, a dangling link) is refused; opts.roots widen it", async () => {
  const base = await tempDir();
  const proj = join(base, "proj");
  const other = join(base, "other");
  await Deno.mkdir(proj);
  await Deno.mkdir(other);
  await Deno.writeTextFile(join(other, "secret.txt"), "s\n");
  await Deno.writeTextFile(join(proj, "in.txt"), "i\n");
  await Deno.symlink(other, join(proj, "link"));
  await Deno.symlink(join(other, "secret.txt"), join(proj, "file_link"));
  await Deno.symlink(join(base, "nowhere", "x"), join(proj, "dangling"));
  const out = await tools(
    proj,
    `local r = {}
     r[#r+1] = call("fs_read", { path = "../other/secret.txt" })
     r[#r+1] = call("fs_read", { path = ${JSON.stringify(join(other, "secret.txt"))} })
     r[#r+1] = call("fs_read", { path = "link/secret.txt" })
     r[#r+1] = call("fs_read", { path = "file_link" })
     r[#r+1] = call("fs_write", { path = "link/new.txt", content = "x" })
     r[#r+1] = call("fs_write", { path = "dangling", content = "x" })
     r[#r+1] = call("fs_read", { path = "sub/../in.txt" })
     r[#r+1] = call("fs_read", { path = "" })
     return table.concat(r, "\\n")`,
  );
  const lines = out.split("\n");
  const refused = `is outside the allowed roots (${proj})`;
  assert.equal(lines[0], `ERR fs_read: path '../other/secret.txt' ${refused}`);
  assert.equal(lines[1], `ERR fs_read: path '${join(other, "secret.txt")}' ${refused}`);
  assert.equal(lines[2], `ERR fs_read: path 'link/secret.txt' ${refused}`);
  assert.equal(lines[3], `ERR fs_read: path 'file_link' ${refused}`);
  assert.equal(lines[4], `ERR fs_write: path 'link/new.txt' ${refused}`);
  assert.equal(lines[5], `ERR fs_write: path 'dangling' goes through a dangling symbolic link`);
  assert.equal(lines[6], "in.txt: lines 1-1 of 1");
  assert.equal(lines[8], "ERR fs_read: input field 'path' must be a non-empty string, got string");
  assert.equal(await Deno.readTextFile(join(other, "secret.txt")), "s\n");
  assert.ok(!(await exists(join(other, "new.txt"))));

  const allowed = await tools(
    proj,
    `return call("fs_read", { path = "link/secret.txt" })`,
    `{ roots = { ${JSON.stringify(other)} } }`,
  );
  assert.equal(allowed, `${join(other, "secret.txt")}: lines 1-1 of 1\n     1\ts`);
});

Deno.test("fs tools: option errors name the function and the field", async () => {
  const d = await tempDir();
  for (
    const [code, msg] of [
      [`std.fs.register_tools(5)`, "std.fs.register_tools: argument 1 (opts) must be a table, got number"],
      [
        `std.fs.tool_specs({ allowed = { "fs_delete" } })`,
        "std.fs.tool_specs: argument 1 (opts) field 'allowed' element 1 must be one of fs_write, fs_rollback, fs_search_replace, got fs_delete",
      ],
      [
        `std.fs.tool_specs({ roots = "x" })`,
        "std.fs.tool_specs: argument 1 (opts) field 'roots' must be an array of strings, got string",
      ],
      [
        `std.fs.tool_specs({ roots = { "/definitely/not/here" } })`,
        "std.fs.tool_specs: root '/definitely/not/here': No such file or directory",
      ],
    ]
  ) {
    const r = await runLua(`\n${code}`, { projectRoot: d });
    assert.equal((r.outcome as { message: string }).message, `test.lua:2: ${msg}`);
  }
});

async function exists(p: string): Promise<boolean> {
  try {
    await Deno.lstat(p);
    return true;
  } catch {
    return false;
  }
}

Deno.test("attack: fs_search_replace calls with 200,000 hits each ignore the run's stop", async () => {
  const d = await tempDir();
  await Deno.writeTextFile(join(d, "big.txt"), "x = 1\n".repeat(200_000));
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort("stopped by the test"), 300);
  try {
    const r = await runLua(
      `std.fs.register_tools({ allowed = { "fs_search_replace" } })
       while true do pcall(tool.call, "fs_search_replace", { path = "big.txt", search = "x", replace = "y" }) end`,
      { projectRoot: d, signal: ac.signal },
    );
    assert.deepEqual(r.outcome, { status: "cancelled", reason: "stopped by the test" });
  } finally {
    clearTimeout(timer);
  }
});
