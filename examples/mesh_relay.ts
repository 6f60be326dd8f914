/**
 * A TypeScript agent-mesh relay (0.3.2 behaviour) for tests and local use, so `--relay` works
 * offline and the transport is tested against a relay that is as strict as the real one.
 *
 * Serves `GET /ws` (the relay WebSocket), `GET /health` (`ok`) and `GET /metrics` (the relay's
 * eight Prometheus counters and gauges), bound to 127.0.0.1 unless told otherwise. It behaves
 * as the reference (`mesh-protocol.md` §1.3–1.5, §4) describes the Rust relay:
 * - login: a resume (`agent_id` + `session_token`, valid 300 s from issue, re-issued) is tried
 *   first, else hello → 32-byte nonce → Ed25519 signature over the nonce string; failures get
 *   the relay's exact `error` strings and the connection is dropped; an optional gate closes the
 *   socket right after the success frame (an agent the control plane does not know);
 * - each frame after login: parsed as serde would (uuid-crate ids normalised), `from` must be
 *   the logged-in agent, the signature is checked against the *re-printed* payload (so a sender
 *   whose text serde prints differently is dropped, as by the real relay), then the sender's
 *   token bucket (50/s, burst 100), then routing: forwarded re-serialised in wire order, or
 *   buffered for an offline target (100 per target, 300 s) and flushed when it logs in;
 * - every failure after login is only logged and counted: nothing is ever sent back;
 * - a second login with the same AgentId replaces the first socket (the old one stays open but
 *   receives nothing); a socket's close unregisters it only if it is still the registered one.
 *
 * Run: `deno run -A examples/mesh_relay.ts --listen 127.0.0.1:0 [--rate-limit N] [--rate-burst N]`
 * prints `MESH_RELAY_URL=ws://127.0.0.1:<port>/ws` and runs until SIGINT/SIGTERM. Tests import
 * `startRelay` instead. It lives here, not in src/, because nothing in the runtime serves a relay.
 */
import { agentIdKey } from "../src/clients/mesh/identity.ts";
import { decodeBase64Url, encodeBase64Url } from "../src/clients/mesh/base64url.ts";
import { verifySignature } from "../src/clients/mesh/identity.ts";
import { encodeEnvelope, parseEnvelope, verifyEnvelope } from "../src/clients/mesh/envelope.ts";

/** How a relay behaves; the defaults are the Rust relay's. */
export interface RelayOptions {
  hostname?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Tokens per second of each sender's bucket (default 50). */
  rateLimit?: number;
  /** Bucket size (default 100). */
  rateBurst?: number;
  /** Messages kept per offline target (default 100). */
  bufferLimit?: number;
  /** How long a buffered message is kept (default 300 s). */
  bufferTtlMs?: number;
  /** How long a session token can resume (default 300 s from issue). */
  tokenTtlMs?: number;
  /** False refuses an agent after its login (the relay's gate); default admits everyone. */
  gate?: (agentId: string) => boolean | Promise<boolean>;
  /** Where the relay's log lines go (default nowhere). */
  log?: (line: string) => void;
  /** Sees every frame the relay forwards or buffers, as forwarded (tests check what it carries). */
  tap?: (frame: string) => void;
}

/** The relay's counters, as `/metrics` reports them. */
export interface RelayMetrics {
  connectedAgents: number;
  bufferedAgents: number;
  routed: number;
  buffered: number;
  dropped: number;
  rateLimited: number;
  authSuccesses: number;
  authFailures: number;
  /** Not on `/metrics`: logins that were resumes, and frames dropped for failing a check. */
  resumes: number;
  rejected: number;
}

