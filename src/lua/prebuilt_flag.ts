/**
 * Whether this process runs the CLI's verified prebuilt bundle (`src/cli/prebuilt.ts`).
 *
 * Owns one process-wide fact, kept on `globalThis` under a registered symbol so that the bundle's
 * copy of the runtime and the sources agree on it. `loadPrebuilt` sets it once it has proved the
 * bundle byte-identical to the sources it was built from; `precompiled.ts` reads it to skip
 * re-hashing the runtime's Lua texts, which the bundle carries together with their bytecode (the
 * bundle generator refuses to build from stale bytecode). Nothing else may set it.
 */

const VERIFIED = Symbol.for("agent-block.prebuilt.verified");
const slot = globalThis as { [VERIFIED]?: true };

/** Records that the running CLI is the verified bundle. */
export function markPrebuiltVerified(): void {
  slot[VERIFIED] = true;
}

/** True when the running CLI is the verified bundle. */
export function isPrebuiltVerified(): boolean {
  return slot[VERIFIED] === true;
}
