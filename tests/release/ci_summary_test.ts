/**
 * `.ci/summary`, the end of a CI run: counts read from a TAP report, and the sandbox escape suite's
 * line — `escapes: E/N` when attempts ran, and, when none did (the suite skipped on a machine
 * without Landlock), `escapes: skipped, ...` with the suite's reason, never a `0/0` that reads as
 * a clean result. Fed real-shaped TAP reports; runs the script itself.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, tempDir } from "../helpers.ts";

async function summary(report: string, status = 0): Promise<{ code: number; out: string }> {
  const dir = await tempDir("ab_ci_summary_");
  const file = join(dir, "report.tap");
  Deno.writeTextFileSync(file, report);
  const r = await new Deno.Command("bash", {
    args: [join(REPO_ROOT, ".ci", "summary"), file, String(status)],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: r.code, out: new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr) };
}

Deno.test({
  name: "ci summary: escapes E/N when the sandbox suite ran, 'skipped' and why when it did not",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const ran = await summary(
      "TAP version 14\nok 1 - attack: sandbox write outside\nok 2 - attack: sandbox TCP connect\nok 3 - other\n1..3\n",
    );
    assert.equal(ran.code, 0);
    assert.match(ran.out, /^escapes: 0\/2$/m);
    assert.match(ran.out, /^3 passed, 0 failed$/m);

    const skipped = await summary(
      "TAP version 14\nescape_attack_test: skipped: this kernel has no Landlock\n" +
        "ok 1 - attack: sandbox write outside # SKIP\nok 2 - other\n1..2\n",
    );
    assert.equal(skipped.code, 0);
    assert.match(skipped.out, /^escapes: skipped, no escape attempt ran \(this kernel has no Landlock\)$/m);
    assert.doesNotMatch(skipped.out, /escapes: 0\/0/);
    assert.match(skipped.out, /^1 skipped/m);

    const failed = await summary("TAP version 14\nnot ok 1 - attack: sandbox write outside\n1..1\n", 1);
    assert.equal(failed.code, 1);
    assert.match(failed.out, /^escapes: 1\/1$/m);
    assert.match(failed.out, /^0 passed, 1 failed$/m);
  },
});
