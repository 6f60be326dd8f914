// Two mesh agents on one NATS URL through an HTTP proxy, in a process of their own, for the tests
// that need the system's trust roots set (DENO_CERT) at start-up. Prints one JSON line: the
// answer to one request, `{"value": ...}`, or the MeshError, `{"kind": ..., "message": ...}`.
// Usage: deno run -A tunnel_peer.ts NATS_URL PROXY_URL [CA_FILE]  (CA_FILE: the peers' natsTlsCa)
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";
import { connectMesh } from "../../src/clients/mesh/connect.ts";
import { MeshError } from "../../src/clients/mesh/transport.ts";

const [url, proxy, caFile] = Deno.args;
const opts = {
  proxy,
  connectTimeoutMs: 5_000,
  ...(caFile !== undefined ? { natsTlsCa: Deno.readTextFileSync(caFile) } : {}),
};
try {
  const a = await connectMesh(url, MeshIdentity.random(), opts);
  const b = await connectMesh(url, MeshIdentity.random(), opts);
  b.setHandler((m) => Promise.resolve({ echo: m.payload }));
  const r = await a.request(b.agentId, "through the tunnel", { timeoutMs: 20_000 });
  console.log(JSON.stringify({ value: r.value }));
  await Promise.all([a.close(), b.close()]);
} catch (e) {
  if (!(e instanceof MeshError)) throw e;
  console.log(JSON.stringify({ kind: e.kind, message: e.message }));
}
