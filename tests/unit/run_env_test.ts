/** `RunEnv` (src/run_env.ts): base frozen and copied, overlay set/unset, toObject merged. */
import assert from "node:assert/strict";
import { RunEnv, wholeMilliseconds } from "../../src/run_env.ts";

Deno.test("RunEnv: get reads the base; a missing name is undefined; nonEmpty skips blanks", () => {
  const env = new RunEnv({ A: "1", BLANK: "  ", EMPTY: "" });
  assert.equal(env.get("A"), "1");
  assert.equal(env.get("MISSING"), undefined);
  assert.equal(env.get("EMPTY"), "");
  assert.equal(env.nonEmpty("A"), "1");
  assert.equal(env.nonEmpty("BLANK"), undefined);
  assert.equal(env.nonEmpty("EMPTY"), undefined);
  assert.equal(env.get("toString"), undefined, "inherited object keys are not variables");
  assert.deepEqual(new RunEnv().toObject(), {});
});

Deno.test("RunEnv: set writes the overlay; unset hides a base variable; toObject merges", () => {
  const env = new RunEnv({ A: "1", B: "2" });
  env.set("A", "changed");
  env.set("C", "new");
  env.set("B", undefined);
  assert.equal(env.get("A"), "changed");
  assert.equal(env.get("B"), undefined);
  assert.equal(env.get("C"), "new");
  assert.deepEqual(env.toObject(), { A: "changed", C: "new" });
  env.set("B", "back");
  assert.deepEqual(env.toObject(), { A: "changed", B: "back", C: "new" });
});

Deno.test("RunEnv: the base is copied and frozen; toObject answers a fresh record", () => {
  const base: Record<string, string> = { A: "1" };
  const env = new RunEnv(base);
  base.A = "edited later";
  base.NEW = "x";
  assert.equal(env.get("A"), "1", "later changes to the argument are not seen");
  assert.equal(env.get("NEW"), undefined);
  env.set("A", "overlay");
  assert.deepEqual(base, { A: "edited later", NEW: "x" }, "the run never writes its base");
  const obj = env.toObject();
  obj.A = "mutated";
  assert.equal(env.get("A"), "overlay", "a child's copy does not reach the run");
});

Deno.test("RunEnv: two views of one record are independent", () => {
  const base = { SHARED: "s" };
  const a = new RunEnv(base);
  const b = new RunEnv(base);
  a.set("SHARED", "a");
  a.set("ONLY_A", "1");
  assert.equal(b.get("SHARED"), "s");
  assert.equal(b.get("ONLY_A"), undefined);
});

Deno.test("wholeMilliseconds: unset or blank is the fallback; a malformed value is an error naming the variable", () => {
  const env = new RunEnv({ A: "250", B: " ", C: "1.5", D: "-3", E: "later", F: "70000" });
  assert.equal(wholeMilliseconds(env, "A", 9), 250);
  assert.equal(wholeMilliseconds(env, "B", 9), 9);
  assert.equal(wholeMilliseconds(env, "NONE", 9), 9);
  for (const name of ["C", "D", "E"]) {
    assert.throws(() => wholeMilliseconds(env, name, 9), RangeError);
  }
  assert.throws(
    () => wholeMilliseconds(env, "F", 9, 60_000),
    new RangeError("F must be a whole number of milliseconds from 0 to 60000, got '70000'"),
  );
});
