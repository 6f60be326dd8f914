/**
 * The Lua-free A2A client: fetch and check an agent card, send a message (streamed when the agent
 * streams), get and cancel a task — over the official `@a2a-js/sdk` client, JSON-RPC or HTTP+JSON
 * as the card offers.
 *
 * Owns what the SDK leaves to its caller:
 * - the card: fetched with the caller's headers and checked before use (`checkCard`: a card that
 *   is not JSON, names no interface we speak, or has fields of the wrong type is refused with an
 *   error naming the field), then handed to `ClientFactory.createFromAgentCard`; one SDK client
 *   per (card URL, binding, headers) is kept for the life of the `A2aClients`, so repeated sends
 *   to one agent pay for the card once;
 * - every exchange's wire form: what goes in and comes out is the spec's JSON (`Message.toJSON`,
 *   `Task.toJSON`, `StreamResponse.toJSON`), not the SDK's internal protobuf-ts objects;
 * - failures as `A2aFailure` with a `kind` (`card`, `transport`, `timeout`, `cancelled`, `remote`,
 *   `stream`) and, for an error the agent answered, its A2A `reason` as `code`;
 * - a stream that ends before a final state is checked with one `GetTask` (a task cancelled by
 *   another client ends some servers' streams without its last event); still not final, it is a
 *   `stream` failure naming the last state seen (the agent dropped the connection), never a
 *   silent partial result.
 *
 * The SDK is imported by this module only; the Lua face (`src/host/a2a.ts`) loads it on first use.
 */
import { type AgentCard, Artifact, Message, StreamResponse, Task, TaskState, TaskStatus } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  type RequestOptions,
  RestTransportFactory,
} from "@a2a-js/sdk/client";

/** The wire forms of JSON values (the spec's JSON). */
export type Wire = Record<string, unknown>;

/** Why an A2A call failed. */
export type A2aFailureKind = "card" | "transport" | "timeout" | "cancelled" | "remote" | "stream" | "invalid";

/** A failed A2A call: `kind` says whose fault, `code` is the agent's A2A error reason when it answered one. */
export class A2aFailure extends Error {
  /**
   * @param message what went wrong, naming the agent
   * @param kind the reason's class
   * @param code the agent's error reason (`TASK_NOT_FOUND`, ...), when the agent answered an error
   */
  constructor(message: string, readonly kind: A2aFailureKind, readonly code?: string) {
    super(message);
    this.name = "A2aFailure";
  }
}

/** The bindings we speak, as cards name them. */
export const BINDINGS = ["JSONRPC", "HTTP+JSON"] as const;
/** One of `BINDINGS`. */
export type Binding = typeof BINDINGS[number];

/** Per-call options. */
export interface CallOptions {
  /** Extra HTTP headers on every request of the call (the card fetch included). */
  headers?: Record<string, string>;
  /** The binding to prefer (default: the card's first we speak). */
  binding?: Binding;
  /** Whole-call limit, ms. */
  timeoutMs: number;
  /** Aborting cancels the call. */
  signal?: AbortSignal;
}

/** Options of `send`. */
export interface SendOptions extends CallOptions {
  /** Continue this conversation. */
  contextId?: string;
  /** Continue this task (an `input-required` one). */
  taskId?: string;
  /** Sees each streamed event (wire form), in order; awaited before the next is read. */
  onEvent?: (event: Wire) => Promise<void> | void;
}

const TERMINAL = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
const INTERRUPTED = new Set<TaskState>([
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

/** The card's URL for what a caller gave: a card URL as is, else `<base>/.well-known/agent-card.json`. */
export function cardUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new A2aFailure(`'${url}' is not a URL`, "invalid");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new A2aFailure(`'${url}' is not an http(s) URL`, "invalid");
  }
  if (u.pathname.endsWith(".json")) return u.href;
  return new URL(".well-known/agent-card.json", u.href.endsWith("/") ? u.href : u.href + "/").href;
}

