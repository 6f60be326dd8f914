/**
 * `mesh.*`: the Lua face of the mesh (seed README, "mesh.*"): agents talking to agents.
 *
 * Owns argument checking, the correlation ids stamped on outgoing payloads, the wording of
 * errors (`mesh.request: ...`), the inbound path from the transport to the bus, and what the run
 * records of the traffic. The wire is the Lua-free transport of `src/clients/mesh/` (NATS or the
 * agent-mesh relay), opened before the script runs (`mesh_open.ts`) and handed over through the
 * run (`RunContext.mesh`).
 *
 * Surface:
 * - `mesh.agent_id()` — this agent's AgentId;
 * - `mesh.send(id, payload)` — delivers, returns nothing, raises on failure (default wait 10 s);
 * - `mesh.request(id, payload [, timeout_secs])` — returns the reply (default wait 30 s; JSON
 *   `null` is `std.json.null`); a peer's handler that raised answers `{ error = "..." }`;
 * - `mesh.on(fn)` — exactly `bus.on("mesh", fn)`.
 * Without `--relay` each of the four raises `mesh.<name>: mesh not connected (no --relay
 * specified)`. Every failure is an error table `{ message, source = "mesh", kind, peer }` (`kind`
 * one of the transport's `MeshErrorKind`s, or `not_connected`); `tostring(e)` is the message.
 *
 * Inbound: a request or send another agent made becomes the bus event
 * `{ kind = "mesh", id = <message id>, payload, meta = { from = <verified AgentId> } }`, which
 * waits for `bus.serve` like every event (unless the host serves the bus in the background); the
 * handler's first return value is the reply (nil: JSON null), a handler that raises answers
 * `{ error = <message> }`, and a request nobody handles answers `{ error = "bus: no handler for
 * kind 'mesh' ..." }`. The transport calls the handler off its read loop, so a handler may
 * itself call `mesh.request` (the original deadlocked there).
 *
 * Correlation (`__ab_obs`): a payload that is a table with string keys, or nil, gets
 * `__ab_obs = { trace_id, run_id, agent_id, agent_name }` from the run's correlation ids
 * (`run.correlation`; `agent_id` else the mesh AgentId), each only when non-empty, unless it already has one; arrays, strings
 * and numbers travel untouched. The receiver does not strip it. Each send and request also
 * writes an `ab.obs` line (`event=mesh_send|mesh_request component=mesh target=<id>`) at debug.
 *
 * Tracing (a traced run, `run.trace`): `mesh.request <peer>` (CLIENT) and `mesh.send <peer>`
 * (PRODUCER) spans (`messaging.system` = the transport, `messaging.destination.name` = the peer,
 * `messaging.message.body.size`, `error.type` = the failure's kind), whose W3C `traceparent` goes
 * out in `__ab_obs.traceparent`; an inbound message opens `mesh.receive <from>` (SERVER) for as
 * long as the handler takes — under the sender's span when its `__ab_obs` carries a
 * `traceparent`, else under the run's innermost open span — and what the handler does (an
 * `sh.exec`, a nested `mesh.request`) is its child, so a request across the mesh is one trace
 * when both ends export. An untraced run adds no `traceparent`.
 *
 * Records: with a kernel session open (`run.recordTraffic`), `mesh_send` (a send finished),
 * `mesh_request` (a request went out), `mesh_reply` (its reply came, or it failed) and
 * `mesh_received` (another agent's message arrived) are appended to the innermost one, with
 * the peer, the transport, byte sizes and (for finished calls) `ms`, `ok` and `error` — never the
 * payload, unless the run's settings say so (`settings.mesh.recordPayloads`: the edge read
 * `AGENT_BLOCK_MESH_RECORD_PAYLOADS=1`).
 */
import { LuaCallbackError, type LuaEngine, LuaErrorTable } from "../lua/engine.ts";
import { type Args, LuaArgError } from "../lua/args.ts";
import { obsLine } from "../obs/ab_obs.ts";
import { orderedIds, type RunCorrelationIds } from "../correlation.ts";
import { busCore, type BusHost } from "./bus.ts";
import type { RunContext } from "./context.ts";
import type { TraceSpan } from "../obs/otel/run_trace.ts";
import { MeshError, type MeshHandler, type MeshTransport } from "../clients/mesh/transport.ts";

/** The four functions of the face. */
export const MESH_FUNCTIONS = ["send", "request", "on", "agent_id"] as const;

/** The error every function raises in a run without `--relay`. */
export function notConnected(name: string): LuaErrorTable {
  return new LuaErrorTable(`mesh.${name}: mesh not connected (no --relay specified)`, {
    source: "mesh",
    kind: "not_connected",
  });
}

