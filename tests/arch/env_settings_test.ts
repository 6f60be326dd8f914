/**
 * The `AGENT_BLOCK_*` variables are parsed at the edge only (issue #28 §2).
 *
 * - Rule: below the edge, no module names an `AGENT_BLOCK_*` variable as a lookup key: a string
 *   literal that is exactly such a name (`env.get("AGENT_BLOCK_LOG")`, `const V =
 *   "AGENT_BLOCK_X"`), one that builds such a name (`` `AGENT_BLOCK_${kind}_PATH` ``), or a
 *   property access (`env.AGENT_BLOCK_SANDBOX`). Text that merely mentions a variable (an error
 *   message, a doc comment) is not a lookup and is allowed.
 * - The edge: `cli.ts`, the package entries (`mod.ts`, `unstable_*.ts`), `src/cli/**`, and the
 *   edge's one parser `src/config/env_settings.ts` (the layering test keeps it imported by the
 *   edge only). `src/docs/**` (the Lua API reference, text for users) is not code that reads.
 * - `CROSS_EXEC`: modules whose variables are a channel into ANOTHER process — written into a
 *   child's environment for the child to read at ITS edge, or read at the entry of a process
 *   stage across exec. Each entry says why. `NOT_VARIABLES`: names of this form that are not
 *   variables. There is no list of modules left to move: the sandbox family, the last one, takes
 *   typed `SandboxSettings` from the edge (`sandboxSettingsFromEnv`).
 *
 * The source text is scanned with comments blanked out (line numbers kept). Each failure lists
 * every `file:line`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, tsFiles } from "../helpers.ts";
import { blankComments } from "./scan.ts";

/**
 * Modules below the edge allowed to name `AGENT_BLOCK_*` variables, because the variable is a
 * channel across a process boundary rather than a setting of the run they are part of.
 */
export const CROSS_EXEC: Readonly<Record<string, string>> = {
  "src/correlation.ts":
    "names the correlation ids the in-process runner writes into a run's environment, so " +
    "an agent-block process the run starts inherits them and reads them at its own edge (settingsFromEnv)",
  "src/proc/tags.ts":
    "AGENT_BLOCK_PROC_TAGS is the mark written into every child's environment and read back " +
    "from /proc/<pid>/environ of other processes (and from the parent's environment, to stack): not a setting",
  "src/proc/child_env.ts": "HOST_CREDENTIALS names the variables never passed into a child process " +
    "(a filter on what crosses the exec); the policy itself comes typed from the edge",
  "src/sandbox/net_bridge.ts": "names the socket and token variables the sandbox launcher writes into the " +
    "environment of the stage it execs (the confined runtime, or the launcher again after the user-namespace " +
    "hop), read at that stage's entry (cli/sandbox_launch.ts: startNetBridge, launchRun's handedProxy), and " +
    "the proxy's configuration variable, written into the proxy's environment and read at its entry " +
    "(cli/proxy_stage.ts)",
  "src/clients/mesh/seen_remote.ts":
    "names the socket and token variables the sandbox launcher writes into the " +
    "confined runtime's environment for its replay memory, read at that stage's entry (cli/sandbox_launch.ts: " +
    "connectSeenStore)",
};

/** Names of this form that are not environment variables (JetStream stream and bucket names). */
export const NOT_VARIABLES: readonly string[] = [
  "AGENT_BLOCK_RUNS",
  "AGENT_BLOCK_RUN_STATE",
  "AGENT_BLOCK_RUN_RESULTS",
  "AGENT_BLOCK_RUN_SLOTS",
];

/** The edge: what may parse the variables. */
export const isEdge = (f: string): boolean =>
  f === "cli.ts" || f === "mod.ts" || /^unstable_[a-z_]+\.ts$/.test(f) || f.startsWith("src/cli/") ||
  f === "src/config/env_settings.ts";

/** A lookup of an `AGENT_BLOCK_*` variable on a line (comments blanked). */
export const LOOKUP = [
  /(["'`])AGENT_BLOCK_[A-Z0-9_]+\1/, // the name as a whole literal
  /(["'`])AGENT_BLOCK_[A-Z0-9_]*\$\{/, // a name built in a template
  /\.\s*AGENT_BLOCK_[A-Z0-9_]+\b/, // env.AGENT_BLOCK_X
];

/** Lines of `source` (1-based) where a lookup appears outside comments. */
export function lookups(source: string): { line: number; text: string }[] {
  const original = source.split("\n");
  return blankComments(source).split("\n").flatMap((l, i) => {
    const line = NOT_VARIABLES.reduce((t, n) => t.replaceAll(`"${n}"`, '""'), l);
    return LOOKUP.some((p) => p.test(line)) ? [{ line: i + 1, text: original[i].trim() }] : [];
  });
}

/** Every lookup below the edge in the tree at `root`, as `file:line: text`. */
export function violations(root: string, files: readonly string[]): string[] {
  return files
    .filter((f) =>
      !isEdge(f) && !f.startsWith("src/docs/") && !(f in CROSS_EXEC) &&
      !f.endsWith("_test.ts")
    )
    .flatMap((f) => lookups(Deno.readTextFileSync(join(root, f))).map((h) => `${f}:${h.line}: ${h.text}`));
}

Deno.test("AGENT_BLOCK_* variables are parsed at the edge only (src/cli/**, the package entries, config/env_settings.ts)", () => {
  const bad = violations(REPO_ROOT, tsFiles("src"));
  assert.ok(
    bad.length === 0,
    "rule broken: below the edge a run's settings come typed (RunSettings, RunRequest), never from an " +
      "AGENT_BLOCK_* variable; parse it in src/config/env_settings.ts and pass the value down, or, for a " +
      `channel into another process, add the module to CROSS_EXEC with the reason. ${bad.length} lookup(s):\n` +
      bad.map((b) => `  ${b}`).join("\n"),
  );
});

Deno.test("every allowed module still names a variable (the list only shrinks)", () => {
  const stale = Object.keys(CROSS_EXEC).filter((f) =>
    lookups(Deno.readTextFileSync(join(REPO_ROOT, f))).length === 0
  );
  assert.deepEqual(stale, [], "these no longer look a variable up: remove them from CROSS_EXEC");
});

Deno.test("the scan finds lookups and ignores messages and comments", () => {
  const src = [
    '/** Reads env.get("AGENT_BLOCK_LOG") at the edge. */',
    'const a = env.get("AGENT_BLOCK_LOG"); // a lookup',
    'throw new Error(`AGENT_BLOCK_KNL_COMMIT_MS must be a whole number, got "${raw}"`);',
    "const b = env.AGENT_BLOCK_SANDBOX;",
    "const c = `AGENT_BLOCK_${kind}_PATH`;",
    "// env.get('AGENT_BLOCK_HOME')",
    "const d = 'AGENT_BLOCK_UNSEAL=1 downgrades this';",
    "export const V = 'AGENT_BLOCK_NATS_TOKEN';",
    'export const RUNS_STREAM = "AGENT_BLOCK_RUNS";',
  ].join("\n");
  assert.deepEqual(lookups(src).map((h) => h.line), [2, 4, 5, 8]);
  assert.equal(isEdge("src/cli/run_command.ts"), true);
  assert.equal(isEdge("src/config/settings.ts"), false);
  assert.equal(isEdge("unstable_flows.ts"), true);
});
