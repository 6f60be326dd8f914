/**
 * Watching a run from the command line, through the real CLI over the offline replay provider:
 * `--progress` (and `AGENT_BLOCK_PROGRESS=1` in `.env`) prints one line per step on stderr and
 * nothing on stdout; `--events FILE` and `--events -` stream the run's events as JSON Lines whose
 * kernel rows equal `knl export --as events` of the session afterwards, row for row, ending with
 * the `end` line that carries the outcome — and
 * arrive while the run is still going: the gated block's tool waits for a file the test creates
 * only once it has read the first beat's `tool_call` from the stream, so the run cannot end
 * before the test has seen it (no sleeps, no timing).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, REPO_ROOT, runCli, tempProject, waitFor } from "../helpers.ts";

const HELLO = join(REPO_ROOT, "blocks/hello_agent.lua");
const REPLAY = Deno.readTextFileSync(join(REPO_ROOT, "blocks/hello_agent.replay.jsonl"));

/** hello_agent, with a tool that waits for the file named by `_CONTEXT`, and a price for `replay`. */
const GATED = `
local agent = require("agent")
local gate = _CONTEXT
tool.register("word_count", {
  description = "Counts the words in a text.",
  input_schema = { type = "object", properties = { text = { type = "string" } }, required = { "text" } },
}, function(input)
  for _ = 1, 6000 do -- bounds a failing test only (about a minute)
    if std.fs.exists(gate) then
      local n = 0
      for _ in tostring(input.text):gmatch("%S+") do n = n + 1 end
      return { words = n }
    end
    std.task.sleep(0.01)
  end
  error("the gate file never appeared: " .. gate)
end)
local r = agent.run({
  provider = "replay",
  replay = "hello_agent.replay.jsonl",
  prompt = "How many words are in 'the quick brown fox jumps'?",
  system = "You are a precise assistant. Use tools to count.",
  max_iterations = 4,
  prices = { replay = { input = 3, output = 15 } },
})
print(std.json.encode({ ok = r.ok, session_id = r.session_id }))
`;

function gatedProject(): Promise<string> {
  return tempProject({ "gated.lua": GATED, "hello_agent.replay.jsonl": REPLAY });
}

/** `knl export --session ID --as events` of the project's log, as lines. */
async function exported(project: string, session: string): Promise<string[]> {
  const r = await runCli(["knl", "export", "--session", session, "--as", "events", "-p", project]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split("\n").filter((l) => l !== "");
}

/** A CLI run whose stderr is read as it comes. */
function spawnCli(args: string[], cwd: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, ...args],
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  let stdout = "";
  const pump = async (s: ReadableStream<Uint8Array>, add: (t: string) => void) => {
    const dec = new TextDecoder();
    for await (const chunk of s) add(dec.decode(chunk, { stream: true }));
  };
  const pumped = Promise.all([
    pump(child.stderr, (t) => stderr += t),
    pump(child.stdout, (t) => stdout += t),
  ]);
  return {
    stderr: () => stderr,
    done: async () => {
      const status = await child.status;
      await pumped;
      return { code: status.code, stdout, stderr };
    },
  };
}

/** A duration as progress lines print it. */
const DUR = String.raw`(?:<1 ms|[\d.]+ m?s)`;

/** The complete lines of `text` (a reader may catch the last one half written). */
const completeLines = (text: string) =>
  text.slice(0, text.lastIndexOf("\n") + 1).split("\n").filter((l) => l !== "");

/** The kernel rows of event-stream lines (`events` lines), in order. */
const rowsOf = (lines: string[]) =>
  lines.map((l) => JSON.parse(l)).filter((o) => o.type === "events").flatMap((o) => o.rows);
const kinds = (lines: string[]) => rowsOf(lines).map((r) => r.kind as string);
const types = (lines: string[]) => lines.map((l) => JSON.parse(l).type as string);

Deno.test("--progress: one line per step on stderr, nothing on stdout; AGENT_BLOCK_PROGRESS=1 in .env too", async () => {
  const project = await tempProject();
  const flagged = await runCli(["-s", HELLO, "-p", project, "--progress"], { cwd: project });
  assert.equal(flagged.code, 0, flagged.stderr);
  assert.doesNotMatch(flagged.stdout, /progress/);
  assert.equal(JSON.parse(flagged.stdout).stop_reason, "completed", "stdout is the block's own print only");
  const lines = flagged.stderr.split("\n").filter((l) => l.startsWith("[progress] "));
  const shapes = [
    String.raw`session s_\S+ \(agent\) opened`,
    String.raw`turn 1: replay, 120 tokens in / 30 out, ${DUR}, stop tool_use`,
    String.raw`tool word_count: ok in ${DUR}`,
    String.raw`turn 2: replay, 170 tokens in / 8 out, ${DUR}, stop end_turn`,
    String.raw`agent: completed after 2 turns`,
    String.raw`session s_\S+ closed: ok`,
    String
      .raw`end: returned after ${DUR}; stop reason completed; 2 turns, 290 tokens in / 38 out, 1 tool call`,
  ].map((re) => new RegExp(String.raw`^\[progress\] ${re}$`));
  assert.equal(lines.length, shapes.length, flagged.stderr);
  shapes.forEach((re, i) => assert.match(lines[i], re));

  await Deno.writeTextFile(join(project, ".env"), "AGENT_BLOCK_PROGRESS=1\n");
  const viaEnv = await runCli(["-s", HELLO, "-p", project], { cwd: project });
  assert.equal(viaEnv.code, 0, viaEnv.stderr);
  assert.equal(viaEnv.stderr.split("\n").filter((l) => l.startsWith("[progress] ")).length, shapes.length);
  assert.doesNotMatch(viaEnv.stdout, /progress/);
});

