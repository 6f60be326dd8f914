/**
 * Benchmark: `run_block` over MCP against running the same block directly with `agent-block -b`.
 *
 * Both sides start one agent-block process per run of a trivial block, so the difference is
 * what the server adds: the MCP round trip, the registry re-scan, the config and outcome files,
 * and forwarding the child's output. Runs are interleaved (direct, MCP, direct, …) so machine
 * load drifts over both equally. Target: MCP median ≤ 1.2 × direct median + 20 ms.
 *
 * Run alone: `deno run -A bench/mcp_server_bench.ts [iterations]`.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { selfCommand } from "../src/proc/self.ts";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Runs the benchmark and prints the result. */
export default async function mcpServerBench(iterations = 20): Promise<void> {
  const project = await Deno.makeTempDir({ prefix: "ab_bench_mcp_" });
  const home = join(project, ".home");
  Deno.mkdirSync(join(project, "blocks"), { recursive: true });
  Deno.mkdirSync(home);
  Deno.writeTextFileSync(join(project, "blocks", "trivial.lua"), '-- Returns "ok".\nreturn "ok"\n');
  const env = { ...Deno.env.toObject(), AGENT_BLOCK_HOME: home, AGENT_BLOCK_LOG: "warn" };

  const direct = async (): Promise<number> => {
    const [cmd, ...args] = selfCommand(["-b", "trivial", "-p", project]);
    const t0 = performance.now();
    const out = await new Deno.Command(cmd, { args, env, cwd: project, stdout: "piped", stderr: "piped" })
      .output();
    const ms = performance.now() - t0;
    if (out.code !== 0) throw new Error(`direct run failed: ${new TextDecoder().decode(out.stderr)}`);
    return ms;
  };

  const [command, ...args] = selfCommand(["mcp", "-p", project]);
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(new StdioClientTransport({ command, args, env, stderr: "ignore" }));
  const viaMcp = async (): Promise<number> => {
    const t0 = performance.now();
    const r = await client.callTool({ name: "run_block", arguments: { block: "trivial" } });
    const ms = performance.now() - t0;
    const text = (r.content as { text?: string }[])[0]?.text;
    if (r.isError || text !== "ok") throw new Error(`run_block failed: ${JSON.stringify(r)}`);
    return ms;
  };

  try {
    for (let i = 0; i < 3; i++) {
      await direct();
      await viaMcp();
    }
    const d: number[] = [];
    const m: number[] = [];
    for (let i = 0; i < iterations; i++) {
      d.push(await direct());
      m.push(await viaMcp());
    }
    const dm = median(d);
    const mm = median(m);
    const target = 1.2 * dm + 20;
    console.log(
      `mcp_server: run_block vs agent-block -b, trivial block, ${iterations} interleaved runs each`,
    );
    console.log(`  direct  -b    median ${dm.toFixed(1)} ms  mean ${mean(d).toFixed(1)} ms`);
    console.log(`  run_block     median ${mm.toFixed(1)} ms  mean ${mean(m).toFixed(1)} ms`);
    console.log(
      `  ratio ${(mm / dm).toFixed(3)}x, overhead ${(mm - dm).toFixed(1)} ms; ` +
        `target <= 1.2x + 20 ms = ${target.toFixed(1)} ms: ${mm <= target ? "MET" : "MISSED"}`,
    );
  } finally {
    await client.close();
    await Deno.remove(project, { recursive: true }).catch(() => undefined);
  }
}

if (import.meta.main) {
  const n = Deno.args[0] ? Number(Deno.args[0]) : 20;
  await mcpServerBench(n);
}
