/**
 * Error wording of the MCP client that needs no SDK: the `McpError` type, URL sanitising and
 * the shared message shapes.
 *
 * Owns: the `McpError` type every failure of `mcp.*` is reported as, the "no server named" and
 * "run is ending" messages (raised both before and after the SDK is loaded), URL sanitising (no
 * credentials, query or fragment in a message or a log line) and duration formatting.
 *
 * Invariant: this module imports nothing from the MCP SDK, so `mcp.*` can report its errors
 * while no server has been connected (the SDK loads on the first connect, see `src/host/mcp.ts`).
 * The translation of SDK errors lives in `sdk_errors.ts`. Every message produced here names the
 * server (`'name'`).
 */

/** A failure of an MCP operation, already worded for the script. */
export class McpError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = "McpError";
  }
}

/** `fn: no server named 'name'` (code `unknown`). */
export function unknownServer(fn: string, name: string): McpError {
  return new McpError(`${fn}: no server named '${name}'`, "unknown");
}

/** A connect attempted after the run's MCP cleanup started. */
export function runEnding(fn: string, name: string): McpError {
  return new McpError(`${fn}: the run is ending; cannot connect server '${name}'`);
}

/** `https://user:pw@host/p?q#f` → `https://host/p`; anything unparsable is cut at the first `?`/`#`. */
export function sanitizeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return url.replace(/[?#].*$/, "").replace(/\/\/[^/@]*@/, "//");
  }
}

/** Formats a duration in ms the way messages show it (`30 s`, `0.5 s`). */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(2))} s`;
}