Deno.test("--events FILE: the run's event stream, live; its kernel rows equal knl export; end last", async () => {
  const project = await gatedProject();
  const gate = join(project, "go");
  const events = join(project, "out.jsonl");
  const run = spawnCli(["-s", "gated.lua", "-p", ".", "-c", gate, "--events", "out.jsonl"], project);
  const streamed = () => {
    try {
      return completeLines(Deno.readTextFileSync(events));
    } catch {
      return [];
    }
  };
  await waitFor(() => kinds(streamed()).includes("tool_call"), {
    what: "the first beat's tool_call in out.jsonl",
  });
  const early = kinds(streamed());
  assert.deepEqual(early.slice(0, 5), [
    "session_open",
    "msg_user",
    "llm_request",
    "llm_response",
    "tool_call",
  ]);
  assert.ok(!early.includes("session_close"), "the run is still going: its tool waits for the gate");
  await Deno.writeTextFile(gate, "");
  const r = await run.done();
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /\[progress\]/, "progress is off by default");
  const { ok, session_id } = JSON.parse(r.stdout);
  assert.equal(ok, true);
  const lines = streamed();
  assert.deepEqual(
    rowsOf(lines),
    (await exported(project, session_id)).map((l) => JSON.parse(l)),
    "the stream's rows are the export, row for row",
  );
  assert.equal(rowsOf(lines)[0].schema_version, 2);
  assert.equal(kinds(lines).at(-1), "session_close");
  assert.ok(lines.every((l) => JSON.parse(l).v === 1), "every line says its version");
  assert.deepEqual(types(lines).slice(0, 1), ["session_open"]);
  assert.equal(types(lines).filter((t) => t === "end").length, 1);
  const end = JSON.parse(lines.at(-1)!);
  assert.equal(end.type, "end", "the end is the last line");
  assert.equal(end.outcome.status, "returned");
});

Deno.test("--events -: the same stream on stderr, live, beside --progress with the priced cost", async () => {
  const project = await gatedProject();
  const gate = join(project, "go");
  const run = spawnCli(["-s", "gated.lua", "-p", ".", "-c", gate, "--events", "-", "--progress"], project);
  const jsonLines = (text: string) => completeLines(text).filter((l) => l.startsWith("{"));
  // the same commit's rows reach the stream, then progress: wait for both (one read may split them)
  await waitFor(
    () =>
      kinds(jsonLines(run.stderr())).includes("tool_call") && /\[progress\] turn 1: .*\n/.test(run.stderr()),
    { what: "the first beat's tool_call and its progress line on stderr" },
  );
  assert.ok(!kinds(jsonLines(run.stderr())).includes("session_close"), "the run is still going");
  assert.match(
    run.stderr(),
    /\[progress\] turn 1: replay, 120 tokens in \/ 30 out, .*cost so far \$0\.0008\n/,
  );
  await Deno.writeTextFile(gate, "");
  const r = await run.done();
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /^\{"data"|progress/m, "stdout is the block's print only");
  const { session_id } = JSON.parse(r.stdout);
  assert.deepEqual(
    rowsOf(jsonLines(r.stderr)),
    (await exported(project, session_id)).map((l) => JSON.parse(l)),
  );
  assert.equal(JSON.parse(jsonLines(r.stderr).at(-1)!).type, "end");
  assert.match(
    r.stderr,
    /\[progress\] end: returned after .*; 2 turns, 290 tokens in \/ 38 out, 1 tool call, cost \$0\.0014\n/,
  );
});

Deno.test("--events to a file that cannot be created: exit 1 naming it, before the run", async () => {
  const project = await tempProject({ "s.lua": 'print("ran")' });
  const r = await runCli(["-s", "s.lua", "--events", "no/such/dir/ev.jsonl"], { cwd: project });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: cannot open events file no\/such\/dir\/ev\.jsonl: /);
  assert.equal(r.stdout, "", "nothing ran");
  const empty = await runCli(["-s", "s.lua", "--events="], { cwd: project });
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /--events must be a file path, or - for stderr/);
});

Deno.test({
  name: "--events to a device that refuses writes: one warning, the stream stops, the run ends as it would",
  ignore: Deno.build.os !== "linux", // /dev/full (every write fails with ENOSPC) is Linux's
  fn: async () => {
    const project = await tempProject({
      "s.lua":
        `for i = 1, 3 do require("knl").session({ owner = "w" .. i }, function() end) end print("done")`,
    });
    const r = await runCli(["-s", "s.lua", "--events", "/dev/full"], { cwd: project });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "done\n");
    const warnings = r.stderr.split("\n").filter((l) => l.includes("cannot write events file /dev/full"));
    assert.equal(warnings.length, 1, r.stderr);
    assert.match(warnings[0], /^\[warn\] agent-block: an observer of the run failed and was detached: /);
  },
});
