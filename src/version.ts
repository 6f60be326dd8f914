/**
 * The version of agent-block, as `--version` prints it and the MCP server announces it, and the
 * commit a release binary was built from.
 *
 * Owns reading the build stamp, `src/build_stamp.json`. In git it is always unstamped
 * (`{"version": null, "commit": null}`; tests/compile_test.ts holds it so): a run from a checkout
 * is version `BASE_VERSION` (deno.json's) with no commit. `deno task compile --release-version X
 * --commit SHA` (tools/compile.ts; the release workflow passes the tag and `GITHUB_SHA`) writes
 * the stamp just for the compile and puts the unstamped file back, so the values travel inside the
 * binary as part of its module graph: no environment variable, no file read at run time, and no
 * build output in git.
 *
 * @module
 */
import stampJson from "./build_stamp.json" with { type: "json" };

/** What a build stamp holds: both null in git, both set in a release binary. */
export interface BuildStamp {
  /** The release's version (the tag without its `v`), or null from a checkout. */
  version: string | null;
  /** The full commit hash the release was built from, or null from a checkout. */
  commit: string | null;
}

/** The stamp this program was built with. */
export const BUILD_STAMP: BuildStamp = stampJson as BuildStamp;

/** The version of the source (deno.json's `version`; tests/unit/package_test.ts holds them equal). */
export const BASE_VERSION = "0.1.0";

/**
 * The version of agent-block: a release's from its tag, else the source's.
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
export const VERSION: string = BUILD_STAMP.version ?? BASE_VERSION;

/** The commit a release binary was built from, or undefined when running from a checkout. */
export const COMMIT: string | undefined = BUILD_STAMP.commit ?? undefined;
