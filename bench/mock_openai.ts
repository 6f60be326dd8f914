/**
 * The benchmarks' OpenAI chat-completions answer for a tool loop: the turn after `done` tool
 * results asks for tool `tool` once more (arguments `{"a":done,"b":1}`) until `turns` have been
 * answered, then says it is done. One shape for every bench that measures a client's loop
 * against a local mock (`llm_bench.ts`, `llm_long_bench.ts`), so their figures compare.
 */

/** The chat completion for the turn after `done` tool results of a `turns`-long loop. */
export function toolLoopReply(done: number, turns: number, tool: string): Response {
  const message = done < turns
    ? {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: `call_${done}`,
        type: "function",
        function: { name: tool, arguments: `{"a":${done},"b":1}` },
      }],
    }
    : { role: "assistant", content: `done after ${done} tools` };
  return Response.json({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1,
    model: "gpt-4o-mini",
    choices: [{ index: 0, message, finish_reason: done < turns ? "tool_calls" : "stop", logprobs: null }],
    usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
  });
}
