/**
 * `sh.exec` output has a cap (issue 26 §1): `sh.exec("yes", {timeout = 8})` gathered 926 MB and
 * the run peaked at 2.7 GB. Each stream now keeps at most `max_output_bytes` (default 64 MiB);
 * the rest is read and dropped, so the command is never blocked on a full pipe, and the result
 * says `truncated`. Real commands; sizes are exact, nothing depends on timing.
 */
import assert from "node:assert/strict";
import { resultOf, runLua } from "../helpers.ts";
import { DEFAULT_MAX_OUTPUT_BYTES } from "../../src/host/sh.ts";

Deno.test("attack: sh.exec keeps max_output_bytes of each stream, drops the rest, the command runs to its end", async () => {
  const r = await runLua(`
    local r = sh.exec("head -c 1000000 /dev/zero; echo done >&2; exit 3", { max_output_bytes = 10 })
    local s = sh.exec("printf abc; printf 0123456789abc >&2", { max_output_bytes = 10 })
    local f = sh.exec("printf 0123456789", { max_output_bytes = 10 })
    return std.json.encode({
      r = { ok = r.ok, code = r.code, out = #r.stdout, err = r.stderr, t = r.truncated,
            so = r.stdout_truncated, se = r.stderr_truncated or false },
      s = { out = s.stdout, err = s.stderr, t = s.truncated, so = s.stdout_truncated or false,
            se = s.stderr_truncated },
      f = { out = f.stdout, t = f.truncated or false },
    })`);
  assert.deepEqual(resultOf(r), {
    r: { ok: true, code: 3, out: 10, err: "done\n", t: true, so: true, se: false },
    s: { out: "abc", err: "0123456789", t: true, so: false, se: true },
    f: { out: "0123456789", t: false }, // exactly the cap is not truncated
  });
});

Deno.test("attack: sh.exec of an endless writer (yes) keeps its cap until the timeout, not all it wrote", async () => {
  // `yes` writes until the timeout kills it: without a cap the run gathered all of it. 1 MiB is
  // reached in the first instant of the two seconds, however loaded the machine.
  const r = await runLua(`
    local r = sh.exec("yes", { timeout = 2, max_output_bytes = 1048576 })
    return std.json.encode({ out = #r.stdout, t = r.truncated, to = r.timed_out })`);
  assert.deepEqual(resultOf(r), { out: 1 << 20, t: true, to: true });
});

Deno.test("attack: sh.exec's default cap is 64 MiB per stream", async () => {
  assert.equal(DEFAULT_MAX_OUTPUT_BYTES, 64 << 20);
  const r = await runLua(`
    local r = sh.exec("head -c ${DEFAULT_MAX_OUTPUT_BYTES + 4096} /dev/zero")
    return std.json.encode({ out = #r.stdout, t = r.truncated, code = r.code })`);
  assert.deepEqual(resultOf(r), { out: DEFAULT_MAX_OUTPUT_BYTES, t: true, code: 0 });
});

Deno.test("attack: sh.exec max_output_bytes must be a positive whole number", async () => {
  for (const bad of ["0", "-1", "1.5", "'10'"]) {
    const r = await runLua(`return sh.exec("true", { max_output_bytes = ${bad} })`);
    assert.equal(r.outcome.status, "raised", bad);
    assert.match((r.outcome as { message: string }).message, /field 'max_output_bytes' must be/, bad);
  }
});
