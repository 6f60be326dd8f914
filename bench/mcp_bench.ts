/**
 * MCP call overhead: 1,000 sequential no-op `tools/call` through `mcp.call` from Lua, against the
 * SDK client called directly from TypeScript, in the same run, over stdio and Streamable HTTP.
 * Both sides talk to the same echo server (`examples/echo_mcp_server.ts --test-tools`, tool
 * `noop`) in the same era (automatic negotiation → 2026-07-28), after 50 warm-up calls, in
 * alternating batches of 100 inside one Lua run (the SDK batches run from a host function), so a
 * change of machine load affects both sides alike.
 * Prints ms per call for each path and the ratio Lua / SDK (target ≤ 1.3×).
 *
 * The SDK baseline is configured as `mcp.connect` configures its client: the same client
 * capabilities (sampling, elicitation, roots) and, on a 2026-07-28 connection, the same open
 * `subscriptions/listen` stream for list changes. Both cost time on the server for every request
 * (measured: about 0.3 ms per call over stdio against the v2 echo server), so a bare client is
 * not the same workload; its number is printed too, for reference.
 *
 * Where the difference comes from (measured on one connection, 2 shared cores, stdio): about
 * 0.04 ms per call is the Lua ↔ host round trip of the engine around real I/O (a host function
 * making one SDK call per Lua call against 100 SDK calls in one TypeScript loop), about 0.02 ms
 * the transport (the SDK client on `ProcessStdioTransport` against the SDK's own stdio
 * transport; Deno web streams against Node streams), and the rest the agent-block MCP layer
 * (deadline, abort wiring, per-request log level, error wording, result shape). A progress
 * token alone cost the server about 0.02 ms per call, so over stdio `mcp.call` sends one only
 * when the server has a progress callback (see `src/clients/mcp/connection.ts`).
 *
 * Run: `deno run -A bench/mcp_bench.ts` (or through the bench runner's default export).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { runBlock } from "../src/runtime/run.ts";
import type { HostModule } from "../src/host/context.ts";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const ECHO = join(ROOT, "examples/echo_mcp_server.ts");
const N = 1000;
const WARMUP = 50;
const SERVER_ARGS = ["run", "-A", "--quiet", ECHO, "--test-tools"];

/** Batches the N calls are split into; Lua and SDK batches alternate, so load drift hits both. */
const ROUNDS = 10;

/**
 * Runs the interleaved measurement in one Lua run: `connect` opens server "b" for `mcp.call`,
 * `sdk` is an already connected SDK client. Returns each round's ms per call for both sides.
 */
async function interleaved(connect: string, sdk: Client): Promise<Round[]> {
  const per = N / ROUNDS;
  const host: HostModule = (engine) => {
    engine.define("bench.now", { sync: () => performance.now() });
    engine.define("bench.sdk_batch", {
      async: async (a) => {
        const n = a.integer(1, "n");
        const t0 = performance.now();
        for (let i = 0; i < n; i++) await sdk.callTool({ name: "noop", arguments: {} });
        return performance.now() - t0;
      },
    });
  };
  const outcome = await runBlock({
    script: {
      source: `
        ${connect}
        for i = 1, ${WARMUP} do assert(mcp.call("b", "noop", {}).ok) end
        bench.sdk_batch(${WARMUP})
        local rounds = {}
        for round = 1, ${ROUNDS} do
          local t0 = bench.now()
          for i = 1, ${per} do
            local r = mcp.call("b", "noop", {})
            if not r.ok then error(r.error) end
          end
          local lua_ms = bench.now() - t0
          rounds[round] = { lua = lua_ms / ${per}, sdk = bench.sdk_batch(${per}) / ${per} }
        end
        return std.json.encode(rounds)
      `,
      name: "mcp_bench.lua",
    },
    projectRoot: ROOT,
    modules: [host],
    // The same basic environment the SDK's stdio transport gives its child.
    env: getDefaultEnvironment(),
    stdout: () => {},
  });
  if (outcome.status !== "returned") throw new Error(`Lua bench failed: ${JSON.stringify(outcome)}`);
  return JSON.parse(String(outcome.value));
}

