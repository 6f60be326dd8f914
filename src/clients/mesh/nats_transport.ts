/**
 * NATS as a mesh transport: many agent-block processes on many machines address each other
 * through an existing NATS server or cluster instead of one relay.
 *
 * Owns the subject layout, the signed message format, verification of what arrives, and the
 * mapping of the NATS client's connection and request failures onto `MeshError` kinds. The client
 * is the official one (`@nats-io/transport-node`, which runs under Deno through its Node
 * compatibility); it is loaded only when a run names a `nats://` URL (`connect.ts`).
 *
 * Subjects: agent `A` subscribes to `ab.agent.<A>` (an AgentId is base64url: no `.`, `*` or `>`).
 * `request` is a NATS request to the target's subject; `send` is one too, answered by the
 * receiver with a signed `ack` as soon as the message verified (before its handler runs), so a
 * send to an agent nobody runs fails ("no responders") instead of vanishing, at the price of one
 * round trip the server would otherwise spend on a flush.
 *
 * Wire format (ours: only agent-blocks speak it). The body is the exact UTF-8 JSON text
 *   {"v":1,"id":<uuid>,"from":<AgentId>,"to":<AgentId>,"type":<t>,["re":<uuid>,]"ts":<ms>,"payload":<json>}
 * with `type` one of `request`, `send` (asking), `reply`, `ack` (answering; `re` is the id asked).
 * The header `Ab-Sig` holds the base64url Ed25519 signature of `from` over those exact bytes, so
 * nothing is re-serialised before verifying.
 *
 * Invariants (beyond those of `transport.ts`):
 * - An inbound message is delivered only when its signature verifies against `from`, `to` is
 *   this agent (a message signed for another agent cannot be replayed here), `ts` lies within
 *   `FRESH_MS` (5 minutes) of this clock, and its `id` was not seen before while the message is
 *   fresh (replays are dropped; the memory is `seen_ids.ts`: the caller's `seenIds` — a run's is
 *   the project's file, so a restarted agent still refuses a captured message, or a confined
 *   run's launcher's, asked over a socket (`seen_remote.ts`), whose answer is awaited before the
 *   message goes anywhere and whose failure drops it — else this process's, bounded by
 *   `SEEN_MAX`). Everything else is dropped, counted and reported as
 *   `dropped` — never answered, so a forger learns nothing.
 * - A reply is accepted only when it is signed by the agent asked, addressed to this agent and
 *   refers to the request's id; the first answer on the request's inbox decides (an answer that
 *   fails verification fails the request as `protocol`: a party able to answer on other agents'
 *   inboxes can disturb, not forge; NATS permissions on `_INBOX.>` keep it out).
 * - A payload whose message would exceed the server's `max_payload` fails as `too_large` before
 *   anything is sent; a target nobody subscribes to fails at once as `unreachable`.
 * - The client reconnects for as long as the transport is open (no attempt limit, 0.5 s apart
 *   plus jitter) and restores the subscription. A call made while the server is away waits for
 *   the connection within its own timeout (a request written into a dying connection would be
 *   lost), and for `RESETTLE_MS` after a reconnect "no responders" is taken for a peer that has
 *   not resubscribed yet: the same message is sent again (nobody saw it) within the timeout.
 * - With `MeshConnectOptions.proxy` (the sandbox's allow-list: the run has no route out) the
 *   client never dials a server itself: it dials one loopback forwarder per URL
 *   (`src/net/http_tunnel.ts`), each connection a `CONNECT` tunnel through the proxy to that
 *   URL's host and port (the proxy resolves the name and checks it against the list; a refusal
 *   is named in the connect error). Gossiped cluster addresses are ignored (only the URLs given
 *   are used). TLS is the forwarder's (`nats_tunnel_tls.ts`): each one checks its server's
 *   certificate for the host its URL names — never the forwarder's 127.0.0.1, and in a cluster
 *   each server for its own name — when the server demands or offers TLS, or the URL (`tls://`)
 *   or a CA (`natsTlsCa`) asks for it; the client speaks plain NATS to the forwarders. The
 *   forwarders end with the transport.
 *
 * Signatures use Deno's native Ed25519 through `node:crypto` (synchronous): signing and verifying
 * both messages of a round trip costs about 0.1 ms, against about 0.55 ms through WebCrypto (each
 * operation a trip to a worker thread) and 1.6 ms with the pure-JS signer (measured on 2 shared
 * cores).
 */
