/**
 * Long runs (`deno task bench llm_long`; `deno task bench llm` runs it after the short one): does a
 * turn's cost stay flat as the conversation grows? Each run is its own process against one instant
 * local OpenAI-compatible mock served from this process, measured from outside: CPU (user + system,
 * its children included: `getrusage(RUSAGE_CHILDREN)` around the wait), peak RSS (`/usr/bin/time`'s
 * maximum resident set, when it is installed), wall time and the time from spawn to its first model
 * request. Clients, interleaved round by round so machine noise hits them alike:
 * - `agent-block`: `deno run -A cli.ts -s long.lua` in a scratch project, the block one `agent.run`
 *   with one Lua tool; its kernel log is the project's SQLite file, as in any CLI run;
 * - `baseline`: the same block run by the code of another commit (`BENCH_BASELINE`, default
 *   6298b43, the code before runs became values; `none` skips it), exported with `git archive`
 *   into the temp directory and installed with `deno install --frozen` once (kept for later runs);
 * - `AI SDK`: `generateText` with the same tool and step limit (bench/llm_long_sdk.ts).
 * The mock answers a tool call until the request holds TURNS tool results, then a text: TURNS + 1
 * requests. It reads only the last `tool_call_id` of the body, so its own cost does not grow with
 * the conversation much. Two tools: `add` (in-process arithmetic) and `sh` (agent-block:
 * `sh.exec("true")`; AI SDK: `sh -c true` through `Deno.Command`).
 *
 * Figures (medians over 2 × `BENCH_ROUNDS` rounds, default 3; the 1000-turn runs in the first
 * `BENCH_ROUNDS` only): loop CPU at TURNS = CPU of the run
 * less CPU of a run whose model answers at once (start-up, one request, the run's end); marginal
 * CPU per turn over 10→100 and 100→1000; peak RSS at 10, 100, 1000; CPU per shell turn over 100
 * `sh` turns (less the 0-turn run, over 100); start-up (wall of `-s hello.lua`) and time to first
 * request. Targets (issue 36): marginal 100→1000 ≤ 1.2 × marginal 10→100; peak RSS at 1000 ≤
 * 1.3 × at 100; shell turn ≤ 0.6 × the AI SDK's; against the baseline, loop CPU and peak RSS at 10
 * and 100 within 1.05 ×, time to first request and start-up within 1.15 ×. `BENCH_LONG_TURNS`
 * (default `10,100,1000`) sets the lengths (the ratios need all three); `BENCH_LONG_ONLY=sh`
 * measures the shell turn alone (the 0-turn and the `sh` runs, no start-up), e.g. with
 * `BENCH_BASELINE=<commit>` to set a change's `sh.exec` turn beside the code before it.
 *
 * Where the time went, and what changed (December 2026, a shared 2-core machine, often loaded:
 * compare ratios within one run, not figures across runs). Before (commit 65e1a53, same run):
 * marginal CPU per turn 1.78 ms over 10→100 and 3.16 ms over 100→1000 (1.78 ×), loop CPU 3.06 s at
 * 1000 turns, peak RSS 94 → 172 MB (1.82 ×), an `sh.exec` turn 33 ms. A profile of the 1000-turn
 * run had a third of the loop in building each body (joining every message's pre-encoded text into
 * one string, then encoding the whole of it to bytes again), and the Lua side walking the history
 * every turn (the adapter's conversion ~0.6 µs a message, the Port's encoding lookups, the list of
 * ids converted to JavaScript). Now: a message is encoded to bytes once; the host keeps each
 * conversation's messages joined (`src/host/llm/joined_messages.ts`) and a request copies them in
 * one piece into a buffer reused from request to request; the Lua side converts and hands over
 * only what the turn added (`llm_proto.convert_list`, told by knl's beat what the previous beat
 * sent). After (same run): 1.86 / 1.13 ms (0.61 ×), 1.15 s at 1000 turns (the AI SDK 3.54 s),
 * peak RSS 92 → 122 MB (1.33 ×), `sh.exec` turn 14 ms.
 * Peak RSS, 100 → 1000 turns (December 2026, same machine): it grew ~31 MB (1.31-1.33 ×) while
 * the live JavaScript and Lua heaps stayed nearly flat. Per-turn sampling (`Deno.memoryUsage()`,
 * the Lua heap, `/proc/self/smaps`, a heap snapshot) put half of it in request bodies nobody held:
 * given bytes, Deno's fetch copies a body into an ArrayBuffer of its own, freed only at V8's next
 * scavenge; scavenges follow the JavaScript a turn allocates (~80 turns apart at 1000 turns), so
 * the copies waiting for one grew with the body: ~16 MB at the peak of a 1000-turn run, ~24 MB at
 * 2000 (V8's "external" memory at the sample; the 1000-turn peak fell 125 → 109 MB when the mock
 * was sent only the body's tail). Now a body of 64 KiB or more goes to fetch as a stream of one
 * chunk from a buffer leased for the request (`STREAM_BODY_BYTES` in
 * `src/clients/llm/transport.ts`), which the HTTP stack takes without a copy. Two bench runs
 * each, before → after: peak RSS at 1000 turns 126.7, 125.6 → 112.6, 113.0 MB, ratio 1.33, 1.33
 * → 1.20, 1.21 ×. The price is CPU: in a loop of 200 fetches of 200 KB a one-chunk stream cost no
 * more than bytes, but in the run ~5 % more at 1000 turns (five interleaved runs each: median 1.32
 * vs 1.26 s; marginal per turn 100→1000 went 0.99, 1.06 → 1.19, 1.15 ms in the bench runs, the
 * AI SDK's moved alike on the loaded machine); runs up to ~300 turns send bytes as before.
 * At 2000 turns (one run each): 136 MB, was 170. Sampled with a full GC every 100 turns
 * (`--expose-gc`) the live JavaScript heap stays at ~13 MB from 1000 to 2000 turns and RSS at 2000
 * is ~109 MB: what a run adds past that is V8 sizing its old space between mark-compacts (fewer
 * of them now that no body copies press on its external memory) and the Lua heap's high-water.
 * Tried and not kept: Lua's generational GC (at 1000 turns, before the streamed body, no RSS
 * change and a little more CPU; after it, ~4 MB less at 2000 turns in two runs, same CPU: worth
 * a careful look, not switched on here), a lower incremental pause (100: the 1000-turn run took
 * 7 × the CPU), `MALLOC_MMAP_THRESHOLD_` fixed at 128 KiB (~2.5 MB less, through the environment
 * only).
 * What is left:
 * - peak RSS still grows ~17 MB from 100 to 1000 turns: the V8 heap's own size (~5 MB, old space
 *   between mark-compacts), the Lua heap's high-water mark in the wasm memory (~4 MB of touched
 *   pages: its live heap grows ~1.8 KB a turn, about half of it, by the tables' sizes, the
 *   converted wire tables `llm_proto`'s chains keep per message, and the incremental collector
 *   lets it reach ~2 × the live size), the main arena's fragmentation and the body buffers
 *   themselves (~1.5 × the largest body). Dropping the chains' wire tables once the host holds
 *   their bytes is the next step on the Lua side;
 *   `MALLOC_ARENA_MAX=2` in the environment brought 1000 turns from ~131 to ~121 MB before, and
 *   `malloc_trim` every 50 requests saved ~10 MB for ~15 % more CPU: neither kept;
 * - a shell turn: Deno's `detached` spawn forked the whole host (~13-18 ms of blocked main thread
 *   per child); children then started through posix_spawn behind `setsid` and `setpriv`, two
 *   dynamic execs (~0.6-0.7 ms of CPU each, measured with a loop of 500) before the command's
 *   own. Now one exec of the session stub (`src/proc/session_stub.ts`, 252 bytes, static: ~0.05
 *   ms) sets both; ending a run's trees walks `/proc` once when nothing is left (was four walks,
 *   each reading every process's environment), in the CLI only the host's subtree (it is a
 *   subreaper, so every member is there); the reaper reads one `children` file per SIGCHLD, not
 *   one per thread; the lifeline's sentinel starts behind `setsid` instead of forking the host.
 *   Same run, `BENCH_LONG_ONLY=sh BENCH_BASELINE=9b77cc4` (the code before): an `sh.exec` turn
 *   6.2-7.1 → 4.3-5.2 ms (0.69-0.74 ×), 1.75-1.98 × → 1.23-1.40 × the AI SDK's (four runs).
 *   What is left (perf, 300 turns against the `add` tool's run): the command's `/bin/sh` itself (~0.5 ms, as the SDK's), the
 *   host's share of a spawn as Deno does it (two `ReadableStream`s, the op, the pidfd) and the Lua
 *   side of an async host call. 0.6 × is out of reach for any design that execs `/bin/sh` once per
 *   command: the AI SDK's own turn is ~2.2 ms of model turn plus ~1.4 ms of spawn, and agent-block's
 *   model turn alone is ~1.9 ms here; it would take running commands without an exec per command
 *   (a long-lived shell per run), which changes what `sh -c` means for a command;
 * - against 6298b43, start-up (`-s hello.lua`) is ~1.3 × and peak RSS ~+7 MB from the start on
 *   (that commit loaded a committed bundle of the CLI, since removed on purpose); the loop itself
 *   is faster (loop CPU 0.65-0.72 × at 10 and 100 turns).
 */
