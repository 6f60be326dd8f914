// RepeatLimit (src/obs/repeat_limit.ts) and the logger's escaping of control characters: a flood
// is a burst of lines and counted summaries that add up; a log line carries no raw ESC or CR.
import assert from "node:assert/strict";
import { RepeatLimit } from "../../src/obs/repeat_limit.ts";
import { escapeControls, Logger } from "../../src/obs/log.ts";

Deno.test("attack: a flood of one warning is a burst per window and a count; every one is written or counted", () => {
  let now = 0;
  const lines: string[] = [];
  const limit = new RepeatLimit((l) => lines.push(l), "drops", 3, 1000, () => now);
  for (let i = 0; i < 10; i++) limit.report(`w${i}`); // window 1: 3 shown, 7 counted
  now = 1500;
  for (let i = 10; i < 12; i++) limit.report(`w${i}`); // window 2 flushes window 1's count first
  limit.flush(); // nothing counted in window 2
  assert.deepEqual(lines, ["w0", "w1", "w2", "drops: 7 more not shown (in 2 s; the last: w9)", "w10", "w11"]);
});

Deno.test("attack: log lines escape ESC, CR, DEL and C1 characters; newlines continue the line, indented", () => {
  assert.equal(escapeControls("a\x1b[31mb\rc\x7fd\x85e\tf"), "a\\x1b[31mb\\rc\\x7fd\\x85e\tf");
  const out: string[] = [];
  new Logger("s.lua", "info", (b) => out.push(new TextDecoder().decode(b))).warn(
    "from evil\x1b]0;x\x07\nnext",
  );
  assert.equal(out.join(""), "[warn] s.lua: from evil\\x1b]0;x\\x07\n  next\n");
});