import {
  connect,
  headers as natsHeaders,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type NodeConnectionOptions,
} from "@nats-io/transport-node";
import { natsConnectionOptions } from "../nats/connection.ts";
import type { NatsTarget } from "../nats/urls.ts";
import { JsonError, parseJson, stringifyJson } from "../../json/codec.ts";
import { tunnelForwarder } from "../../net/http_tunnel.ts";
import { type NatsTlsOptions, natsTlsStep } from "./nats_tunnel_tls.ts";
import { encodeBase64Url } from "./base64url.ts";
import { FRESH_MS, MemorySeenIds, SEEN_MAX, type SeenIds } from "./seen_ids.ts";
import { agentIdKey, type MeshIdentity, NativeVerifier } from "./identity.ts";
import {
  type MeshCallOptions,
  type MeshConnectOptions,
  MeshError,
  type MeshHandler,
  type MeshReply,
  type MeshStateEvent,
  type MeshTransport,
} from "./transport.ts";

/** The subject prefix every agent's subject starts with. */
export const SUBJECT_PREFIX = "ab.agent.";
/** The header carrying the sender's signature over the body. */
export const SIGNATURE_HEADER = "Ab-Sig";
export { FRESH_MS, SEEN_MAX };
/** Default timeouts, as the original: a send waits 10 s for its ack, a request 30 s. */
export const SEND_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long after a reconnect "no responders" may mean a peer that has not resubscribed yet, ms. */
const RESETTLE_MS = 3_000;
/** How long a closing transport waits for handlers' answers, then for the server's flush, ms. */
const CLOSE_GRACE_MS = 2_000;
/** Room left in a message for the envelope's headers (the signature header and NATS framing). */
const HEADER_ROOM = 256;

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type WireType = "request" | "send" | "reply" | "ack";

/** A verified message. */
interface Verified {
  id: string;
  from: string;
  type: WireType;
  re?: string;
  payload: unknown;
  bytes: number;
  ts: number;
  /** When it arrived (this clock, ms): what the seen-ids check is made against. */
  now: number;
}

/** The subject agent `agentId` listens on. */
export function subjectOf(agentId: string): string {
  return SUBJECT_PREFIX + agentId;
}

/** Builds the body text of a message (the bytes the signature covers). */
function bodyText(
  id: string,
  from: string,
  to: string,
  type: WireType,
  re: string | undefined,
  payloadText: string,
): string {
  return `{"v":1,"id":"${id}","from":"${from}","to":"${to}","type":"${type}",` +
    (re !== undefined ? `"re":"${re}",` : "") + `"ts":${Date.now()},"payload":${payloadText}}`;
}

/** The JSON text of a payload, or a `payload` error naming what has no JSON form. */
function payloadTextOf(payload: unknown, what: string): string {
  try {
    return stringifyJson(payload ?? null);
  } catch (e) {
    if (e instanceof JsonError || e instanceof TypeError) {
      throw new MeshError("payload", `${what}: the payload has no JSON form: ${e.message}`);
    }
    throw e;
  }
}

/** Why a NATS connect failed, as a `MeshError`. */
function connectError(url: string, e: unknown): MeshError {
  const err = e as Error;
  const text = `${err?.message ?? e}`;
  const auth = err?.name === "AuthorizationError" || /authoriz|authenticat|credential/i.test(text);
  return new MeshError(auth ? "auth" : "connect", `connect to ${url} failed: ${text}`);
}

