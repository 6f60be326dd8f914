/**
 * The sandbox's network policy: under the allow-list, which hosts and ports the proxy
 * (`net_proxy.ts`) may connect to.
 *
 * The mode (`open`, the default; `off`, no TCP; `allow-list`) comes resolved in
 * `SandboxSettings.net`: the edge reads `--sandbox-net`, the starter's `AGENT_BLOCK_SANDBOX_NET`
 * and the project's `.env` (which may only make it stricter) in `sandboxSettingsFromEnv`
 * (`src/config/env_settings.ts`). Nothing here reads an environment.
 *
 * Owns, as pure functions (no I/O, no name resolution):
 * - the list's grammar: the starter's entries (`SandboxSettings.netAllow`, from
 *   `AGENT_BLOCK_SANDBOX_NET_ALLOW`, starter only: `.env` cannot widen it) are `host`, `*.domain`
 *   (any name below `domain`, not `domain` itself), an IPv4 address or a bracketed IPv6 one, each
 *   with an optional `:port` (default: 443 and 80); an entry that is none of these is an error
 *   naming it. The hosts the run is configured to use are added (`configuredHosts`): the model
 *   providers' base URLs (`SandboxSettings.providerUrls`, else their public endpoints) and the
 *   mesh URL (`--relay`), each at its URL's port (every server of a NATS cluster list: the
 *   transport reaches each through the proxy, `src/net/http_tunnel.ts`);
 * - the address rule (`addressRefused`): an allowed NAME that resolves to a loopback, private,
 *   link-local, unique-local, CGNAT, multicast or unspecified address is refused, unless that
 *   address itself is listed (so DNS rebinding cannot turn an allowed name into a way to the
 *   host's own services). An IP literal is allowed only when listed as such: the name
 *   `api.example.com` does not allow its address.
 */
import { AgentBlockError } from "../errors.ts";
import type { SandboxNetMode, SandboxSettings } from "../run_settings.ts";

/** 4 for an IPv4 address, 6 for an IPv6 one (no brackets), else 0 (as `node:net`'s `isIP`). */
export function isIP(s: string): 0 | 4 | 6 {
  if (/^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(s)) return 4;
  if (!s.includes(":") || !/^[0-9a-fA-F:.]+$/.test(s)) return 0;
  try {
    new URL(`http://[${s}]/`);
    return 6;
  } catch {
    return 0;
  }
}

/** How a confined run reaches the network (resolved at the edge: `SandboxSettings.net`). */
export type NetMode = SandboxNetMode;

/** One allowed host: a name, a `*.` suffix pattern, or an address; one port or the defaults. */
export interface AllowEntry {
  /** Lower case; IPv6 without brackets; for a pattern, the suffix after `*.`. */
  host: string;
  kind: "name" | "suffix" | "address";
  /** The port, or undefined for 443 and 80. */
  port?: number;
  /** Where it came from (the start-up line lists the configured ones). */
  /** `listed`: the starter's `AGENT_BLOCK_SANDBOX_NET_ALLOW`; `configured`: `configuredHosts`. */
  source: "listed" | "configured";
}

const DEFAULT_PORTS = [443, 80];

/** One entry of the list, or an error naming it. */
export function parseAllowEntry(raw: string, source: AllowEntry["source"]): AllowEntry {
  const bad = (why: string) =>
    new AgentBlockError(`AGENT_BLOCK_SANDBOX_NET_ALLOW: '${raw}' is not a host[:port] (${why})`);
  let hostPart = raw.trim().toLowerCase();
  let port: number | undefined;
  if (hostPart.startsWith("[")) {
    const end = hostPart.indexOf("]");
    if (end < 0) throw bad("an IPv6 address needs its closing ]");
    const rest = hostPart.slice(end + 1);
    if (rest !== "" && !rest.startsWith(":")) throw bad("text after ]");
    if (rest !== "") port = parsePort(rest.slice(1), bad);
    hostPart = hostPart.slice(1, end);
    if (isIP(hostPart) !== 6) throw bad("not an IPv6 address");
    return { host: hostPart, kind: "address", port, source };
  }
  const colon = hostPart.lastIndexOf(":");
  if (colon >= 0) {
    if (hostPart.indexOf(":") !== colon) throw bad("an IPv6 address goes in brackets");
    port = parsePort(hostPart.slice(colon + 1), bad);
    hostPart = hostPart.slice(0, colon);
  }
  if (isIP(hostPart) === 4) return { host: hostPart, kind: "address", port, source };
  let kind: AllowEntry["kind"] = "name";
  if (hostPart.startsWith("*.")) {
    kind = "suffix";
    hostPart = hostPart.slice(2);
  }
  if (!/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/.test(hostPart)) {
    throw bad("not a host name");
  }
  return { host: hostPart.replace(/\.$/, ""), kind, port, source };
}

function parsePort(s: string, bad: (why: string) => Error): number {
  const n = Number(s);
  if (!/^\d+$/.test(s) || n < 1 || n > 65535) throw bad("a port is 1-65535");
  return n;
}

