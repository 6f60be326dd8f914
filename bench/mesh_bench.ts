/**
 * Mesh round trips: `mesh.request` between two agent-block processes against a raw request loop
 * of the same client library, in the same run, per transport.
 *
 * NATS: a real `nats-server` on 127.0.0.1 (Debian's; skipped with a reason when absent). The
 * mesh side is two CLI processes: a responder (`mesh.on` returning the payload, `bus.serve`) and
 * a requester timing `N` sequential `mesh.request` calls in Lua after a warm-up. The raw side is
 * a responder process echoing on a subject with `@nats-io/transport-node` and this process
 * timing `N` sequential `nc.request` calls with the same payload. Rounds alternate (raw, mesh,
 * raw, ...) so a change of machine load hits both; the medians are compared.
 * Prints round trips per second for each and the ratio mesh / raw (target ≥ 0.7×).
 *
 * What the mesh adds per round trip (measured on 2 shared cores, raw ≈ 0.2-0.3 ms): signing and
 * verifying both messages (Ed25519, native through `node:crypto`) with the JSON envelope and the
 * signature header, about 0.3 ms (TypeScript transports on both ends: ≈ 1,600 round trips/s); the
 * Lua ↔ host round trip of `mesh.request` on the asker, about 0.13 ms (≈ 1,330/s with a Lua asker
 * and a TypeScript responder); and on the responder the bus — the event is queued, dispatched to
 * the Lua handler as a task and its value converted back — about 0.25 ms (≈ 1,000/s). The target
 * of 0.7× is out of reach while every message carries an Ed25519 signature: the four signature
 * operations alone take about as long as a raw round trip (through WebCrypto, each a trip to a
 * worker thread, they took 0.55 ms; the pure-JS signer 1.6 ms).
 *
 * Relay (`ws://`): the TypeScript test relay (examples/mesh_relay.ts) in this process, its rate
 * limit lifted (50/s would be the whole measurement). The mesh side is the same two CLI blocks;
 * the raw side is a WebSocket request loop between two Deno processes through a bare forwarder
 * in this process (the same topology: requester → relay → responder and back), same payload,
 * rounds alternating likewise. Printed with its ratio; no target: on top of what the NATS path
 * adds, the relay verifies every envelope too and the payload is Noise-encrypted both ways.
 *
 * Run: `deno task bench mesh`.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect } from "@nats-io/transport-node";
import { natsMissing, startNats } from "../tests/mesh/nats_server.ts";
import { startRelay } from "../examples/mesh_relay.ts";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const CLI = join(ROOT, "cli.ts");
const N = 2000;
const WARMUP = 200;
const ROUNDS = 3;
const PAYLOAD = { q: "ping", n: 42, tags: ["a", "b"] };
const KEY_RESPONDER = "5".repeat(64);
const KEY_REQUESTER = "6".repeat(64);

/** One transport's measurement: prints its own lines. */
interface BenchCase {
  name: string;
  /** Why it cannot run here, or undefined. */
  missing(): string | undefined;
  run(): Promise<void>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function block(args: string[], env: Record<string, string> = {}) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, ...args],
    env: { NO_COLOR: "1", AGENT_BLOCK_LOG: "warn", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

const RESPONDER = `mesh.on(function(ev) return ev.payload end) bus.serve()`;
const REQUESTER = `
local peer = _PROMPT
local p = std.json.decode(_CONTEXT)
for _ = 1, 600 do -- the responder may still be starting
  local ok, e = pcall(mesh.request, peer, p, 5)
  if ok then break end
  std.time.sleep(0.05)
end
for _ = 1, ${WARMUP} do mesh.request(peer, p) end
local t0 = std.time.now()
for _ = 1, ${N} do mesh.request(peer, p) end
print(${N} / (std.time.now() - t0))`;

const RAW_RESPONDER = `
import { connect } from "@nats-io/transport-node";
const nc = await connect({ servers: Deno.args[0] });
nc.subscribe("bench.echo", { callback: (_e, m) => m.respond(m.data) });
await nc.flush();
console.log("ready");
await nc.closed();`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A temporary directory holding the bench scripts, and the responder's AgentId. */
async function benchDir(extra: Record<string, string>): Promise<{ dir: string; responderId: string }> {
  const dir = await Deno.makeTempDir({ prefix: "ab_mesh_bench_" });
  const files = { "responder.lua": RESPONDER, "requester.lua": REQUESTER, ...extra };
  for (const [name, text] of Object.entries(files)) Deno.writeTextFileSync(join(dir, name), text);
  const { MeshIdentity } = await import("../src/clients/mesh/identity.ts");
  return { dir, responderId: MeshIdentity.fromSeedHex(KEY_RESPONDER).agentId };
}

/** The responder block on `relay` (a `--relay` URL). */
function spawnResponder(dir: string, relay: string): Deno.ChildProcess {
  return block(["-s", join(dir, "responder.lua"), "--relay", relay, "--secret-key", KEY_RESPONDER]).spawn();
}

/** One round of the requester block: its round trips per second. */
async function meshRound(dir: string, relay: string, responderId: string): Promise<number> {
  const out = await block([
    "-s",
    join(dir, "requester.lua"),
    "--relay",
    relay,
    "--secret-key",
    KEY_REQUESTER,
    "--prompt",
    responderId,
    "-c",
    JSON.stringify(PAYLOAD),
  ]).output();
  if (!out.success) throw new Error(`the requester failed: ${dec.decode(out.stderr)}`);
  return Number(dec.decode(out.stdout).trim());
}

/** Alternating rounds (raw, mesh, raw, ...); prints the medians and the ratio. */
async function compare(
  name: string,
  rawLabel: string,
  target: string,
  rawRound: () => Promise<number>,
  mesh: () => Promise<number>,
): Promise<void> {
  const rawRps: number[] = [], meshRps: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    rawRps.push(await rawRound());
    meshRps.push(await mesh());
  }
  const rawM = median(rawRps), meshM = median(meshRps);
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(", ");
  console.log(`${name} ${rawLabel}: ${rawM.toFixed(0)} round trips/s (rounds: ${fmt(rawRps)})`);
  console.log(`${name} mesh.request (2 blocks): ${meshM.toFixed(0)} round trips/s (rounds: ${fmt(meshRps)})`);
  console.log(`${name} ratio mesh / raw: ${(meshM / rawM).toFixed(2)}x (${target})`);
}

