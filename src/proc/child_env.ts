/**
 * The environment a child process gets: its run's, minus the host's credentials.
 *
 * Owns credential hygiene for every child the runtime starts (`sh.exec`, `io.popen`,
 * `os.execute`, MCP servers, nested runs). The three credential variables of the host are always
 * removed; the run's `AGENT_BLOCK_CHILD_ENV` tightens that:
 * - unset or `inherit`: everything else is inherited;
 * - `strip-secrets`: also drops names ending in `_KEY`, `_TOKEN`, `_SECRET` or `_PASSWORD`;
 * - `allowlist:NAME,NAME`: only those names plus PATH, HOME, USER, LANG, TERM and TMPDIR.
 * Explicit per-child variables (`opts.env`) are applied after the removal: they are the one way
 * to hand a child a key on purpose. The child's process tags (`AGENT_BLOCK_PROC_TAGS`, `tags.ts`)
 * are not this module's: `group.ts` sets them after everything here, whatever the policy.
 */

/** Variables the host itself uses as credentials; no child ever inherits them. */
export const HOST_CREDENTIALS = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AGENT_BLOCK_MESH_SECRET_KEY"];

const ALWAYS_ALLOWED = ["PATH", "HOME", "USER", "LANG", "TERM", "TMPDIR"];
/** Names `strip-secrets` drops: ending in `_KEY`, `_TOKEN`, `_SECRET` or `_PASSWORD`. */
export const SECRET_SUFFIX: RegExp = /_(KEY|TOKEN|SECRET|PASSWORD)$/i;

/** A bad `AGENT_BLOCK_CHILD_ENV` value. */
export class ChildEnvPolicyError extends Error {
  constructor(value: string) {
    super(
      `AGENT_BLOCK_CHILD_ENV must be 'inherit', 'strip-secrets' or 'allowlist:NAME,NAME', got '${value}'`,
    );
    this.name = "ChildEnvPolicyError";
  }
}

/**
 * Builds the complete environment for a child.
 * @param parent the run's environment (`run.env.toObject()`: base and overlay merged)
 * @param extra variables set explicitly for this child, applied last
 * @param policy the value of `AGENT_BLOCK_CHILD_ENV` (defaults to the parent's)
 */
export function childEnv(
  parent: Record<string, string>,
  extra: Record<string, string> = {},
  policy: string | undefined = parent["AGENT_BLOCK_CHILD_ENV"],
): Record<string, string> {
  let env: Record<string, string>;
  const p = (policy ?? "").trim();
  if (p === "" || p === "inherit") {
    env = { ...parent };
  } else if (p === "strip-secrets") {
    env = {};
    for (const [k, v] of Object.entries(parent)) if (!SECRET_SUFFIX.test(k)) env[k] = v;
  } else if (p.startsWith("allowlist:")) {
    const names = new Set([
      ...ALWAYS_ALLOWED,
      ...p.slice(10).split(",").map((s) => s.trim()).filter(Boolean),
    ]);
    env = {};
    for (const [k, v] of Object.entries(parent)) if (names.has(k)) env[k] = v;
  } else {
    throw new ChildEnvPolicyError(p);
  }
  for (const k of HOST_CREDENTIALS) delete env[k];
  return Object.assign(env, extra);
}