/** The starter's list (`SandboxSettings.netAllow`, one entry each), parsed. */
export function parseAllowList(entries: readonly string[]): AllowEntry[] {
  return entries.map((s) => parseAllowEntry(s, "listed"));
}

/** The entry allowing a URL's host and port (the scheme's default port when it names none). */
export function entryOfUrl(url: string): AllowEntry | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const defaults: Record<string, number> = {
    "https:": 443,
    "wss:": 443,
    "http:": 80,
    "ws:": 80,
    "nats:": 4222,
    "tls:": 4222,
  };
  const port = u.port !== "" ? Number(u.port) : defaults[u.protocol];
  if (port === undefined || u.hostname === "") return undefined;
  const host = u.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  try {
    const e = parseAllowEntry(isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`, "configured");
    return e;
  } catch {
    return undefined;
  }
}

/**
 * The hosts the run is configured to use: the model providers' endpoints (the base URLs of the
 * run's environment, else the public ones) and the mesh URL (each server of a NATS cluster list).
 */
export function configuredHosts(providers: SandboxSettings["providerUrls"], relay?: string): AllowEntry[] {
  const urls = [
    providers.anthropic || "https://api.anthropic.com",
    providers.openai || "https://api.openai.com",
    ...(relay ? relay.split(",").map((u) => u.trim()).filter((u) => u !== "") : []),
  ];
  return urls.map(entryOfUrl).filter((e): e is AllowEntry => e !== undefined);
}

/** `host:port` as shown (IPv6 in brackets). */
export function hostPort(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/** An entry as the start-up line shows it. */
export function showEntry(e: AllowEntry): string {
  const h = e.kind === "suffix"
    ? `*.${e.host}`
    : e.kind === "address" && isIP(e.host) === 6
    ? `[${e.host}]`
    : e.host;
  return e.port === undefined ? h : `${h}:${e.port}`;
}

/** True when `entry` allows the port. */
function portMatches(entry: AllowEntry, port: number): boolean {
  return entry.port === undefined ? DEFAULT_PORTS.includes(port) : entry.port === port;
}

/** Whether the list allows a request for `host` (as the client named it) at `port`. */
export function hostAllowed(list: readonly AllowEntry[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  const literal = isIP(h) !== 0;
  return list.some((e) => {
    if (!portMatches(e, port)) return false;
    if (literal) return e.kind === "address" && sameAddress(e.host, h);
    if (e.kind === "name") return e.host === h;
    if (e.kind === "suffix") return h.endsWith(`.${e.host}`);
    return false;
  });
}

/** Whether `address` (what an allowed name resolved to) is listed by address at `port`. */
export function addressListed(list: readonly AllowEntry[], address: string, port: number): boolean {
  return list.some((e) => e.kind === "address" && portMatches(e, port) && sameAddress(e.host, address));
}

function sameAddress(a: string, b: string): boolean {
  return normalizeAddress(a) === normalizeAddress(b);
}

/** An address in one spelling: IPv4-mapped IPv6 as IPv4, IPv6 expanded. */
function normalizeAddress(a: string): string {
  const lower = a.toLowerCase();
  const mapped = /^(?:0*:)*:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower) ??
    /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return mapped[1];
  if (isIP(lower) !== 6) return lower;
  return ipv6Groups(lower).map((g) => g.toString(16)).join(":");
}

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail included). */
function ipv6Groups(a: string): number[] {
  let s = a;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const b = v4[1].split(".").map(Number);
    s = s.slice(0, -v4[1].length) +
      `${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const [head, tail] = s.split("::");
  const h = head ? head.split(":") : [];
  const t = tail !== undefined && tail !== "" ? tail.split(":") : [];
  const fill = tail !== undefined ? new Array(8 - h.length - t.length).fill("0") : [];
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

/**
 * Why a resolved `address` may not be connected to for a name (loopback, private, ...), or
 * undefined for a public address.
 */
export function addressRefused(address: string): string | undefined {
  const a = normalizeAddress(address);
  if (isIP(a) === 4) {
    const [b0, b1] = a.split(".").map(Number);
    if (b0 === 127) return "loopback";
    if (b0 === 10 || (b0 === 172 && b1 >= 16 && b1 <= 31) || (b0 === 192 && b1 === 168)) return "private";
    if (b0 === 169 && b1 === 254) return "link-local";
    if (b0 === 100 && b1 >= 64 && b1 <= 127) return "shared (CGNAT)";
    if (b0 === 0) return "unspecified";
    if (b0 >= 224) return "multicast or reserved";
    return undefined;
  }
  const g = ipv6Groups(a);
  if (g.every((x) => x === 0)) return "unspecified";
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return "loopback";
  if ((g[0] & 0xfe00) === 0xfc00) return "unique-local";
  if ((g[0] & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0] & 0xff00) === 0xff00) return "multicast";
  if (g[0] === 0x64 && g[1] === 0xff9b) {
    return addressRefused(`${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`); // NAT64
  }
  return undefined;
}
