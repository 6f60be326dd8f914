/** Reference entries: `llm.chat` and the message, response and option shapes it shares with `agent`. */
import type { Field, Section } from "./types.ts";

/** The options of a provider Port: `llm.chat`'s and `agent.run`'s alike. */
const PORT_OPTIONS: Field[] = [
  { name: "provider", type: '"anthropic"|"openai"|"replay"', optional: true, doc: "Default `anthropic`." },
  {
    name: "model",
    type: "string",
    optional: true,
    doc: "Default `ANTHROPIC_MODEL` / `OPENAI_MODEL`, else `claude-haiku-4-5-20251001` / `gpt-4o-mini`.",
  },
  {
    name: "api_key",
    type: "string",
    optional: true,
    doc: "The key (default from `api_key_env` or the provider's variable).",
  },
  {
    name: "api_key_env",
    type: "string",
    optional: true,
    doc: "The variable holding the key (default `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`).",
  },
  {
    name: "base_url",
    type: "string",
    optional: true,
    doc: "The endpoint root (default `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`, else the provider's).",
  },
  {
    name: "dialect",
    type: '"openai"|"vllm"|"llamacpp"|"ollama"',
    optional: true,
    doc: "OpenAI-compatible server flavour (default from `base_url`).",
  },
  { name: "max_tokens", type: "integer", optional: true, doc: "Per-request output limit (default 4096)." },
  { name: "timeout", type: "number", optional: true, doc: "Seconds per request (default 120)." },
  {
    name: "max_retries",
    type: "integer",
    optional: true,
    doc: "Retries of 429/529/5xx/connection failures, honouring `Retry-After` (default 2).",
  },
  { name: "system", type: "string", optional: true, doc: "The system prompt." },
  {
    name: "tools",
    type: "tool.Spec[]",
    optional: true,
    doc: "Tools offered (`llm.chat` only; `agent.run` offers the registry).",
  },
  {
    name: "tool_choice",
    type: '"auto"|"none"|"required"|"any"|{ type: string, name: string }',
    optional: true,
    doc: "Whether and which tool the model must use.",
  },
  { name: "parallel_tool_calls", type: "boolean", optional: true, doc: "Allow several tool calls per turn." },
  {
    name: "thinking",
    type: "boolean|{ effort: string?, budget_tokens: integer? }",
    optional: true,
    doc: "Reasoning / extended thinking (`false` turns it off where expressible).",
  },
  { name: "stop", type: "string[]", optional: true, doc: "Stop sequences." },
  {
    name: "response_format",
    type: "table",
    optional: true,
    doc: 'Structured output, OpenAI\'s shape (`{ type = "json_schema", json_schema = {...} }`).',
  },
  {
    name: "temperature",
    type: "number",
    optional: true,
    doc:
      "Forwarded; dropped with a warning where the model cannot take it (while thinking; `~= 1` on a Claude past Opus 4.6). An Anthropic request with a sampling parameter is sent as API version 2023-06-01 (2026-10-21 refuses them).",
  },
  { name: "top_p", type: "number", optional: true, doc: "Forwarded (Anthropic: as `temperature`)." },
  {
    name: "top_k",
    type: "integer",
    optional: true,
    doc: "Forwarded, except to api.openai.com (dropped with a warning).",
  },
  { name: "seed", type: "integer", optional: true, doc: "Where supported." },
  { name: "cache_control", type: "boolean", optional: true, doc: "Anthropic prompt caching (default on)." },
  {
    name: "context_management",
    type: "boolean",
    optional: true,
    doc: "Anthropic context editing (`agent.run`: default on).",
  },
  {
    name: "context_management_config",
    type: "table",
    optional: true,
    doc: "Replaces the default context-editing edits whole.",
  },
  { name: "extra_body", type: "table", optional: true, doc: "Merged into the request body last." },
  {
    name: "stream",
    type: "boolean",
    optional: true,
    doc: "Stream the response (a truncated stream is an error).",
  },
  {
    name: "on_delta",
    type: "fun(delta: table)",
    optional: true,
    doc: 'Receives each streamed piece (`{ type = "text", text }`, ...); implies `stream`.',
  },
  {
    name: "prices",
    type: "table",
    optional: true,
    doc:
      'Overrides of `require("llm_proto").prices`: `{ [model] = { input = usd_per_Mtok, output = ... } }`.',
  },
  {
    name: "replay",
    type: "string",
    optional: true,
    doc:
      "`replay` provider: the JSON Lines script (default `AGENT_BLOCK_REPLAY`; relative: the script's directory, then the project root). `AGENT_BLOCK_FORCE_REPLAY=1` in the run's environment makes `anthropic` and `openai` use it too.",
  },
  {
    name: "replay_as",
    type: '"anthropic"|"openai"',
    optional: true,
    doc: "`replay` provider: which adapter builds (and checks) the request (default anthropic).",
  },
];