/** The `__ab_obs` object for a run with correlation ids `ids` and mesh AgentId `agentId` (members only when non-empty). */
export function obsContext(ids: RunCorrelationIds, agentId: string): Record<string, string> {
  return orderedIds(ids, { agent_id: agentId }); // the run's own id, else the mesh's
}

/**
 * `payload` (a converter value) with `__ab_obs` set to `obs`: nil becomes an object holding only
 * it; an object gets it unless it has one already (the caller's wins); anything else (an array, a
 * string, a number, a boolean) is returned unchanged. The input is never modified.
 */
export function withObs(payload: unknown, obs: Record<string, string>): unknown {
  if (payload === undefined || payload === null) return { __ab_obs: obs };
  if (typeof payload !== "object" || Array.isArray(payload) || payload instanceof Uint8Array) return payload;
  const proto = Object.getPrototypeOf(payload);
  if (proto !== Object.prototype && proto !== null) return payload; // LuaFloat, a function ref
  if (Object.hasOwn(payload, "__ab_obs")) return payload;
  return { ...(payload as Record<string, unknown>), __ab_obs: obs };
}

/** A transport failure as the error table Lua receives. */
function meshErrorTable(fn: string, peer: string, e: unknown, scrub: (s: string) => string): Error {
  if (e instanceof LuaArgError || (e as Error)?.name === "AbortError") return e as Error;
  const kind = e instanceof MeshError ? e.kind : "protocol";
  const fields: Record<string, unknown> = { source: "mesh", kind, peer };
  if (e instanceof MeshError && e.remote !== undefined) fields.remote = e.remote;
  return new LuaErrorTable(scrub(`mesh.${fn}: ${(e as Error)?.message ?? e}`), fields);
}

/** Host module for `mesh.*`. */
export function installMesh(engine: LuaEngine, run: RunContext): void {
  const mesh = run.mesh;
  if (!mesh) {
    for (const name of MESH_FUNCTIONS) {
      engine.define(`mesh.${name}`, {
        sync: () => {
          throw notConnected(name);
        },
      });
    }
    return;
  }
  const { transport, bus } = mesh;
  const record = recorder(run, transport.kind);
  const obs = (event: string, target: string) => {
    if (run.log.enabled("debug")) {
      const ids = obsContext(run.correlation, transport.agentId);
      run.log.debug(obsLine(event, "mesh", { target }, {
        trace_id: ids.trace_id ?? "",
        run_id: ids.run_id ?? "",
        agent_id: ids.agent_id ?? "",
        agent_name: ids.agent_name ?? "",
      }));
    }
  };
  const peerArg = (a: Args): string => {
    const id = a.string(1, "agent_id");
    if (id === "") a.fail(1, "agent_id", "an AgentId", "an empty string");
    return id;
  };
  const scrub = (s: string) => run.secrets.scrub(s);
  // A traced run: a span per send / request, its traceparent in the payload's `__ab_obs`.
  const traced = (op: "send" | "request", peer: string): TraceSpan | undefined =>
    run.trace?.start(`mesh.${op} ${peer}`, op === "send" ? "producer" : "client", {
      "messaging.system": transport.kind,
      "messaging.operation.name": op,
      "messaging.operation.type": "send",
      "messaging.destination.name": peer,
    });
  const obsOf = (span: TraceSpan | undefined): Record<string, string> => {
    const ids = obsContext(run.correlation, transport.agentId);
    if (span) ids.traceparent = span.traceparent();
    return ids;
  };

  engine.define("mesh.agent_id", { sync: () => transport.agentId });

  engine.define("mesh.send", {
    floats: "tagged",
    async: async (a, cx) => {
      const peer = peerArg(a);
      const span = traced("send", peer);
      const payload = withObs(a.at(2), obsOf(span));
      obs("mesh_send", peer);
      const t0 = performance.now();
      try {
        const r = await transport.send(peer, payload, { signal: cx.signal });
        record("mesh_send", { peer, bytes: r.sentBytes, ms: ms(t0), ok: true }, payload);
        span?.set({ "messaging.message.body.size": r.sentBytes });
        span?.end();
      } catch (e) {
        const err = meshErrorTable("send", peer, e, scrub);
        record("mesh_send", { peer, ms: ms(t0), ok: false, error: err.message }, payload);
        spanFailed(span, e, err.message);
        throw err;
      }
    },
  });

  engine.define("mesh.request", {
    floats: "tagged",
    async: async (a, cx) => {
      const peer = peerArg(a);
      const timeout = a.optNumber(3, "timeout");
      if (timeout !== undefined && !(timeout > 0)) a.fail(3, "timeout", "a positive number of seconds");
      const span = traced("request", peer);
      const payload = withObs(a.at(2), obsOf(span));
      obs("mesh_request", peer);
      record("mesh_request", { peer }, payload);
      const t0 = performance.now();
      try {
        const r = await transport.request(peer, payload, {
          signal: cx.signal,
          timeoutMs: timeout !== undefined ? timeout * 1000 : undefined,
        });
        record("mesh_reply", {
          peer,
          sent_bytes: r.sentBytes,
          bytes: r.receivedBytes,
          ms: ms(t0),
          ok: true,
        }, r.value);
        span?.set({ "messaging.message.body.size": r.sentBytes });
        span?.end();
        return r.value === undefined ? null : r.value;
      } catch (e) {
        const err = meshErrorTable("request", peer, e, scrub);
        record("mesh_reply", { peer, ms: ms(t0), ok: false, error: err.message });
        spanFailed(span, e, err.message);
        throw err;
      }
    },
  });

  const core = busCore(bus);
  engine.define("mesh.on", {
    functions: "ref",
    sync: (a) => {
      core.setLua("mesh", a.func(1, "fn"));
    },
  });
}

