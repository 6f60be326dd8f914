/**
 * OpenAI chat-completions streaming: `chat.completion.chunk` records (content, `reasoning_content`
 * / `reasoning`, tool-call fragments keyed by `index`, `finish_reason`, a final usage chunk) and
 * the `[DONE]` sentinel, reassembled into the `chat.completion` body of the non-streaming call.
 *
 * Invariants: a tool call's id and name come from its first fragment and its arguments are the
 * concatenation of every fragment, parsed later by the normaliser; the stream is complete only
 * when every choice it opened has a `finish_reason` (or `[DONE]` arrived after one did), so a
 * connection that drops mid-answer is an error, never a shorter answer.
 */
import { LlmError } from "./errors.ts";
import type { SseEvent } from "./sse.ts";
import type { StreamAccumulator, StreamDelta } from "./stream_types.ts";

type Json = Record<string, unknown>;

interface Choice {
  index: number;
  message: Json & { tool_calls?: Json[] };
  finish_reason: unknown;
}

/** Accumulator for one OpenAI-compatible stream. */
export class OpenAIStream implements StreamAccumulator {
  #head: Json = {};
  #choices: Choice[] = [];
  #usage: unknown;
  #sawDone = false;

  get complete(): boolean {
    return this.#choices.length > 0 && this.#choices.every((c) => c && c.finish_reason != null);
  }

  push(ev: SseEvent): StreamDelta[] {
    if (ev.data.trim() === "[DONE]") {
      this.#sawDone = true;
      return [];
    }
    let chunk: Json;
    try {
      chunk = JSON.parse(ev.data);
    } catch {
      throw new LlmError("openai", "openai stream sent a chunk that is not JSON");
    }
    if (chunk.error) {
      const e = chunk.error as Json;
      throw new LlmError("openai", `openai stream error: ${String(e.message ?? JSON.stringify(e))}`);
    }
    for (const k of ["id", "model", "created", "system_fingerprint"]) {
      if (chunk[k] !== undefined && this.#head[k] === undefined) this.#head[k] = chunk[k];
    }
    if (chunk.usage) this.#usage = chunk.usage;
    const out: StreamDelta[] = [];
    for (const c of (chunk.choices as Json[] | undefined) ?? []) {
      const i = Number(c.index ?? 0);
      const choice = this.#choices[i] ??= { index: i, message: { role: "assistant" }, finish_reason: null };
      const delta = (c.delta ?? {}) as Json;
      const msg = choice.message;
      if (typeof delta.content === "string" && delta.content !== "") {
        msg.content = String(msg.content ?? "") + delta.content;
        out.push({ type: "text", index: i, text: delta.content });
      }
      for (const key of ["reasoning_content", "reasoning"]) {
        const r = delta[key];
        if (typeof r === "string" && r !== "") {
          msg[key] = String(msg[key] ?? "") + r;
          out.push({ type: "thinking", index: i, thinking: r });
        }
      }
      for (const tc of (delta.tool_calls as Json[] | undefined) ?? []) {
        const ti = Number(tc.index ?? 0);
        const calls = msg.tool_calls ??= [];
        const fn = (tc.function ?? {}) as Json;
        let call = calls[ti];
        if (!call) {
          call = calls[ti] = {
            id: tc.id ?? "",
            type: "function",
            function: { name: fn.name ?? "", arguments: "" },
          };
        }
        const cf = call.function as Json;
        if (tc.id && !call.id) call.id = tc.id;
        if (fn.name && !cf.name) cf.name = fn.name;
        const frag = typeof fn.arguments === "string" ? fn.arguments : "";
        cf.arguments = String(cf.arguments) + frag;
        out.push({
          type: "tool_use",
          index: ti,
          id: tc.id ? String(tc.id) : undefined,
          name: fn.name ? String(fn.name) : undefined,
          partial_json: frag,
        });
      }
      if (c.finish_reason != null) choice.finish_reason = c.finish_reason;
    }
    return out;
  }

  finish(): Json {
    if (!this.complete) {
      const why = this.#sawDone ? "[DONE] arrived before a finish_reason" : "it ended before a finish_reason";
      throw new LlmError("openai", `openai stream was truncated: ${why}`);
    }
    return {
      object: "chat.completion",
      ...this.#head,
      choices: this.#choices.filter((c) => c !== undefined),
      ...(this.#usage ? { usage: this.#usage } : {}),
    };
  }
}