export const LLM: Section = {
  id: "llm",
  title: "llm",
  file: "agent-block",
  tables: ["llm"],
  doc: "One model call. Providers: `anthropic`, `openai` (any OpenAI-compatible server) and `replay` " +
    '(scripted answers from a JSON Lines file: see the README\'s "The replay file"). One option ' +
    "vocabulary (OpenAI's), translated per provider; combinations an API would reject are refused before " +
    "any request. The response is normalised whatever the provider: text, `tool_use` and `thinking` " +
    "blocks, and one usage shape.",
  entries: [
    {
      kind: "class",
      name: "llm.ContentBlock",
      doc: "A content block: `text` (text), `tool_use` (id, name, input), `tool_result` (tool_use_id, " +
        "content, is_error), `thinking` (thinking, signature), `image` (source).",
      fields: [
        { name: "type", type: '"text"|"tool_use"|"tool_result"|"thinking"|"image"', doc: "The kind." },
        { name: "text", type: "string", optional: true, doc: "`text`." },
        { name: "id", type: "string", optional: true, doc: "`tool_use`: the call id." },
        { name: "name", type: "string", optional: true, doc: "`tool_use`: the tool." },
        { name: "input", type: "table", optional: true, doc: "`tool_use`: the arguments." },
        { name: "tool_use_id", type: "string", optional: true, doc: "`tool_result`: the call answered." },
        { name: "content", type: "any", optional: true, doc: "`tool_result`: the result." },
        { name: "is_error", type: "boolean", optional: true, doc: "`tool_result`: a failure." },
        { name: "thinking", type: "string", optional: true, doc: "`thinking`: the reasoning text." },
        { name: "signature", type: "string", optional: true, doc: "`thinking`: the provider's signature." },
        { name: "source", type: "table", optional: true, doc: "`image`: the image source." },
      ],
    },
    {
      kind: "class",
      name: "llm.Message",
      doc: "A message of a conversation (Anthropic-shaped).",
      fields: [
        { name: "role", type: '"user"|"assistant"', doc: "Who speaks." },
        { name: "content", type: "string|llm.ContentBlock[]", doc: "Text or blocks." },
      ],
    },
    {
      kind: "class",
      name: "llm.Usage",
      doc: "Token usage, the same on every provider.",
      fields: [
        { name: "input_tokens", type: "integer", doc: "Input not served from cache." },
        { name: "output_tokens", type: "integer", doc: "Output, thinking included." },
        {
          name: "total_tokens",
          type: "integer",
          doc: "Everything processed: input, cache reads and writes, output.",
        },
        { name: "cache_read_input_tokens", type: "integer", doc: "Input read from the prompt cache." },
        { name: "cache_creation_input_tokens", type: "integer", doc: "Input written to the prompt cache." },
        { name: "thinking_tokens", type: "integer", doc: "Reasoning tokens, where reported." },
        {
          name: "cost_usd",
          type: "number",
          optional: true,
          doc: "The cost, when the model is in the price table.",
        },
      ],
    },
    {
      kind: "class",
      name: "llm.Response",
      doc: "A normalised model response.",
      fields: [
        { name: "content", type: "llm.ContentBlock[]", doc: "`text`, `tool_use` and `thinking` blocks." },
        {
          name: "stop_reason",
          type: "string",
          optional: true,
          doc: "The provider's (`end_turn`, `tool_use`, `max_tokens`, ...).",
        },
        { name: "usage", type: "llm.Usage", doc: "Token usage." },
        { name: "model", type: "string", optional: true, doc: "The model that answered." },
        { name: "id", type: "string", optional: true, doc: "The response id." },
        {
          name: "context_management",
          type: "table",
          optional: true,
          doc: "Anthropic: what context editing did (`applied_edits`), as the server reported it; " +
            "a beat keeps it in its `llm_response` event.",
        },
      ],
    },
    {
      kind: "class",
      name: "llm.Error",
      doc: "What a failed model request raises; `tostring(e)` is its message " +
        "(`llm: anthropic HTTP 529 ...`).",
      fields: [
        { name: "message", type: "string", doc: "The message." },
        { name: "source", type: '"llm"', doc: "Always `llm`." },
        { name: "provider", type: "string", doc: "`anthropic` or `openai`." },
        { name: "status", type: "integer", optional: true, doc: "The HTTP status, when one came." },
        { name: "retryable", type: "boolean", doc: "Whether trying again may help." },
        { name: "retry_after_ms", type: "integer", optional: true, doc: "What the server asked to wait." },
      ],
    },
    {
      kind: "class",
      name: "llm.Options",
      doc: "Options of a model call: provider, endpoint, transport and the protocol options.",
      fields: PORT_OPTIONS,
    },
    {
      kind: "function",
      name: "llm.chat",
      doc: "One model call. Each attempt writes `ab.obs` `http_request` / `http_response` lines on stderr " +
        "(keys and bodies are never logged).",
      params: [
        { name: "messages", type: "string|llm.Message[]", doc: "One user message, or the conversation." },
        { name: "opts", type: "llm.Options", optional: true, doc: "Provider, model, protocol options." },
      ],
      returns: [{ type: "llm.Response", doc: "The normalised response." }],
      errors: "Raises an `llm.Error` table for a failed request (after the retries), and a message for " +
        "options the provider would reject.",
      example:
        'local r = llm.chat("Say hi in one word.", { model = "claude-haiku-4-5-20251001", max_tokens = 16 })\n' +
        "print(r.content[1].text, r.usage.total_tokens)",
    },
  ],
};
