/**
 * A declared block's answer as an MCP result: what a tool call, a resource read or a prompt get
 * returns to the client.
 *
 * Owns the mapping rules (the block returned a string, or a table the driver passed on as JSON):
 * - tool: a string is one text block. A table with `content` (a list of content blocks: `text`,
 *   `image`, `audio`, `resource`, `resource_link`) is the result as it is (`structuredContent`,
 *   `isError` and `_meta` kept); a string in `content` is a text block. Any other table is
 *   structured content, with its JSON as the text. With an output schema, the structured content
 *   must be there and conform, else the call is an error result saying why. A Lua error is an
 *   error result carrying its text.
 * - resource: a string is the text of one content with the declared MIME type; a table with
 *   `contents` is passed on (each content's `uri` and `mimeType` filled in when absent); a table
 *   with `text` or `blob` (base64) is one content; any other table is its JSON.
 * - prompt: a string is one user message; a table with `messages` (or a list) is the messages, a
 *   string content becoming a text block and a string message a user message; `description` kept.
 *
 * Invariant: every result this builds is shaped as the protocol's schema wants it (the SDK
 * checks results it sends); what a block cannot turn into one is an error naming the field.
 */
import type { CallToolResult, GetPromptResult, ReadResourceResult } from "@modelcontextprotocol/server";
import type { PromptDeclaration, ResourceDeclaration, ToolDeclaration } from "../blocks/declaration.ts";
import { schemaProblem } from "./schema_check.ts";

/** Marks a driver's JSON-encoded table result (no text result starts with ESC and this tag). */
export const RESULT_MARK = "\u001bagent-block/mcp-result\n";

type Answer = ({ ok: true; value: unknown } | { ok: false; message: string }) & { session?: string };

/** The `_meta` key of a declared tool's result naming the call's kernel session. */
export const SESSION_META = "agent-block/session";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

function contentBlock(c: unknown): CallToolResult["content"][number] {
  if (typeof c === "string") return { type: "text", text: c };
  return c as CallToolResult["content"][number];
}

/** A tool call's result. */
export function toolResultOf(decl: ToolDeclaration, answer: Answer): CallToolResult {
  const r = toolResultBody(decl, answer);
  if (answer.session !== undefined) r._meta = { ...r._meta, [SESSION_META]: answer.session };
  return r;
}

function toolResultBody(decl: ToolDeclaration, answer: Answer): CallToolResult {
  if (!answer.ok) return errorResult(answer.message);
  const v = answer.value;
  let result: CallToolResult;
  if (typeof v === "string") result = { content: [{ type: "text", text: v }] };
  else if (isObject(v) && Array.isArray(v.content)) {
    result = { ...v, content: v.content.map(contentBlock) } as CallToolResult;
  } else if (isObject(v) && isObject(v.content) && Object.keys(v.content).length === 0) {
    result = { ...v, content: [] } as CallToolResult; // an empty Lua table encodes as an object
  } else {
    result = { content: [{ type: "text", text: JSON.stringify(v) }] };
    if (isObject(v)) result.structuredContent = v;
  }
  if (decl.outputSchema && !result.isError) {
    if (!isObject(result.structuredContent)) {
      return errorResult(
        `tool ${decl.name} declares an output schema but its result has no structured content`,
      );
    }
    const problem = schemaProblem(decl.outputSchema, result.structuredContent);
    if (problem) {
      return errorResult(`tool ${decl.name}: its result does not match its output schema: ${problem}`);
    }
  }
  return result;
}

/** A resource read's result. */
export function resourceResultOf(decl: ResourceDeclaration, uri: string, v: unknown): ReadResourceResult {
  const fill = (c: Record<string, unknown>) => ({ uri, mimeType: decl.mimeType, ...c });
  if (typeof v === "string") return { contents: [{ uri, mimeType: decl.mimeType, text: v }] };
  if (isObject(v) && Array.isArray(v.contents)) {
    return {
      ...v,
      contents: v.contents.map((c) => fill(isObject(c) ? c : { text: String(c) })),
    } as ReadResourceResult;
  }
  if (isObject(v) && (typeof v.text === "string" || typeof v.blob === "string")) {
    return { contents: [fill(v)] } as ReadResourceResult;
  }
  return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(v) }] };
}

/** A prompt get's result. */
export function promptResultOf(decl: PromptDeclaration, v: unknown): GetPromptResult {
  const message = (m: unknown) => {
    if (typeof m === "string") return { role: "user", content: { type: "text", text: m } };
    if (isObject(m) && typeof m.content === "string") {
      return { ...m, content: { type: "text", text: m.content } };
    }
    return m;
  };
  let out: Record<string, unknown>;
  if (typeof v === "string") out = { messages: [message(v)] };
  else if (Array.isArray(v)) out = { messages: v.map(message) };
  else if (isObject(v) && Array.isArray(v.messages)) out = { ...v, messages: v.messages.map(message) };
  else out = { messages: [message(JSON.stringify(v))] };
  if (out.description === undefined && decl.description) out.description = decl.description;
  return out as GetPromptResult;
}
