/**
 * Name resolution for the sandbox's network proxy (`net_proxy.ts`): the addresses a host name
 * resolves to, as the system resolves them (`getaddrinfo`: `/etc/hosts`, nsswitch, the resolver),
 * in the order it gives them.
 *
 * Why libc's `getaddrinfo` through FFI rather than `node:dns`'s `lookup` (which calls the same
 * function): the proxy is a process of its own started for every allow-list run, and its first
 * lookup (every run that reaches a model API by name has one) started Deno's Node compatibility
 * layer in it: a proxy process serving one `CONNECT` to a listed name cost 43 ms of CPU with
 * `node:dns`, 33 ms with this (medians of 25 interleaved runs, a 2-core machine, December 2026),
 * and that first request waited for it. The call is made `nonblocking` (on a thread of Deno's),
 * so a slow resolver holds no other connection up. Where libc cannot be opened
 * (`src/proc/libc.ts` says why), `node:dns` is used, imported only then: a static import
 * loads Deno's Node compatibility layer at the proxy's start, whether or not it ever looks a
 * name up (~8 ms of CPU in its profile, December 2026).
 *
 * The `struct addrinfo` read here is the Linux one (glibc and musl alike, 64-bit: flags, family,
 * socktype, protocol, addrlen, then the address, canonical name and next pointers at 24, 32 and
 * 40); the proxy runs on Linux only (network namespaces).
 */
import { openLibc } from "../proc/libc.ts";

const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_STREAM = 1;

const SYMBOLS = {
  getaddrinfo: { parameters: ["buffer", "pointer", "buffer", "buffer"], result: "i32", nonblocking: true },
  freeaddrinfo: { parameters: ["pointer"], result: "void" },
  gai_strerror: { parameters: ["i32"], result: "pointer" },
} as const;

let libc: ReturnType<typeof openLibc<typeof SYMBOLS>> | undefined;

/**
 * The addresses `host` resolves to (IPv4 dotted, IPv6 in RFC 5952 form), in the resolver's order.
 * @throws Error with the resolver's message when the name does not resolve
 */
export async function resolveHost(host: string): Promise<string[]> {
  libc ??= openLibc(SYMBOLS);
  if (typeof libc === "string" || Deno.build.arch !== "x86_64" && Deno.build.arch !== "aarch64") {
    const { lookup } = await import("node:dns/promises");
    return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  }
  const c = libc;
  const hints = new Uint8Array(48);
  new DataView(hints.buffer).setInt32(8, SOCK_STREAM, true); // one entry per address, not per socket type
  const out = new BigUint64Array(1);
  const name = new TextEncoder().encode(host + "\0");
  // the call reads these on another thread: each stays reachable until it has returned (below)
  const held = [name, hints, out];
  const rc = await c.getaddrinfo(name, null, hints, new Uint8Array(out.buffer));
  held.length = 0;
  if (rc !== 0) {
    const why = c.gai_strerror(rc);
    throw new Error(`getaddrinfo ${host}: ${why ? Deno.UnsafePointerView.getCString(why) : `error ${rc}`}`);
  }
  const first = Deno.UnsafePointer.create(out[0]);
  const addresses: string[] = [];
  try {
    for (let p = first; p !== null; p = new Deno.UnsafePointerView(p).getPointer(40)) {
      const entry = new Deno.UnsafePointerView(p);
      const sa = entry.getPointer(24);
      if (sa === null) continue;
      const family = entry.getInt32(4);
      const a = new Deno.UnsafePointerView(sa);
      if (family === AF_INET) {
        addresses.push([4, 5, 6, 7].map((i) => a.getUint8(i)).join("."));
      } else if (family === AF_INET6) {
        const groups = Array.from(
          { length: 8 },
          (_, i) => a.getUint8(8 + 2 * i) << 8 | a.getUint8(9 + 2 * i),
        );
        addresses.push(ipv6Text(groups));
      }
    }
  } finally {
    if (first !== null) c.freeaddrinfo(first);
  }
  return [...new Set(addresses)];
}

/** Eight 16-bit groups as RFC 5952 text: lower-case, the longest run of two or more zeros as `::`. */
export function ipv6Text(groups: readonly number[]): string {
  let best = -1, bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(":");
  return `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}`;
}