/** Opens a NATS transport for `identity` on the servers of `target` (one or a cluster). */
export async function connectNats(
  target: NatsTarget,
  identity: MeshIdentity,
  options: MeshConnectOptions = {},
): Promise<MeshTransport> {
  const shown = target.shown;
  // the queue's connection rules (credentials: a creds file, then an nkey, then the URL's user and
  // password, then a token; TLS with the CA given, or with the system's roots for a `tls://` URL)
  const opts: NodeConnectionOptions = {
    ...natsConnectionOptions(target, {
      creds: options.natsCreds,
      nkeySeed: options.natsNkeySeed,
      token: options.natsToken,
      tlsCa: options.natsTlsCa,
    }, `agent-block ${identity.agentId}`),
    timeout: options.connectTimeoutMs ?? 10_000,
    noEcho: false,
  };
  // Under the sandbox's allow-list the client dials a loopback forwarder per server, each
  // connection a CONNECT tunnel through the proxy to the real server (`http_tunnel.ts`), whose
  // TLS the forwarder does, checked for that server's name (`nats_tunnel_tls.ts`).
  let tunnelled: TunnelledServers | undefined;
  if (options.proxy !== undefined) {
    tunnelled = tunnelServers(target.servers, options.proxy, {
      required: opts.tls !== undefined,
      ca: options.natsTlsCa,
      timeoutMs: options.connectTimeoutMs ?? 10_000,
    });
    opts.servers = tunnelled.servers;
    delete opts.tls; // plain NATS to the forwarders
    // a server's gossiped peers are addresses the list does not name: only the given URLs are used
    opts.ignoreClusterUpdates = true;
  }
  let nc: NatsConnection;
  const abort = options.signal;
  const failed = (e: unknown) => {
    tunnelled?.close();
    const err = connectError(shown, e);
    const refused = tunnelled?.refused();
    return refused === undefined ? err : new MeshError(err.kind, `${err.message}; ${refused}`);
  };
  if (abort?.aborted) {
    tunnelled?.close();
    throw new MeshError("closed", `connect to ${shown} cancelled`);
  }
  try {
    nc = await connect(opts);
  } catch (e) {
    throw failed(e);
  }
  if (abort?.aborted) {
    await nc.close().catch(() => {});
    tunnelled?.close();
    throw new MeshError("closed", `connect to ${shown} cancelled`);
  }
  const t = new NatsTransport(nc, identity, shown, options.onState, options.seenIds, options.handler);
  const forwarders = tunnelled;
  if (forwarders !== undefined) t.onClosed(() => forwarders.close());
  try {
    await t.ready(); // the server has the subscription: a peer may ask from now on
  } catch (e) {
    await t.close();
    throw failed(e);
  }
  abort?.addEventListener("abort", () => void t.close(), { once: true });
  return t;
}

/** The loopback forwarders standing for the servers of `urls` under a proxy. */
interface TunnelledServers {
  /** `127.0.0.1:<port>`, one per URL, in order. */
  servers: string[];
  /** Why the last connection refused (by the proxy, or at TLS) was refused, if one was. */
  refused(): string | undefined;
  close(): void;
}

/**
 * One forwarder per server (`host:port`, IPv6 in brackets), each connection a tunnel through
 * `proxy`, TLS done for that server's host (`tls`: the rest of `NatsTlsOptions`).
 */
function tunnelServers(
  servers: readonly string[],
  proxy: string,
  tls: Omit<NatsTlsOptions, "host">,
): TunnelledServers {
  let lastRefusal: string | undefined;
  const forwarders = servers.map((server) => {
    const u = new URL(`nats://${server}`);
    const host = u.hostname.replace(/^\[|\]$/g, "");
    return tunnelForwarder(proxy, host, Number(u.port || "4222"), {
      onRefused: (why) => lastRefusal = why,
      upstream: natsTlsStep({ ...tls, host }),
    });
  });
  return {
    servers: forwarders.map((f) => `127.0.0.1:${f.port}`),
    refused: () => lastRefusal,
    close: () => forwarders.forEach((f) => f.close()),
  };
}

