/**
 * The sandbox's network proxy: the only way out of a confined run under
 * `--sandbox-net allow-list`. It runs OUTSIDE the run's network namespace (the launcher starts it
 * before the namespace exists, `net_launch.ts`), listens on a Unix socket, and connects only to
 * hosts and ports the allow-list names (`net_policy.ts`).
 *
 * Why a process of its own, in TypeScript: it has to be outside the namespace while the run is
 * inside, and the launcher's own thread is confined with the run; a Deno program is what this
 * project ships everywhere (the compiled binary runs it as `--sandbox-stage=proxy`), and CONNECT
 * plus absolute-URI forwarding is a small amount of code — no HTTP library, just the request
 * head. It never parses a body.
 *
 * Owns, for each connection:
 * - the token: the first line must be the run's token (`ProxyConfig.token`, handed by the launcher
 *   to the run's bridge only). The socket is a file another sandboxed run of the same user could
 *   connect to; without the token it gets no answer, so it cannot use this run's list;
 * - `CONNECT host:port`: a tunnel (`200 Connection established`, then bytes both ways);
 * - `METHOD http://host[:port]/path`: forwarded in origin form, the connection kept alive, every
 *   request of it to the upstream the first was checked for (`net_forward.ts`); a request asking
 *   for an upgrade (a `ws://` WebSocket: the mesh relay's) turns the connection into raw bytes
 *   both ways to that same upstream;
 * - the check: the host must be allowed at that port (`hostAllowed`); a name is resolved HERE
 *   (getaddrinfo, `/etc/hosts` included: `net_resolve.ts`) and the connection goes to an address
 *   it resolved to — never to one of the refused kinds (loopback, private, link-local, ...)
 *   unless that address is itself listed; an IP literal must be listed as one;
 * - a refusal: `403` with `X-Agent-Block-Denied`, one stderr line per host:port
 *   (`[warn] agent-block: --sandbox-net: refused ...`), and a denial record to every subscriber
 *   of the feed (the confined runtime, which records a `net_denied` kernel event);
 * - the feed: a connection whose request line is `AGENT-BLOCK-DENIALS` gets one JSON line
 *   `{"host","port","reason"}` per refused connection from then on, after an empty line saying
 *   it is registered. The first one is the
 *   runtime's (its bridge connects before any Lua runs) and ties the proxy to the run: when it
 *   closes — the runtime has exited, whatever way — the proxy ends at once, so it holds the
 *   run's stderr no longer than the run does.
 * It ends then, when its parent (the launcher) is gone (the kernel's parent-death signal: a run
 * whose launcher died before the runtime connected), or on SIGTERM, and removes its socket's
 * directory (made for it by the launcher) as it goes; SIGINT, which a terminal sends the whole
 * process group, is left to the run. A launch that failed, or a run that has ended, ends it with
 * SIGKILL, and the launcher removes the directory.
 */
import { addressListed, addressRefused, type AllowEntry, hostAllowed, hostPort, isIP } from "./net_policy.ts";
import { type Denial, DENIAL_FEED, type Duplex, splice, writeAll } from "./net_pipe.ts";
import { PROXY_CONFIG_VAR } from "./net_bridge.ts";
import { BufConn, forwardHttp, parseForwardHead } from "./net_forward.ts";
import { resolveHost } from "./net_resolve.ts";
import { openLibc } from "../proc/libc.ts";

/** What the proxy serves with. */
export interface ProxyConfig {
  /** The Unix socket to listen on (its directory exists and is private). */
  socket: string;
  /** The first line of every connection the proxy serves. */
  token: string;
  allow: AllowEntry[];
}

/** What the proxy stage is started with (the launcher passes it as JSON in `PROXY_CONFIG_VAR`). */
export interface ProxyStageConfig extends ProxyConfig {
  /**
   * The launcher's pid: the proxy ends when its parent is no longer this process (named by the
   * launcher rather than read at the proxy's start, by which time a launcher killed at once may
   * already be gone).
   */
  parent: number;
}

const enc = new TextEncoder();

/** A running proxy. */
export interface ProxyHandle {
  /** Stops listening and ends open connections. */
  close(): void;
  /** Ends when the listener closes. */
  done: Promise<void>;
}

/**
 * Serves the proxy on `cfg.socket`.
 * @param say writes one line to stderr
 */