const NATS: BenchCase = {
  name: "nats",
  missing: natsMissing,
  async run() {
    const srv = await startNats();
    const { dir, responderId } = await benchDir({ "raw_responder.ts": RAW_RESPONDER });
    const host = srv.url.replace("nats://", "");
    const responder = spawnResponder(dir, srv.url);
    const raw = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--quiet",
        "--config",
        join(ROOT, "deno.json"),
        join(dir, "raw_responder.ts"),
        host,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const nc = await connect({ servers: host });
    try {
      const rawReady = raw.stdout.pipeThrough(new TextDecoderStream()).getReader();
      while (!((await rawReady.read()).value ?? "").includes("ready")) { /* wait */ }
      const body = enc.encode(JSON.stringify(PAYLOAD));
      const rawRound = async () => {
        for (let i = 0; i < WARMUP; i++) await nc.request("bench.echo", body, { timeout: 5000 });
        const t0 = performance.now();
        for (let i = 0; i < N; i++) await nc.request("bench.echo", body, { timeout: 5000 });
        return N / ((performance.now() - t0) / 1000);
      };
      await compare(
        "nats",
        "raw nc.request",
        "target >= 0.7x",
        rawRound,
        () => meshRound(dir, srv.url, responderId),
      );
    } finally {
      await nc.close();
      try {
        responder.kill("SIGTERM");
      } catch { /* exited */ }
      try {
        raw.kill("SIGTERM");
      } catch { /* exited */ }
      await Promise.allSettled([responder.output(), raw.status]);
      await srv.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
};

/** A WebSocket request loop between two Deno processes through a forwarder in this process. */
const RAW_WS_ECHO = `
const ws = new WebSocket(Deno.args[0]);
ws.onmessage = (e) => { if (e.data !== "go") ws.send(e.data); };`;
const RAW_WS_LOOP = `
const ws = new WebSocket(Deno.args[0]);
let wake = () => {};
ws.onmessage = () => wake();
await new Promise((r) => (wake = r)); // "go": both ends are connected
const frame = JSON.stringify(${JSON.stringify(PAYLOAD)});
const once = () => new Promise((r) => { wake = r; ws.send(frame); });
for (let i = 0; i < ${WARMUP}; i++) await once();
const t0 = performance.now();
for (let i = 0; i < ${N}; i++) await once();
console.log(${N} / ((performance.now() - t0) / 1000));
ws.close();`;

async function rawWebSocketRound(dir: string): Promise<number> {
  const sockets: WebSocket[] = [];
  const forwarder = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onopen = () => {
      sockets.push(socket);
      if (sockets.length === 2) { for (const s of sockets) s.send("go"); }
    };
    socket.onmessage = (e) => sockets.find((s) => s !== socket)?.send(e.data);
    return response;
  });
  const url = `ws://127.0.0.1:${forwarder.addr.port}/`;
  const script = (name: string) => ["run", "-A", "--quiet", join(dir, name), url];
  const echo = new Deno.Command(Deno.execPath(), {
    args: script("ws_echo.ts"),
    stdin: "null",
    stdout: "null",
  })
    .spawn();
  try {
    const out = await new Deno.Command(Deno.execPath(), { args: script("ws_loop.ts"), stdin: "null" })
      .output();
    if (!out.success) throw new Error(`the raw WebSocket loop failed: ${dec.decode(out.stderr)}`);
    return Number(dec.decode(out.stdout).trim());
  } finally {
    try {
      echo.kill("SIGTERM");
    } catch { /* exited */ }
    await echo.status;
    for (const s of sockets) s.close();
    await forwarder.shutdown();
  }
}

const RELAY: BenchCase = {
  name: "relay",
  missing: () => undefined,
  async run() {
    const relay = await startRelay({ rateLimit: 1e9, rateBurst: 1e9 });
    const { dir, responderId } = await benchDir({ "ws_echo.ts": RAW_WS_ECHO, "ws_loop.ts": RAW_WS_LOOP });
    const responder = spawnResponder(dir, relay.url);
    try {
      await compare(
        "relay",
        "raw WebSocket loop",
        "no target",
        () => rawWebSocketRound(dir),
        () => meshRound(dir, relay.url, responderId),
      );
    } finally {
      try {
        responder.kill("SIGTERM");
      } catch { /* exited */ }
      await responder.output();
      await relay.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
};

/** The transports measured. */
const CASES: BenchCase[] = [NATS, RELAY];

export default async function meshBench(): Promise<void> {
  for (const c of CASES) {
    const why = c.missing();
    if (why) {
      console.log(`${c.name}: skipped (${why})`);
      continue;
    }
    await c.run();
  }
}

if (import.meta.main) await meshBench();
