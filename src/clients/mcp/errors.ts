/**
 * Errors of the MCP client that need no SDK: the `McpError` type, URL sanitising and the shared
 * message shapes.
 *
 * Owns: `McpError`, which every failure of the client is reported as — the server's name, the
 * method asked for, a `code` and the cause — the "no server named" and "run is ending" errors
 * (raised both before and after the SDK is loaded), URL sanitising (no credentials, query or
 * fragment in a message or a log line) and duration formatting.
 *
 * Codes: a number is the JSON-RPC error code the server answered (`-32601`, ...); a string is a
 * local code for what happened on this side (`McpLocalCode`: a timeout, a closed connection, ...).
 * The two never mix: a local failure has no number, a server's answer has no local code.
 *
 * Invariants: this module imports nothing from the MCP SDK (the face reports errors while no
 * server has been connected; the SDK loads on the first connect); messages name the server
 * (`'name'`) and never name a function of a language face (`mcp.call` is the face's wording,
 * prefixed by the face).
 */

/** What went wrong on this side, when the server did not answer with a JSON-RPC error. */
export type McpLocalCode =
  /** No connection of that name. */
  | "unknown"
  /** The request (or the handshake) ran out of time. */
  | "timeout"
  /** The connection is closed (server exited, disconnected, protocol violation). */
  | "closed"
  /** The negotiated protocol era has no such method. */
  | "era"
  /** A stdio server closed the connection on the 2026-07-28 probe (retried as 2025-era). */
  | "probe_closed"
  /** The run's MCP cleanup started: no more connections. */
  | "ending"
  /** The request could not be formed (bad URL, arguments of the wrong shape). */
  | "invalid"
  /** Authorization failed (OAuth: no or refused credentials, a scope not granted). */
  | "auth"
  /** Anything else: the transport failed, the SDK refused. */
  | "failed";

/** A failed MCP operation. */
export class McpError extends Error {
  /**
   * @param message what failed, naming the server (no face function name)
   * @param server the server's name ("" when none applies)
   * @param method the MCP method (`tools/call`, `initialize`, ...; "" when none applies)
   * @param code the server's JSON-RPC code (a number) or a local code (a string)
   * @param cause the underlying error, if any
   */
  constructor(
    message: string,
    readonly server: string,
    readonly method: string,
    readonly code: number | McpLocalCode,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = "McpError";
  }

  /** True when the server answered with a JSON-RPC error (`code` is its number). */
  get wire(): boolean {
    return typeof this.code === "number";
  }
}

/** `no server named 'name'` (code `unknown`). */
export function unknownServer(name: string): McpError {
  return new McpError(`no server named '${name}'`, name, "", "unknown");
}

/** A connect attempted after the run's MCP cleanup started (code `ending`). */
export function runEnding(name: string): McpError {
  return new McpError(`the run is ending; cannot connect server '${name}'`, name, "initialize", "ending");
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
