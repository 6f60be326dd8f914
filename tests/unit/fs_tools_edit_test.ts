/** The file tools' text logic (src/host/fs_tools/edit.ts), pure: no file, no run. */
import assert from "node:assert/strict";
import {
  editLines,
  numbered,
  READ_MAX_LINES,
  readWindow,
  searchReplaceEdit,
  splitLines,
} from "../../src/host/fs_tools/edit.ts";
import { ToolError } from "../../src/host/fs_tools/tool_error.ts";

const toolError = (fn: () => unknown, message: string | RegExp) =>
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ToolError, `expected a ToolError, got ${e}`);
    if (typeof message === "string") assert.equal((e as Error).message, message);
    else assert.match((e as Error).message, message);
    return true;
  });

Deno.test("splitLines: final newline and CRLF remembered", () => {
  assert.deepEqual(splitLines(""), { lines: [], finalNewline: false, crlf: false });
  assert.deepEqual(splitLines("a\nb\n"), { lines: ["a", "b"], finalNewline: true, crlf: false });
  assert.deepEqual(splitLines("a\nb"), { lines: ["a", "b"], finalNewline: false, crlf: false });
  assert.deepEqual(splitLines("a\r\nb\r\n"), { lines: ["a", "b"], finalNewline: true, crlf: true });
  assert.deepEqual(splitLines("a\r\nb"), { lines: ["a", "b"], finalNewline: false, crlf: true });
  assert.deepEqual(
    splitLines("a\r\nb\n"),
    { lines: ["a\r", "b"], finalNewline: true, crlf: false },
    "mixed ends are kept",
  );
});

Deno.test("numbered: cat -n style", () => {
  assert.equal(numbered(["x", "y"], 9), "     9\tx\n    10\ty");
});

Deno.test("readWindow: a range, the default window and its continuation hint, range errors", () => {
  const lines = ["a", "b", "c"];
  assert.equal(readWindow("f.txt", lines), "f.txt: lines 1-3 of 3\n     1\ta\n     2\tb\n     3\tc");
  assert.equal(readWindow("f.txt", lines, 2, 2), "f.txt: lines 2-2 of 3\n     2\tb");
  assert.equal(readWindow("f.txt", lines, 2, 99), "f.txt: lines 2-3 of 3\n     2\tb\n     3\tc");
  const many = Array.from({ length: READ_MAX_LINES + 5 }, (_, i) => `l${i + 1}`);
  const w = readWindow("big", many);
  assert.match(w, new RegExp(`^big: lines 1-${READ_MAX_LINES} of ${READ_MAX_LINES + 5}\n`));
  assert.ok(w.endsWith(`\n(5 more line(s); read on with start_line = ${READ_MAX_LINES + 1})`));
  toolError(
    () => readWindow("f.txt", lines, 4),
    "fs_read: start_line 4 is not in f.txt, which has 3 line(s)",
  );
  toolError(
    () => readWindow("f.txt", lines, 0),
    "fs_read: start_line 0 is not in f.txt, which has 3 line(s)",
  );
  toolError(() => readWindow("f.txt", lines, 3, 2), "fs_read: end_line 2 is before start_line 3");
});

Deno.test("editLines: replace, insert, delete; the final newline is kept or kept lacking", () => {
  const e = (text: string, s: number, end: number, expect: string, content: string) =>
    editLines("fs_edit", "f", text, s, end, expect, content).text;
  assert.equal(e("a\nb\nc\n", 2, 2, "b", "B\nB2"), "a\nB\nB2\nc\n");
  assert.equal(e("a\nb\nc", 2, 3, "b\nc\n", "x"), "a\nx");
  assert.equal(e("a\nb\n", 2, 1, "", "new"), "a\nnew\nb\n", "insert before line 2");
  assert.equal(e("a\nb\n", 3, 2, "", "end"), "a\nb\nend\n", "insert at the end");
  assert.equal(e("a\nb\nc\n", 2, 2, "b", ""), "a\nc\n", "empty content deletes");
  assert.equal(e("", 1, 0, "", "first\n"), "first\n", "an empty file gets the content's newline");
  assert.equal(e("a\nb", 2, 2, "b", "z\n"), "a\nz\n", "a last line replaced with a newline gets one");
  assert.equal(e("a\r\nb\r\n", 1, 1, "a\r\n", "x\r\ny"), "x\r\ny\r\nb\r\n", "CRLF written back");
});

