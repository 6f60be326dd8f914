// The NATS forwarder's first step under the sandbox's proxy (src/clients/mesh/nats_tunnel_tls.ts)
// against a real loopback connection standing for an open tunnel: a plain server is handed on as
// it spoke, and what must be refused is refused with its reason, before anything is carried.
import assert from "node:assert/strict";
import { natsTlsStep } from "../../src/clients/mesh/nats_tunnel_tls.ts";
import type { Tunnel } from "../../src/net/http_tunnel.ts";

/**
 * A tunnel whose server sends `says` (then stays silent until closed), and `early`, the part of
 * it the tunnel had already read; both ends are closed when the test's scope ends.
 */
async function tunnelTo(says: string, early = ""): Promise<Tunnel & AsyncDisposable> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = listener.accept();
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
  const server = await accepted;
  listener.close();
  if (says !== "") await server.write(new TextEncoder().encode(says));
  return {
    conn,
    early: new TextEncoder().encode(early),
    [Symbol.asyncDispose]: () => {
      for (const c of [conn, server]) {
        try {
          c.close();
        } catch {
          // closed by the step
        }
      }
      return Promise.resolve();
    },
  };
}

const step = (required = false, timeoutMs = 5_000) => natsTlsStep({ host: "nats.test", required, timeoutMs });

Deno.test("nats tls step: a server without TLS is carried plain, its first line unchanged", async () => {
  const info = `INFO {"server_id":"x","max_payload":1048576}\r\n`;
  // the line split between what the tunnel read with the proxy's answer and what came after
  await using t = await tunnelTo(info.slice(10), info.slice(0, 10));
  const up = await step()(t);
  assert.equal(up.stream, t.conn);
  assert.equal(new TextDecoder().decode(up.early), info);
});

Deno.test("nats tls step: what it refuses, it refuses with the reason", async () => {
  {
    // TLS asked for (a tls:// URL or a CA) and the server has none: nothing goes in the clear
    await using t = await tunnelTo(`INFO {"server_id":"x"}\r\n`);
    await assert.rejects(step(true)(t), /tls is not available on this server \(nats\.test\)/);
  }
  {
    // something that is not NATS is never carried blind
    await using t = await tunnelTo("HTTP/1.1 200 OK\r\n\r\n");
    await assert.rejects(step()(t), /not a NATS INFO/);
  }
  {
    await using t = await tunnelTo(`INFO {not json}\r\n`);
    await assert.rejects(step()(t), /INFO is not JSON/);
  }
  {
    // a TLS server that speaks before the handshake
    await using t = await tunnelTo(`INFO {"tls_required":true}\r\nPING\r\n`);
    await assert.rejects(step()(t), /sent more than its INFO before TLS/);
  }
  {
    // a silent server: given up on at the bound, not waited for forever
    await using t = await tunnelTo("");
    await assert.rejects(step(false, 200)(t), /said nothing within 200 ms/);
  }
});
