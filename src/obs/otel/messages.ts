/**
 * Message contents in the shape of the OpenTelemetry GenAI semantic conventions, for the opt-in
 * attributes of a `chat` span (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`):
 * `gen_ai.system_instructions`, `gen_ai.input.messages` (from the request body as it goes out, so
 * what a fold, a filter or a resumed session made of the conversation is what is shown) and
 * `gen_ai.output.messages` (from the kernel's `llm_response` row).
 *
 * Layer: obs. Pure: JSON in, JSON text out; loaded with `tracer.ts`, used only when content
 * capture is on (a run without it never parses a request body).
 *
 * Parts: `text` (`content`), `tool_call` (`id`, `name`, `arguments`), `tool_call_response`
 * (`id`, `response`), `reasoning` (`content`); an image or any other block is a part of its own
 * type with no payload (its bytes are not copied into a span). Both wire shapes are read:
 * Anthropic's (`system`, blocks `text` / `tool_use` / `tool_result` / `thinking`) and OpenAI's
 * chat completions (`system` / `developer` messages, `tool_calls`, `tool` messages); the
 * kernel's canonical content is Anthropic-shaped.
 *
 * Invariants: never throws (an unreadable body gives no attributes); the caller masks the
 * resulting texts with the run's secrets before they reach a span.
 */

/** One message part. */
export type Part = Record<string, unknown> & { type: string };
/** One message. */
export interface ChatMessage {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function parseArgs(v: unknown): unknown {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/** The text of a tool result's content (a string, or text blocks). */
function resultOf(v: unknown): unknown {
  if (!Array.isArray(v)) return v;
  const texts = v.filter((b) => isObj(b) && b.type === "text" && typeof b.text === "string");
  return texts.length === v.length ? texts.map((b) => (b as { text: string }).text).join("") : v;
}

/** One content block (either wire shape) as a part. */
function partOf(b: unknown): Part | undefined {
  if (typeof b === "string") return { type: "text", content: b };
  if (!isObj(b) || typeof b.type !== "string") return undefined;
  switch (b.type) {
    case "text":
    case "input_text":
    case "output_text":
      return { type: "text", content: typeof b.text === "string" ? b.text : "" };
    case "tool_use":
      return { type: "tool_call", id: b.id, name: b.name, arguments: b.input };
    case "tool_result":
      return { type: "tool_call_response", id: b.tool_use_id, response: resultOf(b.content) };
    case "thinking":
      return { type: "reasoning", content: typeof b.thinking === "string" ? b.thinking : "" };
    case "redacted_thinking":
      return undefined;
    default:
      return { type: b.type };
  }
}

/** The parts of a content (a string or blocks). */
export function partsOf(content: unknown): Part[] {
  if (typeof content === "string") return [{ type: "text", content }];
  if (!Array.isArray(content)) return [];
  const out: Part[] = [];
  for (const b of content) {
    const p = partOf(b);
    if (p) out.push(p);
  }
  return out;
}

/** The system instructions and input messages of a model request body, or `undefined`. */
export function requestContents(
  body: unknown,
): { system?: Part[]; messages: ChatMessage[] } | undefined {
  if (!isObj(body) || !Array.isArray(body.messages)) return undefined;
  const system: Part[] = body.system !== undefined ? partsOf(body.system) : [];
  const messages: ChatMessage[] = [];
  for (const m of body.messages) {
    if (!isObj(m) || typeof m.role !== "string") continue;
    if (m.role === "system" || m.role === "developer") {
      system.push(...partsOf(m.content));
      continue;
    }
    if (m.role === "tool") {
      messages.push({
        role: "tool",
        parts: [{ type: "tool_call_response", id: m.tool_call_id, response: resultOf(m.content) }],
      });
      continue;
    }
    const parts = partsOf(m.content);
    if (Array.isArray(m.tool_calls)) {
      for (const c of m.tool_calls) {
        if (!isObj(c) || !isObj(c.function)) continue;
        parts.push({
          type: "tool_call",
          id: c.id,
          name: c.function.name,
          arguments: parseArgs(c.function.arguments),
        });
      }
    }
    if (typeof m.reasoning_content === "string" && m.reasoning_content !== "") {
      parts.unshift({ type: "reasoning", content: m.reasoning_content });
    }
    messages.push({ role: m.role, parts });
  }
  return system.length ? { system, messages } : { messages };
}

/** The request body's JSON value: from a string or bytes (`undefined` for anything else or bad JSON). */
export function bodyJson(body: unknown): unknown {
  let text: string;
  if (typeof body === "string") text = body;
  else if (body instanceof Uint8Array) text = new TextDecoder().decode(body);
  else if (body instanceof ArrayBuffer) text = new TextDecoder().decode(new Uint8Array(body));
  else return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