class NatsTransport implements MeshTransport {
  readonly kind = "nats" as const;
  readonly agentId: string;
  /** Messages dropped because they failed verification (for tests and logs). */
  dropped = 0;
  #nc: NatsConnection;
  #identity: MeshIdentity;
  #url: string;
  #onState: ((e: MeshStateEvent) => void) | undefined;
  #handler: MeshHandler | undefined;
  #keys = new NativeVerifier();
  #seen: SeenIds;
  #closed = false;
  #closing: Promise<void> | undefined;
  #onClosed: (() => void)[] = [];
  /** Aborted on close: pending calls reject with `closed`, handler signals abort. */
  #life = new AbortController();
  /** While the connection is away: resolved when it is back. */
  #offline: { promise: Promise<void>; back: () => void } | undefined;
  /** When the connection last came back (ms since the epoch; 0: never lost). */
  #reconnectedAt = 0;
  /** Inbound messages being handled (their answers are sent before the connection closes). */
  #inflight = new Set<Promise<void>>();

  constructor(
    nc: NatsConnection,
    identity: MeshIdentity,
    url: string,
    onState: ((e: MeshStateEvent) => void) | undefined,
    seen: SeenIds = new MemorySeenIds(),
    handler?: MeshHandler,
  ) {
    this.#seen = seen;
    this.#handler = handler; // before the subscription: nothing arrives handler-less
    this.#nc = nc;
    this.agentId = identity.agentId;
    this.#identity = identity;
    this.#url = url;
    this.#onState = onState;
    nc.subscribe(subjectOf(this.agentId), {
      callback: (err, msg) => {
        if (!err) void this.#inbound(msg);
      },
    });
    onState?.({ state: "connected", url, resumed: false });
    this.#watchStatus();
  }