/** Refuses a card that is not one we can use; the message names the field. */
export function checkCard(raw: unknown, where: string): Wire {
  const bad = (what: string) => new A2aFailure(`${where}: malformed agent card: ${what}`, "card");
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw bad("not a JSON object");
  const c = raw as Wire;
  if (typeof c.name !== "string" || c.name === "") throw bad("'name' must be a non-empty string");
  for (const k of ["description", "version"]) {
    if (c[k] !== undefined && typeof c[k] !== "string") throw bad(`'${k}' must be a string`);
  }
  if (!Array.isArray(c.supportedInterfaces) || c.supportedInterfaces.length === 0) {
    throw bad("'supportedInterfaces' must be a non-empty array");
  }
  c.supportedInterfaces.forEach((i: unknown, n: number) => {
    const f = i as Wire;
    if (typeof f !== "object" || f === null) throw bad(`'supportedInterfaces[${n}]' must be an object`);
    if (typeof f.url !== "string") throw bad(`'supportedInterfaces[${n}].url' must be a string`);
    try {
      new URL(f.url);
    } catch {
      throw bad(`'supportedInterfaces[${n}].url' is not a URL: '${f.url}'`);
    }
    if (typeof f.protocolBinding !== "string") {
      throw bad(`'supportedInterfaces[${n}].protocolBinding' must be a string`);
    }
  });
  if (!c.supportedInterfaces.some((i: Wire) => BINDINGS.includes(String(i.protocolBinding) as Binding))) {
    throw bad(
      `no interface speaks ${BINDINGS.join(" or ")} (offered: ${
        c.supportedInterfaces.map((i: Wire) => i.protocolBinding).join(", ")
      })`,
    );
  }
  if (c.skills !== undefined) {
    if (!Array.isArray(c.skills)) throw bad("'skills' must be an array");
    c.skills.forEach((s: unknown, n: number) => {
      const k = s as Wire;
      if (typeof k !== "object" || k === null) throw bad(`'skills[${n}]' must be an object`);
      if (typeof k.id !== "string") throw bad(`'skills[${n}].id' must be a string`);
      if (k.name !== undefined && typeof k.name !== "string") {
        throw bad(`'skills[${n}].name' must be a string`);
      }
    });
  }
  if (c.capabilities !== undefined && (typeof c.capabilities !== "object" || c.capabilities === null)) {
    throw bad("'capabilities' must be an object");
  }
  return c;
}

/** The message of an SDK or fetch failure, with its cause. */
function describe(e: unknown): string {
  const err = e as Error & { cause?: unknown };
  const msg = String(err?.message ?? e);
  const cause = err?.cause instanceof Error ? err.cause.message : undefined;
  return cause && !msg.includes(cause) ? `${msg}: ${cause}` : msg;
}

/** Text of the parts of a wire message or artifact list (text parts only, joined by newlines). */
export function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return "";
  return parts.filter((p) => typeof p?.text === "string").map((p) => p.text as string).join("\n");
}

/** An error the caller's `onEvent` raised, carried past our own error handling untouched. */
class CallbackFailed {
  constructor(readonly error: unknown) {}
}

async function callback(fn: (event: Wire) => Promise<void> | void, event: Wire): Promise<void> {
  try {
    await fn(event);
  } catch (e) {
    throw new CallbackFailed(e);
  }
}

/** The result of a send: the final task, or the agent's direct message. */
export type SendResult = { task: Wire } | { message: Wire };

interface Entry {
  card: Wire;
  client: Client;
}

/** The A2A clients of one run: cards and SDK clients by (card URL, binding, headers). */
export class A2aClients {
  readonly #clients = new Map<string, Promise<Entry>>();
  readonly #fetch: typeof fetch;

  /** @param fetchImpl the `fetch` every request goes through (default the global one) */
  constructor(fetchImpl: typeof fetch = fetch) {
    this.#fetch = fetchImpl;
  }

  /** Fetches and checks the card at `url` (not cached: a caller asking for it wants it now). */
  async card(url: string, opts: CallOptions): Promise<Wire> {
    return await this.#bounded(url, opts, (signal) => this.#fetchCard(url, opts.headers, signal));
  }

