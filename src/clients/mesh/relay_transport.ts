/**
 * The agent-mesh relay transport: one WebSocket to `ws(s)://host:port/ws`, the relay's login,
 * signed envelopes and Noise end-to-end encryption per peer (agent-mesh 0.3.2 on the wire).
 *
 * Owns, for one identity: the login (hello → nonce → signature over the nonce string's UTF-8 →
 * session token, or a resume with a token younger than its 300 s), the read loop, one Noise
 * session per peer shared by both roles, request/reply correlation, cancel, and reconnection.
 *
 * Invariants (besides the ones `transport.ts` states for every transport):
 * - Every inbound frame is parsed, its `to` checked and its signature verified against its
 *   `from` before anything acts on it; a frame that fails, an over-long frame, a reply nobody
 *   waits for (late or unknown), an encrypted message without a session and a new peer's
 *   handshake beyond `MAX_HANDSHAKES` in progress are dropped and reported through `onState`
 *   as `dropped`, never answered.
 * - Frames are handled one at a time in arrival order (Noise counters depend on it; signatures
 *   are made and checked with the platform's native Ed25519, synchronously); handlers run
 *   outside that loop, so a handler may make requests of its own. A reply goes out on the socket
 *   its request came by.
 * - A handshake message 1 carries no `in_reply_to` and message 3 always does, so a peer that
 *   restarts mid-handshake starts over instead of wedging the session (the Rust SDK's bug).
 *   When both sides start at once, the smaller AgentId's handshake wins.
 * - A request that times out sends `cancel` and forgets that peer's session, so a peer that
 *   restarted is reached again by the next request with a fresh handshake.
 * - A login is confirmed by a `control` envelope this agent sends to itself: it comes back only
 *   once the relay has registered the socket, so a close before it returns means the relay's gate
 *   refused this agent (kind `auth`), and a relay that drops our envelopes (a signature it does
 *   not accept) fails the connect instead of silently swallowing every later message.
 * - A frame is signed and sent in the same step as its payload is sealed, so frames leave in
 *   Noise counter order, and a reply that is ready when `close()` starts is already out.
 * - On a lost connection, requests in flight fail (kind `connect`), sessions are cleared, and
 *   the transport reconnects with capped, jittered backoff until closed: with the session token
 *   while it is fresh, else with a full login.
 * - With `MeshConnectOptions.proxy` (the sandbox's allow-list) every WebSocket goes through that
 *   proxy (a `Deno.HttpClient` with it): `wss://` as a `CONNECT` tunnel, TLS checked for the
 *   relay's own name; `ws://` as a forwarded upgrade request. Never directly.
 */
import { parseJson } from "../../json/codec.ts";
import { decodeBase64Url, encodeBase64Url } from "./base64url.ts";
import {
  buildEnvelope,
  encodeEnvelope,
  type EnvelopeDraft,
  type MeshEnvelope,
  parseEnvelope,
  verifyEnvelope,
} from "./envelope.ts";
import type { MeshIdentity } from "./identity.ts";
import { MAX_PLAINTEXT, NoiseHandshake, type NoiseSession } from "./noise.ts";
import { serdeStringify } from "./serde_json.ts";
import {
  type MeshCallOptions,
  type MeshConnectOptions,
  MeshError,
  type MeshHandler,
  type MeshReply,
  type MeshTransport,
} from "./transport.ts";

/** Knobs with the documented defaults; tests and benchmarks shorten some. */
export interface RelayTuning {
  /** `send`'s reply wait (default 10 s, as agent-block's original). */
  sendTimeoutMs?: number;
  /** `request`'s reply wait (default 30 s). */
  requestTimeoutMs?: number;
  /** The first connection's deadline when `MeshConnectOptions` sets none (default 10 s). */
  connectTimeoutMs?: number;
  /** Inbound frames longer than this many characters are dropped unread (default 1 MiB). */
  maxFrameChars?: number;
  /** Reconnect backoff: first and largest delay (default 100 ms and 5 s). */
  backoffMs?: [number, number];
  /** How long a session token stays usable for a resume (default 270 s of the relay's 300). */
  tokenFreshMs?: number;
  /** How often the login probe is re-sent while unanswered (default 1 s). */
  probeRetryMs?: number;
}