export function serveProxy(cfg: ProxyConfig, say: (line: string) => void): ProxyHandle {
  const listener = Deno.listen({ transport: "unix", path: cfg.socket });
  const open = new Set<Duplex>();
  const feeds = new Set<Duplex>();
  let owner: Duplex | undefined;
  const said = new Set<string>();
  const deny = (d: Denial) => {
    const key = hostPort(d.host, d.port);
    if (!said.has(key)) {
      said.add(key);
      say(
        `[warn] agent-block: --sandbox-net: refused ${key} (${d.reason}); allow it with ` +
          `AGENT_BLOCK_SANDBOX_NET_ALLOW=${key}`,
      );
    }
    const line = enc.encode(JSON.stringify(d) + "\n");
    for (const f of feeds) writeAll(f, line).catch(() => feeds.delete(f));
  };
  const done = (async () => {
    try {
      for await (const conn of listener) {
        open.add(conn);
        handle(conn, cfg, deny, feeds, () => owner ??= conn).catch(() => undefined).finally(() => {
          open.delete(conn);
          if (conn === owner) close(); // the run is gone: so is its proxy
          try {
            conn.close();
          } catch {
            // closed by splice
          }
        });
      }
    } catch {
      // the listener closed
    }
  })();
  const close = () => {
    try {
      listener.close();
    } catch {
      // closed already
    }
    for (const c of open) {
      try {
        c.close();
      } catch {
        // closed already
      }
    }
  };
  return { close, done };
}

async function reply(conn: Duplex, status: string, extra = "", body = ""): Promise<void> {
  await writeAll(
    conn,
    enc.encode(
      `HTTP/1.1 ${status}\r\n${extra}Content-Type: text/plain\r\nContent-Length: ${
        enc.encode(body).length
      }\r\nConnection: close\r\n\r\n${body}`,
    ),
  ).catch(() => undefined);
}

/** Whether `got` is `want`, compared in time that depends on `want`'s length only. */
function sameToken(got: string, want: string): boolean {
  let diff = got.length ^ want.length;
  for (let i = 0; i < want.length; i++) diff |= (got.charCodeAt(i) | 0) ^ want.charCodeAt(i);
  return diff === 0 && want.length > 0;
}

/** Splits `host:port` / `[v6]:port` (the port required). */
function splitAuthority(s: string): { host: string; port: number } | undefined {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(s) ?? /^([^:\[\]]+):(\d+)$/.exec(s);
  if (!m) return undefined;
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 ? { host: m[1].toLowerCase(), port } : undefined;
}

/**
 * The address to connect to for `host`, or why not: resolved here, the refused kinds dropped
 * unless listed by address.
 */
async function resolveAllowed(
  allow: readonly AllowEntry[],
  host: string,
  port: number,
): Promise<{ address: string } | { reason: string }> {
  if (!hostAllowed(allow, host, port)) {
    return {
      reason: isIP(host) !== 0
        ? "an address not on the allow-list (an address is allowed only when listed as one)"
        : "not on the allow-list at this port",
    };
  }
  if (isIP(host) !== 0) return { address: host };
  let found: string[];
  try {
    found = await resolveHost(host);
  } catch (e) {
    return { reason: `cannot resolve: ${(e as Error).message}` };
  }
  let why = "no address";
  for (const address of found) {
    const refused = addressRefused(address);
    if (refused === undefined || addressListed(allow, address, port)) return { address };
    why = `resolves to ${address}, a ${refused} address not listed by address`;
  }
  return { reason: why };
}

async function handle(
  conn: Duplex,
  cfg: ProxyConfig,
  deny: (d: Denial) => void,
  feeds: Set<Duplex>,
  claimOwner: () => void,
): Promise<void> {
  const client = new BufConn(conn);
  if (!sameToken(await client.line(), cfg.token)) return; // not from this run: no answer at all
  const allow = cfg.allow;
  const head = await client.head();
  if (head === undefined) return;
  if (head === DENIAL_FEED) {
    claimOwner();
    feeds.add(conn);
    await writeAll(conn, enc.encode("\n")); // registered: every refusal from now on is told
    const b = new Uint8Array(256);
    try {
      while (await conn.read(b) !== null) { /* the feed is one-way */ }
    } catch {
      // closed
    }
    feeds.delete(conn);
    return;
  }
  /** The upstream for host:port, or undefined once the client has been answered why not. */
  const open = async (host: string, port: number): Promise<Deno.TcpConn | undefined> => {
    const decision = await resolveAllowed(allow, host, port);
    if ("reason" in decision) {
      deny({ host, port, reason: decision.reason });
      await reply(
        conn,
        "403 Forbidden",
        `X-Agent-Block-Denied: ${hostPort(host, port)}\r\n`,
        `agent-block sandbox: ${hostPort(host, port)} refused: ${decision.reason}\n`,
      );
      return undefined;
    }
    try {
      const up = await Deno.connect({ hostname: decision.address, port });
      up.setNoDelay(true); // a head and the rest of a body can go as separate writes: no Nagle wait between them
      return up;
    } catch (e) {
      await reply(
        conn,
        "502 Bad Gateway",
        "",
        `cannot connect to ${hostPort(host, port)}: ${(e as Error).message}\n`,
      );
      return undefined;
    }
  };
  const [method, target] = head.split("\r\n")[0].split(" ");
  if (method !== "CONNECT") {
    const first = parseForwardHead(head);
    if ("error" in first) return await reply(conn, "400 Bad Request", "", first.error + "\n");
    return await forwardHttp(client, first, open);
  }
  const a = splitAuthority(target ?? "");
  if (!a) return await reply(conn, "400 Bad Request", "", "CONNECT needs host:port\n");
  const up = await open(a.host, a.port);
  if (!up) return;
  try {
    await writeAll(conn, enc.encode("HTTP/1.1 200 Connection established\r\n\r\n"));
    const early = client.take();
    if (early.length) await writeAll(up, early);
  } catch {
    up.close();
    return;
  }
  await splice(conn, up);
}
/**
 * The proxy stage (`--sandbox-stage=proxy`; `configText`: its `ProxyStageConfig` as JSON, from
 * `PROXY_CONFIG_VAR`, read by the stage's entry `src/cli/proxy_stage.ts`): serves until the run
 * is gone. Nobody waits for it to start (`startProxy`): the run's bridge waits for its socket. A
 * configuration it cannot use, or a socket it cannot listen on, ends it with the reason on stderr.
 *
 * Its start is on every allow-list run's bill, so it avoids what Deno only sets up on first use:
 * no streams (the configuration came on stdin, read through a `Response`: ~4.5 ms more CPU) and
 * no timer: the parent is watched by the kernel (`PR_SET_PDEATHSIG`, SIGTERM; the first
 * `setInterval` cost ~5 ms; both medians of 40 interleaved starts against an empty `deno run`
 * of ~17 ms, a 2-core machine, December 2026). The timer stays as the fall-back where libc
 * cannot be opened.
 */
