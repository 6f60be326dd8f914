/**
 * The SDK's `SecretKeySource` (seed 002): the mesh identity given as a value, a variable of the
 * run's environment or a file, like the script and prompt sources. Each joins a real NATS server
 * with the key it names (the AgentId says which); a source that gives no valid key is the run's
 * `config` error naming the source, never the key.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir, testEnv } from "../helpers.ts";
import { BlockConfig, runBlock, ScriptSource, type SecretKeySource } from "../../mod.ts";
import { IDS, KEYS } from "./three_blocks.ts";
import { natsMissing, startNats } from "./nats_server.ts";

const missing = natsMissing();
if (missing) console.warn(`skipping the secret-key source mesh test: ${missing}`);

Deno.test({
  name: "SecretKeySource: a value, { env } and { file } each give the run its mesh identity",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const srv = await startNats();
    try {
      const dir = Deno.realPathSync(await tempDir("ab_key_src_"));
      Deno.writeTextFileSync(join(dir, "agent.key"), KEYS.helper + "\n");
      const run = (key: SecretKeySource, env: Record<string, string> = {}) =>
        runBlock(
          BlockConfig.builder(ScriptSource.inline("return mesh.agent_id()", "id.lua"), dir)
            .relay(srv.url)
            .secretKey(key)
            .env(testEnv(env))
            .build(),
        );
      assert.equal((await run(KEYS.server)).value, IDS.server);
      assert.equal((await run({ env: "MY_KEY" }, { MY_KEY: KEYS.client })).value, IDS.client);
      assert.equal((await run({ file: "agent.key" })).value, IDS.helper, "relative to the run's cwd");
    } finally {
      await srv.stop();
    }
  },
});

Deno.test("SecretKeySource: a source giving no valid key is a config error naming it, never the key", async () => {
  const dir = Deno.realPathSync(await tempDir("ab_key_src_"));
  Deno.writeTextFileSync(join(dir, "bad.key"), "z".repeat(64));
  const run = (key: SecretKeySource, env: Record<string, string> = {}) =>
    runBlock(
      BlockConfig.builder(ScriptSource.inline("return 1", "x.lua"), dir).secretKey(key).env(testEnv(env))
        .build(),
    );
  let r = await run({ env: "NOPE" });
  assert.equal(r.error?.code, "config");
  assert.equal(r.error?.message, "secretKey: the variable NOPE is not set");
  r = await run({ file: "missing.key" });
  assert.equal(r.error?.message, "secretKey: cannot read the file missing.key: no such file");
  r = await run({ file: "bad.key" });
  assert.match(r.error!.message, /^secretKey: the file bad\.key does not hold a key: .*non-hex/);
  assert.doesNotMatch(r.error!.message, /zzzz/);
  // checked when the config is built: a value, and the shape of the others
  assert.throws(
    () => BlockConfig.builder(ScriptSource.inline("", "x.lua"), dir).secretKey("abc").build(),
    /got 3/,
  );
  assert.throws(
    () => BlockConfig.builder(ScriptSource.inline("", "x.lua"), dir).secretKey({ env: "" }).build(),
    /secretKey must be 64 hex characters, \{ env: <variable> \} or \{ file: <path> \}/,
  );
});
