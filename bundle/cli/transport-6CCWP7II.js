import {
  Deadlines,
  LlmError
} from "./chunk-GAVNBGPF.js";
import {
  parseJson,
  stringifyJson
} from "./chunk-J4FUTWHQ.js";

// src/obs/ab_obs.ts
var processAgentId;
function processAgentIdentity() {
  processAgentId ??= crypto.randomUUID();
  return processAgentId;
}
function env(name) {
  try {
    return Deno.env.get(name) ?? "";
  } catch {
    return "";
  }
}
function correlation() {
  return {
    trace_id: env("AGENT_BLOCK_TRACE_ID"),
    run_id: env("AGENT_BLOCK_RUN_ID"),
    agent_id: env("AGENT_BLOCK_AGENT_ID") || processAgentIdentity(),
    agent_name: env("AGENT_BLOCK_AGENT_NAME")
  };
}
var SECRET_KEY = /authorization|cookie|token|secret|password|passwd|api_key|apikey|access_key|private_key/i;
function sanitizeUrl(raw) {
  if (raw === "") return "";
  const hit = sanitized.get(raw);
  if (hit !== void 0) return hit;
  const out = sanitizeUncached(raw);
  if (sanitized.size > 256) sanitized.clear();
  sanitized.set(raw, out);
  return out;
}
var sanitized = /* @__PURE__ */ new Map();
function sanitizeUncached(raw) {
  try {
    const u = new URL(raw);
    if (u.protocol === "http:" || u.protocol === "https:" || u.protocol === "ws:" || u.protocol === "wss:") {
      u.username = "";
      u.password = "";
      u.search = "";
      u.hash = "";
      return u.toString();
    }
  } catch {
  }
  let s = raw.replace(/:\/\/[^/@]*@/, "://");
  const cut = s.search(/[?#]/);
  if (cut >= 0) s = s.slice(0, cut);
  return s.length > 16 ? s.slice(0, 16) + "..." : s;
}
function quote(v) {
  return v === "" ? "" : /[\s="]/.test(v) ? JSON.stringify(v) : v;
}
function obsLine(event, component, fields, ids = correlation()) {
  const parts = [
    `prefix=ab.obs`,
    `event=${event}`,
    `component=${component}`
  ];
  for (const [k, v] of Object.entries(ids)) parts.push(`${k}=${quote(v)}`);
  for (const [k, v] of Object.entries(fields)) {
    if (v === void 0) continue;
    let s = String(v);
    if (SECRET_KEY.test(k)) s = "[REDACTED]";
    else if (k === "url") s = sanitizeUrl(s);
    parts.push(`${k}=${quote(s)}`);
  }
  return parts.join(" ");
}

// src/host/llm/anthropic_stream.ts
var AnthropicStream = class {
  #message;
  #blocks = [];
  #partial = /* @__PURE__ */ new Map();
  #done = false;
  #delivered = false;
  get complete() {
    return this.#done;
  }
  push(ev) {
    let d;
    try {
      d = JSON.parse(ev.data);
    } catch {
      throw new LlmError(`llm: anthropic stream sent an event that is not JSON (event '${ev.event}')`);
    }
    const type = String(d.type ?? ev.event);
    switch (type) {
      case "message_start":
        this.#message = {
          ...d.message
        };
        return [];
      case "content_block_start": {
        const i = Number(d.index);
        const block = {
          ...d.content_block
        };
        if (block.type === "tool_use" || block.type === "server_tool_use") this.#partial.set(i, "");
        this.#blocks[i] = block;
        if (block.type === "tool_use") {
          this.#delivered = true;
          return [
            {
              type: "tool_use",
              index: i,
              id: String(block.id),
              name: String(block.name),
              partial_json: ""
            }
          ];
        }
        return [];
      }
      case "content_block_delta": {
        const i = Number(d.index);
        const block = this.#blocks[i];
        if (!block) throw new LlmError(`llm: anthropic stream sent a delta for unknown block ${i}`);
        const delta = d.delta;
        this.#delivered = true;
        switch (delta.type) {
          case "text_delta":
            block.text = String(block.text ?? "") + String(delta.text);
            return [
              {
                type: "text",
                index: i,
                text: String(delta.text)
              }
            ];
          case "thinking_delta":
            block.thinking = String(block.thinking ?? "") + String(delta.thinking);
            return [
              {
                type: "thinking",
                index: i,
                thinking: String(delta.thinking)
              }
            ];
          case "signature_delta":
            block.signature = String(block.signature ?? "") + String(delta.signature);
            return [];
          case "input_json_delta":
            this.#partial.set(i, (this.#partial.get(i) ?? "") + String(delta.partial_json));
            return [
              {
                type: "tool_use",
                index: i,
                partial_json: String(delta.partial_json)
              }
            ];
          case "citations_delta": {
            const list = block.citations ?? [];
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
          const raw = this.#partial.get(i);
          try {
            block.input = raw === "" ? {} : JSON.parse(raw);
          } catch {
            throw new LlmError(`llm: anthropic stream: tool '${block.name}' input is not valid JSON`);
          }
          this.#partial.delete(i);
        }
        return [];
      }
      case "message_delta": {
        if (!this.#message) {
          throw new LlmError("llm: anthropic stream sent message_delta before message_start");
        }
        const delta = d.delta ?? {};
        for (const [k, v] of Object.entries(delta)) this.#message[k] = v;
        if (d.usage) {
          const usage = {
            ...this.#message.usage ?? {}
          };
          for (const [k, v] of Object.entries(d.usage)) if (v !== null) usage[k] = v;
          this.#message.usage = usage;
        }
        if (d.context_management !== void 0) this.#message.context_management = d.context_management;
        return [];
      }
      case "message_stop":
        this.#done = true;
        return [];
      case "ping":
        return [];
      case "error": {
        const e = d.error ?? {};
        const kind = String(e.type ?? "error");
        const transient = !this.#delivered && (kind === "overloaded_error" || kind === "api_error");
        throw new LlmError(`llm: anthropic stream error (${kind}): ${String(e.message ?? "")}`, transient);
      }
      default:
        return [];
    }
  }
  finish() {
    if (!this.#done || !this.#message) {
      throw new LlmError("llm: anthropic stream was truncated: it ended before message_stop", false);
    }
    return {
      ...this.#message,
      content: this.#blocks.filter((b) => b !== void 0)
    };
  }
};

// src/host/llm/openai_stream.ts
var OpenAIStream = class {
  #head = {};
  #choices = [];
  #usage;
  #sawDone = false;
  get complete() {
    return this.#choices.length > 0 && this.#choices.every((c) => c && c.finish_reason != null);
  }
  push(ev) {
    if (ev.data.trim() === "[DONE]") {
      this.#sawDone = true;
      return [];
    }
    let chunk;
    try {
      chunk = JSON.parse(ev.data);
    } catch {
      throw new LlmError("llm: openai stream sent a chunk that is not JSON");
    }
    if (chunk.error) {
      const e = chunk.error;
      throw new LlmError(`llm: openai stream error: ${String(e.message ?? JSON.stringify(e))}`);
    }
    for (const k of [
      "id",
      "model",
      "created",
      "system_fingerprint"
    ]) {
      if (chunk[k] !== void 0 && this.#head[k] === void 0) this.#head[k] = chunk[k];
    }
    if (chunk.usage) this.#usage = chunk.usage;
    const out = [];
    for (const c of chunk.choices ?? []) {
      const i = Number(c.index ?? 0);
      const choice = this.#choices[i] ??= {
        index: i,
        message: {
          role: "assistant"
        },
        finish_reason: null
      };
      const delta = c.delta ?? {};
      const msg = choice.message;
      if (typeof delta.content === "string" && delta.content !== "") {
        msg.content = String(msg.content ?? "") + delta.content;
        out.push({
          type: "text",
          index: i,
          text: delta.content
        });
      }
      for (const key of [
        "reasoning_content",
        "reasoning"
      ]) {
        const r = delta[key];
        if (typeof r === "string" && r !== "") {
          msg[key] = String(msg[key] ?? "") + r;
          out.push({
            type: "thinking",
            index: i,
            thinking: r
          });
        }
      }
      for (const tc of delta.tool_calls ?? []) {
        const ti = Number(tc.index ?? 0);
        const calls = msg.tool_calls ??= [];
        const fn = tc.function ?? {};
        let call = calls[ti];
        if (!call) {
          call = calls[ti] = {
            id: tc.id ?? "",
            type: "function",
            function: {
              name: fn.name ?? "",
              arguments: ""
            }
          };
        }
        const cf = call.function;
        if (tc.id && !call.id) call.id = tc.id;
        if (fn.name && !cf.name) cf.name = fn.name;
        const frag = typeof fn.arguments === "string" ? fn.arguments : "";
        cf.arguments = String(cf.arguments) + frag;
        out.push({
          type: "tool_use",
          index: ti,
          id: tc.id ? String(tc.id) : void 0,
          name: fn.name ? String(fn.name) : void 0,
          partial_json: frag
        });
      }
      if (c.finish_reason != null) choice.finish_reason = c.finish_reason;
    }
    return out;
  }
  finish() {
    if (!this.complete) {
      const why = this.#sawDone ? "[DONE] arrived before a finish_reason" : "it ended before a finish_reason";
      throw new LlmError(`llm: openai stream was truncated: ${why}`);
    }
    return {
      object: "chat.completion",
      ...this.#head,
      choices: this.#choices.filter((c) => c !== void 0),
      ...this.#usage ? {
        usage: this.#usage
      } : {}
    };
  }
};

// src/host/llm/sse.ts
async function* readSse(body) {
  const decoder = new TextDecoder();
  let buf = "";
  let event = "";
  let data = [];
  let hasData = false;
  const reader = body.getReader();
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, {
        stream: true
      });
      let start = 0;
      while (true) {
        let nl = -1;
        for (let i = start; i < buf.length; i++) {
          const c = buf.charCodeAt(i);
          if (c === 10 || c === 13) {
            nl = i;
            break;
          }
        }
        if (nl < 0) break;
        if (buf.charCodeAt(nl) === 13 && nl === buf.length - 1) break;
        const line = buf.slice(start, nl);
        start = nl + (buf.charCodeAt(nl) === 13 && buf.charCodeAt(nl + 1) === 10 ? 2 : 1);
        if (line === "") {
          if (hasData) yield {
            event: event || "message",
            data: data.join("\n")
          };
          event = "";
          data = [];
          hasData = false;
          continue;
        }
        if (line.charCodeAt(0) === 58) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? "" : line.slice(colon + 1);
        if (val.charCodeAt(0) === 32) val = val.slice(1);
        if (field === "event") event = val;
        else if (field === "data") {
          data.push(val);
          hasData = true;
        }
      }
      buf = buf.slice(start);
    }
  } finally {
    reader.releaseLock();
  }
}

