/**
 * Kernel benchmark: events per second through `s:append` and through beats with an instant Port,
 * against raw node:sqlite inserts of the same rows into the same table layout, in the same run.
 *
 * Prints the two ratios (target ≥ 0.5×) and the kernel's own cost per beat in milliseconds
 * (target < 1 ms): the time inside `knl.beat` minus the time inside the Port's `chat`, so model
 * time is excluded. Rows written by the kernel are read back and re-inserted raw, one autocommit
 * INSERT each, with the same pragmas (WAL, synchronous NORMAL) — the baseline does exactly the
 * SQLite work and nothing else.
 *
 * Run: `deno run -A bench/knl_bench.ts` (or through `deno task bench`).
 */
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { runBlock } from "../src/runtime/run.ts";
import { CREATE_EVENTS } from "../src/knl/schema.ts";
import { closeStore } from "../src/knl/store.ts";

const APPENDS = 5000;
const BEATS = 1000;

const SCRIPT = `
local knl = require("knl")
local clock = require("knl.host").clock
local N_APPEND, N_BEAT = ${APPENDS}, ${BEATS}
local out = {}
knl.session({ owner = "bench-append", store = { sqlite = STORE } }, function(s)
  local t0 = clock()
  for i = 1, N_APPEND do
    s:append({ kind = "note", data = { i = i, text = "an event of ordinary size", tags = { "a", "b" } }, meta = { beat = i } })
  end
  out.append_ms = clock() - t0
  out.append_stream = s.id
end)
local port_ms = 0
local RESPONSE = { content = { { type = "text", text = "ok" } }, stop_reason = "end_turn", model = "instant",
  usage = { input_tokens = 12, output_tokens = 3 } }
local port = { profile = { provider = "instant", model = "instant" } }
function port:chat(req)
  local t = clock()
  local r = RESPONSE
  port_ms = port_ms + (clock() - t)
  return r
end
local device = knl.device({ llm = port, system = "bench" })
knl.session({ owner = "bench-beat", budget = { amount = N_BEAT + 1, tag = "beats" }, store = { sqlite = STORE } }, function(s)
  local beat_ms = 0
  for i = 1, N_BEAT do
    s:append({ kind = "msg_user", data = { content = "turn " .. i } })
    local t = clock()
    local o = knl.beat(s, device)
    beat_ms = beat_ms + (clock() - t)
    if o.kind ~= "ok" then error("beat " .. i .. ": " .. tostring(o)) end
  end
  out.beat_ms, out.port_ms, out.beat_stream = beat_ms, port_ms, s.id
end)
return std.json.encode(out)
`;

interface LuaOut {
  append_ms: number;
  append_stream: string;
  beat_ms: number;
  port_ms: number;
  beat_stream: string;
}

type Row = {
  stream: string;
  seq: number;
  epoch_ms: number;
  kind: string;
  schema_version: number;
  meta: string;
  data: string;
};

function rawInsertRate(dir: string, rows: Row[]): number {
  const db = new DatabaseSync(join(dir, `raw-${crypto.randomUUID()}.sqlite`));
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 30000");
  db.exec(CREATE_EVENTS);
  const ins = db.prepare(
    "INSERT INTO events (stream, seq, epoch_ms, kind, schema_version, meta, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const t0 = performance.now();
  for (const r of rows) ins.run(r.stream, r.seq, r.epoch_ms, r.kind, r.schema_version, r.meta, r.data);
  const ms = performance.now() - t0;
  db.close();
  return rows.length / (ms / 1000);
}

interface Round {
  appendRate: number;
  beatRate: number;
  rawAppend: number;
  rawBeat: number;
  perBeat: number;
  eventsPerBeat: number;
}

async function round(dir: string, k: number): Promise<Round> {
  const store = join(dir, `knl-${k}.sqlite`);
  try {
    const outcome = await runBlock({
      script: { source: SCRIPT, name: "knl_bench.lua", dir },
      projectRoot: dir,
      globals: { STORE: store },
      stdout: () => {},
    });
    if (outcome.status !== "returned") throw new Error(`bench script failed: ${JSON.stringify(outcome)}`);
    const out = JSON.parse(String(outcome.value)) as LuaOut;
    const db = new DatabaseSync(store);
    const rowsOf = (stream: string, where: string) =>
      db.prepare(
        `SELECT stream, seq, epoch_ms, kind, schema_version, meta, data FROM events WHERE stream = ? ${where} ORDER BY seq`,
      ).all(stream) as unknown as Row[];
    const appendRows = rowsOf(out.append_stream, "AND kind = 'note'");
    const beatRows = rowsOf(out.beat_stream, "AND kind IN ('llm_request', 'llm_response', 'budget_charge')");
    db.close();
    return {
      appendRate: appendRows.length / (out.append_ms / 1000),
      beatRate: beatRows.length / (out.beat_ms / 1000),
      rawAppend: rawInsertRate(dir, appendRows),
      rawBeat: rawInsertRate(dir, beatRows),
      perBeat: (out.beat_ms - out.port_ms) / BEATS,
      eventsPerBeat: beatRows.length / BEATS,
    };
  } finally {
    closeStore(store);
  }
}

/**
 * Runs the benchmark and prints its lines. Three rounds; each figure is its best round, kernel
 * and raw alike, so a noisy neighbour on a shared machine distorts the ratio less.
 */
export default async function knlBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "ab_knl_bench_" });
  try {
    const rounds: Round[] = [];
    for (let k = 0; k < 3; k++) rounds.push(await round(dir, k));
    const best = (f: (r: Round) => number) => Math.max(...rounds.map(f));
    const appendRate = best((r) => r.appendRate);
    const rawAppend = best((r) => r.rawAppend);
    const beatRate = best((r) => r.beatRate);
    const rawBeat = best((r) => r.rawBeat);
    const perBeat = Math.min(...rounds.map((r) => r.perBeat));
    const f = (n: number) => Math.round(n).toLocaleString("en-US");
    console.log(
      `knl s:append   ${f(appendRate)} events/s   raw node:sqlite ${f(rawAppend)} events/s   ratio ${
        (appendRate / rawAppend).toFixed(2)
      }x (target >= 0.5x)`,
    );
    console.log(
      `knl beats      ${f(beatRate)} events/s   raw node:sqlite ${f(rawBeat)} events/s   ratio ${
        (beatRate / rawBeat).toFixed(2)
      }x (target >= 0.5x)`,
    );
    console.log(
      `knl cost/beat  ${perBeat.toFixed(3)} ms, model time excluded (target < 1 ms; ${
        rounds[0].eventsPerBeat
      } events per beat, ${BEATS} beats)`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await knlBench();