Deno.test("editLines: the report names the file, the range and the new lines", () => {
  const r = editLines("fs_edit", "src/f.lua", "a\nb\n", 2, 2, "b", "B");
  assert.equal(
    r.report,
    "fs_edit: src/f.lua: lines 2-2 replaced by 1 line(s); the file now has 2 line(s):\n     2\tB",
  );
  const d = editLines("fs_edit", "f", "a\nb\n", 1, 1, "a", "");
  assert.equal(d.report, "fs_edit: f: lines 1-1 replaced by 0 line(s); the file now has 1 line(s)");
});

Deno.test("editLines: a range outside the file, a mismatch, an insertion with expect", () => {
  toolError(
    () => editLines("fs_edit", "f", "a\n", 3, 3, "", "x"),
    'fs_edit: lines 3-3 are not in f, which has 1 line(s) (to insert before line L, use start_line = L, end_line = L - 1, expect = "")',
  );
  toolError(() => editLines("fs_edit", "f", "a\nb\n", 2, 1 - 1, "", "x"), /lines 2-0 are not in f/);
  toolError(
    () => editLines("fs_edit", "f", "a\nb\n", 1, 2, "a\nB", "x"),
    "fs_edit: expect does not match lines 1-2 of f; their current text is:\n     1\ta\n     2\tb",
  );
  toolError(
    () => editLines("fs_edit", "f", "a\n", 1, 0, "a", "x"),
    'fs_edit: an insertion (end_line = start_line - 1) needs expect = "", got "a"',
  );
});

Deno.test("searchReplaceEdit: the unique match becomes a line edit of the lines it spans", () => {
  const text = "one\ntwo three\nfour\n";
  const e = searchReplaceEdit("fs_search_replace", "f", text, "three\nfo", "3\nFO");
  assert.deepEqual(e, { start: 2, end: 3, expect: "two three\nfour", content: "two 3\nFOur\n" });
  assert.equal(
    editLines("fs_search_replace", "f", text, e.start, e.end, e.expect, e.content).text,
    "one\ntwo 3\nFOur\n",
  );
  // Removing a whole line's text including its newline keeps the next line separate.
  const d = searchReplaceEdit("fs_search_replace", "f", "a\nb\nc\n", "b\n", "");
  assert.equal(
    editLines("fs_search_replace", "f", "a\nb\nc\n", d.start, d.end, d.expect, d.content).text,
    "a\nc\n",
  );
});

Deno.test("searchReplaceEdit: empty, missing and repeated search texts", () => {
  toolError(
    () => searchReplaceEdit("fs_search_replace", "f", "x", "", "y"),
    "fs_search_replace: input field 'search' must not be empty",
  );
  toolError(
    () => searchReplaceEdit("fs_search_replace", "f", "abc", "zz", "y"),
    "fs_search_replace: the search text was not found in f (it must match verbatim)",
  );
  toolError(
    () => searchReplaceEdit("fs_search_replace", "f", "x\ny\nx\n", "x", "y"),
    "fs_search_replace: the search text occurs 2 times in f (starting on lines 1, 3); include more surrounding text to make it unique",
  );
});

Deno.test("attack: fs_search_replace on a search text with 200,000 hits (quadratic line numbering)", () => {
  const text = "x = 1\n".repeat(200_000);
  const t0 = performance.now();
  toolError(
    () => searchReplaceEdit("fs_search_replace", "f", text, "x", "y"),
    /^fs_search_replace: the search text occurs 200000 times in f \(starting on lines 1, 2, 3, .*, 20 and 199980 more\); include more/,
  );
  // Linear: milliseconds (it took minutes); the bound only keeps a loaded machine from failing it.
  assert.ok(performance.now() - t0 < 5000, `took ${Math.round(performance.now() - t0)} ms`);
  // The unique case deep in a large file is linear too.
  const big = "a\n".repeat(500_000) + "needle\n" + "b\n".repeat(500_000);
  const e = searchReplaceEdit("fs_search_replace", "f", big, "needle", "pin");
  assert.deepEqual([e.start, e.end, e.content], [500_001, 500_001, "pin\n"]);
});