// src/host/llm/transport.ts
var MAX_RETRY_AFTER_MS = 6e4;
async function sendLlmRequest(req) {
  const payload = buildPayload(req);
  let attempt = 0;
  while (true) {
    attempt++;
    const started = performance.now();
    try {
      const r = await attemptOnce(req, payload, attempt, started);
      return {
        ...r,
        attempts: attempt
      };
    } catch (e) {
      if (req.signal?.aborted) throw req.signal.reason ?? e;
      const err = e instanceof LlmError ? e : new LlmError(`llm: ${req.provider} request failed: ${scrub(req, String(e))}`);
      if (!err.retryable || attempt > req.maxRetries) {
        if (err.retryable && req.maxRetries > 0) {
          throw new LlmError(`${err.message} (gave up after ${attempt} attempts)`, false, err.status);
        }
        throw err;
      }
      await sleep(backoffMs(attempt, err.retryAfterMs), req.signal);
    }
  }
}
var SPLICE_MESSAGES = "\0messages\0";
var SPLICE_TOOLS = "\0tools\0";
function buildPayload(req) {
  const body = {
    ...req.body
  };
  if (req.stream) {
    body.stream = true;
    if (req.provider === "openai") body.stream_options = {
      include_usage: true
    };
  }
  if (req.rawMessages) body.messages = SPLICE_MESSAGES;
  if (req.rawTools !== void 0) body.tools = SPLICE_TOOLS;
  let text = stringifyJson(body);
  if (req.rawMessages) {
    text = text.replace(JSON.stringify(SPLICE_MESSAGES), () => `[${req.rawMessages.join(",")}]`);
  }
  if (req.rawTools !== void 0) text = text.replace(JSON.stringify(SPLICE_TOOLS), () => req.rawTools);
  return text;
}
function backoffMs(attempt, retryAfterMs) {
  if (retryAfterMs !== void 0) return Math.min(Math.max(retryAfterMs, 0), MAX_RETRY_AFTER_MS);
  const base = Math.min(8e3, 500 * 2 ** (attempt - 1));
  return base * (0.75 + Math.random() * 0.5);
}
function retryAfter(h) {
  const ms = h.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const ra = h.get("retry-after");
  if (!ra) return void 0;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Number(ra) * 1e3;
  const at = Date.parse(ra);
  return Number.isNaN(at) ? void 0 : Math.max(0, at - Date.now());
}
async function attemptOnce(req, payload, attempt, started) {
  const P = req.provider;
  const fields = {
    method: "POST",
    url: req.url,
    provider: P,
    attempt,
    stream: req.stream
  };
  let idsMemo;
  const ids = () => idsMemo ??= correlation();
  req.obs("info", () => obsLine("http_request", "http", fields, ids()));
  const own = req.deadlines ? void 0 : new Deadlines();
  const deadline = (req.deadlines ?? own).start(req.timeoutSecs * 1e3, req.signal);
  const timeoutError = () => new LlmError(`llm: ${P} request timed out after ${req.timeoutSecs} s (timeout)`, false);
  let res;
  try {
    res = await fetch(req.url, {
      method: "POST",
      headers: {
        ...req.headers,
        "content-type": "application/json",
        accept: req.stream ? "text/event-stream" : "application/json"
      },
      body: payload,
      signal: deadline.controller.signal
    });
  } catch (e) {
    deadline.clear();
    own?.stop();
    const latency = Math.round(performance.now() - started);
    const timedOut = deadline.expired;
    req.obs("warn", () => obsLine("http_response", "http", {
      ...fields,
      status: 0,
      latency_ms: latency,
      error: timedOut ? "timeout" : "connection"
    }, ids()));
    if (timedOut) throw timeoutError();
    if (req.signal?.aborted) throw e;
    throw new LlmError(`llm: ${P} connection failed: ${scrub(req, e.message ?? String(e))}`, true);
  }
  const latencyMs = Math.round(performance.now() - started);
  req.obs(res.ok ? "info" : "warn", () => obsLine("http_response", "http", {
    ...fields,
    status: res.status,
    latency_ms: latencyMs
  }, ids()));
  try {
    if (!res.ok) throw await httpError(P, res);
    if (!req.stream) {
      const text = await readText(res, deadline, timeoutError);
      let body;
      try {
        body = parseJson(text);
      } catch {
        throw new LlmError(`llm: ${P} response is not valid JSON (HTTP ${res.status}, ${text.length} bytes)`);
      }
      if (body === null || typeof body !== "object" || Array.isArray(body)) {
        throw new LlmError(`llm: ${P} response is not a JSON object (HTTP ${res.status})`);
      }
      if (P === "openai") preparseToolArguments(body);
      return {
        body,
        status: res.status,
        latencyMs
      };
    }
    const type = res.headers.get("content-type") ?? "";
    if (!type.includes("text/event-stream")) {
      await res.body?.cancel();
      throw new LlmError(`llm: ${P} answered a streaming request with content-type '${type}', not text/event-stream`);
    }
    const acc = P === "anthropic" ? new AnthropicStream() : new OpenAIStream();
    let delivered = false;
    try {
      for await (const ev of readSse(res.body)) {
        deadline.bump();
        const deltas = acc.push(ev);
        for (const d of deltas) {
          if (!req.onDelta) break;
          delivered = true;
          await req.onDelta(d);
        }
      }
    } catch (e) {
      if (deadline.expired) throw timeoutError();
      if (e instanceof LlmError) throw e;
      if (req.signal?.aborted) throw e;
      throw new LlmError(`llm: ${P} stream was cut: ${scrub(req, e.message ?? String(e))}`, !delivered);
    }
    try {
      const body = acc.finish();
      if (P === "openai") preparseToolArguments(body);
      return {
        body,
        status: res.status,
        latencyMs
      };
    } catch (e) {
      if (e instanceof LlmError && !delivered) throw new LlmError(e.message, true);
      throw e;
    }
  } finally {
    deadline.clear();
    own?.stop();
  }
}
async function readText(res, deadline, timeoutError) {
  try {
    return await res.text();
  } catch (e) {
    if (deadline.expired) throw timeoutError();
    throw e;
  }
}
function preparseToolArguments(body) {
  const choices = body.choices;
  if (!Array.isArray(choices)) return;
  for (const c of choices) {
    const calls = c?.message?.tool_calls;
    if (!Array.isArray(calls)) continue;
    for (const tc of calls) {
      const fn = tc?.function;
      if (!fn || typeof fn.arguments !== "string" || fn.arguments === "") continue;
      try {
        const v = parseJson(fn.arguments);
        if (v !== null && typeof v === "object" && !Array.isArray(v)) fn.parsed_arguments = v;
      } catch {
      }
    }
  }
}
function scrub(req, message) {
  let m = message.split(req.url).join(sanitizeUrl(req.url));
  for (const [k, v] of Object.entries(req.headers)) {
    if (/authorization|api-key/i.test(k) && v.length > 8) {
      m = m.split(v).join("[REDACTED]");
      const bare = v.replace(/^Bearer\s+/i, "");
      if (bare.length > 8) m = m.split(bare).join("[REDACTED]");
    }
  }
  return m;
}
async function httpError(P, res) {
  const s = res.status;
  let detail = "";
  try {
    const text = await res.text();
    try {
      const j = JSON.parse(text);
      const e = j?.error ?? j;
      const kind = e?.type ?? e?.code;
      const msg = typeof e?.message === "string" ? e.message : "";
      detail = `${kind ? ` (${String(kind)})` : ""}${msg ? `: ${msg}` : ""}`;
    } catch {
      detail = text.trim() ? `: ${text.trim().slice(0, 200)}` : "";
    }
  } catch {
  }
  const retryable = s === 429 || s === 529 || s >= 500;
  return new LlmError(`llm: ${P} HTTP ${s}${detail}`, retryable, s, retryAfter(res.headers));
}
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal?.addEventListener("abort", onAbort, {
      once: true
    });
  });
}
export {
  MAX_RETRY_AFTER_MS,
  backoffMs,
  buildPayload,
  retryAfter,
  sendLlmRequest
};
