/**
 * Translation of MCP SDK errors into the client's words.
 *
 * Owns: recognising the SDK's request timeout, an authorization failure (`isAuthFailure`), the
 * JSON-RPC code of a server's error answer, and
 * turning SDK errors (JSON-RPC errors, HTTP statuses, closed connections) into short texts
 * without the SDK's prefixes.
 *
 * Imports the SDK, so only the lazily loaded side of the client (manager, connection, client
 * handlers) and error paths reached after a connect import it; the SDK-free part is `errors.ts`.
 */
import {
  AuthorizationServerMismatchError,
  InsufficientScopeError,
  IssuerMismatchError,
  OAuthError,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { McpAuthError } from "./oauth/store.ts";

/** True when `e` is the SDK's request timeout. */
export function isTimeout(e: unknown): boolean {
  return e instanceof SdkError && e.code === SdkErrorCode.RequestTimeout;
}

/**
 * Key of the `data` of the error answer the HTTP transport makes up for a request whose stream
 * ended before the server answered (`http_transport.ts`): a local failure, not the server's.
 */
export const LOST_ANSWER = "agent-block/lost-answer";

/** True when `e` is that made-up answer: the connection dropped before the server answered. */
export function isLostAnswer(e: unknown): boolean {
  return e instanceof ProtocolError &&
    (e.data as Record<string, unknown> | undefined)?.[LOST_ANSWER] === true;
}

/** The JSON-RPC code of a server's error answer, when `e` is one. */
export function wireCode(e: unknown): number | undefined {
  if (isLostAnswer(e)) return undefined;
  return e instanceof ProtocolError && typeof e.code === "number" ? e.code : undefined;
}

/**
 * The text of an SDK (or other) error without the SDK's prefixes, enough to tell a script what
 * went wrong: JSON-RPC code and message, HTTP status, or the plain message.
 */
export function errorText(e: unknown): string {
  if (isLostAnswer(e)) return stripPrefix((e as Error).message);
  if (e instanceof ProtocolError) return `MCP error ${e.code}: ${stripPrefix(e.message)}`;
  if (e instanceof OAuthError) return `OAuth ${e.code}: ${stripPrefix(e.message)}`;
  if (e instanceof SdkHttpError) {
    return `HTTP ${e.status ?? ""} ${stripPrefix(e.message)}`.replace(/\s+/g, " ");
  }
  if (e instanceof Error) return stripPrefix(e.message);
  return String(e);
}

function stripPrefix(m: string): string {
  return m.replace(/^MCP error -?\d+: /, "");
}

/**
 * True when `e` (or an error it was caused by) is an authorization failure: ours (`McpAuthError`),
 * the SDK's OAuth errors, or an HTTP 401/403 from the server.
 */
export function isAuthFailure(e: unknown): boolean {
  for (let c = e, depth = 0; c !== undefined && c !== null && depth < 5; depth++) {
    if (
      c instanceof McpAuthError || c instanceof UnauthorizedError || c instanceof OAuthError ||
      c instanceof InsufficientScopeError || c instanceof IssuerMismatchError ||
      c instanceof AuthorizationServerMismatchError
    ) return true;
    if (c instanceof SdkHttpError && (c.status === 401 || c.status === 403)) return true;
    c = (c as { cause?: unknown }).cause;
  }
  return false;
}