import { join } from "node:path";
import { median } from "./startup_bench.ts";
import { toolLoopReply } from "./mock_openai.ts";

const ROOT = new URL("..", import.meta.url).pathname;

// ---------------------------------------------------------------------------------------------
// CPU of reaped children, through libc's getrusage (x86_64/aarch64 Linux layout: two timevals).

const RUSAGE_CHILDREN = -1;
let getrusage: ((who: number, buf: Uint8Array) => number) | undefined;
try {
  const lib = Deno.dlopen(Deno.build.os === "linux" ? "libc.so.6" : "libc.dylib", {
    getrusage: { parameters: ["i32", "buffer"], result: "i32" },
  });
  getrusage = (who, buf) => lib.symbols.getrusage(who, buf);
} catch { /* CPU is then not measured */ }

/** CPU seconds (user + system) of every reaped child of this process so far, in ms. */
export function childrenCpuMs(): number {
  if (!getrusage) return NaN;
  const buf = new Uint8Array(144);
  if (getrusage(RUSAGE_CHILDREN, buf) !== 0) return NaN;
  const v = new DataView(buf.buffer);
  const tv = (o: number) => Number(v.getBigInt64(o, true)) * 1000 + Number(v.getBigInt64(o + 8, true)) / 1000;
  return tv(0) + tv(16);
}

