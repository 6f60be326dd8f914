/**
 * The network escape suite's probe (`net_attack_test.ts`): run by a block under
 * `--sandbox-net allow-list` as a child that tries to reach outside without the proxy. Its
 * argument is JSON `{ udp_port, abstract, direct_port, allowed, other }`; it prints one JSON object:
 * each attempt's outcome (`sent`, `connected`, a status or the error's message). It also fetches
 * the allowed and the other URL the ordinary way (through the proxy).
 */
import { createSocket } from "node:dgram";

const p = JSON.parse(Deno.args[0]) as {
  udp_port: number;
  abstract: string;
  direct_port: number;
  allowed: string;
  other: string;
};
const out: Record<string, string> = {};
const attempt = async (name: string, fn: () => Promise<string>) => {
  try {
    out[name] = await fn();
  } catch (e) {
    out[name] = `error: ${(e as Error).message}`;
  }
};
// Deno's fetch takes the proxy from HTTP_PROXY like any client: the allowed host works, the other is refused
await attempt("fetch_allowed", async () => {
  const r = await fetch(p.allowed);
  return `status ${r.status} ${await r.text()}`;
});
await attempt("fetch_other", async () => {
  const r = await fetch(p.other);
  return `status ${r.status} ${await r.text()}`;
});
// the proxy's socket itself, as another run's process would find it, without the run's token
await attempt("proxy_socket_no_token", async () => {
  const path = Deno.env.get("AGENT_BLOCK_SANDBOX_NET_SOCKET");
  if (!path) return "no socket named";
  const c = await Deno.connect({ transport: "unix", path });
  const authority = new URL(p.allowed).host;
  await c.write(new TextEncoder().encode(`not-the-token\r\nCONNECT ${authority} HTTP/1.1\r\n\r\n`));
  const buf = new Uint8Array(512);
  const n = await c.read(buf).catch(() => null);
  c.close();
  return n === null ? "closed unanswered" : `answered ${new TextDecoder().decode(buf.subarray(0, n))}`;
});
const udp = createSocket("udp4");
const send = (host: string, port: number) =>
  new Promise<string>((resolve, reject) =>
    udp.send("escape", port, host, (err) => err ? reject(err) : resolve("sent"))
  );
await attempt("udp_loopback", () => send("127.0.0.1", p.udp_port));
await attempt("udp_outside", () => send("192.0.2.1", 53));
udp.close();
await attempt("dns_outside", async () => {
  const r = await Deno.resolveDns("example.com", "A", { nameServer: { ipAddr: "9.9.9.9", port: 53 } });
  return `resolved ${r.join(",")}`;
});
await attempt("tcp_direct", async () => {
  const c = await Deno.connect({ hostname: "127.0.0.1", port: p.direct_port });
  c.close();
  return "connected";
});
await attempt("tcp_outside", async () => {
  const c = await Deno.connect({ hostname: "192.0.2.1", port: 443 });
  c.close();
  return "connected";
});
await attempt("abstract_unix", async () => {
  const c = await Deno.connect({ transport: "unix", path: "\0" + p.abstract });
  await c.write(new TextEncoder().encode("escape"));
  c.close();
  return "connected";
});
console.log(JSON.stringify(out));
