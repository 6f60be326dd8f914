/**
 * Error wording of the MCP client, in one place.
 *
 * Owns: the `McpError` type every failure of `mcp.*` is reported as, the translation of SDK
 * errors (timeouts, HTTP statuses, JSON-RPC errors, closed connections) into messages that name
 * the server and the operation, and URL sanitising (no credentials, query or fragment in a
 * message or a log line).
 *
 * Invariant: every message produced here names the server (`'name'`).
 */
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";

/** A failure of an MCP operation, already worded for the script. */
export class McpError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = "McpError";
  }
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

/** True when `e` is the SDK's request timeout. */
export function isTimeout(e: unknown): boolean {
  return e instanceof SdkError && e.code === SdkErrorCode.RequestTimeout;
}

/**
 * The text of an SDK (or other) error without the SDK's prefixes, enough to tell a script what
 * went wrong: JSON-RPC code and message, HTTP status, or the plain message.
 */
export function errorText(e: unknown): string {
  if (e instanceof ProtocolError) return `MCP error ${e.code}: ${stripPrefix(e.message)}`;
  if (e instanceof SdkHttpError) {
    return `HTTP ${e.status ?? ""} ${stripPrefix(e.message)}`.replace(/\s+/g, " ");
  }
  if (e instanceof Error) return stripPrefix(e.message);
  return String(e);
}

function stripPrefix(m: string): string {
  return m.replace(/^MCP error -?\d+: /, "");
}