const TIME = "/usr/bin/time";
const hasTime = (() => {
  try {
    return Deno.statSync(TIME).isFile;
  } catch {
    return false;
  }
})();

// ---------------------------------------------------------------------------------------------
// The mock: stateless, keyed by the URL path /r<run>/<tool>/<turns>/v1/chat/completions.

interface Mock {
  url: string;
  firstRequest: Map<string, number>;
  close(): Promise<void>;
}

function startMock(): Mock {
  const firstRequest = new Map<string, number>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const now = performance.now();
    const [, run, tool, turnsText] = new URL(req.url).pathname.split("/");
    if (!firstRequest.has(run)) firstRequest.set(run, now);
    const body = await req.text();
    const at = body.lastIndexOf('"tool_call_id"');
    const done = at < 0 ? 0 : Number(/call_(\d+)/.exec(body.slice(at, at + 64))![1]) + 1;
    const turns = Number(turnsText);
    return toolLoopReply(done, turns, tool);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    firstRequest,
    close: () => server.shutdown(),
  };
}

// ---------------------------------------------------------------------------------------------
// Clients.

interface Client {
  label: string;
  /** The command (after `deno`) for one run, and its cwd. */
  command(url: string, turns: number, tool: "add" | "sh"): { args: string[]; cwd: string };
  /** `-s hello.lua`, for the start-up figure (agent-block trees only). */
  hello?: { args: string[]; cwd: string };
}

function block(url: string, turns: number, tool: "add" | "sh"): string {
  const schema =
    `{ type = "object", properties = { a = { type = "number" }, b = { type = "number" } }, required = { "a", "b" } }`;
  const body = tool === "sh"
    ? `function(x) local r = sh.exec("true"); return { code = r.code } end`
    : `function(x) return { sum = x.a + x.b } end`;
  const description = tool === "sh" ? "Runs a shell command" : "Adds two numbers";
  return `
tool.register("${tool}", { description = "${description}", input_schema = ${schema} }, ${body})
local agent = require("agent")
local r = agent.run({ provider = "openai", base_url = "${url}", api_key = "k", model = "gpt-4o-mini",
  prompt = "add things", max_iterations = ${turns + 2}, max_retries = 0 })
assert(r.ok and r.num_turns == ${turns + 1}, r.error or ("turns " .. tostring(r.num_turns)))
`;
}

