/**
 * Runs every Lua spec (every `*_spec.lua` below `embedded/` and `tests/lua/`) as one Deno
 * test per file, through the same `runSpecFile` the `agent-block test` command uses. A spec's
 * logs (warnings its expected failures produce) are shown only when the file fails.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { findSpecs, runSpecFile } from "../src/cli/test_command.ts";
import { REPO_ROOT, testEnv } from "./helpers.ts";

const files = [...findSpecs(join(REPO_ROOT, "embedded")), ...findSpecs(join(REPO_ROOT, "tests", "lua"))];

for (const file of files) {
  Deno.test(`lua spec: ${relative(REPO_ROOT, file)}`, async () => {
    const logs: string[] = [];
    const dec = new TextDecoder();
    const r = await runSpecFile(file, REPO_ROOT, {
      env: testEnv(),
      cwd: REPO_ROOT,
      stderr: (b) => logs.push(dec.decode(b)),
    });
    const detail = [...r.output, "stderr:", logs.join("")].join("\n");
    assert.equal(r.failed, 0, `${r.failed} failing spec(s) in ${file}:\n${detail}`);
    assert.ok(r.passed > 0, `no spec ran in ${file}`);
  });
}
