/**
 * The package manifest (`deno.json`) agrees with the code: its `version` is `BASE_VERSION`
 * (src/version.ts, what `--version` prints from a checkout), so the two cannot diverge unnoticed, and its
 * export map names the entries the README documents.
 */
import assert from "node:assert/strict";
import { BASE_VERSION } from "../../src/version.ts";

const manifest = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url))) as {
  name: string;
  version: string;
  exports: Record<string, string>;
};

Deno.test("package: deno.json's version is src/version.ts's BASE_VERSION", () => {
  assert.equal(manifest.version, BASE_VERSION);
});

Deno.test("package: the export map has the stable, cli, unstable-engine and unstable-flows entries", () => {
  assert.equal(manifest.name, "@agent-block/agent-block");
  assert.deepEqual(manifest.exports, {
    ".": "./mod.ts",
    "./cli": "./cli.ts",
    "./unstable-engine": "./unstable_engine.ts",
    "./unstable-flows": "./unstable_flows.ts",
  });
});
