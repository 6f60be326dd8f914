/**
 * The handlers a connection calls back into: what the MCP client knows of the code that uses it.
 *
 * Owns the shape of that contract and nothing else: the kinds of callback a server can have, a
 * handler as a plain JavaScript function (arguments in, results out, asynchronous), and the
 * lookup a connection makes at delivery time. The client neither stores nor frees handlers: a
 * face (the Lua one in `src/host/mcp.ts`) keeps them per server name, so that one set before a
 * connect, or kept across a reconnect, is the one called.
 *
 * Invariant: a handler that can no longer run (its run ended) rejects with `HandlerGone`, which the
 * connection logs at debug level instead of warning about it.
 */

/** The kinds of callback a server can have. */
export type HandlerKind =
  | "progress"
  | "log"
  | "resource_update"
  | "resources_list_changed"
  | "tools_list_changed"
  | "prompts_list_changed"
  | "sampling"
  | "elicitation"
  | "roots";

/** One callback: resolves with its results, rejects with its failure. */
export type Handler = (args: unknown[]) => Promise<unknown[]>;

/** The handlers of one server name, looked up when a message needs one. */
export interface ServerHandlers {
  get(kind: HandlerKind): Handler | undefined;
}

/** The rejection of a handler whose owner is gone (the run ended before it could run). */
export class HandlerGone extends Error {
  constructor(message = "the handler's run has ended") {
    super(message);
    this.name = "HandlerGone";
  }
}
