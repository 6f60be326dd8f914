/**
 * The seam between `mesh.*` and the wires that carry it: what every mesh transport provides.
 *
 * Owns the contract only. Two transports implement it: the agent-mesh relay (one WebSocket,
 * signed envelopes, Noise end-to-end encryption; `relay_transport.ts`) and NATS (publish,
 * request/reply and a subject per agent, envelopes still Ed25519-signed; `nats_transport.ts`).
 * `connect.ts` picks one by the URL's scheme and imports it lazily. Nothing here or below knows
 * about Lua: payloads are converter values (`src/json/values.ts`: `LuaFloat` keeps `2.0` a
 * float, `bigint` keeps 64-bit integers exact), and the face in `src/host` words the errors.
 *
 * Invariants every transport keeps:
 * - Inbound requests are read continuously and handed to the handler off the read loop, so a
 *   handler may itself call `request` and get its answer (the original deadlocked there).
 * - A reply is matched to its request by id; a reply nobody waits for (late, unknown) is
 *   dropped, never treated as a new request and never answered.
 * - `from` of every inbound message was verified against its signature before the handler sees
 *   it; a message that fails is dropped (and counted), never delivered.
 * - After `close()` every pending request rejects with kind `closed`, and no handler starts.
 * - The transport reconnects on its own for as long as it is open; requests made while it is
 *   away wait for the connection within their own timeout.
 */
import type { SeenIds } from "./seen_ids.ts";

/** What went wrong, by kind; `remote` carries the peer's error payload. */
export type MeshErrorKind =
  | "timeout" // no reply within the request's timeout
  | "closed" // the transport was closed (the run is ending)
  | "connect" // could not reach or log in to the relay / server
  | "auth" // the relay / server refused this identity or credentials
  | "remote" // the peer answered with an error envelope
  | "unreachable" // nobody listens at the target (NATS: no responders)
  | "too_large" // the payload exceeds the transport's per-message limit
  | "payload" // the payload has no JSON form (a function, NaN, a non-UTF-8 string)
  | "protocol"; // the peer or relay broke the protocol (bad frame, failed decryption)

/** A local mesh failure; never a wire value. */
export class MeshError extends Error {
  /**
   * @param kind what went wrong
   * @param message the whole sentence, naming the peer or URL involved
   * @param remote for `remote`: the error payload the peer sent
   */
  constructor(readonly kind: MeshErrorKind, message: string, readonly remote?: unknown) {
    super(message);
    this.name = "MeshError";
  }
}

/** Per-call options of `send` and `request`. */
export interface MeshCallOptions {
  /** How long to wait for the reply (the transport's default when absent). */
  timeoutMs?: number;
  /** Aborts the wait (the run was cancelled); rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** The answer to a request, with the size of what crossed the wire (for the kernel record). */
export interface MeshReply {
  /** The reply payload as a converter value (JSON `null` is `null`). */
  value: unknown;
  /** Bytes of the request payload as sent (its JSON text, before encryption). */
  sentBytes: number;
  /** Bytes of the reply payload as received (its JSON text, after decryption). */
  receivedBytes: number;
}

/** A request another agent sent to this one. */
export interface MeshInbound {
  /** The sender's AgentId, verified against the message's signature. */
  from: string;
  /** The message id on the wire (the envelope id), which the reply refers to. */
  id: string;
  /** The payload as a converter value. */
  payload: unknown;
  /** Bytes of the payload's JSON text. */
  bytes: number;
  /** Aborted when the sender cancels or the transport closes. */
  signal: AbortSignal;
}

/**
 * Answers one inbound request: its resolved value is the reply payload. A rejection is sent
 * back as the reply `{ error = <message> }` (a normal response, as the original does), so the
 * caller's `request` returns it rather than raising.
 */
export type MeshHandler = (inbound: MeshInbound) => Promise<unknown>;

/** Connection changes, for the run's log (never needed for correctness). */
export type MeshStateEvent =
  | { state: "connected"; url: string; resumed: boolean }
  | { state: "disconnected"; url: string; reason: string }
  | { state: "dropped"; reason: string; from?: string };

/** One open mesh connection for one identity. */
export interface MeshTransport {
  /** This agent's AgentId (43 characters of base64url). */
  readonly agentId: string;
  /** The transport's name for logs and records: `relay` or `nats`. */
  readonly kind: "relay" | "nats";
  /**
   * Delivers `payload` to `to`. The relay has no one-way message, so there this is a request
   * whose reply is awaited and thrown away; NATS publishes it as a request the receiver acks as
   * soon as the message verified (before its handler runs), so an absent peer fails the send.
   * @returns the bytes sent
   * @throws MeshError
   */
  send(to: string, payload: unknown, options?: MeshCallOptions): Promise<{ sentBytes: number }>;
  /**
   * Asks `to` and waits for its answer.
   * @throws MeshError (`remote` when the peer answered with an error envelope)
   */
  request(to: string, payload: unknown, options?: MeshCallOptions): Promise<MeshReply>;
  /** Sets (or clears) the handler for inbound requests; without one they are answered with an error. */
  setHandler(handler: MeshHandler | undefined): void;
  /** Closes the connection: pending requests reject with `closed`; idempotent. */
  close(): Promise<void>;
}

/** How to open a transport; everything comes from the run, nothing from the process. */
export interface MeshConnectOptions {
  /** Gives up connecting (and reconnecting) when aborted. */
  signal?: AbortSignal;
  /** How long the first connection may take before `connect` fails (ms). */
  connectTimeoutMs?: number;
  /** Connection changes and dropped messages, for the run's log. */
  onState?: (event: MeshStateEvent) => void;
  /** NATS credentials: the text of a `.creds` file (`AGENT_BLOCK_NATS_CREDS` names the file). */
  natsCreds?: string;
  /** NATS token (also accepted as `nats://token@host`). */
  natsToken?: string;
  /** An nkey seed (`AGENT_BLOCK_NATS_NKEY` names its file). */
  natsNkeySeed?: string;
  /** PEM text of the CA the NATS server's certificate must chain to (`AGENT_BLOCK_NATS_TLS_CA`). */
  natsTlsCa?: string;
  /**
   * The HTTP proxy the transport reaches its server through (`http://127.0.0.1:PORT`): the
   * sandbox's bridge under `--sandbox-net allow-list`, the run's only way out of its network
   * namespace. The relay's WebSocket goes through it as Deno's WebSocket does through a proxy
   * (`CONNECT` for `wss://`, the upgrade request forwarded for `ws://`); NATS dials a loopback
   * forwarder per server whose connections are `CONNECT` tunnels (`src/net/http_tunnel.ts`). TLS
   * still checks the server's own name. Absent: the server is dialled directly.
   */
  proxy?: string;
  /**
   * The handler for inbound requests from the moment the transport listens (`setHandler` changes
   * it later): set here, no request that arrives while `connect` is still settling is answered
   * "no handler".
   */
  handler?: MeshHandler;
  /**
   * Where the replay window's ids are remembered (`seen_ids.ts`; default: in this process only).
   * The transport closes it when it closes.
   */
  seenIds?: SeenIds;
}
