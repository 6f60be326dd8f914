/**
 * The version of agent-block, as `--version` prints it and the MCP server announces it.
 *
 * @example Stamp a run with the runtime's version
 * ```ts
 * import { BlockConfig, ScriptSource, VERSION } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * assert.match(VERSION, /^\d+\.\d+\.\d+/);
 * const config = BlockConfig.builder(ScriptSource.inline("return 1", "one.lua"), ".")
 *   .label("agent_block_version", VERSION)
 *   .build();
 * assert.equal(config.labels.agent_block_version, VERSION);
 * ```
 */
export const VERSION = "0.1.0";
