/**
 * The package manifest (`deno.json`) agrees with the code: its `version` is `VERSION`
 * (src/version.ts, what `--version` prints), so the two cannot diverge unnoticed, and its
 * export map names the entries the README documents.
 */
import assert from "node:assert/strict";
import { VERSION } from "../../src/version.ts";

const manifest = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url))) as {
  name: string;
  version: string;
  exports: Record<string, string>;
};

Deno.test("package: deno.json's version is src/version.ts's VERSION", () => {
  assert.equal(manifest.version, VERSION);
});

Deno.test("package: the export map has the stable, cli and unstable-engine entries", () => {
  assert.equal(manifest.name, "@agent-block/agent-block");
  assert.deepEqual(manifest.exports, {
    ".": "./mod.ts",
    "./cli": "./cli.ts",
    "./unstable-engine": "./unstable_engine.ts",
  });
});
