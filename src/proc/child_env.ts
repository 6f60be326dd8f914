/**
 * The environment a child process gets: its run's, minus the host's credentials.
 *
 * Owns credential hygiene for every child the runtime starts (`sh.exec`, `io.popen`,
 * `os.execute`, MCP servers, nested runs). The three credential variables of the host are always
 * removed (their names are listed here: a filter on what crosses into a child); the run's
 * policy tightens that (`ChildEnvPolicy`: the edge reads it from `AGENT_BLOCK_CHILD_ENV` with
 * `parseChildEnvPolicy` and hands it down typed, `ProcessGroupsOptions.childEnv`):
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

/** What a child inherits of its run's environment (besides the host's credentials, never). */
export type ChildEnvPolicy =
  | { kind: "inherit" }
  | { kind: "strip-secrets" }
  | { kind: "allowlist"; names: string[] };

/**
 * The policy a value of `AGENT_BLOCK_CHILD_ENV` names (unset or blank: `inherit`).
 * @throws ChildEnvPolicyError for anything else
 */
export function parseChildEnvPolicy(value: string | undefined): ChildEnvPolicy {
  const p = (value ?? "").trim();
  if (p === "" || p === "inherit") return { kind: "inherit" };
  if (p === "strip-secrets") return { kind: "strip-secrets" };
  if (p.startsWith("allowlist:")) {
    return { kind: "allowlist", names: p.slice(10).split(",").map((s) => s.trim()).filter(Boolean) };
  }
  throw new ChildEnvPolicyError(p);
}

/**
 * Builds the complete environment for a child.
 * @param parent the run's environment (`run.env.toObject()`: base and overlay merged)
 * @param extra variables set explicitly for this child, applied last
 * @param policy the run's policy (default `inherit`)
 */
export function childEnv(
  parent: Record<string, string>,
  extra: Record<string, string> = {},
  policy: ChildEnvPolicy = { kind: "inherit" },
): Record<string, string> {
  let env: Record<string, string>;
  if (policy.kind === "inherit") {
    env = { ...parent };
  } else if (policy.kind === "strip-secrets") {
    env = {};
    for (const [k, v] of Object.entries(parent)) if (!SECRET_SUFFIX.test(k)) env[k] = v;
  } else {
    const names = new Set([...ALWAYS_ALLOWED, ...policy.names]);
    env = {};
    for (const [k, v] of Object.entries(parent)) if (names.has(k)) env[k] = v;
  }
  for (const k of HOST_CREDENTIALS) delete env[k];
  return Object.assign(env, extra);
}
