/**
 * log.*: one record per call on stderr with the level and the script name, filtered by
 * AGENT_BLOCK_LOG (default info); nothing on stdout.
 */
import assert from "node:assert/strict";
import { runLua } from "../helpers.ts";

const SCRIPT = `log.debug("d") log.info("i", 1, { k = true }) log.warn("w") log.error("e") return "done"`;

async function withLevel(level: string | undefined) {
  const saved = Deno.env.get("AGENT_BLOCK_LOG");
  if (level === undefined) Deno.env.delete("AGENT_BLOCK_LOG");
  else Deno.env.set("AGENT_BLOCK_LOG", level);
  try {
    return await runLua(SCRIPT, { name: "blk.lua" });
  } finally {
    if (saved === undefined) Deno.env.delete("AGENT_BLOCK_LOG");
    else Deno.env.set("AGENT_BLOCK_LOG", saved);
  }
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
