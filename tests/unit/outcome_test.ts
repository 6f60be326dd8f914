/** `exitCodeOf` (src/outcome.ts) for every Outcome status. */
import assert from "node:assert/strict";
import { EXIT_TIMED_OUT, exitCodeOf, notStarted, type Outcome } from "../../src/outcome.ts";

Deno.test("exitCodeOf: one code per status", () => {
  const cases: [Outcome, number][] = [
    [{ status: "returned", value: "x" }, 0],
    [{ status: "returned", value: undefined }, 0],
    [{ status: "deferred", reason: "later" }, 75],
    [{ status: "exited", code: 0 }, 0],
    [{ status: "exited", code: 3 }, 3],
    [{ status: "exited", code: 75 }, 75],
    [{ status: "raised", code: "script", message: "boom", traceback: "" }, 1],
    [{ status: "cancelled", reason: "received SIGINT" }, 130],
    [{ status: "timed_out", seconds: 5 }, 124],
  ];
  for (const [o, code] of cases) assert.equal(exitCodeOf(o), code, JSON.stringify(o));
  assert.equal(EXIT_TIMED_OUT, 124);
});

Deno.test("notStarted: a failure with the message and no traceback, exit 1", () => {
  const o = notStarted("no such file");
  assert.deepEqual(o, { status: "raised", code: "config", message: "no such file", traceback: "" });
  assert.equal(exitCodeOf(o), 1);
});