/** A round: ms per call of each side. */
interface Round {
  lua: number;
  sdk: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * An SDK client configured like `mcp.connect`'s (see the module header), or bare.
 */
async function sdkClient(transport: Transport, likeMcpConnect: boolean): Promise<Client> {
  const client = new Client({ name: "bench", version: "1" }, {
    versionNegotiation: { mode: "auto" },
    capabilities: likeMcpConnect
      ? { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } }
      : {},
  });
  await client.connect(transport);
  if (likeMcpConnect && client.getProtocolEra() === "modern") await client.listen({ toolsListChanged: true });
  return client;
}

/** ms per call of a bare SDK client (reference only). */
async function bare(transport: Transport): Promise<number> {
  const client = await sdkClient(transport, false);
  try {
    for (let i = 0; i < WARMUP; i++) await client.callTool({ name: "noop", arguments: {} });
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await client.callTool({ name: "noop", arguments: {} });
    return (performance.now() - t0) / N;
  } finally {
    await client.close();
  }
}

async function startHttpEcho(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...SERVER_ARGS, "--transport", "http", "--port", "0", "--exit-on-stdin-close"],
    stdin: "piped", // held open: the server exits with this process
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const stdin = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!/ECHO_MCP_URL=(\S+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error("echo server did not start");
    out += value;
  }
  const url = out.match(/ECHO_MCP_URL=(\S+)/)![1];
  return {
    url,
    stop: async () => {
      await stdin.close().catch(() => undefined);
      child.kill("SIGTERM");
      await reader.cancel().catch(() => undefined);
      await child.status;
    },
  };
}

function report(label: string, rounds: Round[], bareMs: number): void {
  const lua = rounds.reduce((a, r) => a + r.lua, 0) / rounds.length;
  const sdk = rounds.reduce((a, r) => a + r.sdk, 0) / rounds.length;
  const ratio = lua / sdk;
  const med = median(rounds.map((r) => r.lua / r.sdk));
  console.log(
    `${label.padEnd(16)} mcp.call ${lua.toFixed(3)} ms/call   SDK ${sdk.toFixed(3)} ms/call   ratio ${
      ratio.toFixed(2)
    }x (median of rounds ${med.toFixed(2)}x) ${
      ratio <= 1.3 ? "ok, target <= 1.3x" : "ABOVE the 1.3x target"
    }   [bare SDK client ${bareMs.toFixed(3)} ms/call]`,
  );
}

/** Runs the benchmark and prints the ratios. */
export default async function mcpBench(): Promise<void> {
  console.log(
    `MCP: ${N} sequential no-op tools/call (after ${WARMUP} warm-up calls), in ${ROUNDS} alternating batches`,
  );
  const deno = JSON.stringify(Deno.execPath());
  const args = SERVER_ARGS.map((a) => JSON.stringify(a)).join(", ");
  const stdio = () =>
    new StdioClientTransport({
      command: Deno.execPath(),
      args: SERVER_ARGS,
      env: getDefaultEnvironment(),
      stderr: "ignore",
    });
  const stdioSdk = await sdkClient(stdio(), true);
  try {
    const rounds = await interleaved(`assert(mcp.connect("b", ${deno}, { ${args} }))`, stdioSdk);
    report("stdio", rounds, await bare(stdio()));
  } finally {
    await stdioSdk.close();
  }

  const http = await startHttpEcho();
  try {
    const httpSdk = await sdkClient(new StreamableHTTPClientTransport(new URL(http.url)), true);
    try {
      const rounds = await interleaved(`assert(mcp.connect_http("b", ${JSON.stringify(http.url)}))`, httpSdk);
      report("Streamable HTTP", rounds, await bare(new StreamableHTTPClientTransport(new URL(http.url))));
    } finally {
      await httpSdk.close();
    }
  } finally {
    await http.stop();
  }
}

if (import.meta.main) await mcpBench();