/** Records one kind of mesh traffic in the run's open kernel session (see the module doc). */
type Recorder = (kind: string, data: Record<string, unknown>, payload?: unknown) => void;

function recorder(run: RunContext, kind: MeshTransport["kind"]): Recorder {
  const withPayloads = run.settings.mesh?.recordPayloads === true;
  return (what, data, payload) => {
    const rec = run.recordTraffic;
    if (!rec) return;
    if (withPayloads && payload !== undefined) data.payload = payload;
    rec(what, { ...data, transport: kind });
  };
}

/**
 * The handler that routes a transport's inbound requests into the run's bus as `mesh` events
 * (see the module doc). The host hands it to `connectMesh` (`MeshConnectOptions.handler`), so it
 * is in place from the moment the run listens — a script that only calls `bus.on("mesh", fn)`
 * is served too, without touching `mesh`, and a request that arrives while the connection is
 * still settling waits in the bus for the script's handler instead of being answered "no handler".
 * @param kind the transport's kind (recorded with the traffic)
 */
export function inboundHandler(run: RunContext, kind: MeshTransport["kind"], bus: BusHost): MeshHandler {
  const record = recorder(run, kind);
  return async (m) => {
    record("mesh_received", { peer: m.from, bytes: m.bytes, id: m.id }, m.payload);
    const parent = traceparentOf(m.payload);
    const span = run.trace?.start(`mesh.receive ${m.from}`, "server", {
      "messaging.system": kind,
      "messaging.operation.name": "receive",
      "messaging.operation.type": "process",
      "messaging.source.name": m.from,
      "messaging.message.id": m.id,
      "messaging.message.body.size": m.bytes,
    }, parent);
    try {
      // lossless: a handler's `2.0` goes back as `2.0`
      const reply = await busCore(bus).emit("mesh", m.payload, {
        id: m.id,
        meta: { from: m.from },
        lossless: true,
      });
      span?.end();
      return reply;
    } catch (e) {
      // the reply says what went wrong in words: an error table raised by the handler reads as
      // its message, as `tostring(e)` would
      const text = run.secrets.scrub(handlerErrorText(e));
      span?.fail("handler_error", text);
      span?.end();
      throw new Error(text);
    }
  };
}

/** The `traceparent` a payload's `__ab_obs` carries, if any. */
function traceparentOf(payload: unknown): string | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const obs = (payload as { __ab_obs?: unknown }).__ab_obs;
  if (typeof obs !== "object" || obs === null) return undefined;
  const tp = (obs as { traceparent?: unknown }).traceparent;
  return typeof tp === "string" ? tp : undefined;
}

/** Ends a mesh span as failed: `error.type` is the transport's error kind. */
function spanFailed(span: TraceSpan | undefined, e: unknown, message: string): void {
  if (!span) return;
  span.fail(
    e instanceof MeshError ? e.kind : (e as Error)?.name === "AbortError" ? "cancelled" : "_OTHER",
    message,
  );
  span.end();
}

/** The text of a handler's failure: an error table's `message`, else the error's own text. */
export function handlerErrorText(e: unknown): string {
  if (e instanceof LuaCallbackError) {
    const v = e.value as { message?: unknown } | undefined;
    if (typeof v === "object" && v !== null && typeof v.message === "string") return v.message;
  }
  return (e as Error)?.message ?? String(e);
}

function ms(t0: number): number {
  return Math.round((performance.now() - t0) * 10) / 10;
}