/** Handshakes in progress with other agents beyond which a new peer's message 1 is dropped. */
const MAX_HANDSHAKES = 1_024;

/** A handler-less agent's answer. */
const NO_HANDLER = "no mesh handler is set on this agent";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}

function deferred<T>(): Deferred<T> {
  const d = Promise.withResolvers<T>();
  d.promise.catch(() => {}); // a rejection nobody awaits is not an error of the run
  return d;
}

/** Waits for `promise` unless `signal` aborts first (rejecting with its reason). */
function race<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** A timer-backed abort signal whose timer is always cleared (no leaked timers in tests). */
function deadline(ms: number, error: () => unknown, ...signals: (AbortSignal | undefined)[]) {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(error()), ms);
  const signal = AbortSignal.any([ac.signal, ...signals.filter((s): s is AbortSignal => s !== undefined)]);
  return { signal, timedOut: () => ac.signal.aborted, clear: () => clearTimeout(timer) };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A peer's Noise state: a handshake in either role, or the established session. */
type PeerState =
  | { phase: "initiating" | "responding"; hs: NoiseHandshake; awaitId: string; ready: Deferred<NoiseSession> }
  | { phase: "established"; session: NoiseSession };

interface Pending {
  to: string;
  reply: Deferred<{ value: unknown; bytes: number }>;
}

/** Frames of a socket that is still logging in, read one at a time. */
class LoginFrames {
  #frames: unknown[] = [];
  #waiter: Deferred<void> | undefined;
  #closed: string | undefined;

  push(data: unknown): void {
    this.#frames.push(data);
    this.#waiter?.resolve();
  }

  close(why: string): void {
    this.#closed ??= why;
    this.#waiter?.resolve();
  }

  /** The frames not read yet (handed to the read loop once logged in). */
  rest(): unknown[] {
    return this.#frames.splice(0);
  }

  async next(signal: AbortSignal): Promise<Record<string, unknown>> {
    while (this.#frames.length === 0) {
      if (this.#closed !== undefined) throw new MeshError("connect", this.#closed);
      this.#waiter = deferred();
      await race(this.#waiter.promise, signal);
    }
    const data = this.#frames.shift();
    let v: unknown;
    try {
      v = typeof data === "string" ? JSON.parse(data) : undefined;
    } catch { /* refused below */ }
    if (v === null || typeof v !== "object" || Array.isArray(v)) {
      throw new MeshError("protocol", "the relay sent a login frame that is not a JSON object");
    }
    return v as Record<string, unknown>;
  }
}

/**
 * Connects `identity` to the relay at `url` and logs in.
 * @throws MeshError `connect` (unreachable, timed out, not a ws/wss URL) or `auth` (refused)
 */
export async function connectRelay(
  url: URL,
  identity: MeshIdentity,
  options: MeshConnectOptions = {},
  tuning: RelayTuning = {},
): Promise<MeshTransport> {
  if (url.protocol !== "ws:" && url.protocol !== "wss:") {
    throw new MeshError("connect", `mesh relay URL must start with ws:// or wss://, got ${url.href}`);
  }
  const transport = new RelayTransport(url, identity, options, tuning);
  await transport.start();
  return transport;
}

class RelayTransport implements MeshTransport {
  readonly kind = "relay" as const;
  readonly agentId: string;
  readonly #url: URL;
  readonly #id: MeshIdentity;
  readonly #opts: MeshConnectOptions;
  readonly #t: Required<RelayTuning>;
  /** This process's Noise static key (fresh per transport, unrelated to the Ed25519 key). */
  readonly #static = crypto.getRandomValues(new Uint8Array(32));
  readonly #closing = new AbortController();
  #handler: MeshHandler | undefined;
  #ws: WebSocket | undefined;
  /** The proxy's client (`MeshConnectOptions.proxy`): every WebSocket of this transport uses it. */
  readonly #client: Deno.HttpClient | undefined;
  #up = deferred<WebSocket>();
  #isUp = false;
  #token: { value: string; issuedAt: number } | undefined;
  #probes = new Map<string, Deferred<void>>();
  readonly #peers = new Map<string, PeerState>();
  readonly #pending = new Map<string, Pending>();
  readonly #inflight = new Map<string, AbortController>();

  constructor(url: URL, identity: MeshIdentity, options: MeshConnectOptions, tuning: RelayTuning) {
    this.#url = url;
    this.#id = identity;
    this.agentId = identity.agentId;
    this.#opts = options;
    this.#handler = options.handler;
    this.#client = options.proxy !== undefined
      ? Deno.createHttpClient({ proxy: { url: options.proxy } })
      : undefined;
    this.#t = {
      sendTimeoutMs: tuning.sendTimeoutMs ?? 10_000,
      requestTimeoutMs: tuning.requestTimeoutMs ?? 30_000,
      connectTimeoutMs: options.connectTimeoutMs ?? tuning.connectTimeoutMs ?? 10_000,
      maxFrameChars: tuning.maxFrameChars ?? 1 << 20,
      backoffMs: tuning.backoffMs ?? [100, 5_000],
      tokenFreshMs: tuning.tokenFreshMs ?? 270_000,
      probeRetryMs: tuning.probeRetryMs ?? 1_000,
    };
    options.signal?.addEventListener("abort", () => void this.close(), { once: true });
  }

  get #closed(): boolean {
    return this.#closing.signal.aborted;
  }

