/**
 * log.*: one record per call on stderr with the level and the script name, filtered by
 * AGENT_BLOCK_LOG (default info); nothing on stdout.
 */
import assert from "node:assert/strict";
import { runLua, testEnv } from "../helpers.ts";

const SCRIPT = `log.debug("d") log.info("i", 1, { k = true }) log.warn("w") log.error("e") return "done"`;

/** SCRIPT run with `AGENT_BLOCK_LOG=level` in its environment (unset when undefined). */
function withLevel(level: string | undefined) {
  return runLua(SCRIPT, {
    name: "blk.lua",
    env: testEnv(level === undefined ? {} : { AGENT_BLOCK_LOG: level }),
  });
}

Deno.test("log.*: stderr only, level and script name, default level info", async () => {
  const r = await withLevel(undefined);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, '[info] blk.lua: i 1 {"k":true}\n[warn] blk.lua: w\n[error] blk.lua: e\n');
});

Deno.test("log.*: a message with line breaks stays one line", async () => {
  const r = await runLua(`log.warn("first\\nsecond\\r\\nthird")`, { name: "blk.lua" });
  assert.equal(r.stderr, "[warn] blk.lua: first\\nsecond\\nthird\n");
});

Deno.test("log.*: AGENT_BLOCK_LOG filters (debug shows all, error only errors, off nothing)", async () => {
  assert.equal((await withLevel("debug")).stderr.split("\n")[0], "[debug] blk.lua: d");
  assert.equal((await withLevel("error")).stderr, "[error] blk.lua: e\n");
  assert.equal((await withLevel("off")).stderr, "");
});
