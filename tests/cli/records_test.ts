/**
 * Readable records, through real `agent-block` processes: `knl sessions` (the table and its
 * `--json` twin: script, labels, local start time, duration, status, turns, tokens, cost),
 * `knl show` (the transcript: prompt, turns, tool calls and results cut to a width, errors,
 * totals), `blocks`, every command's `--help` with an example, `knl` alone (exit 2), and the
 * "did you mean" of misspelt flags, commands and block names.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertIncludes, jsonLines, runCli, tempProject } from "../helpers.ts";

// Two model turns: the first calls `echo` (with a long argument) and `boom` (which raises), the
// second answers. Priced at $1000 / $2000 per million tokens in / out, so the cost shows.
const REPLAY = [
  {
    content: [
      { type: "text", text: "Calling two tools." },
      { type: "tool_use", id: "t1", name: "echo", input: { text: "x".repeat(200) } },
      { type: "tool_use", id: "t2", name: "boom", input: {} },
    ],
    usage: { input_tokens: 120, output_tokens: 30 },
  },
  { content: "Echoed; boom broke.\nSecond line.", usage: { input_tokens: 170, output_tokens: 8 } },
].map((l) => JSON.stringify(l)).join("\n");

const AGENT_BLOCK = `-- Runs a priced replay agent with two tools.
local agent = require("agent")
tool.register("echo", { description = "echoes", input_schema = { type = "object" } },
  function(i) return i.text end)
tool.register("boom", { description = "fails", input_schema = { type = "object" } },
  function() error("the boom tool broke") end)
local r = agent.run({ provider = "replay", replay = "model.jsonl", model = PRICED and "m-priced" or "m-free",
  prices = { ["m-priced"] = { input = 1000, output = 2000 } }, prompt = _PROMPT })
return r.content
`;

async function recordedProject(): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = await tempProject({
    "model.jsonl": REPLAY,
    "blocks/priced.lua": "PRICED = true\n" + AGENT_BLOCK,
    "blocks/free.lua": AGENT_BLOCK,
    "blocks/lib_user/init.lua": "-- A directory block.\nreturn 1\n",
  }, "ab_records_");
  // a fixed zone with a half-hour offset, so the local time is not UTC by accident
  const env = { AGENT_BLOCK_HOME: join(dir, "_home"), TZ: "Asia/Kolkata" };
  return { dir, env };
}

Deno.test("knl sessions: a table of script, labels, local start, duration, status, turns, tokens, cost; --json the same", async () => {
  const { dir, env } = await recordedProject();
  for (const [block, job] of [["free", "a"], ["priced", "b"]]) {
    const r = await runCli(["-b", block, "--prompt", "go", "--label", `job=${job}`], { cwd: dir, env });
    assert.equal(r.code, 0, r.stderr);
  }
  const json = await runCli(["knl", "sessions", "--json"], { cwd: dir, env });
  assert.equal(json.code, 0, json.stderr);
  const [priced, free] = jsonLines(json.stdout);
  assert.equal(priced.script, "blocks/priced.lua");
  assert.equal(free.script, "blocks/free.lua");
  assert.deepEqual(priced.labels, { job: "b" });
  assert.equal(priced.status, "ok");
  assert.equal(priced.beats, 2);
  assert.equal(priced.tokens, 328);
  assert.equal(priced.cost_usd, (120 * 1000 + 30 * 2000 + 170 * 1000 + 8 * 2000) / 1e6);
  assert.equal(free.cost_usd, null);
  assert.equal(priced.duration_ms, priced.ended - priced.started);

  const t = await runCli(["knl", "sessions"], { cwd: dir, env });
  assert.equal(t.code, 0, t.stderr);
  const [header, row1, row2] = t.stdout.trimEnd().split("\n");
  assert.deepEqual(header.split(/\s+/), [
    "ID",
    "SCRIPT",
    "LABELS",
    "STARTED",
    "DURATION",
    "STATUS",
    "TURNS",
    "TOKENS",
    "COST",
  ]);
  const cells = row1.split(/\s{2,}/);
  const started = new Date(priced.started + 5.5 * 3600_000).toISOString().slice(0, 19) + "+05:30";
  assert.deepEqual([cells[0], cells[1], cells[2], cells[3], cells[5], cells[6], cells[7], cells[8]], [
    priced.id,
    "blocks/priced.lua",
    "job=b",
    started,
    "ok",
    "2",
    "328",
    "$0.3660",
  ]);
  assert.match(cells[4], /^\d+ ms$|^\d+\.\d s$/);
  assert.equal(row2.split(/\s{2,}/).at(-1), "-"); // no cost carried: none shown
  // every column starts at the same offset on every line
  assert.equal(row1.indexOf("blocks/"), header.indexOf("SCRIPT"));
  assert.equal(row2.indexOf("blocks/"), header.indexOf("SCRIPT"));

  const none = await runCli(["knl", "sessions", "--label", "job=zzz"], { cwd: dir, env });
  assert.match(none.stdout, /^no sessions in .*knl\.sqlite\n$/);

  const show = await runCli(["knl", "show", priced.id, "--width", "60"], { cwd: dir, env });
  assert.equal(show.code, 0, show.stderr);
  const lines = show.stdout.split("\n");
  assertIncludes(show.stdout, `session ${priced.id}  blocks/priced.lua  owner agent\n`);
  assertIncludes(show.stdout, `started ${started}  labels job=b\n`);
  assertIncludes(show.stdout, "\n> user\n  go\n");
  assert.ok(
    lines.some((l) => /^── turn 1 · m-priced · 120 in \/ 30 out · .* · \$0\.1800 · stop tool_use$/.test(l)),
  );
  assertIncludes(show.stdout, "  Calling two tools.\n");
  const echoCall = lines.find((l) => l.startsWith("  → echo "))!;
  assert.equal([...echoCall].length, 60);
  assert.ok(echoCall.endsWith("…"));
  assert.ok(lines.some((l) => /^ {2}← echo ok, .*: x+…$/.test(l) && [...l].length === 60));
  assertIncludes(show.stdout, "  → boom {}\n");
  assert.ok(lines.some((l) => l.startsWith("  ← boom error, ") && l.includes("tool error")), show.stdout);
  assertIncludes(show.stdout, "  Echoed; boom broke.\n  Second line.\n"); // a turn's text is whole
  assert.match(lines.at(-2)!, /^── end · ok · 2 turns · 328 tokens \(290 in, 38 out\) · \$0\.3660 · /);

  const unknown = await runCli(["knl", "show", "s_nope"], { cwd: dir, env });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^error: no session 's_nope' in .*knl\.sqlite\n$/);
  const missing = await runCli(["knl", "show"], { cwd: dir, env });
  assert.equal(missing.code, 2);
  assertIncludes(missing.stderr, "knl show: name the session");
});

Deno.test("blocks: name, tier, path and description of every registered block; --json", async () => {
  const { dir, env } = await recordedProject();
  Deno.mkdirSync(join(dir, "_home", "blocks"), { recursive: true });
  Deno.writeTextFileSync(join(dir, "_home", "blocks", "mine.lua"), "-- My own block.\nreturn 1\n");
  Deno.writeTextFileSync(join(dir, "_home", "blocks", "free.lua"), "-- Shadowed by the project's.\n");
  const r = await runCli(["blocks", "-p", dir], { env });
  assert.equal(r.code, 0, r.stderr);
  const rows = r.stdout.trimEnd().split("\n").map((l) => l.split(/\s{2,}/));
  assert.deepEqual(rows.map((c) => [c[0], c[1], c[3]]), [
    ["NAME", "TIER", "DESCRIPTION"],
    ["free", "project", "Runs a priced replay agent with two tools."],
    ["lib_user", "project", "A directory block."],
    ["mine", "user", "My own block."],
    ["priced", "project", "-"], // its first line is code, not a comment
  ]);
  assert.equal(rows[1][2], join(dir, "blocks", "free.lua")); // outside the working directory: absolute
  const here = await runCli(["blocks", "--json"], { cwd: dir, env });
  assert.equal(here.code, 0, here.stderr);
  assert.deepEqual(jsonLines(here.stdout)[2], {
    name: "mine",
    tier: "user",
    path: join(dir, "_home", "blocks", "mine.lua"),
    description: "My own block.",
  });
  const rel = await runCli(["blocks"], { cwd: dir, env });
  assertIncludes(rel.stdout, join("blocks", "lib_user", "init.lua"));
  const empty = await tempProject({}, "ab_records_empty_");
  const none = await runCli(["blocks"], { cwd: empty, env: { AGENT_BLOCK_HOME: join(empty, "h") } });
  assert.equal(none.code, 0);
  assert.equal(none.stdout, `no blocks (searched .agent-block/blocks, blocks, h/blocks)\n`);
});

Deno.test("every command's --help exits 0 with an example; knl alone prints its help and exits 2", async () => {
  const commands = [
    [],
    ["test"],
    ["knl"],
    ["knl", "sessions"],
    ["knl", "show"],
    ["knl", "export"],
    [
      "blocks",
    ],
    ["mcp"],
    ["vendor"],
  ];
  const runs = await Promise.all(commands.map((c) => runCli([...c, "--help"])));
  runs.forEach((r, i) => {
    const name = ["agent-block", ...commands[i]].join(" ");
    assert.equal(r.code, 0, `${name} --help: ${r.stderr}`);
    assert.match(
      r.stdout,
      /\nExamples?( \(.*\))?:\n {2}(agent-block |echo .* \| agent-block |\{)/,
      `${name} --help has no example`,
    );
  });
  const bare = await runCli(["knl"]);
  assert.equal(bare.code, 2);
  assert.equal(bare.stdout, "");
  assertIncludes(bare.stderr, "agent-block knl show SESSION");
});

Deno.test("misspelt flags, commands and block names get a did-you-mean", async () => {
  const dir = await tempProject(
    { "blocks/hello.lua": "return 1", "blocks/report.lua": "return 2" },
    "ab_records_",
  );
  const env = { AGENT_BLOCK_HOME: join(dir, "_home") };
  const cases: [string[], number, string][] = [
    [["-b", "hello", "--promt", "x"], 2, "error: Unknown option '--promt' (did you mean '--prompt'?)\n"],
    [["tset"], 2, "error: unknown command 'tset' (did you mean 'test'?)\n"],
    [["knl", "sesions"], 2, "error: knl: unknown command 'sesions' (did you mean 'sessions'?)"],
    [
      ["knl", "sessions", "--lable", "a=b"],
      2,
      "error: knl sessions: Unknown option '--lable' (did you mean '--label'?)",
    ],
    [["block"], 2, "error: unknown command 'block' (did you mean 'blocks'?)"],
    [["-b", "helo"], 1, "error: unknown block 'helo' (did you mean 'hello'?); known blocks: hello, report"],
  ];
  const runs = await Promise.all(cases.map(([args]) => runCli(args, { cwd: dir, env })));
  runs.forEach((r, i) => {
    const [args, code, text] = cases[i];
    assert.equal(r.code, code, `${args.join(" ")}: ${r.stderr}`);
    assertIncludes(r.stderr, text, args.join(" "));
  });
  const far = await runCli(["frobnicate"], { cwd: dir, env });
  assert.equal(far.code, 2);
  assertIncludes(far.stderr, "unknown command 'frobnicate'; the commands are test, knl, mcp, vendor, blocks");
});
