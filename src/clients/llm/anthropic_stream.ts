/**
 * Anthropic Messages streaming: `message_start`, `content_block_start|delta|stop`,
 * `message_delta`, `message_stop`, `ping`, `error` events reassembled into the `Message` body
 * the non-streaming endpoint returns.
 *
 * Invariants: text, thinking, signature and tool-input JSON fragments are concatenated per block
 * index; a tool block's input is parsed once, at its `content_block_stop`; a stream that ends
 * before `message_stop` is truncated and `finish` refuses it.
 */
import { LlmError } from "./errors.ts";
import type { SseEvent } from "./sse.ts";
import type { StreamAccumulator, StreamDelta } from "./stream_types.ts";

type Json = Record<string, unknown>;

/** Accumulator for one Anthropic stream. */
export class AnthropicStream implements StreamAccumulator {
  #message: Json | undefined;
  #blocks: Json[] = [];
  #partial = new Map<number, string>();
  #done = false;
  #delivered = false;

  get complete(): boolean {
    return this.#done;
  }

  push(ev: SseEvent): StreamDelta[] {
    let d: Json;
    try {
      d = JSON.parse(ev.data);
    } catch {
      throw new LlmError(
        "anthropic",
        `anthropic stream sent an event that is not JSON (event '${ev.event}')`,
      );
    }
    const type = String(d.type ?? ev.event);
    switch (type) {
      case "message_start":
        this.#message = { ...(d.message as Json) };
        return [];
      case "content_block_start": {
        const i = Number(d.index);
        const block = { ...(d.content_block as Json) };
        if (block.type === "tool_use" || block.type === "server_tool_use") this.#partial.set(i, "");
        this.#blocks[i] = block;
        if (block.type === "tool_use") {
          this.#delivered = true;
          return [{
            type: "tool_use",
            index: i,
            id: String(block.id),
            name: String(block.name),
            partial_json: "",
          }];
        }
        return [];
      }
      case "content_block_delta": {
        const i = Number(d.index);
        const block = this.#blocks[i];
        if (!block) throw new LlmError("anthropic", `anthropic stream sent a delta for unknown block ${i}`);
        const delta = d.delta as Json;
        this.#delivered = true;
        switch (delta.type) {
          case "text_delta":
            block.text = String(block.text ?? "") + String(delta.text);
            return [{ type: "text", index: i, text: String(delta.text) }];
          case "thinking_delta":
            block.thinking = String(block.thinking ?? "") + String(delta.thinking);
            return [{ type: "thinking", index: i, thinking: String(delta.thinking) }];
          case "signature_delta":
            block.signature = String(block.signature ?? "") + String(delta.signature);
            return [];
          case "input_json_delta":
            this.#partial.set(i, (this.#partial.get(i) ?? "") + String(delta.partial_json));
            return [{ type: "tool_use", index: i, partial_json: String(delta.partial_json) }];
          case "citations_delta": {
            const list = (block.citations as unknown[] | undefined) ?? [];
            list.push(delta.citation);
            block.citations = list;
            return [];
          }
          default:
            return [];
        }
      }
      case "content_block_stop": {
        const i = Number(d.index);
        const block = this.#blocks[i];
        if (block && this.#partial.has(i)) {
          const raw = this.#partial.get(i)!;
          try {
            block.input = raw === "" ? {} : JSON.parse(raw);
          } catch {
            throw new LlmError("anthropic", `anthropic stream: tool '${block.name}' input is not valid JSON`);
          }
          this.#partial.delete(i);
        }
        return [];
      }
      case "message_delta": {
        if (!this.#message) {
          throw new LlmError("anthropic", "anthropic stream sent message_delta before message_start");
        }
        const delta = (d.delta ?? {}) as Json;
        for (const [k, v] of Object.entries(delta)) this.#message[k] = v;
        if (d.usage) {
          const usage = { ...((this.#message.usage as Json) ?? {}) };
          for (const [k, v] of Object.entries(d.usage as Json)) if (v !== null) usage[k] = v;
          this.#message.usage = usage;
        }
        if (d.context_management !== undefined) this.#message.context_management = d.context_management;
        return [];
      }
      case "message_stop":
        this.#done = true;
        return [];
      case "ping":
        return [];
      case "error": {
        const e = (d.error ?? {}) as Json;
        const kind = String(e.type ?? "error");
        const transient = !this.#delivered && (kind === "overloaded_error" || kind === "api_error");
        throw new LlmError("anthropic", `anthropic stream error (${kind}): ${String(e.message ?? "")}`, {
          retryable: transient,
        });
      }
      default:
        return [];
    }
  }

  finish(): Json {
    if (!this.#done || !this.#message) {
      throw new LlmError("anthropic", "anthropic stream was truncated: it ended before message_stop");
    }
    return { ...this.#message, content: this.#blocks.filter((b) => b !== undefined) };
  }
}
