/**
 * `LineSplitter` (src/util/lines.ts): lines split anywhere (inside UTF-8 sequences, between CR
 * and LF), both line-end modes, the line limit, and the work it does — linear in the bytes
 * pushed however long the lines are, which is what makes a 50 MB MCP result over stdio cost
 * time in proportion to its size.
 */
import assert from "node:assert/strict";
import { LineSplitter, LineTooLong } from "../../src/util/lines.ts";

const enc = new TextEncoder();

/** Pushes `text` in chunks of `size` bytes; returns every line and the rest. */
function split(text: string, size: number, cr = false): string[] {
  const bytes = enc.encode(text);
  const s = new LineSplitter({ cr });
  const out: string[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...s.push(bytes.subarray(i, i + size)));
  const rest = s.finish();
  if (rest !== undefined) out.push(`<rest>${rest}`);
  return out;
}

Deno.test("lines: LF mode drops the CR of a CRLF, keeps a lone CR, splits anywhere", () => {
  const text = '\uFEFF{"a":"é€😀"}\r\n\n{"b":1}\rx\nlast';
  const want = ['{"a":"é€😀"}', "", '{"b":1}\rx', "<rest>last"];
  for (const size of [1, 2, 3, 5, 7, 64]) assert.deepEqual(split(text, size), want, `chunks of ${size}`);
});

Deno.test("lines: CR mode ends lines at LF, CR and CRLF (one end), also across chunks", () => {
  const text = "data: a\r\ndata: b\rdata: c\n\r\n\rtail";
  const want = ["data: a", "data: b", "data: c", "", "", "<rest>tail"];
  for (const size of [1, 2, 3, 4, 64]) assert.deepEqual(split(text, size, true), want, `chunks of ${size}`);
  // An empty chunk between the CR and the LF changes nothing.
  const s = new LineSplitter({ cr: true });
  assert.deepEqual(s.push(enc.encode("a\r")), ["a"]);
  assert.deepEqual(s.push(new Uint8Array()), []);
  assert.deepEqual(s.push(enc.encode("\nb\n")), ["b"]);
});

Deno.test("attack: a line past maxLineBytes is refused as soon as it gets there, not at its end", () => {
  const s = new LineSplitter({ maxLineBytes: 1000 });
  assert.deepEqual(s.push(enc.encode("short\n" + "x".repeat(600))), ["short"]);
  assert.throws(
    () => s.push(enc.encode("y".repeat(600))),
    (e) => e instanceof LineTooLong && e.limit === 1000,
  );
  // A line exactly at the limit is fine, in one chunk or in pieces.
  const t = new LineSplitter({ maxLineBytes: 10 });
  assert.deepEqual(t.push(enc.encode("0123456789\n01234")), ["0123456789"]);
  assert.deepEqual(t.push(enc.encode("56789\n")), ["0123456789"]);
  assert.throws(() => t.push(enc.encode("0123456789A\n")), LineTooLong);
});

Deno.test("attack: an 8 MB line in 4 KB chunks costs work linear in its size (no rescan per chunk)", () => {
  for (const cr of [false, true]) {
    const s = new LineSplitter({ cr });
    const chunk = enc.encode("a".repeat(4096));
    const total = 8 * 1024 * 1024;
    for (let sent = 0; sent < total; sent += chunk.length) assert.deepEqual(s.push(chunk), []);
    const lines = s.push(enc.encode("\n"));
    assert.equal(lines.length, 1);
    assert.equal(lines[0].length, total);
    // Rescanning the pending line on each chunk would be ~2048 chunks × 4 MB ≈ 8.6e9.
    assert.ok(s.work <= 5 * (total + 1), `work ${s.work} for ${total} bytes (cr=${cr})`);
  }
  // Many short lines in big chunks: linear too (each end byte searched for once).
  const s = new LineSplitter({ cr: true });
  const text = enc.encode("ab\n".repeat(100_000));
  assert.equal(s.push(text).length, 100_000);
  assert.ok(s.work <= 5 * text.length, `work ${s.work} for ${text.length} bytes`);
});
