/**
 * Well-known locations of agent-block for one run's environment.
 *
 * Owns the resolution of the user's home directory (`userHome`: HOME, else USERPROFILE) and the
 * places inside an agent-block home (the per-user state directory: the user's `blocks/` and
 * `lib/` tiers, the default databases): the MCP token store (`mcpAuthDir`), the flow runs' locks
 * (`flowLocksDir`), `serve`'s managers' locks (`serveLocksDir`) and the mesh's replay memories
 * (`meshSeenDir`; each project's file in it is `seen_ids.ts`'s `meshSeenFile`). Which directory is the home
 * (`$AGENT_BLOCK_HOME`, default `<user home>/.agent-block`) is a setting, read at the edge
 * (`agentBlockHome` in `src/config/env_settings.ts`) and passed down as a path. Pure functions of
 * an environment view or a path: they never read the process environment, so two runs with
 * different environments resolve different homes.
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

/**
 * The mesh's replay memories of a home: `<home>/mesh-seen`, one SQLite file per project
 * (`meshSeenFile` of `src/clients/mesh/seen_ids.ts`, which hashes: loaded only for a mesh run). Here so the sandbox launcher, which keeps it read-only to a confined run and
 * keeps the run's memory itself, and the mesh agree on the place. In the home, not the project:
 * a confined run may rename any directory of its project (a mount covering a file there moves
 * with it), and not `mesh-seen/` itself, which the launcher's mount covers.
 */
export function meshSeenDir(home: string): string {
  return join(home, "mesh-seen");
}
