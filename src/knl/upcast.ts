/**
 * Upcasting: events written under an older `schema_version` are read in today's shape.
 *
 * Owns the table of shape changes per kind, each a pure function from version N to N + 1, applied
 * in order on every read path (`s:events`, `s:view("tail")`, `knl export`). Stored rows are never
 * rewritten: the log is append-only, and a reader of an older release still finds what it wrote.
 *
 * Version 1 (layout 1, before the `events` table) wrote flat payloads:
 * - `msg_user` `{ text }` → `{ content }`;
 * - `llm_response` `{ text, model, input_tokens, output_tokens, stop }` → `{ content = [{type="text"}],
 *   model, stop_reason, usage = { input_tokens, output_tokens, total_tokens } }`;
 * - `tool_call` `{ tool_use_id, tool, args }` → `{ id, name, input }`;
 * - `tool_result` `{ tool_use_id, tool, output, error }` → `{ id, name, content, is_error }`;
 * - `session_open` `{ owner, budget_amount, budget_tag }` → `{ owner, budget = { amount, tag } }`;
 * - `session_close` `{ reason }` → `{ status, error }`.
 * Kinds not listed kept their shape.
 */
import { EVENT_SCHEMA_VERSION } from "./schema.ts";

type Data = Record<string, unknown>;
type Step = (data: Data) => Data;

const num = (v: unknown): number => (typeof v === "number" ? v : 0);

/** Steps from version `key` to `key + 1`, per kind. */
const STEPS: Record<number, Record<string, Step>> = {
  1: {
    msg_user: (d) => ({ content: d.content ?? d.text ?? "" }),
    llm_response: (d) => {
      if (Array.isArray(d.content)) return d;
      const input = num(d.input_tokens);
      const output = num(d.output_tokens);
      return {
        content: typeof d.text === "string" && d.text !== "" ? [{ type: "text", text: d.text }] : [],
        model: d.model ?? null,
        stop_reason: d.stop ?? d.stop_reason ?? null,
        usage: { input_tokens: input, output_tokens: output, total_tokens: input + output },
      };
    },
    tool_call: (d) => ({ id: d.id ?? d.tool_use_id, name: d.name ?? d.tool, input: d.input ?? d.args ?? {} }),
    tool_result: (d) => ({
      id: d.id ?? d.tool_use_id,
      name: d.name ?? d.tool,
      content: d.content ?? d.output ?? (typeof d.error === "string" ? d.error : ""),
      is_error: d.is_error ?? (d.error !== undefined && d.error !== null && d.error !== false),
    }),
    session_open: (d) => {
      const out: Data = { owner: d.owner ?? null };
      if (d.budget !== undefined) out.budget = d.budget;
      else if (d.budget_amount !== undefined) {
        out.budget = { amount: d.budget_amount, tag: d.budget_tag ?? "beats" };
      }
      if (d.scope !== undefined) out.scope = d.scope;
      if (d.parent !== undefined) out.parent = d.parent;
      return out;
    },
    session_close: (d) => (d.status !== undefined ? d : {
      status: d.reason === undefined || d.reason === "done" ? "ok" : "error",
      ...(d.reason !== undefined && d.reason !== "done" ? { error: d.reason } : {}),
    }),
  },
};

/** Brings `data` of `kind` from `version` to today's shape. */
export function upcastData(kind: string, version: number, data: Data): Data {
  let d = data;
  for (let v = version; v < EVENT_SCHEMA_VERSION; v++) {
    const step = STEPS[v]?.[kind];
    if (step) d = step(d);
  }
  return d;
}