async function treeClient(label: string, tree: string, scratch: string): Promise<Client> {
  const dir = join(scratch, label.replace(/\W+/g, "_"));
  await Deno.mkdir(dir, { recursive: true });
  Deno.writeTextFileSync(join(dir, "hello.lua"), `print("hello")\n`);
  const cli = join(tree, "cli.ts");
  let n = 0;
  return {
    label,
    command(url, turns, tool) {
      const name = `long_${n++}.lua`;
      Deno.writeTextFileSync(join(dir, name), block(url, turns, tool));
      return { args: ["run", "-A", "--quiet", cli, "-s", name], cwd: dir };
    },
    hello: { args: ["run", "-A", "--quiet", cli, "-s", "hello.lua"], cwd: dir },
  };
}

function sdkClient(): Client {
  const script = join(ROOT, "bench", "llm_long_sdk.ts");
  return {
    label: "AI SDK",
    command: (url, turns, tool) => ({
      args: ["run", "-A", "--quiet", script, url, String(turns), tool],
      cwd: ROOT,
    }),
  };
}

/** The baseline tree for `commit`, exported and installed once under the temp directory. */
async function baselineTree(commit: string): Promise<string | undefined> {
  const tmp = Deno.env.get("TMPDIR") ?? "/tmp";
  const dir = join(tmp, `ab_bench_baseline_${commit}`);
  try {
    if (Deno.statSync(join(dir, ".ready")).isFile) return dir;
  } catch { /* not prepared yet */ }
  await Deno.remove(dir, { recursive: true }).catch(() => undefined);
  await Deno.mkdir(dir, { recursive: true });
  const git = await new Deno.Command("sh", {
    args: ["-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", ROOT, commit, dir],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!git.success) {
    console.log(
      `  baseline ${commit}: cannot export (${new TextDecoder().decode(git.stderr).trim()}); skipped`,
    );
    return undefined;
  }
  const install = await new Deno.Command(Deno.execPath(), {
    args: ["install", "--frozen", "--quiet"],
    cwd: dir,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!install.success) {
    console.log(
      `  baseline ${commit}: deno install failed (${new TextDecoder().decode(install.stderr).trim()})`,
    );
    return undefined;
  }
  Deno.writeTextFileSync(join(dir, ".ready"), "");
  return dir;
}

// ---------------------------------------------------------------------------------------------
// One measured run.

interface Sample {
  cpu: number;
  rss: number;
  wall: number;
  first: number;
}

let runId = 0;

async function measure(mock: Mock, client: Client, turns: number, tool: "add" | "sh"): Promise<Sample> {
  const run = `r${runId++}`;
  const url = `${mock.url}/${run}/${tool}/${turns}/v1`;
  const { args, cwd } = client.command(url, turns, tool);
  return await measureCommand(args, cwd, () => mock.firstRequest.get(run));
}

async function measureCommand(
  args: string[],
  cwd: string,
  first?: () => number | undefined,
): Promise<Sample> {
  const rssFile = await Deno.makeTempFile({ prefix: "ab_bench_rss_" });
  const [cmd, cmdArgs] = hasTime
    ? [TIME, ["-f", "%M", "-o", rssFile, Deno.execPath(), ...args]]
    : [Deno.execPath(), args];
  const env = { NO_COLOR: "1", AGENT_BLOCK_LOG: "warn" };
  const cpu0 = childrenCpuMs();
  const t0 = performance.now();
  const out = await new Deno.Command(cmd, { args: cmdArgs, cwd, env, stdout: "piped", stderr: "piped" })
    .output();
  const wall = performance.now() - t0;
  const cpu = childrenCpuMs() - cpu0;
  const rssText = hasTime ? Deno.readTextFileSync(rssFile).trim().split("\n").pop() : "";
  Deno.removeSync(rssFile);
  if (out.code !== 0) {
    throw new Error(`deno ${args.join(" ")} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
  }
  const f = first?.();
  return { cpu, rss: hasTime ? Number(rssText) / 1024 : NaN, wall, first: f === undefined ? NaN : f - t0 };
}

// ---------------------------------------------------------------------------------------------

const fmt = (x: number, d = 1) => Number.isFinite(x) ? x.toFixed(d) : "n/a";
const verdict = (ok: boolean) => ok ? "met" : "missed";
/** A ratio target's verdict; a ratio of differences that came out negative is noise, not a pass. */
const ratioVerdict = (r: number, limit: number) =>
  Number.isFinite(r) && r > 0 ? verdict(r <= limit) : "noise: run again";

/** Runs the benchmark and prints the figures. */
export default async function llmLongBench(): Promise<void> {
  const lengths = (Deno.env.get("BENCH_LONG_TURNS") ?? "10,100,1000").split(",").map(Number);
  const shOnly = Deno.env.get("BENCH_LONG_ONLY") === "sh";
  const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 3);
  const commit = Deno.env.get("BENCH_BASELINE") ?? "6298b43";
  const scratch = await Deno.makeTempDir({ prefix: "ab_bench_long_" });
  const mock = startMock();
  try {
    const clients: Client[] = [await treeClient("agent-block", ROOT, scratch)];
    const baseTree = commit === "none" ? undefined : await baselineTree(commit);
    if (baseTree) clients.push(await treeClient(`baseline ${commit}`, baseTree, scratch));
    clients.push(sdkClient());
    const SH_TURNS = 100;
    const cases: { turns: number; tool: "add" | "sh" }[] = [
      { turns: 0, tool: "add" },
      ...(shOnly ? [] : lengths.map((turns) => ({ turns, tool: "add" as const }))),
      { turns: SH_TURNS, tool: "sh" },
    ];
    const key = (c: Client, turns: number, tool: string) => `${c.label}|${tool}|${turns}`;
    const samples = new Map<string, Sample[]>();
    const push = (k: string, s: Sample) => samples.set(k, [...(samples.get(k) ?? []), s]);
    // warm-up: DENO_DIR's code cache, the projects' kernel databases
    for (const c of clients) {
      await measure(mock, c, 1, "add");
      if (c.hello) await measureCommand(c.hello.args, c.hello.cwd);
    }
    // The short runs' figures are small differences of noisy start-ups: they get twice the rounds
    // (the long runs, where a turn's cost dominates, run in the first half only).
    for (let r = 0; r < 2 * rounds; r++) {
      for (const c of clients) {
        if (c.hello && !shOnly) {
          push(key(c, -1, "hello"), await measureCommand(c.hello.args, c.hello.cwd));
        }
      }
      for (const { turns, tool } of cases) {
        if (turns >= 1000 && r >= rounds) continue;
        for (const c of clients) push(key(c, turns, tool), await measure(mock, c, turns, tool));
      }
    }
    const med = (c: Client, turns: number, tool: string, f: (s: Sample) => number) =>
      median((samples.get(key(c, turns, tool)) ?? []).map(f));
    const cpu = (c: Client, n: number) => med(c, n, "add", (s) => s.cpu);
    const loop = (c: Client, n: number) => cpu(c, n) - cpu(c, 0);
    const rss = (c: Client, n: number) => med(c, n, "add", (s) => s.rss);
    const [a, b, z] = [lengths[0], lengths[1], lengths[2]];
    const shTurn = (c: Client) => (med(c, SH_TURNS, "sh", (s) => s.cpu) - cpu(c, 0)) / SH_TURNS;
    if (shOnly) {
      const sdkTurn = shTurn(clients[clients.length - 1]);
      console.log(
        `llm_long_bench (sh only): CPU per sh turn over ${SH_TURNS} turns less the 0-turn run, medians of ${
          2 * rounds
        } interleaved rounds`,
      );
      for (const c of clients) {
        console.log(
          `  ${c.label.padEnd(20)}${`${fmt(shTurn(c), 2)} ms`.padStart(10)}${
            `${fmt(shTurn(c) / sdkTurn, 2)}x`.padStart(8)
          } of the AI SDK's`,
        );
      }
      const sr = shTurn(clients[0]) / sdkTurn;
      console.log(`  sh.exec turn ≤ 0.6 × AI SDK's sh -c true turn: ${fmt(sr, 2)}x ${verdict(sr <= 0.6)}`);
      return;
    }

    console.log(
      `llm_long_bench: one agent run per process, instant local mock, medians of ${
        2 * rounds
      } interleaved rounds` +
        ` (${rounds} for ${z} turns)` +
        (hasTime ? "" : " (no /usr/bin/time: peak RSS not measured)"),
    );
    console.log(
      `  ${"client".padEnd(20)}` + lengths.map((n) => `loop CPU@${n}`.padStart(15)).join("") +
        lengths.map((n) => `RSS@${n}`.padStart(10)).join("") +
        `${"marg " + a + "→" + b}`.padStart(14) + `${"marg " + b + "→" + z}`.padStart(15) +
        "ratio".padStart(7) + "RSS ratio".padStart(10) + "sh turn".padStart(9),
    );
    for (const c of clients) {
      const m1 = (loop(c, b) - loop(c, a)) / (b - a);
      const m2 = (loop(c, z) - loop(c, b)) / (z - b);
      console.log(
        `  ${c.label.padEnd(20)}` + lengths.map((n) => `${fmt(loop(c, n))} ms`.padStart(15)).join("") +
          lengths.map((n) => `${fmt(rss(c, n))} MB`.padStart(10)).join("") +
          `${fmt(m1, 2)} ms`.padStart(14) + `${fmt(m2, 2)} ms`.padStart(15) +
          `${fmt(m2 / m1, 2)}x`.padStart(7) + `${fmt(rss(c, z) / rss(c, b), 2)}x`.padStart(10) +
          `${fmt(shTurn(c), 1)} ms`.padStart(9),
      );
    }
    const ab = clients[0];
    const sdk = clients[clients.length - 1];
    const m1 = (loop(ab, b) - loop(ab, a)) / (b - a);
    const m2 = (loop(ab, z) - loop(ab, b)) / (z - b);
    console.log(`  targets (agent-block):`);
    console.log(
      `    marginal CPU ${b}→${z} ≤ 1.2 × ${a}→${b}: ${fmt(m2 / m1, 2)}x ${ratioVerdict(m2 / m1, 1.2)}`,
    );
    const rr = rss(ab, z) / rss(ab, b);
    console.log(`    peak RSS @${z} ≤ 1.3 × @${b}: ${fmt(rr, 2)}x ${verdict(rr <= 1.3)}`);
    const sr = shTurn(ab) / shTurn(sdk);
    console.log(`    sh.exec turn ≤ 0.6 × AI SDK's sh -c true turn: ${fmt(sr, 2)}x ${verdict(sr <= 0.6)}`);
    console.log(
      `    vs AI SDK: loop CPU@${z} ${fmt(loop(ab, z) / loop(sdk, z), 2)}x, peak RSS@${z} ${
        fmt(rss(ab, z) / rss(sdk, z), 2)
      }x`,
    );
    const base = clients.length === 3 ? clients[1] : undefined;
    if (base) {
      const start = (c: Client) => med(c, -1, "hello", (s) => s.wall);
      const first = (c: Client) => med(c, a, "add", (s) => s.first);
      const within = (label: string, x: number, y: number, limit: number) =>
        console.log(
          `    ${label}: ${fmt(x)} vs ${fmt(y)} = ${fmt(x / y, 2)}x (≤ ${limit}: ${
            x > 0 && y > 0 ? verdict(x / y <= limit) : "noise: a figure is not positive, run again"
          })`,
        );
      console.log(`  against ${base.label} (agent-block vs baseline, ms / MB):`);
      for (const n of [a, b]) {
        within(`loop CPU@${n}`, loop(ab, n), loop(base, n), 1.05);
        within(`peak RSS@${n}`, rss(ab, n), rss(base, n), 1.05);
      }
      within(`time to first request (@${a})`, first(ab), first(base), 1.15);
      within(`start-up (-s hello.lua wall)`, start(ab), start(base), 1.15);
    }
  } finally {
    await mock.close();
    await Deno.remove(scratch, { recursive: true });
  }
}

if (import.meta.main) await llmLongBench();
