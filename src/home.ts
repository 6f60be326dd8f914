/**
 * Well-known locations of agent-block for one run's environment.
 *
 * Owns the resolution of the user's home directory and of `$AGENT_BLOCK_HOME` (default
 * `~/.agent-block`), the per-user state directory holding the user's `blocks/` and `lib/` tiers and
 * the default databases, and the MCP token store inside it (`mcpAuthDir`), the flow runs'
 * locks (`flowLocksDir`) and `serve`'s managers' locks (`serveLocksDir`). Pure functions of an environment view: they never read the process
 * environment, so two runs with different environments resolve different homes.
 */
import { join } from "node:path";

/** What these functions read: a run's `RunEnv` (any `get`-shaped view), or a plain record. */
export type EnvView = { get(name: string): string | undefined } | Readonly<Record<string, string>>;

/** `name` in `env`, whichever shape it has. */
export function envValue(env: EnvView, name: string): string | undefined {
  if (typeof env.get === "function") return (env as { get(name: string): string | undefined }).get(name);
  const rec = env as Readonly<Record<string, string>>;
  return Object.hasOwn(rec, name) ? rec[name] : undefined;
}

/**
 * The user's home directory: HOME, else USERPROFILE, else `fallback` (the edge passes the
 * working directory it resolved; a home is never guessed from the process state here).
 */
export function userHome(env: EnvView, fallback: string): string {
  const v = envValue(env, "HOME") || envValue(env, "USERPROFILE");
  return v ? v : fallback;
}

/** `$AGENT_BLOCK_HOME` when set and not blank, else `<user home>/.agent-block`. */
export function agentBlockHome(env: EnvView, fallback: string): string {
  const v = envValue(env, "AGENT_BLOCK_HOME");
  return v && v.trim() ? v : join(userHome(env, fallback), ".agent-block");
}

/**
 * The MCP token store of a home: `<home>/mcp-auth`, one file per server (`agent-block mcp login`).
 * Here so the sandbox launcher, which keeps it read-only, and the client agree on the place.
 */
export function mcpAuthDir(home: string): string {
  return join(home, "mcp-auth");
}

/**
 * The flow runs' locks of a home: `<home>/flow-locks`, one lock file per live run (`flow run`,
 * `resume`, `rerun`). Here so the sandbox launcher, which keeps it read-only, and the flows agree
 * on the place.
 */
export function flowLocksDir(home: string): string {
  return join(home, "flow-locks");
}

/**
 * `serve`'s managers' locks of a home: `<home>/serve-locks`, one lock file (and its holder's
 * note) per served project. Here so the sandbox launcher, which keeps it read-only, and `serve`
 * agree on the place.
 */
export function serveLocksDir(home: string): string {
  return join(home, "serve-locks");
}
