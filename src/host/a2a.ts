/**
 * `a2a.*`: the Lua face of the A2A client (Agent2Agent, spec 1.0).
 *
 * Owns argument checking, the shapes scripts see and the wording of errors; the protocol work is
 * the Lua-free client (`src/clients/a2a/client.ts`, over the official `@a2a-js/sdk`), loaded on
 * the first call so a run that never calls an agent does not pay for the SDK.
 *
 * The surface:
 * - `a2a.card(url [, opts])` → `{ ok = true, card, name, skills }`: the card fetched and checked;
 * - `a2a.send(url, message [, opts])` → `{ ok = true, id, context_id, state, text, task }` for a
 *   task (the final one, or an `input-required`/`auth-required` one), `{ ok = true, state =
 *   "message", text, message }` when the agent answered with a message. `message` is a string
 *   (one text part) or `{ text?, parts?, metadata?, skill? }` (wire-form parts such as
 *   `{ text = ... }`, `{ data = ... }`); `opts.on_update(ev)` sees each streamed event as
 *   `{ kind = "task"|"status"|"artifact", state?, text?, name?, event }` and runs as a Lua task,
 *   one at a time (it may yield); `opts.timeout` (seconds, default 120), `opts.headers`,
 *   `opts.context_id`/`opts.task_id` (continue a conversation/task), `opts.skill` (sets
 *   `metadata.skill`), `opts.binding` (`"JSONRPC"` or `"HTTP+JSON"`; default the card's order);
 * - `a2a.get(url, task_id [, opts])`, `a2a.cancel(url, task_id [, opts])` → the task, shaped as
 *   `send`'s.
 * `url` is the agent's base URL (the card is read from `/.well-known/agent-card.json`) or the
 * card's own URL (ending in `.json`).
 *
 * Conventions, as `mcp.*`: a failure is `{ ok = false, error, kind }` (`kind`: `card`,
 * `transport`, `timeout`, `stream`, `invalid`, `remote`), plus `code` (the agent's A2A error
 * reason, e.g. `TASK_NOT_FOUND`) when the agent answered an error; wrong argument types raise; an
 * error raised by `on_update` raises out of `send`. Every error text is scrubbed of the run's
 * secrets, and the headers a script sends join them first. Cancelling the calling task aborts the
 * call. A watched run is told each call as it finishes (`a2a_call`, `src/obs/run_events.ts`),
 * as MCP calls are.
 */
import type { LuaEngine } from "../lua/engine.ts";
import { type Args, LuaArgError, optField } from "../lua/args.ts";
import { type LuaFunctionRef, luaTypeName } from "../json/values.ts";
import type { RunContext } from "./context.ts";
import type { A2aClients, Binding, SendResult, Wire } from "../clients/a2a/client.ts";

const DEFAULT_TIMEOUT_S = 120;
const BINDING_NAMES: Record<string, Binding> = {
  jsonrpc: "JSONRPC",
  "http+json": "HTTP+JSON",
  rest: "HTTP+JSON",
};

type ClientModule = typeof import("../clients/a2a/client.ts");

/** Text parts of a wire parts list. */
function textOf(parts: unknown): string | undefined {
  if (!Array.isArray(parts)) return undefined;
  const t = parts.filter((p) => typeof p?.text === "string").map((p) => p.text as string);
  return t.length ? t.join("\n") : undefined;
}

