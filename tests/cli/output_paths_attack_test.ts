/**
 * Where a run writes its value and outcome (issue 26 §1): an atomic write renamed a temporary
 * file over whatever the path named, so `--result /dev/null` (as root) replaced the device with a
 * regular file. Now only a regular file or nothing is replaced; a character device or a FIFO is
 * written in place; a directory, a socket or a link to nothing is refused; a link is followed.
 * `--result -` / `--outcome -` write to stdout, and a `--result` whose directory does not exist
 * is an error before the run starts.
 *
 * Real files only, and nothing here touches the machine's own `/dev/null`: a link to it in a
 * temporary directory is the device seen through a path the old code would have replaced (the
 * link), and a FIFO made with `mkfifo` has a real reader process.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, runLua, tempProject } from "../helpers.ts";
import { writeAtomic, WriteRefused } from "../../src/util/fs.ts";

const RETURNS = { "r.lua": `return "the value"` };
const kind = (p: string) => {
  const i = Deno.lstatSync(p);
  return i.isSymlink ? "symlink" : i.isFile ? "file" : i.isFifo ? "fifo" : i.isCharDevice ? "char" : "other";
};

Deno.test("attack: --result and --outcome through a link to /dev/null write to the device, the link stays", async () => {
  const root = await tempProject({ ...RETURNS, "fail.lua": `error("no value")` });
  const link = join(root, "null");
  Deno.symlinkSync("/dev/null", link);
  const r = await runCli(["-s", "r.lua", "--result", "null", "--outcome", "null"], { cwd: root });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(kind(link), "symlink", "the link was replaced by a regular file");
  assert.ok(Deno.statSync("/dev/null").isCharDevice);
  // A run without a value leaves a device alone (nothing of an earlier run can be in it).
  const f = await runCli(["-s", "fail.lua", "--result", "/dev/null"], { cwd: root });
  assert.equal(f.code, 1, f.stderr);
  assert.ok(Deno.statSync("/dev/null").isCharDevice, "/dev/null was removed");
});

Deno.test("attack: --result into a FIFO is written in place to its reader; the FIFO stays a FIFO", async () => {
  const root = await tempProject(RETURNS);
  const fifo = join(root, "pipe");
  const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(mk.success, "mkfifo failed");
  // Held open for writing too (Linux opens a FIFO read-write without waiting): the reader's open
  // does not wait for the run, and closing it gives the reader its end even if the run wrote
  // elsewhere — the test fails then instead of hanging.
  const held = Deno.openSync(fifo, { read: true, write: true });
  const reader = new Deno.Command("cat", { args: [fifo], stdout: "piped", stderr: "null" }).spawn();
  let r;
  try {
    r = await runCli(["-s", "r.lua", "--result", "pipe"], { cwd: root });
  } finally {
    held.close();
  }
  assert.equal(r.code, 0, r.stderr);
  const got = await reader.output();
  assert.equal(new TextDecoder().decode(got.stdout), "the value");
  assert.equal(kind(fifo), "fifo", "the FIFO was replaced");
});

Deno.test("attack: --result - and --outcome - write to stdout, after what the run printed", async () => {
  const root = await tempProject({ "p.lua": `print("printed")\nreturn "the value"` });
  const r = await runCli(["-s", "p.lua", "--result", "-"], { cwd: root });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "printed\nthe value");
  assert.ok(!Deno.readDirSync(root).some((e) => e.name === "-"), "a file named - was written");
  const o = await runCli(["-s", "p.lua", "--outcome", "-"], { cwd: root });
  assert.equal(o.code, 0, o.stderr);
  const [printed, json] = o.stdout.split("\n");
  assert.equal(printed, "printed");
  assert.deepEqual(JSON.parse(json), { version: 1, status: "returned", value: "the value" });
});

Deno.test("attack: a --result or --outcome that cannot be written is an error before the run starts", async () => {
  const root = await tempProject({
    "work.lua": `std.fs.write("worked.txt", "the work was done")\nreturn "the value"`,
  });
  Deno.mkdirSync(join(root, "adir"));
  Deno.symlinkSync(join(root, "nowhere"), join(root, "dangling"));
  const cases: [string[], RegExp][] = [
    [["--result", "missing/out.txt"], /--result missing\/out\.txt: the directory .*missing does not exist/],
    [["--outcome", "missing/o.json"], /--outcome missing\/o\.json: the directory .*missing does not exist/],
    [["--result", "adir"], /--result adir: cannot be written: it is a directory/],
    [["--result", "dangling"], /--result dangling: cannot be written: it is a symbolic link to nothing/],
  ];
  for (const [flags, message] of cases) {
    const r = await runCli(["-s", "work.lua", ...flags], { cwd: root });
    assert.equal(r.code, 1, `${flags.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.throws(
      () => Deno.statSync(join(root, "worked.txt")),
      Deno.errors.NotFound,
      `${flags}: the run ran`,
    );
  }
  assert.ok(Deno.statSync(join(root, "adir")).isDirectory);
});

Deno.test("attack: a link to a regular file is followed: its target gets the value, the link stays", async () => {
  const root = await tempProject(RETURNS);
  Deno.mkdirSync(join(root, "real"));
  Deno.writeTextFileSync(join(root, "real", "out.txt"), "old");
  Deno.symlinkSync(join(root, "real", "out.txt"), join(root, "out.txt"));
  const r = await runCli(["-s", "r.lua", "--result", "out.txt"], { cwd: root });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(kind(join(root, "out.txt")), "symlink");
  assert.equal(Deno.readTextFileSync(join(root, "real", "out.txt")), "the value");
  assert.deepEqual([...Deno.readDirSync(join(root, "real"))].map((e) => e.name), ["out.txt"], "temp left");
});

Deno.test("attack: std.json.write_file to a link to /dev/null and to a directory", async () => {
  const root = await tempProject();
  Deno.symlinkSync("/dev/null", join(root, "null.json"));
  Deno.mkdirSync(join(root, "dir.json"));
  const r = await runLua(
    `local ok1, e1 = pcall(std.json.write_file, "null.json", { a = 1 })
     local ok2, e2 = pcall(std.json.write_file, "dir.json", { a = 1 })
     return tostring(ok1) .. " | " .. tostring(ok2) .. " " .. tostring(e2)`,
    { projectRoot: root },
  );
  assert.equal(r.outcome.status, "returned", r.stderr);
  const v = (r.outcome as { value: string }).value;
  assert.match(v, /^true \| false .*it is a directory/);
  assert.equal(kind(join(root, "null.json")), "symlink");
  assert.ok(Deno.statSync(join(root, "dir.json")).isDirectory);
});

Deno.test("writeAtomic refuses a socket and a dangling link with WriteRefused, and writes a missing file", async () => {
  const root = await tempProject();
  const sock = join(root, "s.sock");
  const listener = Deno.listen({ transport: "unix", path: sock });
  try {
    assert.throws(() => writeAtomic(sock, "x"), WriteRefused);
  } finally {
    listener.close();
  }
  Deno.symlinkSync(join(root, "nothing"), join(root, "dangling"));
  assert.throws(() => writeAtomic(join(root, "dangling"), "x"), WriteRefused);
  writeAtomic(join(root, "new.txt"), "fresh");
  assert.equal(Deno.readTextFileSync(join(root, "new.txt")), "fresh");
});
