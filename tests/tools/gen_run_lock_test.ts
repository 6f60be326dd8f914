/**
 * `tools/gen_run_lock.ts`: a run's lockfile is the closure of the import map's packages, without
 * the optional peers Deno links only because the full lockfile holds them (the tests' express
 * for `@a2a-js/sdk`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runLock } from "../../tools/gen_run_lock.ts";
import { REPO_ROOT } from "../helpers.ts";

Deno.test("gen_run_lock: the closure of the workspace's packages, optional peers and test-only packages left out", () => {
  const lock = {
    version: "5",
    specifiers: { "npm:sdk@1.0.0": "1.0.0_web@5.0.0", "npm:web@5.0.0": "5.0.0", "npm:tool@2.0.0": "2.0.0" },
    npm: {
      "sdk@1.0.0_web@5.0.0": { integrity: "a", dependencies: ["web", "jose"], optionalPeers: ["web"] },
      "jose@6.0.0": { integrity: "b" },
      "web@5.0.0": { integrity: "c", dependencies: ["body"] },
      "body@2.0.0": { integrity: "d" },
      "tool@2.0.0": { integrity: "e", dependencies: ["web"] },
    },
    workspace: { dependencies: ["npm:sdk@1.0.0"] },
  };
  const run = runLock(lock);
  assert.deepEqual(run.specifiers, { "npm:sdk@1.0.0": "1.0.0_web@5.0.0" });
  assert.deepEqual(run.npm, {
    "sdk@1.0.0_web@5.0.0": { integrity: "a", dependencies: ["jose"] },
    "jose@6.0.0": { integrity: "b" },
  });
  // an optional peer the import map names is a run's package like any other
  const named = runLock({ ...lock, workspace: { dependencies: ["npm:sdk@1.0.0", "npm:web@5.0.0"] } });
  assert.deepEqual(Object.keys(named.npm ?? {}).sort(), [
    "body@2.0.0",
    "jose@6.0.0",
    "sdk@1.0.0_web@5.0.0",
    "web@5.0.0",
  ]);
});

Deno.test("gen_run_lock: deno.run.lock holds no express (the A2A SDK's optional peer, the tests' reference agent's)", () => {
  const run = JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.run.lock")));
  assert.ok(Object.keys(run.npm).some((k) => k.startsWith("@a2a-js/sdk@")));
  assert.deepEqual(Object.keys(run.npm).filter((k) => k.startsWith("express@")), []);
});
