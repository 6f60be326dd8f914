/**
 * Mesh over the agent-mesh relay: `mesh.request` round trips per second between two agent-block
 * processes through the TypeScript test relay (examples/mesh_relay.ts, in this process), against
 * a raw WebSocket request loop between two Deno processes through a bare forwarder (also in this
 * process), in the same run. Prints both rates and the ratio mesh / raw (no target: the relay
 * path signs every envelope, the relay and the receiver verify it, and the payload is
 * encrypted, none of which the raw loop does).
 *
 * Both loops send one small JSON payload at a time and wait for its answer, after a warm-up.
 * The relay's rate limit (50/s by default, which would be the whole measurement) is lifted.
 *
 * Run: `deno run -A bench/mesh_relay_bench.ts` (or through the bench runner's default export).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startRelay } from "../examples/mesh_relay.ts";
import { MeshIdentity } from "../src/clients/mesh/identity.ts";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const CLI = join(ROOT, "cli.ts");
const N = 2000;
const WARMUP = 100;
const KEY_SERVER = "5".repeat(64);
const KEY_CLIENT = "6".repeat(64);

const SERVER = `mesh.on(function(ev) return ev.payload end) bus.serve()`;
const CLIENT = `
local target, n, warm = _PROMPT:match("(%S+) (%d+) (%d+)")
local p = { q = "ping", text = string.rep("x", 200) }
for _ = 1, tonumber(warm) do mesh.request(target, p) end
local t0 = std.time.millis()
for _ = 1, tonumber(n) do mesh.request(target, p) end
print(std.time.millis() - t0)
`;

function deno(args: string[], cwd?: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function elapsedMs(child: Deno.ChildProcess, what: string): Promise<number> {
  const r = await child.output();
  const out = new TextDecoder().decode(r.stdout).trim();
  if (r.code !== 0 || !/^\d+(\.\d+)?$/.test(out)) {
    throw new Error(`${what} failed (exit ${r.code}): ${out}\n${new TextDecoder().decode(r.stderr)}`);
  }
  return Number(out);
}

/** `mesh.request` round trips per second between two agent-block processes over the relay. */
async function meshRoundTrips(): Promise<number> {
  const relay = await startRelay({ rateLimit: 1e9, rateBurst: 1e9 });
  const dir = await Deno.makeTempDir({ prefix: "ab_bench_mesh_" });
  await Deno.writeTextFile(join(dir, "server.lua"), SERVER);
  await Deno.writeTextFile(join(dir, "client.lua"), CLIENT);
  const target = MeshIdentity.fromSeedHex(KEY_SERVER).agentId;
  const run = ["run", "-A", "--quiet", CLI, "--relay", relay.url];
  const server = deno([...run, "-s", "server.lua", "--secret-key", KEY_SERVER], dir);
  try {
    // The client's first request waits in the relay's buffer until the server has logged in.
    const client = deno(
      [...run, "-s", "client.lua", "--secret-key", KEY_CLIENT, "--prompt", `${target} ${N} ${WARMUP}`],
      dir,
    );
    return N / ((await elapsedMs(client, "the mesh client")) / 1000);
  } finally {
    server.kill("SIGTERM");
    await server.output();
    await relay.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Raw WebSocket round trips between two Deno processes through a forwarder in this one. */
async function rawRoundTrips(): Promise<number> {
  const sockets: WebSocket[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onopen = () => {
      sockets.push(socket);
      if (sockets.length === 2) { for (const s of sockets) s.send("go"); }
    };
    socket.onmessage = (e) => sockets.find((s) => s !== socket)?.send(e.data);
    return response;
  });
  const url = JSON.stringify(`ws://127.0.0.1:${server.addr.port}/`);
  const echo =
    `const ws = new WebSocket(${url}); ws.onmessage = (e) => { if (e.data !== "go") ws.send(e.data); };`;
  const loop = `const ws = new WebSocket(${url});
    let wake = () => {};
    ws.onmessage = () => wake();
    await new Promise((r) => (wake = r)); // "go": both ends are connected
    const frame = JSON.stringify({ q: "ping", text: "x".repeat(200) });
    const once = () => new Promise((r) => { wake = r; ws.send(frame); });
    for (let i = 0; i < ${WARMUP}; i++) await once();
    const t0 = performance.now();
    for (let i = 0; i < ${N}; i++) await once();
    console.log(performance.now() - t0);
    ws.close();`;
  const b = deno(["eval", echo]);
  try {
    return N / ((await elapsedMs(deno(["eval", loop]), "the raw WebSocket loop")) / 1000);
  } finally {
    b.kill("SIGTERM");
    await b.output();
    for (const s of sockets) s.close();
    await server.shutdown();
  }
}

/** Runs both loops and prints the rates and the ratio. */
export default async function main(): Promise<void> {
  const raw = await rawRoundTrips();
  const mesh = await meshRoundTrips();
  console.log(`raw WebSocket request loop (two processes, one forwarder): ${raw.toFixed(0)} round trips/s`);
  console.log(
    `mesh.request over the test relay (two agent-block processes): ${mesh.toFixed(0)} round trips/s`,
  );
  console.log(`ratio mesh / raw: ${(mesh / raw).toFixed(2)} (no target; signed, verified twice, encrypted)`);
}

if (import.meta.main) await main();