  /** Sends `message` (wire form) and waits for the final task (or the agent's message). */
  async send(url: string, message: Wire, opts: SendOptions): Promise<SendResult> {
    return await this.#bounded(url, opts, async (signal) => {
      const { card, client } = await this.#client(url, opts, signal);
      const wire: Wire = { ...message, messageId: message.messageId ?? crypto.randomUUID() };
      wire.role ??= "ROLE_USER";
      if (opts.contextId !== undefined) wire.contextId = opts.contextId;
      if (opts.taskId !== undefined) wire.taskId = opts.taskId;
      const params = {
        tenant: "",
        message: Message.fromJSON(wire),
        configuration: undefined,
        metadata: undefined,
      };
      const ro = this.#requestOptions(opts, signal);
      const streaming = (card.capabilities as Wire | undefined)?.streaming === true;
      if (!streaming) {
        const r = await client.sendMessage(params, ro);
        if ("messageId" in r) return { message: Message.toJSON(r) as Wire };
        const task = Task.toJSON(r) as Wire;
        if (opts.onEvent) await callback(opts.onEvent, { kind: "task", ...task });
        return { task };
      }
      let task: Wire | undefined;
      let state: TaskState | undefined;
      let broken: string | undefined;
      try {
        for await (const ev of client.sendMessageStream(params, ro)) {
          const p = ev.payload;
          if (!p) continue;
          if (p.$case === "message") return { message: Message.toJSON(p.value) as Wire };
          if (p.$case === "task") {
            task = Task.toJSON(p.value) as Wire;
            state = p.value.status?.state;
          } else if (p.$case === "statusUpdate") {
            state = p.value.status?.state;
            if (task && p.value.status) task.status = TaskStatus.toJSON(p.value.status) as Wire;
          } else if (p.$case === "artifactUpdate" && task && p.value.artifact) {
            const a = Artifact.toJSON(p.value.artifact) as Wire;
            const list = (task.artifacts as Wire[] | undefined) ?? [];
            const at = list.findIndex((x) => x.artifactId === a.artifactId);
            if (at >= 0 && p.value.append) {
              const old = list[at];
              old.parts = [...((old.parts as unknown[]) ?? []), ...((a.parts as unknown[]) ?? [])];
            } else if (at >= 0) list[at] = a;
            else list.push(a);
            task.artifacts = list;
          }
          if (opts.onEvent) {
            const j = StreamResponse.toJSON(ev) as Wire;
            const [kind] = Object.keys(j);
            await callback(opts.onEvent, { kind: kindName(kind), ...(j[kind] as Wire) });
          }
          if (state !== undefined && (TERMINAL.has(state) || INTERRUPTED.has(state))) break;
        }
      } catch (e) {
        // The connection broke under an open stream: a drop, unless it is our own abort, an
        // error the agent answered or one the caller's callback raised.
        if (
          e instanceof CallbackFailed || signal.aborted || !task ||
          (e as { reason?: unknown })?.reason !== undefined
        ) {
          throw e;
        }
        broken = describe(e);
      }
      if (!task) throw new A2aFailure(`${url}: the stream ended before the agent sent a task`, "stream");
      if (state === undefined || !(TERMINAL.has(state) || INTERRUPTED.has(state))) {
        // The stream ended early; the task may have ended anyway (a cancel from elsewhere ends
        // some servers' streams without the last event): ask once before calling it a drop.
        const now = await client.getTask({ tenant: "", id: String(task.id) }, ro).catch(() => undefined);
        const s = now?.status?.state;
        if (now && s !== undefined && (TERMINAL.has(s) || INTERRUPTED.has(s))) {
          return { task: Task.toJSON(now) as Wire };
        }
        throw new A2aFailure(
          `${url}: the stream of task ${task.id} ended in state ${stateName(state)} before a final state ` +
            (broken ? `(the connection broke: ${broken})` : `(the agent dropped the connection)`),
          "stream",
        );
      }
      return { task };
    });
  }

  /** The task `taskId`, as the agent has it now. */
  async get(url: string, taskId: string, opts: CallOptions): Promise<Wire> {
    return await this.#bounded(url, opts, async (signal) => {
      const { client } = await this.#client(url, opts, signal);
      return Task.toJSON(
        await client.getTask({ tenant: "", id: taskId }, this.#requestOptions(opts, signal)),
      ) as Wire;
    });
  }

  /** Asks the agent to cancel `taskId`; the task as it then is. */
  async cancel(url: string, taskId: string, opts: CallOptions): Promise<Wire> {
    return await this.#bounded(url, opts, async (signal) => {
      const { client } = await this.#client(url, opts, signal);
      return Task.toJSON(
        await client.cancelTask(
          { tenant: "", id: taskId, metadata: undefined },
          this.#requestOptions(opts, signal),
        ),
      ) as Wire;
    });
  }

  #requestOptions(opts: CallOptions, signal: AbortSignal): RequestOptions {
    return { signal, serviceParameters: opts.headers ? { ...opts.headers } : undefined };
  }

  /** Runs `fn` under the call's timeout and signal; every failure becomes an `A2aFailure`. */
  async #bounded<T>(url: string, opts: CallOptions, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort("timeout"), Math.min(opts.timeoutMs, 2 ** 31 - 1));
    const onAbort = () => ac.abort("cancelled");
    if (opts.signal?.aborted) onAbort();
    opts.signal?.addEventListener("abort", onAbort);
    try {
      return await fn(ac.signal);
    } catch (e) {
      if (e instanceof CallbackFailed) throw e.error;
      if (ac.signal.aborted) {
        throw ac.signal.reason === "timeout"
          ? new A2aFailure(`${url}: timed out after ${opts.timeoutMs / 1000} s`, "timeout")
          : new A2aFailure(`${url}: cancelled`, "cancelled");
      }
      if (e instanceof A2aFailure) throw e;
      const reason = (e as { reason?: unknown })?.reason;
      if (typeof reason === "string" && e instanceof Error && "toErrorInfo" in e) {
        throw new A2aFailure(`${url}: ${reason}: ${e.message}`, "remote", reason);
      }
      throw new A2aFailure(`${url}: ${describe(e)}`, "transport");
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
    }
  }

  async #fetchCard(
    url: string,
    headers: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Wire> {
    const where = cardUrl(url);
    let res: Response;
    try {
      res = await this.#fetch(where, { headers: { "A2A-Version": "1.0", ...headers }, signal });
    } catch (e) {
      if (signal.aborted) throw e;
      throw new A2aFailure(`${where}: the agent card could not be fetched: ${describe(e)}`, "card");
    }
    const text = await res.text();
    if (!res.ok) {
      throw new A2aFailure(`${where}: the agent card could not be fetched: HTTP ${res.status}`, "card");
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new A2aFailure(`${where}: malformed agent card: not JSON (${(e as Error).message})`, "card");
    }
    return checkCard(raw, where);
  }

  async #client(url: string, opts: CallOptions, signal: AbortSignal): Promise<Entry> {
    const key = JSON.stringify([cardUrl(url), opts.binding ?? "", opts.headers ?? {}]);
    let entry = this.#clients.get(key);
    if (!entry) {
      entry = (async () => {
        const card = await this.#fetchCard(url, opts.headers, signal);
        if (
          opts.binding &&
          !(card.supportedInterfaces as Wire[]).some((i) => i.protocolBinding === opts.binding)
        ) {
          throw new A2aFailure(`${url}: the agent card offers no ${opts.binding} interface`, "card");
        }
        const fetchImpl = this.#fetch;
        const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
          preferredTransports: opts.binding ? [opts.binding] : undefined,
        }));
        const client = await factory.createFromAgentCard(card as unknown as AgentCard);
        return { card, client };
      })();
      this.#clients.set(key, entry);
      // A failed card is not kept: the next call fetches it again.
      entry.catch(() => this.#clients.delete(key));
    }
    return await entry;
  }
}

function kindName(wireKey: string): string {
  return wireKey === "statusUpdate" ? "status" : wireKey === "artifactUpdate" ? "artifact" : wireKey;
}

/** `completed` for `TASK_STATE_COMPLETED` (wire name or enum); `unknown` for none. */
export function stateName(state: unknown): string {
  if (state === undefined || state === null) return "unknown";
  const s = typeof state === "number" ? TaskState[state] : String(state);
  return (s ?? "unknown").replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-");
}
