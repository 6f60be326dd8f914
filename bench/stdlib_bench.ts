/**
 * Standard-library benchmark (part of `deno task bench`): the cost the Lua bridge adds on top of
 * the work itself, measured against the same work done directly, in the same run.
 *
 * - `std.kv` set+get and `std.ts.append` throughput versus raw `node:sqlite` prepared statements
 *   on a file opened the same way (`openDatabase`: WAL, synchronous=NORMAL, busy_timeout) doing
 *   the same statements with the same JSON encoding. Target: at least 0.5× the raw throughput.
 * - `sh.exec("true")` round trip versus `Deno.Command("/bin/sh", ["-c", "true"])` doing the same
 *   work (a process group of its own via `detached: true`, piped output read to the end), one at
 *   a time. Target: at most 1.5× the direct time. Printed for information: the plain
 *   `Command.output()`, which is cheaper because it cannot create a process group (Deno ignores
 *   `detached` there; a detached spawn forks the runtime instead of posix_spawn-ing it — measured
 *   ~2.0 ms against ~0.8 ms per `true` on the 2-core test machine).
 * The machine is shared, so both sides run interleaved inside ONE Lua run (the direct side is a
 * host function of a bench-only module), ROUNDS times, and the median per-round ratio is
 * reported. Lua-side timings are taken inside the script, so engine start-up is not counted.
 */
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { runBlock } from "../src/runtime/run.ts";
import type { LuaEngine } from "../src/lua/engine.ts";
import { openDatabase } from "../src/host/stores/sqlite.ts";

const KV_N = 2000;
const TS_N = 2000;
const SH_N = 20;
const ROUNDS = 7;

function rawKv(db: DatabaseSync): number {
  const set = db.prepare(
    "INSERT INTO __kv (ns, key, value) VALUES (?, ?, ?) ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value",
  );
  const get = db.prepare("SELECT value FROM __kv WHERE ns = ? AND key = ?");
  const t0 = performance.now();
  for (let i = 1; i <= KV_N; i++) {
    set.run("raw", `k${i}`, JSON.stringify({ i, name: "item" }));
    const row = get.get("raw", `k${i}`) as { value: string };
    JSON.parse(row.value);
  }
  return (performance.now() - t0) / 1000;
}

function rawTs(db: DatabaseSync): number {
  const ins = db.prepare("INSERT INTO ts (series, ts, tags, value) VALUES (?, ?, ?, ?)");
  const t0 = performance.now();
  for (let i = 1; i <= TS_N; i++) {
    ins.run("raw", Date.now(), JSON.stringify({ host: "a" }), JSON.stringify(i));
  }
  return (performance.now() - t0) / 1000;
}

async function rawSh(ownGroup: boolean): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < SH_N; i++) {
    const cmd = new Deno.Command("/bin/sh", {
      args: ["-c", "true"],
      stdout: "piped",
      stderr: "piped",
      detached: ownGroup,
    });
    await (ownGroup ? cmd.spawn().output() : cmd.output());
  }
  return (performance.now() - t0) / 1000;
}

const SCRIPT = `
local function ms(f) return (std.time.measure(f)) end
local out = {}
for round = 1, ${ROUNDS} do
  local r = {}
  r.kv_raw = _raw("kv")
  r.kv = ms(function()
    for i = 1, ${KV_N} do
      std.kv.set("lua", "k" .. i, { i = i, name = "item" })
      std.kv.get("lua", "k" .. i)
    end
  end)
  r.ts_raw = _raw("ts")
  r.ts = ms(function() for i = 1, ${TS_N} do std.ts.append("lua", i, { host = "a" }) end end)
  r.sh_raw = _raw_sh(true)
  r.sh_plain = _raw_sh(false)
  r.sh = ms(function() for i = 1, ${SH_N} do assert(sh.exec("true").code == 0) end end)
  out[round] = r
end
return std.json.encode(out)`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function line(
  name: string,
  ours: number[],
  raw: number[],
  kind: "throughput" | "time",
  target?: number,
): void {
  const ratios = ours.map((o, i) => kind === "throughput" ? raw[i] / o : o / raw[i]);
  const ratio = median(ratios);
  const verdict = target === undefined
    ? "(informational)"
    : (kind === "throughput" ? ratio >= target : ratio <= target)
    ? `(target ${kind === "throughput" ? "≥" : "≤"} ${target}×) ok`
    : `(target ${kind === "throughput" ? "≥" : "≤"} ${target}×) BELOW TARGET`;
  console.log(
    `stdlib  ${name.padEnd(34)} ours ${(median(ours) * 1000).toFixed(1).padStart(7)} ms  direct ${
      (median(raw) * 1000).toFixed(1).padStart(7)
    } ms  ratio ${ratio.toFixed(2)}× ${verdict}`,
  );
}

/** Runs the standard-library benchmarks and prints one line each. */
export default async function stdlibBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "ab_bench_stdlib_" });
  // The run's own environment: the store paths, and PATH for the shell (nothing else of ours).
  const env = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    AGENT_BLOCK_KV_PATH: join(dir, "kv.sqlite"),
    AGENT_BLOCK_TS_PATH: join(dir, "ts.sqlite"),
  };
  const kvDb = openDatabase(join(dir, "raw_kv.sqlite"));
  kvDb.exec(`CREATE TABLE __kv (ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (ns, key)) WITHOUT ROWID`);
  const tsDb = openDatabase(join(dir, "raw_ts.sqlite"));
  tsDb.exec(`CREATE TABLE ts (series TEXT NOT NULL, ts INTEGER NOT NULL, tags TEXT, value TEXT NOT NULL);
    CREATE INDEX idx_ts_series_ts ON ts (series, ts);`);
  const direct = (engine: LuaEngine) => {
    engine.define("_raw", { sync: (a) => (a.string(1, "what") === "kv" ? rawKv(kvDb) : rawTs(tsDb)) });
    engine.define("_raw_sh", { async: (a) => rawSh(a.boolean(1, "own_group")) });
  };
  try {
    const out = await runBlock({
      script: { source: SCRIPT, name: "stdlib_bench.lua" },
      projectRoot: dir,
      home: dir,
      env,
      modules: [direct],
      stdout: () => {},
      stderr: (b) => Deno.stderr.writeSync(b),
    });
    if (out.status !== "returned") throw new Error(`bench script failed: ${JSON.stringify(out)}`);
    const rounds = JSON.parse(out.value as string).slice(1) as Record<string, number>[]; // round 1 warms up
    const col = (k: string) => rounds.map((r) => r[k]);
    line(`std.kv set+get ×${KV_N}`, col("kv"), col("kv_raw"), "throughput", 0.5);
    line(`std.ts.append ×${TS_N}`, col("ts"), col("ts_raw"), "throughput", 0.5);
    line(`sh.exec("true") ×${SH_N} (own group)`, col("sh"), col("sh_raw"), "time", 1.5);
    line(`sh.exec("true") vs plain output()`, col("sh"), col("sh_plain"), "time");
  } finally {
    kvDb.close();
    tsDb.close();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await stdlibBench();