export async function proxyStage(configText: string | undefined): Promise<number> {
  const cfg = proxyConfig(configText);
  const parent = cfg.parent;
  const errs = (line: string) => {
    try {
      Deno.stderr.writeSync(enc.encode(line + "\n"));
    } catch {
      // no stderr left
    }
  };
  let proxy: ProxyHandle;
  try {
    proxy = serveProxy(cfg, errs);
  } catch (e) {
    errs(
      `error: --sandbox-net allow-list: the proxy cannot listen on ${cfg.socket}: ${(e as Error).message}`,
    );
    return 1;
  }
  // Ctrl-C reaches the whole process group: the run decides how it ends, the proxy serves on;
  // SIGTERM (a launch that failed, or the parent gone: below) ends it with its socket removed
  Deno.addSignalListener("SIGINT", () => undefined);
  Deno.addSignalListener("SIGTERM", () => proxy.close());
  const unwatch = watchParent(parent, () => proxy.close());
  await proxy.done;
  unwatch();
  try {
    // the launcher made the directory for this proxy
    Deno.removeSync(cfg.socket.slice(0, cfg.socket.lastIndexOf("/")), { recursive: true });
  } catch {
    // removed already
  }
  return 0;
}

/** The proxy's configuration from its variable's text; throws saying what is wrong with it. */
function proxyConfig(text: string | undefined): ProxyStageConfig {
  if (text === undefined) {
    throw new Error(`the sandbox proxy stage needs ${PROXY_CONFIG_VAR} (the launcher sets it)`);
  }
  const cfg = JSON.parse(text) as Partial<ProxyStageConfig>;
  if (
    typeof cfg.socket !== "string" || typeof cfg.token !== "string" || !Array.isArray(cfg.allow) ||
    !Number.isInteger(cfg.parent)
  ) {
    throw new Error(`${PROXY_CONFIG_VAR} needs a socket, a token, an allow list and the parent's pid`);
  }
  return cfg as ProxyStageConfig;
}

const PR_SET_PDEATHSIG = 1;
const SIGTERM = 15;

/**
 * Calls `gone` once the process `parent` (this one's parent at its start) has ended: the kernel
 * sends SIGTERM then (`PR_SET_PDEATHSIG`; the listener set before this handles it), checked once
 * here against a parent that ended before the call. Without libc, polled every 250 ms. Returns
 * what stops the polling.
 */
function watchParent(parent: number, gone: () => void): () => void {
  const libc = openLibc({ prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" } });
  if (typeof libc !== "string" && libc.prctl(PR_SET_PDEATHSIG, BigInt(SIGTERM), 0n, 0n, 0n) === 0) {
    if (!parentAlive(parent)) gone();
    return () => {};
  }
  const watch = setInterval(() => {
    if (!parentAlive(parent)) {
      clearInterval(watch);
      gone();
    }
  }, 250);
  return () => clearInterval(watch);
}

/** True while this process's parent is still `parent` (an orphan is re-parented). */
function parentAlive(parent: number): boolean {
  try {
    const stat = Deno.readTextFileSync("/proc/self/stat");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return ppid === parent;
  } catch {
    return false;
  }
}
