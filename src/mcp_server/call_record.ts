/**
 * The kernel record of every call an MCP client makes of the server's runs: a `run_block` call, a
 * declared tool call, a declared resource read, a declared prompt get, a `run_flow` call, a job
 * tool call. `agent-block knl sessions` then shows what the server's clients did, and
 * `knl export --session <id>` one call in full.
 *
 * Owns one kernel session per call, written by this process into the project's kernel database
 * (`<project>/.agent-block/knl.sqlite`, or the path the edge read from `AGENT_BLOCK_KNL_PATH` of the server's environment),
 * through the store's shared connection (`src/knl/store.ts`: the in-process runs of the same
 * file write through it too):
 * - `session_open` (owner `agent-block mcp`, scope `{ mcp = kind, name }`; labels `mcp_kind`,
 *   `mcp_name` and, for `run_block`, `block`) and `mcp_call` (`kind`, `name`, `block`, `uri`,
 *   the `arguments` as the client sent them, the client's `name`/`version` and the protocol era,
 *   whether the run is sandboxed), committed together when the call arrives — before its run
 *   starts, so a call in flight is already listed;
 * - `mcp_result` (`outcome`: the run's outcome status, or `invalid` for a call refused before
 *   any run — bad arguments, an unknown block; `value` or `error`; `ms`; `sessions`: the kernel
 *   sessions the run itself opened) and `session_close` (`ok`; `cancelled` for a cancelled run;
 *   `error` otherwise), committed together when the call ends. A call that is not one block run
 *   (`ServedEnd`) has its own outcome words: a `run_flow` call the flow run's status (`sessions`
 *   and `run` name the flow run, whose session is its id), a job tool call `answered`, `refused`
 *   or `unreachable` with `http_status` and `run` (the job manager's run it concerns).
 *
 * The link goes both ways: the run gets the label `mcp_call=<this session>` (`RunRequest.labels`),
 * which the kernel stamps on every session the run opens, and `mcp_result.sessions` names them; a
 * flow run `run_flow` starts gets the label on its session. A job manager's run is started by the
 * manager, not here: the call names it (`run`), and the sessions it opens carry `run=<id>`.
 *
 * Invariants: the record is written outside the block's run, so a sandboxed run, a run that
 * raises, times out or is cancelled, and a call refused before it runs are recorded alike; a call
 * is recorded once, opened and closed at most once each. A failure to write (a locked or
 * unwritable database) never fails the call: it is logged as an error naming the call, and the
 * result then names no session.
 */
import { isAbsolute, relative } from "node:path";
import { CLIENT_INFO_META_KEY, type Server, type ServerContext } from "@modelcontextprotocol/server";
import { type EventStore, openStore } from "../knl/store.ts";
import { defaultStorePath } from "../knl/paths.ts";
import type { Logger } from "../obs/log.ts";
import type { Outcome } from "../outcome.ts";

/** The owner of every call session. */
export const CALL_OWNER = "agent-block mcp";

/** The run label naming the call session a run serves. */
export const CALL_LABEL = "mcp_call";

/** What a call is, as it arrives. */
export interface CallStart extends Caller {
  /** `tool`, `resource` or `prompt`. */
  kind: "tool" | "resource" | "prompt";
  /** The tool or prompt name (`run_block` for the generic tool), or the resource's URI. */
  name: string;
  /** The block that serves it, when known. */
  block?: string;
  /** The block's file, relative to the project root when inside it (the session's `script`). */
  script?: string;
  /** A resource read's URI. */
  uri?: string;
  /** The arguments as the client sent them (a resource template's variables). */
  arguments: unknown;
  /** The run is confined (`--sandbox`). */
  sandboxed?: boolean;
}

/** Who made a call (its client and protocol era), for its kernel record. */
export interface Caller {
  client?: { name?: string; version?: string };
  era?: string;
}

/** The caller of a request (`clientInfo` of the connection or of the request's envelope). */
export function callerOf(server: Server, ctx: ServerContext): Caller {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const info = (envelope?.[CLIENT_INFO_META_KEY] ?? server.getClientVersion()) as
    | { name?: string; version?: string }
    | undefined;
  return {
    ...(info ? { client: { name: info.name, version: info.version } } : {}),
    era: envelope ? "2026-07-28" : "2025",
  };
}

/**
 * How a call that is not one block run ended: a `run_flow` call that ran its flow, or a job tool
 * call that reached (or tried to reach) the job manager.
 */
export interface ServedEnd {
  /**
   * `mcp_result.outcome`: the flow run's status (`completed`, `waiting`, `failed`, `cancelled`); for a
   * job tool `answered` (2xx), `refused` (the manager answered 4xx/5xx) or `unreachable`.
   */
  outcome: string;
  /** How the call's session closes. */
  close: "ok" | "error" | "cancelled";
  /** The kernel sessions the call's run was recorded in (a flow run's session). */
  sessions?: readonly string[];
  /** The run the call started or named: a flow run's id, or a job manager run's id. */
  run?: string;
  /** The job manager's HTTP status. */
  httpStatus?: number;
  value?: unknown;
  error?: string;
}

