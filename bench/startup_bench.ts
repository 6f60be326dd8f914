/**
 * Startup: wall time of `agent-block -s hello.lua` (one print) against, in the same run,
 * (a) `deno run` of an empty script and (b) a script that only creates a wasmoon engine and runs
 * `print("x")`. Reports medians over interleaved iterations and both ratios; the target is
 * agent-block within 1.25 × (b): everything the runtime adds (scheduler, prelude, standard
 * library, flag parsing) should cost less than a quarter of bare wasmoon's start.
 *
 * `BENCH_ITERATIONS` (default 25) sets the number of runs per variant. On a loaded machine the
 * medians spread (agent-block's longer start is hit harder); the ratio of minimums is printed too.
 *
 * Where agent-block's extra start-up goes (profiled with performance marks and
 * `/proc/thread-self/schedstat`): the main thread is the bottleneck — a run of hello.lua costs about
 * 13 ms more main-thread CPU than (b), and the wall time differs by as much. Of that: loading the
 * prebuilt bundle of the CLI (~5 ms: a dozen chunks, ~0.15 ms per module plus size; `deno run` from
 * the TypeScript sources took ~15 ms for the same code), checking that the bundle matches the
 * sources (~0.6 ms: statting ~110 files against the record of the last verification; reading and
 * hashing them, as the first start after a change does, costs ~2.5 ms; see src/cli/prebuilt.ts), flag parsing,
 * `.env`, block lookup and the seal check (~3 ms), and the Lua side (the scheduler chunk, the
 * eagerly installed host modules and the prelude, the first host call for `print`: ~5 ms, mostly
 * V8 compiling code on first call — the same work run a second time in one process takes a tenth).
 * Kept out on purpose: the MCP SDK (loaded on the first `mcp.connect`), the LLM transport (first
 * request), subcommands other than the run path; deno.json's `lazy-dynamic-imports`, without
 * which `deno run` still reads the module graph behind every literal dynamic import at start
 * (`compile.include` then lists those modules for `deno compile`, which no longer follows such
 * imports); nine standard packages (`std.kv`/`sql`/`ts`, `std.fs`, `sh`, `bus`, `http`, `mcp`,
 * `llm`, the kernel's host table) until a script touches them (src/host/lazy.ts); Lua allocation
 * tracing unless a memory limit is set; wasmoon's JS type extensions (the engine is created on the
 * bare global state); parsing any runtime chunk (all are precompiled). cli.ts starts the wasm
 * compile before loading the rest, so loading overlaps it.
 * Tried and dropped (no measurable gain): compiling glue.wasm from bytes read up front instead of
 * through wasmoon's asynchronous loader; rewriting the bundle's function declarations into
 * parenthesised expressions so that V8 compiles them eagerly and keeps them in its code cache;
 * importing the standard library's host modules dynamically during the wasm wait (slower: module
 * loading and the wasm compile compete for the same CPU).
 */
import { join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;
const TARGET = 1.25;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function timeRun(args: string[], cwd: string): Promise<number> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  if (out.code !== 0) {
    throw new Error(`deno ${args.join(" ")} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return ms;
}

export default async function startupBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "ab_bench_" });
  try {
    Deno.writeTextFileSync(join(dir, "hello.lua"), `print("hello")\n`);
    Deno.writeTextFileSync(join(dir, "empty.ts"), "");
    // (b) lives inside the repository so that `wasmoon` resolves through deno.json like cli.ts.
    const wasmoonOnly = join(ROOT, "bench", ".wasmoon_only.tmp.ts");
    Deno.writeTextFileSync(
      wasmoonOnly,
      `import { LuaFactory } from "wasmoon";
import { fileURLToPath } from "node:url";
const f = new LuaFactory(fileURLToPath(import.meta.resolve("wasmoon/dist/glue.wasm")));
const lua = await f.createEngine({ injectObjects: false, enableProxy: false });
lua.global.set("print", (s: string) => console.log(s));
await lua.doString('print("x")');
lua.global.close();
`,
    );
    try {
      const variants: [string, string[], string][] = [
        ["agent-block -s hello.lua", ["run", "-A", "--quiet", join(ROOT, "cli.ts"), "-s", "hello.lua"], dir],
        ["(a) deno run empty.ts", ["run", "-A", "--quiet", "empty.ts"], dir],
        ["(b) wasmoon engine + print", ["run", "-A", "--quiet", wasmoonOnly], ROOT],
      ];
      const n = Number(Deno.env.get("BENCH_ITERATIONS") ?? 25);
      const times: number[][] = variants.map(() => []);
      for (const [, args, cwd] of variants) await timeRun(args, cwd); // warm caches
      for (let i = 0; i < n; i++) {
        for (let v = 0; v < variants.length; v++) {
          times[v].push(await timeRun(variants[v][1], variants[v][2]));
        }
      }
      const med = times.map(median);
      for (let v = 0; v < variants.length; v++) {
        console.log(
          `${variants[v][0].padEnd(30)} median ${med[v].toFixed(1).padStart(7)} ms  ` +
            `(min ${Math.min(...times[v]).toFixed(1)}, ${n} runs)`,
        );
      }
      const mins = times.map((t) => Math.min(...t));
      console.log(
        `ratio of minimums (least disturbed runs): ${(mins[0] / mins[1]).toFixed(2)} vs (a), ` +
          `${(mins[0] / mins[2]).toFixed(2)} vs (b)`,
      );
      const vsEmpty = med[0] / med[1];
      const vsWasmoon = med[0] / med[2];
      console.log(`ratio agent-block / (a) empty deno: ${vsEmpty.toFixed(2)}`);
      console.log(
        `ratio agent-block / (b) bare wasmoon: ${vsWasmoon.toFixed(2)} (target <= ${TARGET}: ${
          vsWasmoon <= TARGET ? "met" : "NOT met"
        })`,
      );
    } finally {
      Deno.removeSync(wasmoonOnly);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
