/**
 * std.fs.* and std.json.read_file/write_file on real files in a temporary directory: every
 * function, wrong argument types, missing files, and permission errors. We run as root, so
 * mode bits stop nothing; the permission failures used are real kernel refusals that root gets
 * too: creating a file in sysfs (`/sys/kernel/...`, EACCES), and a path through a regular file
 * (`file/child`, ENOTDIR).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { evalLua, runLua, tempDir } from "../helpers.ts";

async function lua(dir: string, body: string): Promise<string> {
  return (await evalLua(`local D = ${JSON.stringify(dir)}\n${body}`, { projectRoot: dir }))!;
}

Deno.test("std.fs: write, read, read_binary, write_binary, exists, is_file, is_dir", async () => {
  const d = await tempDir();
  const out = await lua(
    d,
    `
    assert(std.fs.write(D .. "/a.txt", "héllo\\n") == true)
    assert(std.fs.write_binary(D .. "/b.bin", "\\0\\255\\1") == true)
    local bin = std.fs.read_binary(D .. "/b.bin")
    local ok, err = pcall(std.fs.read, D .. "/b.bin")
    return table.concat({ std.fs.read(D .. "/a.txt"), #bin, bin:byte(2), tostring(ok), err,
      tostring(std.fs.exists(D .. "/a.txt")), tostring(std.fs.exists(D .. "/nope")),
      tostring(std.fs.is_file(D .. "/a.txt")), tostring(std.fs.is_file(D)),
      tostring(std.fs.is_dir(D)), tostring(std.fs.is_dir(D .. "/a.txt")), tostring(std.fs.is_dir(D .. "/nope")) }, "|")`,
  );
  assert.equal(
    out,
    `héllo\n|3|255|false|std.fs.read: ${d}/b.bin: not valid UTF-8 text (use std.fs.read_binary)|true|false|true|false|true|false|false`,
  );
  assert.deepEqual(Deno.readFileSync(join(d, "b.bin")), new Uint8Array([0, 255, 1]));
});

Deno.test("std.fs: stat, mkdir with parents, copy, remove (recursive option)", async () => {
  const d = await tempDir();
  const out = await lua(
    d,
    `
    assert(std.fs.mkdir(D .. "/x/y/z") == true)
    assert(std.fs.mkdir(D .. "/x/y/z") == true) -- existing is fine
    std.fs.write(D .. "/x/y/z/f.txt", "12345")
    local st = std.fs.stat(D .. "/x/y/z/f.txt")
    assert(std.fs.copy(D .. "/x/y/z/f.txt", D .. "/g.txt") == true)
    local ok1, e1 = pcall(std.fs.remove, D .. "/x")
    local still = std.fs.is_dir(D .. "/x")
    assert(std.fs.remove(D .. "/x", { recursive = true }) == true)
    assert(std.fs.remove(D .. "/g.txt") == true)
    local ok2, e2 = pcall(std.fs.remove, D .. "/g.txt")
    local ok3, e3 = pcall(std.fs.stat, D .. "/gone")
    local dst = std.fs.stat(D)
    return table.concat({ st.size, tostring(st.is_file), tostring(st.is_dir), math.type(st.mtime),
      tostring(ok1), e1, tostring(still), tostring(std.fs.exists(D .. "/x")), e2, e3, tostring(dst.is_dir) }, "|")`,
  );
  assert.equal(
    out,
    `5|true|false|float|false|std.fs.remove: ${d}/x: Directory not empty (pass { recursive = true } to remove a tree)` +
      `|true|false|std.fs.remove: ${d}/g.txt: No such file or directory|std.fs.stat: ${d}/gone: No such file or directory|true`,
  );
});

Deno.test("std.fs: walk and glob answer sorted paths", async () => {
  const d = await tempDir();
  for (const f of ["a/1.lua", "a/b/2.lua", "a/b/3.txt", "c.lua", ".hidden/x.lua"]) {
    await Deno.mkdir(join(d, f, ".."), { recursive: true });
    await Deno.writeTextFile(join(d, f), "");
  }
  await Deno.symlink(join(d, "a"), join(d, "loop")); // a symlinked directory is not followed
  const out = await lua(
    d,
    `
    local function rel(list)
      local o = {}
      for i, p in ipairs(list) do o[i] = p:sub(#D + 2) end
      return table.concat(o, ",")
    end
    return table.concat({
      rel(std.fs.walk(D .. "/a")),
      rel(std.fs.glob(D .. "/**/*.lua")),
      rel(std.fs.glob(D .. "/a/*")),
      rel(std.fs.glob(D .. "/a/b/?.txt")),
      rel(std.fs.glob(D .. "/*.[lx]ua")),
      tostring(#std.fs.glob(D .. "/nothing/*")),
    }, "|")`,
  );
  assert.equal(out, "a/1.lua,a/b/2.lua,a/b/3.txt|a/1.lua,a/b/2.lua,c.lua|a/1.lua,a/b|a/b/3.txt|c.lua|0");
});

Deno.test("std.fs: glob relative to the working directory drops ./", async () => {
  const d = await tempDir();
  await Deno.writeTextFile(join(d, "k.md"), "");
  // The run's working directory defaults to its project root (d); the process's is elsewhere.
  assert.equal(await lua(d, `return table.concat(std.fs.glob("./*.md"), ",")`), "k.md");
});

Deno.test("std.fs: glob raises for an invalid pattern; bracket expressions match as documented", async () => {
  const d = await tempDir();
  for (const f of ["a.ts", "b.ts", "c.ts", "]x", "-y", "é.ts"]) await Deno.writeTextFile(join(d, f), "");
  const out = await lua(
    d,
    `local function bad(p) local ok, e = pcall(std.fs.glob, p) assert(not ok, p) return e end
     local function good(p) return table.concat(std.fs.glob(p), ",") end
     return std.json.encode({
       bad("[z-a].ts"), bad("sub/[ab"), bad("[]"), bad("a**"), bad("**b/x"), bad("***"),
       good("[a-b].ts"), good("[!a].ts"), good("[]]x"), good("[-]y"), good("?.ts"), good("[é].ts"),
     })`,
  );
  const invalid = (p: string, why: string) => `std.fs.glob: invalid pattern '${p}': ${why}`;
  assert.deepEqual(JSON.parse(out), [
    invalid("[z-a].ts", "the range 'z-a' runs backwards"),
    invalid("sub/[ab", "the '[' of '[ab' is never closed"),
    invalid("[]", "the '[' of '[]' is never closed"),
    invalid("a**", "'**' must be a whole path segment, got 'a**'"),
    invalid("**b/x", "'**' must be a whole path segment, got '**b'"),
    invalid("***", "'**' must be a whole path segment, got '***'"),
    "a.ts,b.ts",
    "b.ts,c.ts,é.ts",
    "]x",
    "-y",
    "a.ts,b.ts,c.ts,é.ts",
    "é.ts",
  ]);
});

Deno.test("std.fs: relative paths are the run's working directory's, not the process's", async () => {
  const project = await tempDir();
  const cwd = await tempDir();
  await Deno.mkdir(join(cwd, "sub", "deep"), { recursive: true });
  await Deno.writeTextFile(join(cwd, "sub", "deep", "x.txt"), "x");
  const out = await evalLua(
    `std.fs.mkdir("made/here")
     std.fs.write("made/here/f.txt", "f")
     std.fs.copy("made/here/f.txt", "made/g.txt")
     std.fs.write("gone.txt", "") std.fs.remove("gone.txt")
     return table.concat({ std.fs.read("made/g.txt"), table.concat(std.fs.walk("sub"), ","),
       table.concat(std.fs.glob("sub/**/*.txt"), ","), table.concat(std.fs.glob("**/f.txt"), ","),
       tostring(std.fs.is_dir("made")), tostring(std.fs.exists("gone.txt")), std.fs.stat("made/g.txt").size }, "|")`,
    { projectRoot: project, cwd },
  );
  assert.equal(out, "f|sub/deep/x.txt|sub/deep/x.txt|made/here/f.txt|true|false|1");
  assert.ok(Deno.statSync(join(cwd, "made", "here", "f.txt")).isFile);
  assert.deepEqual([...Deno.readDirSync(project)], [], "nothing landed in the project root");
});

Deno.test("std.fs: missing files and directories raise naming the function and the path", async () => {
  const d = await tempDir();
  const out = await lua(
    d,
    `
    local msgs = {}
    for _, c in ipairs({
      { std.fs.read, D .. "/m" }, { std.fs.read_binary, D .. "/m" }, { std.fs.walk, D .. "/m" },
      { std.fs.copy, D .. "/m", D .. "/n" }, { std.fs.write, D .. "/m/deep/f", "x" },
    }) do
      local ok, e = pcall(c[1], c[2], c[3])
      msgs[#msgs + 1] = e
    end
    return table.concat(msgs, "\\n")`,
  );
  assert.equal(
    out,
    [
      `std.fs.read: ${d}/m: No such file or directory`,
      `std.fs.read_binary: ${d}/m: No such file or directory`,
      `std.fs.walk: ${d}/m: No such file or directory`,
      `std.fs.copy: ${d}/m: No such file or directory`,
      `std.fs.write: ${d}/m/deep/f: No such file or directory`,
    ].join("\n"),
  );
});

Deno.test("std.fs: permission errors (sysfs refuses root; a path through a file is ENOTDIR)", async () => {
  const d = await tempDir();
  await Deno.writeTextFile(join(d, "file"), "x");
  const sys = `/sys/kernel/ab_test_${crypto.randomUUID().slice(0, 8)}`;
  const out = await lua(
    d,
    `
    local a = select(2, pcall(std.fs.write, ${JSON.stringify(sys)}, "x"))
    local b = select(2, pcall(std.fs.write, D .. "/file/child", "x"))
    local c = select(2, pcall(std.fs.mkdir, D .. "/file/sub"))
    local e = select(2, pcall(std.fs.read, D))
    return table.concat({ a, b, c, e }, "\\n")`,
  );
  assert.equal(
    out,
    [
      `std.fs.write: ${sys}: Permission denied`,
      `std.fs.write: ${d}/file/child: Not a directory`,
      `std.fs.mkdir: ${d}/file/sub: Not a directory`,
      `std.fs.read: ${d}: Is a directory`,
    ].join("\n"),
  );
});

Deno.test("std.fs: wrong argument types raise the standard message at the caller's line", async () => {
  const cases: [string, string][] = [
    [`std.fs.write("x", {})`, "std.fs.write: argument 2 (content) must be a string, got table"],
    [`std.fs.read(nil)`, "std.fs.read: argument 1 (path) must be a string, got nil"],
    [`std.fs.read_binary(true)`, "std.fs.read_binary: argument 1 (path) must be a string, got boolean"],
    [`std.fs.write_binary("x", nil)`, "std.fs.write_binary: argument 2 (bytes) must be a string, got nil"],
    [`std.fs.exists({})`, "std.fs.exists: argument 1 (path) must be a string, got table"],
    [`std.fs.is_file()`, "std.fs.is_file: argument 1 (path) must be a string, got nil"],
    [`std.fs.is_dir(false)`, "std.fs.is_dir: argument 1 (path) must be a string, got boolean"],
    [`std.fs.stat({})`, "std.fs.stat: argument 1 (path) must be a string, got table"],
    [`std.fs.mkdir()`, "std.fs.mkdir: argument 1 (path) must be a string, got nil"],
    [
      `std.fs.remove("x", { recursive = 1 })`,
      "std.fs.remove: argument 2 (opts) field 'recursive' must be a boolean, got number",
    ],
    [`std.fs.remove("x", 5)`, "std.fs.remove: argument 2 (opts) must be a table, got number"],
    [`std.fs.copy("a")`, "std.fs.copy: argument 2 (dst) must be a string, got nil"],
    [`std.fs.walk(1 == 1)`, "std.fs.walk: argument 1 (dir) must be a string, got boolean"],
    [`std.fs.glob({})`, "std.fs.glob: argument 1 (pattern) must be a string, got table"],
    [`std.json.read_file(1 == 1)`, "std.json.read_file: argument 1 (path) must be a string, got boolean"],
    [`std.json.write_file("x")`, "std.json.write_file: argument 2 (value) must be a value, got nil"],
  ];
  for (const [code, msg] of cases) {
    const r = await runLua(`\n${code}`);
    assert.equal(r.outcome.status, "raised", code);
    assert.equal((r.outcome as { message: string }).message, `test.lua:2: ${msg}`);
  }
});

Deno.test("std.json.read_file / write_file: pretty, sorted, atomic, floats kept; errors name the file", async () => {
  const d = await tempDir();
  const out = await lua(
    d,
    `
    assert(std.json.write_file(D .. "/c.json", { b = 1, a = { 2.0, "x" }, n = std.json.null }) == true)
    local v = std.json.read_file(D .. "/c.json")
    local k = std.json.read_file(D .. "/c.json", { null = true })
    std.fs.write(D .. "/bad.json", "{nope")
    local ok, e = pcall(std.json.read_file, D .. "/bad.json")
    local ok2, e2 = pcall(std.json.read_file, D .. "/missing.json")
    return table.concat({ math.type(v.a[1]), tostring(v.n), tostring(k.n == std.json.null), e, e2 }, "|")`,
  );
  const [t, n, kept, bad, missing] = out.split("|");
  assert.equal(t, "float");
  assert.equal(n, "nil");
  assert.equal(kept, "true");
  assert.match(bad, new RegExp(`^std\\.json\\.read_file: ${d}/bad\\.json: .*JSON`));
  assert.equal(missing, `std.json.read_file: ${d}/missing.json: No such file or directory`);
  assert.equal(
    await Deno.readTextFile(join(d, "c.json")),
    '{\n  "a": [\n    2.0,\n    "x"\n  ],\n  "b": 1,\n  "n": null\n}\n',
  );
  assert.deepEqual([...Deno.readDirSync(d)].map((e) => e.name).sort(), ["bad.json", "c.json"]); // no temp left
});