/** Installs `a2a.*`. */
export function installA2a(engine: LuaEngine, run: RunContext): void {
  let clients: Promise<{ m: ClientModule; c: A2aClients }> | undefined;
  const load = () =>
    clients ??= import("../clients/a2a/client.ts").then((m) => ({ m, c: new m.A2aClients() }));
  const observe = run.observe;

  /** Common options at argument `i`. */
  const common = (a: Args, i: number) => {
    const opts = a.optTable(i, "opts") ?? {};
    const field = <T>(k: string, kind: "string" | "number" | "table" | "function") =>
      optField<T>(a, i, "opts", opts, k, kind);
    const timeout = field<number>("timeout", "number") ?? DEFAULT_TIMEOUT_S;
    if (!(timeout > 0)) {
      throw new LuaArgError(
        `${a.fn}: argument ${i} (opts) field 'timeout' must be a positive number, got ${timeout}`,
      );
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(field<Record<string, unknown>>("headers", "table") ?? {})) {
      if (typeof v !== "string" && typeof v !== "number") {
        throw new LuaArgError(
          `${a.fn}: argument ${i} (opts) field 'headers' value of '${k}' must be a string, got ${
            luaTypeName(v)
          }`,
        );
      }
      headers[k] = String(v);
    }
    const rawBinding = field<string>("binding", "string");
    const binding = rawBinding === undefined ? undefined : BINDING_NAMES[rawBinding.toLowerCase()];
    if (rawBinding !== undefined && !binding) {
      throw new LuaArgError(
        `${a.fn}: argument ${i} (opts) field 'binding' must be "JSONRPC" or "HTTP+JSON", got "${rawBinding}"`,
      );
    }
    run.secrets.addHeaders(headers);
    return {
      opts,
      field,
      call: {
        headers: Object.keys(headers).length ? headers : undefined,
        binding,
        timeoutMs: Math.min(timeout * 1000, 2 ** 31 - 1),
      },
    };
  };

  /** A call: `{ ok = true, ... }` or `{ ok = false, error, kind, code? }`, told to the run's observer. */
  const call = (
    method: string,
    body: (a: Args, m: ClientModule, c: A2aClients, signal: AbortSignal) => Promise<Record<string, unknown>>,
  ) => ({
    functions: "ref" as const,
    floats: "tagged" as const,
    async: async (a: Args, cx: { signal: AbortSignal }) => {
      const url = a.string(1, "url");
      run.secrets.addUrl(url);
      const t0 = performance.now();
      const told = (ok: boolean, error?: string) =>
        observe?.({
          type: "a2a_call",
          agent: run.secrets.scrub(url),
          method,
          ms: performance.now() - t0,
          ok,
          error,
        });
      const { m, c } = await load();
      try {
        const out = await body(a, m, c, cx.signal);
        told(true);
        return { ok: true, ...out };
      } catch (e) {
        if (e instanceof LuaArgError) throw e;
        if (!(e instanceof m.A2aFailure)) {
          told(false, run.secrets.scrub(String((e as Error)?.message ?? e)));
          throw e; // an error raised by on_update
        }
        const error = run.secrets.scrub(`a2a.${method}: ${e.message}`);
        told(false, error);
        if (cx.signal.aborted) throw e;
        run.log.debug(error);
        return e.code !== undefined
          ? { ok: false, error, kind: e.kind, code: e.code }
          : { ok: false, error, kind: e.kind };
      }
    },
  });

  const taskShape = (m: ClientModule, task: Wire) => {
    const status = (task.status ?? {}) as Wire;
    const artifactText = ((task.artifacts as Wire[] | undefined) ?? [])
      .map((x) => textOf(x.parts))
      .filter((t): t is string => t !== undefined);
    const text = artifactText.length
      ? artifactText.join("\n")
      : textOf((status.message as Wire | undefined)?.parts);
    return {
      id: task.id,
      context_id: task.contextId,
      state: m.stateName(status.state),
      text: text ?? "",
      task,
    };
  };

  engine.define(
    "a2a.card",
    call("card", async (a, _m, c, signal) => {
      const { call: o } = common(a, 2);
      const card = await c.card(a.string(1, "url"), { ...o, signal });
      return { card, name: card.name, skills: card.skills ?? [] };
    }),
  );

  engine.define(
    "a2a.send",
    call("send", async (a, m, c, signal) => {
      const url = a.string(1, "url");
      const raw = a.at(2);
      let message: Wire;
      if (typeof raw === "string") message = { parts: [{ text: raw }] };
      else if (luaTypeName(raw) === "table" && !Array.isArray(raw)) {
        const t = raw as Wire;
        const parts: unknown[] = [];
        if (t.text !== undefined) {
          if (typeof t.text !== "string") {
            throw new LuaArgError(
              `a2a.send: argument 2 (message) field 'text' must be a string, got ${luaTypeName(t.text)}`,
            );
          }
          parts.push({ text: t.text });
        }
        if (t.parts !== undefined) {
          if (!Array.isArray(t.parts)) {
            throw new LuaArgError(
              `a2a.send: argument 2 (message) field 'parts' must be a list, got ${luaTypeName(t.parts)}`,
            );
          }
          parts.push(...t.parts);
        }
        if (parts.length === 0) {
          throw new LuaArgError("a2a.send: argument 2 (message) has neither 'text' nor 'parts'");
        }
        message = { parts };
        if (t.metadata !== undefined) message.metadata = t.metadata;
        if (typeof t.skill === "string") message.metadata = { ...(message.metadata as Wire), skill: t.skill };
      } else {
        throw new LuaArgError(
          `a2a.send: argument 2 (message) must be a string or a table, got ${luaTypeName(raw)}`,
        );
      }
      const { call: o, field } = common(a, 3);
      const skill = field<string>("skill", "string");
      if (skill !== undefined) message.metadata = { ...(message.metadata as Wire), skill };
      const onUpdate = field<LuaFunctionRef>("on_update", "function");
      try {
        const r: SendResult = await c.send(url, message, {
          ...o,
          signal,
          contextId: field<string>("context_id", "string"),
          taskId: field<string>("task_id", "string"),
          onEvent: onUpdate && (async (ev) => {
            const kind = String(ev.kind);
            const { kind: _k, ...event } = ev;
            const shaped: Record<string, unknown> = { kind, event };
            if (kind === "status") {
              const st = event.status as Wire | undefined;
              shaped.state = m.stateName(st?.state);
              const t = textOf((st?.message as Wire | undefined)?.parts);
              if (t !== undefined) shaped.text = t;
            } else if (kind === "artifact") {
              const art = event.artifact as Wire | undefined;
              shaped.name = art?.name;
              const t = textOf(art?.parts);
              if (t !== undefined) shaped.text = t;
            } else if (kind === "task") {
              shaped.state = m.stateName((event.status as Wire | undefined)?.state);
            }
            await engine.callLua(onUpdate, [shaped]);
          }),
        });
        if ("message" in r) {
          return { state: "message", text: textOf(r.message.parts) ?? "", message: r.message };
        }
        return taskShape(m, r.task);
      } finally {
        onUpdate?.release();
      }
    }),
  );

  engine.define(
    "a2a.get",
    call("get", async (a, m, c, signal) => {
      const { call: o } = common(a, 3);
      return taskShape(m, await c.get(a.string(1, "url"), a.string(2, "task_id"), { ...o, signal }));
    }),
  );

  engine.define(
    "a2a.cancel",
    call("cancel", async (a, m, c, signal) => {
      const { call: o } = common(a, 3);
      return taskShape(m, await c.cancel(a.string(1, "url"), a.string(2, "task_id"), { ...o, signal }));
    }),
  );
}
