/**
 * Translation of MCP SDK errors into the words `mcp.*` reports.
 *
 * Owns: recognising the SDK's request timeout, and turning SDK errors (JSON-RPC errors, HTTP
 * statuses, closed connections) into short texts without the SDK's prefixes.
 *
 * Imports the SDK, so only the lazily loaded side of the client (manager, connection, client
 * handlers) and error paths reached after a connect import it; the SDK-free wording is in
 * `errors.ts`.
 */
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";

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
