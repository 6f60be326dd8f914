/**
 * Benchmark: calls per second of a trivial block served as a declared tool
 * (`agent-block mcp --expose blocks`: the block runs in the server's process, through the
 * in-process runner, each call a kernel session of its own) against the same block through
 * `run_block` (a process per call) and against a minimal one-tool server written directly on the
 * MCP TypeScript SDK (`bench/mcp_minimal_server.ts`), all three over stdio from the same SDK
 * client, in one run. Target: declared ≥ 10 × run_block's calls per second; the ratio to the bare
 * SDK server is printed too (what agent-block's run of a block costs over answering a constant).
 *
 * Run alone: `deno run -A bench/mcp_server_declared_bench.ts [seconds per side]`.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { selfCommand } from "../src/proc/self.ts";

const DENO_CONFIG = fileURLToPath(new URL("../deno.json", import.meta.url));
const MINIMAL = fileURLToPath(new URL("./mcp_minimal_server.ts", import.meta.url));

async function connect(command: string, args: string[], env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(new StdioClientTransport({ command, args, env, stderr: "ignore" }));
  return client;
}

/** Sequential calls for about `seconds` (at least `min`); calls per second. */
async function rate(
  call: () => Promise<void>,
  seconds: number,
  min: number,
): Promise<{ n: number; perSec: number }> {
  for (let i = 0; i < 3; i++) await call(); // warm-up
  const t0 = performance.now();
  let n = 0;
  while (n < min || performance.now() - t0 < seconds * 1000) {
    await call();
    n++;
  }
  return { n, perSec: n / ((performance.now() - t0) / 1000) };
}

function expectOk(r: { content?: unknown; isError?: boolean }, what: string): void {
  const text = (r.content as { text?: string }[] | undefined)?.[0]?.text;
  if (r.isError || text !== "ok") throw new Error(`${what} failed: ${JSON.stringify(r)}`);
}

/** Runs the benchmark and prints the result. */
export default async function mcpServerDeclaredBench(seconds = 5): Promise<void> {
  const project = await Deno.makeTempDir({ prefix: "ab_bench_mcp_declared_" });
  const home = join(project, ".home");
  Deno.mkdirSync(join(project, "blocks"), { recursive: true });
  Deno.mkdirSync(home);
  Deno.writeTextFileSync(
    join(project, "blocks", "trivial.lua"),
    '--- Returns "ok".\n---@tool trivial_tool\nreturn "ok"\n',
  );
  const env = { ...Deno.env.toObject(), AGENT_BLOCK_HOME: home, AGENT_BLOCK_LOG: "warn" };
  const [cmd, ...args] = selfCommand(["mcp", "-p", project, "--expose", "blocks"]);
  const ab = await connect(cmd, args, env);
  const sdk = await connect(Deno.execPath(), ["run", "-A", "--quiet", "--config", DENO_CONFIG, MINIMAL], env);
  try {
    const declared = await rate(
      async () => {
        expectOk(await ab.callTool({ name: "trivial_tool", arguments: {} }), "the declared tool");
      },
      seconds,
      20,
    );
    const runBlock = await rate(
      async () => {
        expectOk(await ab.callTool({ name: "run_block", arguments: { block: "trivial" } }), "run_block");
      },
      seconds,
      5,
    );
    const bare = await rate(
      async () => {
        expectOk(await sdk.callTool({ name: "trivial", arguments: {} }), "the SDK server");
      },
      seconds,
      20,
    );
    // Every declared call was recorded: one kernel session each.
    const [kc, ...kargs] = selfCommand(
      ["knl", "sessions", "--json", "--limit", "1000000", "--label", "mcp_name=trivial_tool", "-p", project],
    );
    const sessions = await new Deno.Command(kc, {
      args: kargs,
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const recorded = new TextDecoder().decode(sessions.stdout).trim().split("\n").filter(Boolean).length;
    const ratio = declared.perSec / runBlock.perSec;
    console.log(`mcp_server_declared: a trivial block over stdio, sequential calls, ~${seconds} s per side`);
    console.log(`  declared tool (in process)  ${declared.perSec.toFixed(1)} calls/s  (${declared.n} calls)`);
    console.log(`  run_block (process a call)  ${runBlock.perSec.toFixed(1)} calls/s  (${runBlock.n} calls)`);
    console.log(`  bare SDK server             ${bare.perSec.toFixed(1)} calls/s  (${bare.n} calls)`);
    console.log(
      `  declared / run_block ${ratio.toFixed(1)}x (target >= 10x: ${ratio >= 10 ? "MET" : "MISSED"}); ` +
        `declared / bare SDK ${(declared.perSec / bare.perSec).toFixed(3)}x; ` +
        `kernel sessions recorded for the declared tool: ${recorded} (calls made: ${declared.n + 3})`,
    );
  } finally {
    await ab.close();
    await sdk.close();
    await Deno.remove(project, { recursive: true }).catch(() => undefined);
  }
}

if (import.meta.main) {
  const s = Deno.args[0] ? Number(Deno.args[0]) : 5;
  await mcpServerDeclaredBench(s);
}
