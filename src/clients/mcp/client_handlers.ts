/**
 * Server→client requests answered by the client's handlers: `sampling/createMessage`,
 * `elicitation/create` and `roots/list`.
 *
 * Owns the translation between those requests and the handlers (`handlers.ts`; the Lua face
 * registers them with `mcp.set_*_handler`), in both eras: the SDK routes 2025-era push requests
 * and 2026-07-28 `input_required` rounds to the same registered handler, so one serves both.
 *
 * Contract with the handler (seed README):
 * - sampling: `handler(params, server_name)` → `{ model, stop_reason, role, content }`;
 *   `content` is a string (one text block) or a content table. No handler → method not found.
 * - elicitation (form mode only): `fn(server_name, message, schema_json)` →
 *   `{ action = "accept", content = {...} }` or `{ action = "decline" | "cancel" }`; a field an
 *   accepted `content` leaves out gets the schema's `default` (SEP-1034: the connection declares
 *   `elicitation.form.applyDefaults`, and the SDK fills them in after this answer, in both eras).
 *   URL-mode requests are declined without reaching the handler; no handler → decline.
 * - roots: `fn(server_name)` → `{ { uri = ..., name = ... }, ... }`. No handler → method not found.
 * A handler that raises, or returns the wrong shape, is logged at warn and answered with an
 * internal error naming the handler — the script never crashes because of it.
 */
import {
  type Client,
  type CreateMessageResult,
  type ElicitResult,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/client";
import type { Logger } from "../../obs/log.ts";
import type { Handler, ServerHandlers } from "./handlers.ts";
import { errorText } from "./sdk_errors.ts";

/**
 * Registers the three handlers on `client` for server `name`. `whileHandling` runs a handler with
 * the connection's request deadlines paused.
 */
export function installClientHandlers(
  client: Client,
  name: string,
  callbacks: () => ServerHandlers | undefined,
  log: Logger,
  whileHandling: <T>(work: () => Promise<T>) => Promise<T>,
): void {
  /** Runs a handler; a failure or a bad shape becomes a logged internal error. */
  const run = async <T>(what: string, fn: Handler, args: unknown[], shape: (v: unknown) => T) => {
    try {
      const [value] = await whileHandling(() => fn(args));
      return shape(value);
    } catch (e) {
      const msg = `${what} handler for server '${name}' failed: ${errorText(e)}`;
      log.warn(`mcp: ${msg}`);
      throw new ProtocolError(ProtocolErrorCode.InternalError, msg);
    }
  };

  client.setRequestHandler("sampling/createMessage", (req) => {
    const fn = callbacks()?.get("sampling");
    if (!fn) {
      throw new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        `no sampling handler is set for server '${name}' (mcp.set_sampling_handler)`,
      );
    }
    return run("sampling", fn, [req.params, name], toCreateMessageResult);
  });

  client.setRequestHandler("elicitation/create", async (req) => {
    const params = req.params as Record<string, unknown>;
    if (params.mode === "url") {
      log.info(`mcp: declined a URL-mode elicitation from server '${name}'`);
      return { action: "decline" } as ElicitResult;
    }
    const fn = callbacks()?.get("elicitation");
    if (!fn) return { action: "decline" } as ElicitResult;
    const schema = JSON.stringify(params.requestedSchema ?? {});
    return await run("elicitation", fn, [name, String(params.message ?? ""), schema], toElicitResult);
  });

  client.setRequestHandler("roots/list", () => {
    const fn = callbacks()?.get("roots");
    if (!fn) {
      throw new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        `no roots handler is set for server '${name}' (mcp.set_roots_handler)`,
      );
    }
    return run("roots", fn, [name], toRoots);
  });
}

function isTable(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A sampling handler's return value as a `CreateMessageResult`. */
export function toCreateMessageResult(v: unknown): CreateMessageResult {
  if (!isTable(v)) throw new Error(`must return a table { model, role, content }, got ${describe(v)}`);
  const content = typeof v.content === "string"
    ? { type: "text" as const, text: v.content }
    : isTable(v.content) || Array.isArray(v.content)
    ? v.content
    : undefined;
  if (content === undefined) {
    throw new Error(`field 'content' must be a string or a table, got ${describe(v.content)}`);
  }
  const result: Record<string, unknown> = {
    model: typeof v.model === "string" ? v.model : "unknown",
    role: v.role === "user" ? "user" : "assistant",
    content,
  };
  const stop = v.stop_reason ?? v.stopReason;
  if (typeof stop === "string") result.stopReason = stop;
  return result as unknown as CreateMessageResult;
}

/** An elicitation handler's return value as an `ElicitResult`. */
export function toElicitResult(v: unknown): ElicitResult {
  if (!isTable(v)) throw new Error(`must return a table { action, content? }, got ${describe(v)}`);
  const action = v.action;
  if (action === "accept") {
    if (!isTable(v.content)) {
      throw new Error(`action 'accept' needs a 'content' table, got ${describe(v.content)}`);
    }
    return { action, content: v.content as ElicitResult["content"] };
  }
  if (action === "decline" || action === "cancel") {
    if (v.content !== undefined) throw new Error(`action '${action}' takes no 'content'`);
    return { action };
  }
  throw new Error(`field 'action' must be "accept", "decline" or "cancel", got ${describe(action)}`);
}

/** A roots handler's return value as a `ListRootsResult`. */
export function toRoots(v: unknown): { roots: { uri: string; name?: string }[] } {
  const list = Array.isArray(v) ? v : isTable(v) && Object.keys(v).length === 0 ? [] : undefined;
  if (!list) throw new Error(`must return an array of { uri, name? }, got ${describe(v)}`);
  return {
    roots: list.map((r, i) => {
      if (!isTable(r) || typeof r.uri !== "string") throw new Error(`root ${i + 1} needs a string 'uri'`);
      return typeof r.name === "string" ? { uri: r.uri, name: r.name } : { uri: r.uri };
    }),
  };
}

function describe(v: unknown): string {
  if (v === undefined) return "nil";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "a table" : `${typeof v} ${JSON.stringify(v)}`;
}
