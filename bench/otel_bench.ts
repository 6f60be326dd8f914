/**
 * OpenTelemetry export: what tracing a run costs in CPU.
 *
 * Measured in one run: an `agent.run` of `TURNS` turns, each calling one Lua tool (the `replay`
 * provider scripts the model, so no model server shares the CPU), run in process through the SDK
 * (`runBlock`) without telemetry, and with telemetry exporting spans and metrics (OTLP
 * http/protobuf, the default encoding) to a receiver in a process of its own on 127.0.0.1 (it
 * reads each request and answers `{}`). Both are warmed up, then measured in `ROUNDS`
 * interleaved rounds; the CPU time of this process (user + system, `process.cpuUsage`) per run is
 * compared, median of the per-round ratios. Target: export at most 1.1 × the CPU of the same loop
 * without it. The run with telemetry includes its flush at the end (the export requests).
 *
 * `BENCH_ROUNDS` (default 7) sets the number of rounds.
 *
 * Measured (2 cores shared with other work, so ±0.05): 1.33–1.45 × before the protobuf span
 * encoding of `otlp_proto.ts` and the lean tracer's `startChild`, 1.22–1.31 × since. The parts,
 * timed in isolation per 100-turn run: making its ~300 spans from the kernel's rows 1.2–1.7 ms
 * (`JSON.parse` of the rows 0.5 ms of it), encoding them 0.65 ms (the official serializer took
 * 2.7 ms), metrics (records, collection, encoding) about 0.75 ms, the two export requests about
 * 0.6 ms — about 4 ms of the 8–10 ms this bench sees; the rest is the garbage collection and
 * compilation those allocations cause in a process whose heap also holds the Lua VM. The 1.1 ×
 * target (at most ~3.5 ms) would need the per-span allocations gone: spans written straight into
 * the protobuf buffer as rows arrive (no span or attribute objects), rows read without
 * `JSON.parse`, metrics aggregated and encoded by our own code instead of `sdk-metrics` — a
 * tracer and a metrics SDK of our own, more machinery than a few milliseconds per hundred model
 * turns are worth, so it is not done.
 */
import { join } from "node:path";
import process from "node:process";
import { BlockConfig, runBlock, ScriptSource } from "../mod.ts";
import { telemetryFromEnv } from "../src/obs/otel/settings.ts";

const TURNS = 100;
const TARGET = 1.1;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** A receiver in its own process; resolves to its URL and a stop function. */
async function startReceiver(): Promise<{ url: string; stop: () => Promise<void> }> {
  const code = `
    const s = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => console.log("PORT=" + port) },
      async (r) => { await r.arrayBuffer(); return new Response("{}"); });
    for await (const _ of Deno.stdin.readable) { /* ends with the parent */ }
    await s.shutdown();`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!/PORT=\d+\n/.test(text)) {
    const r = await reader.read();
    if (r.done) throw new Error("the receiver did not start");
    text += r.value;
  }
  reader.releaseLock();
  const port = /PORT=(\d+)/.exec(text)![1];
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      await child.stdin.close();
      await child.status;
      await child.stdout.cancel().catch(() => undefined);
    },
  };
}

/** CPU ms of this process spent in `f`. */
async function cpuMs(f: () => Promise<void>): Promise<number> {
  const a = process.cpuUsage();
  await f();
  const d = process.cpuUsage(a);
  return (d.user + d.system) / 1000;
}

export default async function otelBench(): Promise<void> {
  const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 7);
  const dir = await Deno.makeTempDir({ prefix: "ab_otel_bench_" });
  const rx = await startReceiver();
  try {
    const lines: string[] = [];
    for (let i = 1; i <= TURNS; i++) {
      lines.push(JSON.stringify({
        content: [{ type: "tool_use", id: `toolu_${i}`, name: "add", input: { a: i, b: 1 } }],
        usage: { input_tokens: 100 + i, output_tokens: 10 },
      }));
    }
    lines.push(JSON.stringify({ content: "done", usage: { input_tokens: 500, output_tokens: 5 } }));
    Deno.writeTextFileSync(join(dir, "loop.jsonl"), lines.join("\n") + "\n");
    const source = `
      tool.register("add", { description = "adds" }, function(args) return args.a + args.b end)
      local r = require("agent").run({ provider = "replay", replay = "loop.jsonl", prompt = "go",
        store = "mem", max_iterations = ${TURNS + 5} })
      assert(r.ok, r.error)
      return "ok"`;
    const discard = (_: Uint8Array) => {};
    const settings = telemetryFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url });
    const configOf = (traced: boolean) =>
      BlockConfig.builder(ScriptSource.inline(source, "loop.lua"), dir)
        .env({})
        .cwd(dir)
        .stdout(discard)
        .stderr((b) => console.error(new TextDecoder().decode(b)))
        .telemetry(traced ? settings : undefined)
        .build();
    const plain = configOf(false), traced = configOf(true);
    const once = async (c: BlockConfig) => {
      const r = await runBlock(c);
      if (r.value !== "ok") throw new Error(`the loop did not return ok: ${JSON.stringify(r.outcome)}`);
    };
    for (let i = 0; i < 3; i++) {
      await once(plain);
      await once(traced);
    }
    const off: number[] = [], on: number[] = [], ratio: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const a = await cpuMs(() => once(plain));
      const b = await cpuMs(() => once(traced));
      off.push(a);
      on.push(b);
      ratio.push(b / a);
    }
    const m = median(ratio);
    console.log(
      `${TURNS}-turn Lua-tool loop, no telemetry      ${median(off).toFixed(1).padStart(8)} ms CPU`,
    );
    console.log(`${TURNS}-turn Lua-tool loop, OTLP export       ${median(on).toFixed(1).padStart(8)} ms CPU`);
    console.log(
      `  export / none                          ${m.toFixed(3).padStart(8)} ×  (target <= ${TARGET}: ${
        m <= TARGET ? "met" : "missed"
      })`,
    );
    console.log(`  (${rounds} interleaved rounds; medians; receiver in its own process)`);
  } finally {
    await rx.stop();
    Deno.removeSync(dir, { recursive: true });
  }
}