/** How a call ended. */
export type CallEnd =
  | { outcome: Outcome; sessions: readonly string[]; value?: unknown; error?: string }
  | { outcome: "invalid"; error: string }
  | ServedEnd;

/** The close status of a call's session, from how it ended. */
export function closeStatus(end: CallEnd): "ok" | "error" | "cancelled" {
  if ("close" in end) return end.close;
  if (end.outcome === "invalid") return "error";
  switch (end.outcome.status) {
    case "returned":
    case "deferred":
      return "ok";
    case "cancelled":
      return "cancelled";
    default:
      return "error";
  }
}

/** `path` relative to `projectRoot` when it lies inside it, else as it is (a session's `script`). */
export function relativeScript(projectRoot: string, path: string): string {
  const r = relative(projectRoot, path);
  return r.startsWith("..") || isAbsolute(r) ? path : r;
}

/** A new call session id: time-ordered, unique across processes. */
function newCallId(): string {
  const rnd = crypto.getRandomValues(new Uint8Array(6));
  return `mcp_${Date.now().toString(36)}_${[...rnd].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** One recorded call, open until `end`. */
export class OpenCall {
  #ended = false;
  readonly #started = performance.now();

  constructor(
    private readonly recorder: CallRecorder,
    /** The call's kernel session, or undefined when it could not be written. */
    readonly session: string | undefined,
    private readonly what: string,
  ) {}

  /** The labels of the call's run: every session the run opens names this call. */
  runLabels(): Record<string, string> {
    return this.session === undefined ? {} : { [CALL_LABEL]: this.session };
  }

  /** Records how the call ended (once; later calls do nothing). */
  end(end: CallEnd): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.session === undefined) return;
    const ms = Math.round(performance.now() - this.#started);
    const data: Record<string, unknown> = "close" in end
      ? {
        outcome: end.outcome,
        ...(end.value !== undefined ? { value: end.value } : {}),
        ...(end.error !== undefined ? { error: end.error } : {}),
        ms,
        sessions: [...end.sessions ?? []],
        ...(end.run !== undefined ? { run: end.run } : {}),
        ...(end.httpStatus !== undefined ? { http_status: end.httpStatus } : {}),
      }
      : end.outcome === "invalid"
      ? { outcome: "invalid", error: end.error, ms, sessions: [] }
      : {
        outcome: end.outcome.status,
        ...(end.value !== undefined ? { value: end.value } : {}),
        ...(end.error !== undefined ? { error: end.error } : {}),
        ms,
        sessions: [...end.sessions],
      };
    const status = closeStatus(end);
    this.recorder.write(this.what, [
      { stream: this.session, kind: "mcp_result", data: JSON.stringify(data), meta: "{}" },
      {
        stream: this.session,
        kind: "session_close",
        data: JSON.stringify(status === "ok" ? { status } : { status, error: data.error ?? status }),
        meta: "{}",
      },
    ]);
  }
}

/** Writes the call sessions of one server into its project's kernel database. */
export class CallRecorder {
  #store: EventStore | undefined;

  /**
   * A recorder for the project at `projectRoot` (`kernelPath`: the server environment's
   * `AGENT_BLOCK_KNL_PATH`, read at the edge).
   */
  constructor(
    projectRoot: string,
    kernelPath: string | undefined,
    private readonly log: Logger,
    /** The database file (default: the project's kernel database). */
    readonly path: string = defaultStorePath(projectRoot, kernelPath),
  ) {}

  /** Records a call's arrival; returns it open (its `session` undefined when the write failed). */
  begin(call: CallStart): OpenCall {
    const id = newCallId();
    const what = `${call.kind} ${call.name}`;
    const labels: Record<string, string> = { mcp_kind: call.kind, mcp_name: call.name };
    if (call.block !== undefined && call.block !== call.name) labels.block = call.block;
    const open = {
      owner: CALL_OWNER,
      scope: { mcp: call.kind, name: call.name },
      ...(call.script !== undefined ? { script: call.script } : {}),
    };
    const data: Record<string, unknown> = { kind: call.kind, name: call.name };
    if (call.block !== undefined) data.block = call.block;
    if (call.uri !== undefined) data.uri = call.uri;
    data.arguments = call.arguments ?? {};
    if (call.client && (call.client.name !== undefined || call.client.version !== undefined)) {
      data.client = call.client;
    }
    if (call.era !== undefined) data.era = call.era;
    if (call.sandboxed) data.sandboxed = true;
    const ok = this.write(what, [
      { stream: id, kind: "session_open", data: JSON.stringify(open), meta: JSON.stringify(labels) },
      { stream: id, kind: "mcp_call", data: JSON.stringify(data), meta: "{}" },
    ]);
    return new OpenCall(this, ok ? id : undefined, what);
  }

  /** Appends `events` in one transaction; false (and logged) when that failed. */
  write(what: string, events: { stream: string; kind: string; data: string; meta: string }[]): boolean {
    try {
      if (!this.#store || this.#store.closed) this.#store = openStore(this.path);
      this.#store.appendMany(events);
      return true;
    } catch (e) {
      this.log.error(
        `the kernel record of ${what} could not be written to ${this.path}: ${(e as Error)?.message ?? e}`,
      );
      return false;
    }
  }
}
