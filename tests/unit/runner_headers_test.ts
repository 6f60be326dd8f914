/**
 * The runner's module headers speak the outcome's vocabulary: a status word in backticks in the
 * header of a `src/runner/**` module is one of `OutcomeStatus` (the review of 2026-12-05 found
 * three headers still saying `stopped` and `failed`, words from before `Outcome`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers.ts";

const STATUSES = ["returned", "deferred", "exited", "raised", "cancelled", "timed_out"];
const OLD_WORDS = ["stopped", "failed", "succeeded", "killed", "errored"];

Deno.test("runner headers name only outcome statuses", () => {
  const dir = join(REPO_ROOT, "src/runner");
  const bad: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (!e.name.endsWith(".ts")) continue;
    const text = Deno.readTextFileSync(join(dir, e.name));
    const header = text.slice(0, text.indexOf("*/"));
    for (const m of header.matchAll(/`([a-z_]+)`/g)) {
      if (OLD_WORDS.includes(m[1])) bad.push(`${e.name}: \`${m[1]}\``);
    }
  }
  assert.deepEqual(bad, [], `status words outside OutcomeStatus (${STATUSES.join(", ")}): ${bad.join(", ")}`);
});
