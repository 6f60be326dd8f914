/**
 * What a provider's stream accumulator turns SSE records into: increments for `on_delta`, and
 * at the end the same response body the non-streaming endpoint would have returned, so one
 * normaliser (in `llm_proto`) serves both paths.
 */
import type { SseEvent } from "./sse.ts";

/**
 * One increment handed to `on_delta`. `index` is the content block (Anthropic) or tool call
 * (OpenAI) it belongs to.
 */
export type StreamDelta =
  | { type: "text"; index: number; text: string }
  | { type: "thinking"; index: number; thinking: string }
  | { type: "tool_use"; index: number; id?: string; name?: string; partial_json: string };

/** Accumulates one streamed response. */
export interface StreamAccumulator {
  /** Consumes one record; returns the increments it carried. Throws `LlmError` on an error event. */
  push(ev: SseEvent): StreamDelta[];
  /** True once the stream said it was complete. */
  readonly complete: boolean;
  /** The reassembled response body; throws when the stream was not complete. */
  finish(): Record<string, unknown>;
}
