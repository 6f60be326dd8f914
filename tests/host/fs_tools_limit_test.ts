/**
 * The size limit of the model-facing file tools (`max_file_bytes`, default 16 MiB): a file past
 * it is refused by every tool that reads it — with a message giving its size and the limit,
 * before any of it is read (a sparse 1.1 GB file costs no memory) — overwriting one is refused
 * (no undo copy could be kept), a FIFO is refused instead of blocking the host, a file growing
 * while it is read is refused a byte past the limit, a rollback restores a file grown past it,
 * and the option is checked.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runFsTools, runLua, tempDir } from "../helpers.ts";
import { FileTooLarge, fileTooLarge, readBounded } from "../../src/host/fs_tools/bounded_read.ts";

/** Runs `body` with every file tool registered; `extra` adds fields to their opts. */
const tools = (dir: string, body: string, extra = "") =>
  runFsTools(dir, body, `{ allowed = { "fs_write", "fs_rollback", "fs_search_replace" } ${extra} }`);

Deno.test("attack: fs_read, fs_edit, fs_search_replace and fs_write on a 1.1 GB file are refused, naming size and limit", async () => {
  const d = await tempDir();
  const big = join(d, "big.log");
  Deno.writeTextFileSync(big, "");
  Deno.truncateSync(big, 1_181_116_006); // sparse: no disk, and nothing read
  const out = await tools(
    d,
    `return table.concat({
      call("fs_read", { path = "big.log" }),
      call("fs_edit", { path = "big.log", start_line = 1, end_line = 1, expect = "", content = "x" }),
      call("fs_search_replace", { path = "big.log", search = "a", replace = "b" }),
      call("fs_write", { path = "big.log", content = "small now" }),
    }, "\\n")`,
  );
  const limit = "larger than the 16777216 bytes the file tools handle (max_file_bytes)";
  assert.equal(
    out,
    [
      `ERR fs_read: big.log is 1181116006 bytes, ${limit}`,
      `ERR fs_edit: big.log is 1181116006 bytes, ${limit}`,
      `ERR fs_search_replace: big.log is 1181116006 bytes, ${limit}`,
      `ERR fs_write: big.log is 1181116006 bytes, ${limit}, so it cannot be replaced undoably`,
    ].join("\n"),
  );
  assert.equal(Deno.statSync(big).size, 1_181_116_006, "the file was left alone");
});

Deno.test("attack: fs_read of a FIFO is refused instead of blocking the host", async () => {
  const d = await tempDir();
  const made = await new Deno.Command("mkfifo", { args: [join(d, "pipe")] }).output().catch(() => undefined);
  if (!made?.success) return; // no mkfifo here: nothing to attack with
  const out = await tools(
    d,
    `return call("fs_read", { path = "pipe" }) .. "\\n" .. call("fs_write", { path = "pipe", content = "x" })`,
  );
  assert.equal(out, "ERR fs_read: pipe is not a regular file\nERR fs_write: pipe is not a regular file");
});

Deno.test("fs tools: max_file_bytes sets the limit per tool set; a file at the limit is read; the option is checked", async () => {
  const d = await tempDir();
  Deno.writeTextFileSync(join(d, "f.txt"), "0123456789\n123456789\n"); // 21 bytes
  const at = await tools(d, `return call("fs_read", { path = "f.txt" })`, ", max_file_bytes = 21");
  assert.match(at, /^f\.txt: lines 1-2 of 2/);
  const over = await tools(d, `return call("fs_read", { path = "f.txt" })`, ", max_file_bytes = 20");
  assert.equal(
    over,
    "ERR fs_read: f.txt is 21 bytes, larger than the 20 bytes the file tools handle (max_file_bytes)",
  );
  const bad = await runLua(`return select(2, pcall(std.fs.register_tools, { max_file_bytes = -1 }))`, {
    projectRoot: d,
  });
  assert.match(
    String((bad.outcome as { value?: unknown }).value),
    /std\.fs\.register_tools: argument 1 \(opts\) field 'max_file_bytes' must be a positive whole number, got -1/,
  );
});

Deno.test("fs tools: a file that grows past max_file_bytes while it is read is refused, read a byte past the limit", () => {
  // What the descriptor's fstat said (10 bytes), then a file that keeps growing: the read goes on
  // past the size it was told, and stops one byte past the limit.
  const refuse = (size: string) => fileTooLarge("fs_read", "grow.log", size, 100);
  let asked = 0;
  const endless = (buf: Uint8Array, position: number) => {
    asked = Math.max(asked, position + buf.length);
    buf.fill(120);
    return buf.length;
  };
  assert.throws(
    () => readBounded(endless, 10, 100, refuse),
    (e: unknown) =>
      e instanceof FileTooLarge &&
      e.message ===
        "fs_read: grow.log is more than 100 bytes, larger than the 100 bytes the file tools handle (max_file_bytes)",
  );
  assert.equal(asked, 101, "nothing past the limit's next byte was asked for");
  // Grown, but within the limit: read whole, not cut at the size fstat said.
  const data = new TextEncoder().encode("x".repeat(70));
  const grown = (buf: Uint8Array, position: number) => {
    const part = data.subarray(position, position + buf.length);
    buf.set(part);
    return part.length;
  };
  assert.equal(readBounded(grown, 10, 100, refuse).length, 70);
  assert.equal(readBounded(grown, 70, 70, refuse).length, 70, "a file exactly at the limit is read");
  assert.throws(() => readBounded(grown, 10, 69, refuse), FileTooLarge);
});

Deno.test("fs tools: fs_rollback restores a file that grew past max_file_bytes since the edit (no copy of it is needed)", async () => {
  const d = await tempDir();
  const f = join(d, "f.txt");
  Deno.writeTextFileSync(f, "small\n");
  const out = await tools(
    d,
    `local w = call("fs_write", { path = "f.txt", content = "replaced\\n" })
     local fh = io.open(std.path.join(std.env.project_root(), "f.txt"), "a")
     fh:write(string.rep("y", 40))
     fh:close()
     return w .. "\\n" .. call("fs_rollback", { path = "f.txt" }) .. "\\n" ..
       call("fs_write", { path = "f.txt", content = "again" })`,
    ", max_file_bytes = 20",
  );
  assert.equal(
    out,
    [
      "fs_write: wrote f.txt (9 bytes)",
      "fs_rollback: f.txt restored; 0 earlier edit(s) of it can still be undone",
      "fs_write: wrote f.txt (5 bytes)",
    ].join("\n"),
  );
  assert.equal(Deno.readTextFileSync(f), "again");
});