/** A running relay. */
export interface Relay {
  /** `ws://host:port/ws`. */
  url: string;
  port: number;
  metrics(): RelayMetrics;
  /** Closes `agentId`'s registered socket (a lost connection, for tests); false if none. */
  disconnect(agentId: string): boolean;
  /** Closes every socket and stops listening. */
  close(): Promise<void>;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Starts a relay. */
export async function startRelay(options: RelayOptions = {}): Promise<Relay> {
  const rate = options.rateLimit ?? 50;
  const burst = options.rateBurst ?? 100;
  const bufferLimit = options.bufferLimit ?? 100;
  const bufferTtl = options.bufferTtlMs ?? 300_000;
  const tokenTtl = options.tokenTtlMs ?? 300_000;
  const log = options.log ?? (() => {});
  const m: RelayMetrics = {
    connectedAgents: 0,
    bufferedAgents: 0,
    routed: 0,
    buffered: 0,
    dropped: 0,
    rateLimited: 0,
    authSuccesses: 0,
    authFailures: 0,
    resumes: 0,
    rejected: 0,
  };
  const agents = new Map<string, WebSocket>();
  const sockets = new Set<WebSocket>();
  const queues = new Map<string, { frame: string; at: number }[]>();
  const tokens = new Map<string, { agentId: string; issuedAt: number }>();
  const buckets = new Map<string, Bucket>();

  const takeToken = (agentId: string): boolean => {
    const now = performance.now();
    const b = buckets.get(agentId) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * rate);
    b.at = now;
    buckets.set(agentId, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  };

  const live = (q: { at: number }[]) => {
    const cutoff = Date.now() - bufferTtl;
    while (q.length && q[0].at < cutoff) q.shift();
  };

  const register = (agentId: string, socket: WebSocket) => {
    agents.set(agentId, socket);
    const q = queues.get(agentId);
    queues.delete(agentId);
    if (q) {
      live(q);
      for (const { frame } of q) socket.send(frame);
    }
  };

  const route = (frame: string, to: string) => {
    options.tap?.(frame);
    const target = agents.get(to);
    if (target && target.readyState === WebSocket.OPEN) {
      target.send(frame);
      m.routed++;
      return;
    }
    const q = queues.get(to) ?? [];
    live(q);
    if (q.length >= bufferLimit) {
      m.dropped++;
      log(`target ${to} offline and buffer full`);
      return;
    }
    q.push({ frame, at: Date.now() });
    queues.set(to, q);
    m.buffered++;
  };

  const onEnvelope = (agentId: string, data: string) => {
    let env;
    try {
      env = parseEnvelope(data, "reprint", "uuid-crate");
    } catch (e) {
      m.rejected++;
      return log(`invalid envelope from ${agentId}: ${(e as Error).message}`);
    }
    if (env.from !== agentId) {
      m.rejected++;
      return log(`from mismatch: authenticated ${agentId}, envelope says ${env.from}`);
    }
    if (!verifyEnvelope(env)) {
      m.rejected++;
      return log(`signature verification failed for envelope ${env.id} from ${agentId}`);
    }
    if (!takeToken(agentId)) {
      m.rateLimited++;
      return log(`rate_limited: ${agentId}`);
    }
    route(encodeEnvelope(env), env.to);
  };

  const handle = (socket: WebSocket) => {
    sockets.add(socket);
    let phase: "first" | "challenge" | "ready" | "done" = "first";
    let agentId = "";
    let nonce = "";
    const fail = (error: string) => {
      m.authFailures++;
      log(`auth failed for ${agentId || "?"}: ${error}`);
      socket.send(JSON.stringify({ success: false, error }));
      phase = "done";
      socket.close();
    };
    const succeed = async (resumed: boolean) => {
      const token = crypto.randomUUID();
      tokens.set(token, { agentId, issuedAt: Date.now() });
      m.authSuccesses++;
      if (resumed) m.resumes++;
      socket.send(JSON.stringify({ success: true, session_token: token }));
      if (options.gate && !(await options.gate(agentId))) {
        log(`gate denied ${agentId}`);
        phase = "done";
        socket.close();
        return;
      }
      phase = "ready";
      register(agentId, socket);
    };
    socket.onmessage = (ev) => {
      const data = ev.data;
      if (phase === "ready") {
        if (typeof data === "string") onEnvelope(agentId, data);
        return;
      }
      if (typeof data !== "string") {
        m.authFailures++;
        phase = "done";
        return socket.close();
      }
      let frame: Record<string, unknown> = {};
      try {
        const v = JSON.parse(data);
        if (v && typeof v === "object" && !Array.isArray(v)) frame = v;
      } catch { /* an unparsable frame is an empty one */ }
      if (phase === "first") {
        if (typeof frame.agent_id === "string" && typeof frame.session_token === "string") {
          agentId = frame.agent_id;
          const t = tokens.get(frame.session_token);
          if (!t || t.agentId !== agentId || Date.now() - t.issuedAt >= tokenTtl) {
            return fail("invalid or expired session token");
          }
          phase = "done";
          return void succeed(true);
        }
        if (typeof frame.agent_id !== "string") {
          m.authFailures++; // neither a resume nor a hello: dropped without an answer
          phase = "done";
          return socket.close();
        }
        agentId = frame.agent_id;
        nonce = encodeBase64Url(crypto.getRandomValues(new Uint8Array(32)));
        phase = "challenge";
        return socket.send(JSON.stringify({ nonce }));
      }
      if (phase === "challenge") {
        if (typeof frame.agent_id !== "string" || typeof frame.signature !== "string") {
          return fail("no response");
        }
        if (frame.agent_id !== agentId) return fail("agent_id mismatch");
        try {
          agentIdKey(agentId);
        } catch (e) {
          return fail(`bad agent_id: invalid identity: ${(e as Error).message}`);
        }
        let sig: Uint8Array;
        try {
          sig = decodeBase64Url(frame.signature);
        } catch (e) {
          return fail(`bad sig base64: ${(e as Error).message}`);
        }
        if (sig.length !== 64) return fail("signature must be 64 bytes");
        if (!verifySignature(agentId, new TextEncoder().encode(nonce), sig)) {
          return fail("nonce signature invalid: signature error");
        }
        phase = "done";
        return void succeed(false);
      }
    };
    socket.onclose = () => {
      sockets.delete(socket);
      if (agentId && agents.get(agentId) === socket) agents.delete(agentId);
    };
  };

  const metricsText = () => {
    const s = snapshot();
    const line = (name: string, type: string, help: string, v: number) =>
      `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${v}\n`;
    return line("mesh_connected_agents", "gauge", "Currently connected agents.", s.connectedAgents) +
      line("mesh_buffered_agents", "gauge", "Agents with buffered messages.", s.bufferedAgents) +
      line("mesh_messages_routed_total", "counter", "Total messages delivered directly.", s.routed) +
      line(
        "mesh_messages_buffered_total",
        "counter",
        "Total messages buffered for offline agents.",
        s.buffered,
      ) +
      line("mesh_messages_dropped_total", "counter", "Total messages dropped (buffer full).", s.dropped) +
      line(
        "mesh_messages_rate_limited_total",
        "counter",
        "Total messages rejected by rate limiter.",
        s.rateLimited,
      ) +
      line("mesh_auth_successes_total", "counter", "Total successful authentications.", s.authSuccesses) +
      line("mesh_auth_failures_total", "counter", "Total failed authentications.", s.authFailures);
  };

  const snapshot = (): RelayMetrics => {
    let bufferedAgents = 0;
    for (const q of queues.values()) {
      live(q);
      if (q.length) bufferedAgents++;
    }
    return { ...m, connectedAgents: agents.size, bufferedAgents };
  };

  const listening = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port ?? 0,
    onListen: (addr) => listening.resolve(addr as Deno.NetAddr),
  }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/health") return new Response("ok");
    if (path === "/metrics") {
      return new Response(metricsText(), { headers: { "content-type": "text/plain" } });
    }
    if (path === "/ws" && req.headers.get("upgrade")?.toLowerCase() === "websocket") {
      const { socket, response } = Deno.upgradeWebSocket(req, { idleTimeout: 90 });
      handle(socket);
      return response;
    }
    return new Response("not found", { status: 404 });
  });
  const addr = await listening.promise;
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  return {
    url: `ws://${host}:${addr.port}/ws`,
    port: addr.port,
    metrics: snapshot,
    disconnect(agentId) {
      const s = agents.get(agentId);
      if (!s) return false;
      agents.delete(agentId);
      s.close();
      return true;
    },
    async close() {
      const closed = [...sockets].map((s) =>
        new Promise<void>((resolve) => {
          if (s.readyState === WebSocket.CLOSED) return resolve();
          s.addEventListener("close", () => resolve(), { once: true });
          s.close(1001);
        })
      );
      await Promise.race([Promise.all(closed), new Promise((r) => setTimeout(r, 2_000))]);
      await server.shutdown();
    },
  };
}

if (import.meta.main) {
  let listen = "127.0.0.1:9800";
  const opts: RelayOptions = { log: (line) => console.error(`mesh_relay: ${line}`) };
  for (let i = 0; i < Deno.args.length; i++) {
    const a = Deno.args[i];
    if (a === "--listen") listen = Deno.args[++i];
    else if (a === "--rate-limit") opts.rateLimit = Number(Deno.args[++i]);
    else if (a === "--rate-burst") opts.rateBurst = Number(Deno.args[++i]);
    else {throw new Error(
        `mesh_relay: unknown flag ${a} (flags: --listen HOST:PORT, --rate-limit N, --rate-burst N)`,
      );}
  }
  const colon = listen.lastIndexOf(":");
  opts.hostname = listen.slice(0, colon).replace(/^\[|\]$/g, "");
  opts.port = Number(listen.slice(colon + 1));
  const relay = await startRelay(opts);
  console.log(`MESH_RELAY_URL=${relay.url}`);
  const stop = () => void relay.close().then(() => Deno.exit(0));
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}