  /** The first connection; its failure names the URL (`connect to URL failed: ...`). */
  async start(): Promise<void> {
    try {
      await this.#connectOnce();
    } catch (e) {
      await this.close();
      if (!(e instanceof MeshError) || e.kind === "closed") throw e;
      throw new MeshError(e.kind, `connect to ${this.#url.href} failed: ${e.message}`);
    }
  }

  // ---- connection ----

  /** One connection attempt: open, log in (resume if possible), confirm with the probe. */
  async #connectOnce(): Promise<void> {
    const dl = deadline(
      this.#t.connectTimeoutMs,
      () =>
        new MeshError(
          "connect",
          `no login within ${this.#t.connectTimeoutMs} ms`,
        ),
      this.#closing.signal,
      this.#opts.signal,
    );
    try {
      const token = this.#token && Date.now() - this.#token.issuedAt < this.#t.tokenFreshMs
        ? this.#token
        : undefined;
      this.#token = undefined;
      if (token) {
        try {
          await this.#login(dl.signal, token.value);
          return;
        } catch (e) {
          if (!(e instanceof MeshError && e.kind === "auth") || dl.signal.aborted) throw e;
          // An expired or unknown token (a restarted relay): log in afresh.
        }
      }
      await this.#login(dl.signal, undefined);
    } finally {
      dl.clear();
    }
  }

  async #login(signal: AbortSignal, resumeToken: string | undefined): Promise<void> {
    const url = this.#url.href;
    const frames = new LoginFrames();
    let ws: WebSocket;
    try {
      ws = this.#client !== undefined ? new WebSocket(url, { client: this.#client }) : new WebSocket(url);
    } catch (e) {
      throw new MeshError("connect", `cannot connect: ${messageOf(e)}`);
    }
    const opened = deferred<void>();
    ws.onopen = () => opened.resolve();
    ws.onmessage = (ev) => frames.push(ev.data);
    ws.onerror = (ev) => {
      const why = `cannot reach the relay: ${(ev as ErrorEvent).message ?? "connection error"}`;
      opened.reject(new MeshError("connect", why));
      frames.close(why);
    };
    let loggedIn = false;
    ws.onclose = (ev) => {
      const why = `the relay closed the connection during login (code ${ev.code})`;
      opened.reject(new MeshError("connect", why));
      frames.close(why);
    };
    try {
      await race(opened.promise, signal);
      let result: Record<string, unknown>;
      if (resumeToken !== undefined) {
        ws.send(JSON.stringify({ agent_id: this.agentId, session_token: resumeToken }));
        result = await frames.next(signal);
      } else {
        ws.send(JSON.stringify({ agent_id: this.agentId }));
        const challenge = await frames.next(signal);
        if (typeof challenge.nonce !== "string") {
          if (challenge.success === false) result = challenge;
          else throw new MeshError("protocol", "the relay sent no login nonce");
        } else {
          const signature = this.#id.signText(encoder.encode(challenge.nonce));
          ws.send(JSON.stringify({ agent_id: this.agentId, signature }));
          result = await frames.next(signal);
        }
      }
      if (result!.success !== true || typeof result!.session_token !== "string") {
        const why = typeof result!.error === "string" ? result!.error : "no reason given";
        throw new MeshError("auth", `the relay refused the login of ${this.agentId}: ${why}`);
      }
      this.#token = { value: result!.session_token, issuedAt: Date.now() };
      // Logged in: from here frames go to the read loop; the probe confirms registration.
      const probe = this.#probe(ws, signal);
      ws.onmessage = (ev) => this.#read(ws, ev.data);
      ws.onclose = (ev) => {
        if (loggedIn) this.#onDisconnect(ws, `the relay closed the connection (code ${ev.code})`);
        else frames.close("");
      };
      for (const data of frames.rest()) this.#read(ws, data);
      await race(Promise.race([probe, frames.next(signal).then(() => {}, () => {})]), signal);
      if (ws.readyState !== WebSocket.OPEN) {
        throw new MeshError(
          "auth",
          `the relay closed the connection right after login: its gate does not admit ${this.agentId}`,
        );
      }
      loggedIn = true;
      this.#ws = ws;
      this.#isUp = true;
      this.#up.resolve(ws);
      this.#opts.onState?.({ state: "connected", url, resumed: resumeToken !== undefined });
    } catch (e) {
      ws.onclose = null;
      ws.onmessage = null;
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close();
      for (const p of this.#probes.values()) p.reject(e);
      throw e;
    } finally {
      this.#probes.clear();
    }
  }

  /** Sends `control` envelopes to ourselves until one comes back (the relay routed it). */
  async #probe(ws: WebSocket, signal: AbortSignal): Promise<void> {
    while (!signal.aborted && ws.readyState === WebSocket.OPEN) {
      const back = deferred<void>();
      this.#probes.set(this.#send(ws, { to: this.agentId, msgType: "control", payloadText: "null" }), back);
      const retry = new AbortController();
      const timer = setTimeout(() => retry.abort(), this.#t.probeRetryMs);
      try {
        await race(back.promise, AbortSignal.any([retry.signal, signal]));
        return;
      } catch {
        // not back yet: send another (the relay may have rate-limited the first)
      } finally {
        clearTimeout(timer);
      }
    }
  }

  #onDisconnect(ws: WebSocket, reason: string): void {
    if (this.#ws !== ws) return;
    this.#ws = undefined;
    this.#isUp = false;
    this.#up = deferred();
    const url = this.#url.href;
    this.#opts.onState?.({ state: "disconnected", url, reason });
    const lost = new MeshError("connect", `lost the connection to the mesh relay ${url} (${reason})`);
    for (const p of this.#pending.values()) p.reply.reject(lost);
    this.#pending.clear();
    for (const s of this.#peers.values()) if (s.phase !== "established") s.ready.reject(lost);
    this.#peers.clear();
    if (!this.#closed) void this.#reconnect();
  }

  async #reconnect(): Promise<void> {
    const [first, max] = this.#t.backoffMs;
    let delay = first;
    while (!this.#closed) {
      await sleep(delay * (0.5 + Math.random() / 2), this.#closing.signal);
      if (this.#closed) return;
      try {
        await this.#connectOnce();
        return;
      } catch (e) {
        if (this.#closed) return;
        this.#opts.onState?.({ state: "disconnected", url: this.#url.href, reason: messageOf(e) });
        delay = Math.min(delay * 2, max);
      }
    }
  }

  #whenUp(signal: AbortSignal): Promise<WebSocket> {
    return this.#isUp && this.#ws ? Promise.resolve(this.#ws) : race(this.#up.promise, signal);
  }

  /**
   * Signs and sends an envelope at once (so frames leave in the order their payloads were sealed,
   * which the peer's Noise counter needs); returns its id.
   */
  #send(ws: WebSocket, draft: EnvelopeDraft): string {
    const env = buildEnvelope(this.#id, draft);
    if (ws.readyState === WebSocket.OPEN) ws.send(encodeEnvelope(env));
    return env.id;
  }

  #drop(reason: string, from?: string): void {
    this.#opts.onState?.({ state: "dropped", reason, from });
  }

  // ---- the read loop ----

  /** Handles one frame, synchronously: frames are handled in arrival order. */
  #read(ws: WebSocket, data: unknown): void {
    try {
      this.#onFrame(ws, data);
    } catch (e) {
      this.#drop(`a frame that failed to process: ${messageOf(e)}`);
    }
  }

  #onFrame(ws: WebSocket, data: unknown): void {
    if (this.#closed) return;
    if (typeof data !== "string") return this.#drop("a binary frame");
    if (data.length > this.#t.maxFrameChars) {
      return this.#drop(`a frame of ${data.length} characters (limit ${this.#t.maxFrameChars})`);
    }
    let env: MeshEnvelope;
    try {
      env = parseEnvelope(data);
    } catch (e) {
      return this.#drop(messageOf(e));
    }
    if (env.to !== this.agentId) return this.#drop(`an envelope addressed to ${env.to}`, env.from);
    if (!verifyEnvelope(env)) return this.#drop("an envelope whose signature does not verify", env.from);
    switch (env.msgType) {
      case "control":
        if (env.from === this.agentId && this.#probes.has(env.id)) return this.#probes.get(env.id)!.resolve();
        return this.#drop("a control envelope", env.from);
      case "handshake":
        return this.#onHandshake(ws, env);
      case "request":
        return this.#onRequest(ws, env);
      case "response":
      case "error":
        return this.#onReply(env);
      case "cancel":
        this.#inflight.get(`${env.from} ${env.inReplyTo}`)?.abort(
          new MeshError("closed", "the sender cancelled"),
        );
        return;
      default:
        return this.#drop(`an unsupported ${env.msgType} envelope`, env.from);
    }
  }

  #onHandshake(ws: WebSocket, env: MeshEnvelope): void {
    const peer = env.from;
    let bytes: Uint8Array;
    try {
      const text = JSON.parse(env.payloadText);
      bytes = decodeBase64Url(typeof text === "string" ? text : "!");
    } catch {
      return this.#drop("a handshake whose payload is not base64url", peer);
    }
    const state = this.#peers.get(peer);
    const send = (inReplyTo: string, msg: Uint8Array) =>
      this.#send(ws, { to: peer, msgType: "handshake", inReplyTo, payloadText: `"${encodeBase64Url(msg)}"` });
    try {
      if (env.inReplyTo === undefined) {
        // Message 1: the peer starts (or restarts) a handshake; we respond.
        if (state?.phase === "initiating" && this.agentId < peer) {
          return this.#drop("a crossing handshake (ours goes ahead)", peer);
        }
        if (!state && this.#handshakes() >= MAX_HANDSHAKES) {
          return this.#drop(`a handshake beyond ${MAX_HANDSHAKES} in progress`, peer);
        }
        const hs = new NoiseHandshake(false, { staticKey: this.#static });
        hs.readMessage(bytes);
        const awaitId = send(env.id, hs.writeMessage());
        const ready = state && state.phase !== "established" ? state.ready : deferred<NoiseSession>();
        this.#peers.set(peer, { phase: "responding", hs, awaitId, ready });
      } else if (state && state.phase !== "established" && env.inReplyTo === state.awaitId) {
        // Message 2 (we initiated) or 3 (we responded).
        state.hs.readMessage(bytes);
        if (state.phase === "initiating") send(env.id, state.hs.writeMessage());
        const session = state.hs.split();
        this.#peers.set(peer, { phase: "established", session });
        state.ready.resolve(session);
      } else {
        this.#drop("a handshake message out of turn", peer);
      }
    } catch (e) {
      const s = this.#peers.get(peer);
      if (s && s.phase !== "established") s.ready.reject(e);
      this.#peers.delete(peer);
      this.#drop(`a failed handshake: ${messageOf(e)}`, peer);
    }
  }

  #handshakes(): number {
    let n = 0;
    for (const s of this.#peers.values()) if (s.phase !== "established") n++;
    return n;
  }

  /** The payload's JSON text and byte size, decrypted with the peer's session if need be. */
  #open(env: MeshEnvelope): { text: string; bytes: number } | undefined {
    if (!env.encrypted) return { text: env.payloadText, bytes: encoder.encode(env.payloadText).length };
    const state = this.#peers.get(env.from);
    if (state?.phase !== "established") {
      this.#drop(`an encrypted ${env.msgType} without a session`, env.from);
      return undefined;
    }
    try {
      const sealed = JSON.parse(env.payloadText);
      const plain = state.session.open(decodeBase64Url(typeof sealed === "string" ? sealed : "!"));
      return { text: decoder.decode(plain), bytes: plain.length };
    } catch (e) {
      this.#drop(`an encrypted ${env.msgType} that does not decrypt: ${messageOf(e)}`, env.from);
      return undefined;
    }
  }

  #onReply(env: MeshEnvelope): void {
    const pending = this.#pending.get(env.inReplyTo ?? "");
    if (!pending || pending.to !== env.from) return this.#drop(`a ${env.msgType} nobody waits for`, env.from);
    const opened = this.#open(env);
    if (!opened) return;
    let value: unknown;
    try {
      value = parseJson(opened.text);
    } catch {
      return this.#drop(`a ${env.msgType} whose payload is not JSON`, env.from);
    }
    this.#pending.delete(env.inReplyTo!);
    if (env.msgType === "error") {
      pending.reply.reject(
        new MeshError("remote", `${env.from} answered with an error: ${opened.text}`, value),
      );
    } else {
      pending.reply.resolve({ value, bytes: opened.bytes });
    }
  }

  #onRequest(ws: WebSocket, env: MeshEnvelope): void {
    const opened = this.#open(env);
    if (!opened) return;
    let payload: unknown;
    try {
      payload = parseJson(opened.text);
    } catch {
      return this.#drop("a request whose payload is not JSON", env.from);
    }
    const key = `${env.from} ${env.id}`;
    const ac = new AbortController();
    this.#inflight.set(key, ac);
    const inbound = { from: env.from, id: env.id, payload, bytes: opened.bytes, signal: ac.signal };
    void this.#answer(inbound).then((value) => {
      this.#inflight.delete(key);
      this.#reply(ws, env, value);
    });
  }

  /** Runs the handler; a rejection becomes `{ error = message }`. */
  async #answer(inbound: Parameters<MeshHandler>[0]): Promise<unknown> {
    const handler = this.#handler;
    if (!handler) return { error: NO_HANDLER };
    try {
      return await handler(inbound);
    } catch (e) {
      return { error: messageOf(e) };
    }
  }

  /** Answers on the socket the request came by (a reply cannot outlive its connection's sessions). */
  #reply(ws: WebSocket, request: MeshEnvelope, value: unknown): void {
    if (this.#closed || ws.readyState !== WebSocket.OPEN) {
      return this.#drop("a reply after the connection was lost", request.from);
    }
    let text: string;
    try {
      text = serdeStringify(value);
    } catch (e) {
      text = serdeStringify({ error: `the reply has no JSON form: ${messageOf(e)}` });
    }
    let payloadText = text;
    if (request.encrypted) {
      const state = this.#peers.get(request.from);
      if (state?.phase !== "established") {
        return this.#drop("a reply to a peer whose session is gone", request.from);
      }
      let plain = encoder.encode(text);
      if (plain.length > MAX_PLAINTEXT) {
        plain = encoder.encode(serdeStringify({
          error:
            `the reply of ${plain.length} bytes exceeds the ${MAX_PLAINTEXT}-byte limit of one mesh message`,
        }));
      }
      payloadText = `"${encodeBase64Url(state.session.seal(plain))}"`;
    }
    this.#send(ws, {
      to: request.from,
      msgType: "response",
      inReplyTo: request.id,
      payloadText,
      encrypted: request.encrypted,
    });
  }

  // ---- the API ----

  setHandler(handler: MeshHandler | undefined): void {
    this.#handler = handler;
  }

  async send(to: string, payload: unknown, options: MeshCallOptions = {}): Promise<{ sentBytes: number }> {
    const reply = await this.request(to, payload, { timeoutMs: this.#t.sendTimeoutMs, ...options });
    return { sentBytes: reply.sentBytes };
  }

  async request(to: string, payload: unknown, options: MeshCallOptions = {}): Promise<MeshReply> {
    if (this.#closed) throw new MeshError("closed", "the mesh transport is closed");
    const plain = encoder.encode(serdeStringify(payload));
    if (plain.length > MAX_PLAINTEXT) {
      throw new MeshError(
        "too_large",
        `mesh payload of ${plain.length} bytes exceeds the ${MAX_PLAINTEXT}-byte limit of one encrypted message`,
      );
    }
    if (to === this.agentId) return await this.#loopback(plain, options);
    const timeoutMs = options.timeoutMs ?? this.#t.requestTimeoutMs;
    let stage = "the connection to the relay";
    const dl = deadline(
      timeoutMs,
      () => new MeshError("timeout", `no reply from ${to} within ${timeoutMs} ms (waiting for ${stage})`),
      options.signal,
      this.#closing.signal,
    );
    let sent: string | undefined;
    let peerState: PeerState | undefined;
    try {
      const ws = await this.#whenUp(dl.signal);
      stage = "its answer to the encryption handshake";
      const session = await this.#session(ws, to, dl.signal);
      peerState = this.#peers.get(to);
      stage = "its reply";
      const reply = deferred<{ value: unknown; bytes: number }>();
      sent = crypto.randomUUID();
      this.#pending.set(sent, { to, reply });
      this.#send(ws, {
        id: sent,
        to,
        msgType: "request",
        payloadText: `"${encodeBase64Url(session.seal(plain))}"`,
        encrypted: true,
      });
      const r = await race(reply.promise, dl.signal);
      return { value: r.value, sentBytes: plain.length, receivedBytes: r.bytes };
    } catch (e) {
      if (dl.timedOut()) {
        // The peer may have restarted and lost its session: start afresh next time.
        if (sent && this.#isUp && this.#ws) {
          this.#send(this.#ws, { to, msgType: "cancel", inReplyTo: sent, payloadText: "null" });
        }
        const now = this.#peers.get(to);
        if (now && (now === peerState || now.phase !== "established")) this.#peers.delete(to);
      }
      if (this.#closed && !(e instanceof MeshError && e.kind !== "closed")) {
        throw new MeshError("closed", "the mesh transport closed before the reply arrived");
      }
      throw e;
    } finally {
      dl.clear();
      if (sent) this.#pending.delete(sent);
    }
  }

  /** The established session with `peer`, starting a handshake if there is none. */
  #session(ws: WebSocket, peer: string, signal: AbortSignal): Promise<NoiseSession> {
    let state = this.#peers.get(peer);
    if (state?.phase === "established") return Promise.resolve(state.session);
    if (!state) {
      const hs = new NoiseHandshake(true, { staticKey: this.#static });
      const first = this.#send(ws, {
        to: peer,
        msgType: "handshake",
        payloadText: `"${encodeBase64Url(hs.writeMessage())}"`,
      });
      state = { phase: "initiating", hs, awaitId: first, ready: deferred() };
      this.#peers.set(peer, state);
    }
    return race(state.ready.promise, signal);
  }

  /** A request to this agent itself: answered by its own handler, without the wire. */
  async #loopback(plain: Uint8Array, options: MeshCallOptions): Promise<MeshReply> {
    const signal = options.signal
      ? AbortSignal.any([this.#closing.signal, options.signal])
      : this.#closing.signal;
    const text = decoder.decode(plain);
    const value = await this.#answer({
      from: this.agentId,
      id: crypto.randomUUID(),
      payload: parseJson(text),
      bytes: plain.length,
      signal,
    });
    const back = encoder.encode(serdeStringify(value));
    return { value: parseJson(decoder.decode(back)), sentBytes: plain.length, receivedBytes: back.length };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    const closed = new MeshError("closed", "the mesh transport is closed");
    this.#closing.abort(closed);
    for (const p of this.#pending.values()) p.reply.reject(closed);
    this.#pending.clear();
    for (const ac of this.#inflight.values()) ac.abort(closed);
    for (const s of this.#peers.values()) if (s.phase !== "established") s.ready.reject(closed);
    this.#peers.clear();
    this.#up.reject(closed);
    const ws = this.#ws;
    this.#ws = undefined;
    this.#isUp = false;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      const done = deferred<void>();
      ws.onclose = () => done.resolve();
      ws.close(1000);
      const timer = setTimeout(() => done.resolve(), 2_000);
      await done.promise;
      clearTimeout(timer);
    }
    this.#client?.close();
  }
}