  async #watchStatus(): Promise<void> {
    try {
      for await (const s of this.#nc.status()) {
        if (s.type === "disconnect") {
          if (!this.#offline) {
            let back!: () => void;
            this.#offline = { promise: new Promise<void>((r) => (back = r)), back };
          }
          this.#onState?.({ state: "disconnected", url: this.#url, reason: `lost ${s.server}` });
        } else if (s.type === "reconnect") {
          this.#reconnectedAt = Date.now();
          this.#offline?.back();
          this.#offline = undefined;
          this.#onState?.({ state: "connected", url: this.#url, resumed: true });
        }
      }
    } catch { /* the status stream ends with the connection */ }
  }

  /** Resolves once the server has this agent's subscription (a round trip). */
  ready(): Promise<void> {
    return this.#nc.flush();
  }

  setHandler(handler: MeshHandler | undefined): void {
    this.#handler = handler;
  }

  async send(to: string, payload: unknown, options: MeshCallOptions = {}): Promise<{ sentBytes: number }> {
    const r = await this.#call("send", to, payload, options.timeoutMs ?? SEND_TIMEOUT_MS, options.signal);
    return { sentBytes: r.sentBytes };
  }

  request(to: string, payload: unknown, options: MeshCallOptions = {}): Promise<MeshReply> {
    return this.#call("request", to, payload, options.timeoutMs ?? REQUEST_TIMEOUT_MS, options.signal);
  }

  #signed(data: Uint8Array): MsgHdrs {
    const sig = this.#identity.signNative(data);
    const hdrs = natsHeaders();
    hdrs.set(SIGNATURE_HEADER, encodeBase64Url(sig));
    return hdrs;
  }

  #tooLarge(what: string, size: number): MeshError | undefined {
    const max = this.#nc.info?.max_payload;
    if (max === undefined || size + HEADER_ROOM <= max) return undefined;
    return new MeshError(
      "too_large",
      `${what}: the message is ${size} bytes, more than the server's limit of ${max - HEADER_ROOM} ` +
        `(max_payload ${max} less ${HEADER_ROOM} for the envelope's headers)`,
    );
  }

  async #call(
    type: "send" | "request",
    to: string,
    payload: unknown,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<MeshReply> {
    const what = `${type} to ${to}`;
    if (this.#closed) throw new MeshError("closed", `${what}: the mesh connection is closed`);
    try {
      agentIdKey(to);
    } catch (e) {
      throw new MeshError("payload", `${what}: not an AgentId: ${(e as Error).message}`);
    }
    const payloadText = payloadTextOf(payload, what);
    const id = crypto.randomUUID();
    const body = bodyText(id, this.agentId, to, type, undefined, payloadText);
    const data = enc.encode(body);
    const big = this.#tooLarge(what, data.length);
    if (big) throw big;
    // the envelope around the payload is ASCII: its UTF-16 length is its byte length
    const sentBytes = data.length - (body.length - payloadText.length);
    const hdrs = this.#signed(data);
    if (this.#closed) throw new MeshError("closed", `${what}: the mesh connection is closed`);
    signal?.throwIfAborted();
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      onAbort = () =>
        reject(
          this.#life.signal.aborted
            ? new MeshError("closed", `${what}: the mesh connection closed before the answer came`)
            : signal!.reason,
        );
      this.#life.signal.addEventListener("abort", onAbort, { once: true });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    stopped.catch(() => {}); // when the request settles first, nobody awaits this one
    let msg: Msg;
    try {
      msg = await Promise.race([this.#deliver(to, data, hdrs, timeoutMs), stopped]);
    } catch (e) {
      throw this.#requestError(what, to, timeoutMs, e);
    } finally {
      this.#life.signal.removeEventListener("abort", onAbort!);
      signal?.removeEventListener("abort", onAbort!);
    }
    const answer = this.#verify(msg, this.agentId);
    const expected = type === "send" ? "ack" : "reply";
    if (typeof answer === "string" || answer.type !== expected || answer.from !== to || answer.re !== id) {
      const why = typeof answer === "string"
        ? answer
        : answer.from !== to
        ? `signed by ${answer.from}, not by ${to}`
        : answer.re !== id
        ? "it answers another request"
        : `a '${answer.type}' where a '${expected}' was due`;
      throw new MeshError("protocol", `${what}: the answer failed verification (${why})`);
    }
    return { value: answer.payload, sentBytes, receivedBytes: answer.bytes };
  }

  /**
   * The NATS request of one call. While the connection is away it first waits for it (a request
   * written into a dying connection is lost); right after it came back, a peer that has not
   * resubscribed yet answers "no responders", so then the same message is sent again (no peer
   * saw it) until `RESETTLE_MS` after the reconnect — all within the call's timeout.
   */
  async #deliver(to: string, data: Uint8Array, hdrs: MsgHdrs, timeoutMs: number): Promise<Msg> {
    const deadline = Date.now() + timeoutMs;
    const timedOut = () => new TimeoutLike();
    while (true) {
      if (this.#offline) {
        const left = deadline - Date.now();
        if (left <= 0 || !(await waitFor(this.#offline.promise, left))) throw timedOut();
      }
      const left = deadline - Date.now();
      if (left <= 0) throw timedOut();
      try {
        return await this.#nc.request(subjectOf(to), data, { timeout: left, headers: hdrs });
      } catch (e) {
        const settling = Date.now() - this.#reconnectedAt < RESETTLE_MS || this.#offline !== undefined;
        if (!settling || !isNoResponders(e) || Date.now() + 100 >= deadline) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  #requestError(what: string, to: string, timeoutMs: number, e: unknown): unknown {
    if (e instanceof MeshError || (e as Error)?.name === "AbortError") return e;
    const err = e as Error & { isNoResponders?: () => boolean };
    if (isNoResponders(err)) {
      return new MeshError(
        "unreachable",
        `${what}: no agent is listening on ${subjectOf(to)} (NATS: no responders)`,
      );
    }
    if (err?.name === "TimeoutError" || (err?.cause as Error)?.name === "TimeoutError") {
      return new MeshError("timeout", `${what}: no answer within ${timeoutMs / 1000} s`);
    }
    if (this.#closed || err?.name === "ClosedConnectionError") {
      return new MeshError("closed", `${what}: the mesh connection is closed`);
    }
    if (err?.name === "InvalidArgumentError" && /max_payload/.test(err.message)) {
      return new MeshError("too_large", `${what}: ${err.message}`);
    }
    return new MeshError("connect", `${what} over ${this.#url} failed: ${err?.message ?? e}`);
  }

  /**
   * The verified content of `msg` addressed to `me`, or why it is not valid. Checks the
   * signature, `to`, freshness and (for messages asking something) replays.
   */
  #verify(msg: Msg, me: string): Verified | string {
    const sig = msg.headers?.get(SIGNATURE_HEADER);
    if (!sig) return "unsigned";
    let text: string;
    try {
      text = dec.decode(msg.data);
    } catch {
      return "not UTF-8";
    }
    let v: Record<string, unknown>;
    try {
      v = parseJson(text) as Record<string, unknown>;
    } catch {
      return "not JSON";
    }
    if (typeof v !== "object" || v === null || Array.isArray(v) || v.v !== 1) return "not a v1 message";
    const { id, from, to, type, re, ts } = v;
    if (typeof id !== "string" || !UUID.test(id)) return "bad id";
    if (typeof from !== "string") return "no from";
    if (to !== me) return "addressed to another agent";
    if (type !== "request" && type !== "send" && type !== "reply" && type !== "ack") return "unknown type";
    if (re !== undefined && (typeof re !== "string" || !UUID.test(re))) return "bad re";
    if (typeof ts !== "number" || !Number.isFinite(ts)) return "bad ts";
    if (!("payload" in v)) return "no payload";
    if (!this.#keys.verify(from, msg.data, sig)) return `the signature does not verify against from ${from}`;
    const now = Date.now();
    if (Math.abs(now - ts) > FRESH_MS) {
      return `stale (ts ${ts} is more than ${FRESH_MS / 60_000} minutes away)`;
    }
    const at = text.indexOf(`"payload":`);
    // what precedes the payload verified as ASCII (ids, AgentIds, a number): indexes are bytes
    const bytes = at < 0 ? msg.data.length : msg.data.length - at - 11;
    return { id, from, type, re: re as string | undefined, payload: v.payload, bytes, ts, now };
  }

  /**
   * Why `m` (a `request` or `send`) is refused as a replay, or undefined when its id is new (now
   * remembered). Asynchronous only when the memory is (the sandbox launcher's, `seen_remote.ts`):
   * a memory that fails, or is gone, refuses the message.
   */
  #replayed(m: Verified): string | undefined | Promise<string | undefined> {
    const why = (e: unknown) => `its id could not be checked against the seen ids: ${(e as Error).message}`;
    const judge = (fresh: boolean) => fresh ? undefined : `replayed id ${m.id}`;
    let fresh: boolean | Promise<boolean>;
    try {
      fresh = this.#seen.add(m.id, m.ts, m.now);
    } catch (e) {
      return why(e);
    }
    return typeof fresh === "boolean" ? judge(fresh) : fresh.then(judge, why);
  }

  #drop(reason: string, from?: string): void {
    this.dropped++;
    this.#onState?.({ state: "dropped", reason, from });
  }

  #inbound(msg: Msg): void {
    if (this.#closed) return;
    const p = this.#handle(msg);
    this.#inflight.add(p);
    p.finally(() => this.#inflight.delete(p));
  }

  async #handle(msg: Msg): Promise<void> {
    const m = this.#verify(msg, this.agentId);
    if (typeof m === "string") {
      const from = peekFrom(msg);
      return this.#drop(`inbound message refused: ${m}`, from);
    }
    if (m.type !== "request" && m.type !== "send") {
      return this.#drop(`inbound '${m.type}' nobody asked for`, m.from); // never answered
    }
    let replayed = this.#replayed(m);
    if (typeof replayed === "object") replayed = await replayed; // only a memory that is asynchronous
    if (replayed !== undefined) return this.#drop(`inbound message refused: ${replayed}`, peekFrom(msg));
    if (!msg.reply) return this.#drop(`inbound ${m.type} without a reply subject`, m.from);
    if (this.#closed) return;
    if (m.type === "send") this.#answer(msg, m, "ack", null);
    const handler = this.#handler;
    let value: unknown;
    try {
      if (!handler) throw new Error("no handler for mesh requests (the block set none)");
      value = await handler({
        from: m.from,
        id: m.id,
        payload: m.payload,
        bytes: m.bytes,
        signal: this.#life.signal,
      });
    } catch (e) {
      value = { error: (e as Error)?.message ?? String(e) };
    }
    if (m.type === "send" || this.#nc.isClosed()) return;
    this.#answer(msg, m, "reply", value);
  }

  /** Sends the signed answer to `m`; a failure to send is reported (the asker times out). */
  #answer(msg: Msg, m: Verified, type: "reply" | "ack", value: unknown): void {
    try {
      this.#answerOrThrow(msg, m, type, value);
    } catch (e) {
      this.#drop(`could not answer ${m.from}: ${(e as Error).message}`, m.from);
    }
  }

  #answerOrThrow(msg: Msg, m: Verified, type: "reply" | "ack", value: unknown): void {
    const what = `reply to ${m.from}`;
    let text: string;
    try {
      text = payloadTextOf(value, what);
    } catch (e) {
      text = stringifyJson({ error: (e as Error).message });
    }
    let data = enc.encode(bodyText(crypto.randomUUID(), this.agentId, m.from, type, m.id, text));
    const big = this.#tooLarge(what, data.length);
    if (big) {
      text = stringifyJson({ error: big.message });
      data = enc.encode(bodyText(crypto.randomUUID(), this.agentId, m.from, type, m.id, text));
    }
    msg.respond(data, { headers: this.#signed(data) });
  }

  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    this.#closed = true;
    this.#life.abort();
    this.#closing = (async () => {
      // answers of handlers that finish now still go out (a block that answers and then ends)
      await bounded(Promise.allSettled([...this.#inflight]), CLOSE_GRACE_MS);
      await bounded(this.#nc.flush().catch(() => {}), CLOSE_GRACE_MS);
      await this.#nc.close().catch(() => {});
      this.#seen.close();
      for (const fn of this.#onClosed.splice(0)) fn();
    })();
    return this.#closing;
  }

  /** Runs `fn` once the connection is closed (what the transport holds besides it: its forwarders). */
  onClosed(fn: () => void): void {
    this.#onClosed.push(fn);
  }
}

/** A request that ran out of time while the connection was away (mapped to kind `timeout`). */
class TimeoutLike extends Error {
  override name = "TimeoutError";
}

/** True when the NATS client says nobody subscribes to the subject. */
function isNoResponders(e: unknown): boolean {
  const err = e as Error & { isNoResponders?: () => boolean };
  return err?.isNoResponders?.() === true || (err?.cause as Error)?.constructor?.name === "NoRespondersError";
}

/** True when `p` settles within `ms`. */
async function waitFor(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const r = await Promise.race([
    p.then(() => true),
    new Promise<boolean>((res) => (timer = setTimeout(() => res(false), ms))),
  ]);
  clearTimeout(timer);
  return r;
}

/** Waits for `p`, at most `ms`. */
async function bounded(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** The `from` a refused message claims, for the report (never trusted). */
function peekFrom(msg: Msg): string | undefined {
  try {
    const from = (JSON.parse(new TextDecoder().decode(msg.data)) as { from?: unknown }).from;
    return typeof from === "string" ? from.slice(0, 64) : undefined;
  } catch {
    return undefined;
  }
}
