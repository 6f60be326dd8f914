/**
 * Well-known locations of agent-block on this machine.
 *
 * Owns the resolution of `$AGENT_BLOCK_HOME` (default `~/.agent-block`), the per-user state
 * directory holding the user's `blocks/` and `lib/` tiers and the default databases.
 */
import { join } from "node:path";

/** The user's home directory (HOME, else USERPROFILE, else the working directory). */
export function userHome(): string {
  return Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? Deno.cwd();
}

/** `$AGENT_BLOCK_HOME`, or `~/.agent-block`. */
export function agentBlockHome(): string {
  const v = Deno.env.get("AGENT_BLOCK_HOME");
  return v && v.trim() ? v : join(userHome(), ".agent-block");
}
