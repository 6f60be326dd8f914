/**
 * The kernel end to end, through real `agent-block` processes: the seed's knl example against a
 * scripted Port (a Lua test double of the Port contract), export compared with what the Lua side
 * read, labels and correlation ids on the seed event, `knl sessions`, a run killed with SIGKILL
 * (its session stays visibly open) or stopped with SIGTERM (closed as interrupted), four
 * processes appending at once, and the seal.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { agentRunKinds, CLI, jsonLines, REPO_ROOT, runCli, tempProject } from "../helpers.ts";
import { openStore } from "../../src/knl/store.ts";

const PORT_SRC = Deno.readTextFileSync(join(REPO_ROOT, "tests", "lua", "knl", "scripted_port.lua"));

/** A temp project holding the scripted Port and `files`. */
function project(files: Record<string, string>): Promise<string> {
  return tempProject({ "scripted_port.lua": PORT_SRC, ...files }, "ab_knl_cli_");
}

const SEED_EXAMPLE = `
local kernel = require("knl")
local adapter = require("knl_adapter")
local sp = require("scripted_port")
local device = kernel.device({
  llm = sp.new({ sp.tools({ { "t1", "add", { a = 2, b = 3 } } }, "adding"), sp.text("five") }),
  tools = adapter.tools({ { name = "add", description = "adds", input_schema = { type = "object" },
    handler = function(i) return i.a + i.b end } }),
})
kernel.session({ owner = "u", budget = { amount = 8, tag = "beats" } }, function(s)
  s:append({ kind = "msg_user", data = { content = "add 2 and 3" } })
  local out
  for _ = 1, 8 do
    out = kernel.beat(s, device)
    if not kernel.Outcome.is_ok(out) then break end
    if #out.out.tools == 0 then break end
  end
  local rows = kernel.views.usage(s)
  for _, row in ipairs(rows) do
    io.stderr:write(string.format("usage %d %d %d\\n", row.calls, row.input_tokens, row.output_tokens))
  end
  local by_run = s:query("SELECT kind FROM events WHERE json_extract(meta, '$.run_id') = ?", { os.getenv("AGENT_BLOCK_RUN_ID") })
  io.stderr:write("by_run " .. #by_run .. " " .. by_run[1].kind .. "\\n")
  print("SESSION " .. s.id)
  for _, e in ipairs(s:events()) do print(std.json.encode(e)) end
end)
`;

Deno.test("the seed's knl example runs, and export matches what the Lua side read", async () => {
  const dir = await project({ "seed.lua": SEED_EXAMPLE });
  const env = {
    AGENT_BLOCK_RUN_ID: "run-42",
    AGENT_BLOCK_TRACE_ID: "trace-7",
    AGENT_BLOCK_AGENT_NAME: "tester",
  };
  const r = await runCli(["-s", "seed.lua", "-p", ".", "--label", "job=drain", "--label", "run=drain-1"], {
    cwd: dir,
    env,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /usage 2 30 13/);
  assert.match(r.stderr, /by_run 1 session_open/);
  const [first, ...rest] = r.stdout.trim().split("\n");
  const id = first.replace("SESSION ", "");
  const luaEvents = rest.map((l) => JSON.parse(l));
  // read by the Lua side inside the session: no agent_result (no agent.run), not yet closed
  assert.deepEqual(
    luaEvents.map((e) => e.kind),
    agentRunKinds({ turns: [1, 0], budgetCharges: true, agentResult: false, closed: false }),
  );
  assert.deepEqual(luaEvents[0].meta, {
    job: "drain",
    run: "drain-1",
    run_id: "run-42",
    trace_id: "trace-7",
    agent_name: "tester",
  });

  const ex = await runCli(["knl", "export", "--session", id, "--as", "events"], { cwd: dir });
  assert.equal(ex.code, 0, ex.stderr);
  const exported = jsonLines(ex.stdout);
  // the export carries the close the bracket wrote after the Lua side read
  assert.deepEqual(exported.slice(0, luaEvents.length), luaEvents);
  assert.equal(exported.at(-1).kind, "session_close");
  assert.equal(exported.at(-1).data.status, "ok");

  const msgs = await runCli(["knl", "export", "--session", id, "--as", "messages", "-p", dir]);
  assert.equal(msgs.code, 0, msgs.stderr);
  const m = jsonLines(msgs.stdout);
  // each tool use once: in the response that asked for it (its tool_call event is not repeated)
  assert.deepEqual(m.map((x) => x.kind), [
    "msg_user",
    "llm_response",
    "tool_result",
    "llm_response",
  ]);
  assert.deepEqual(m.map((x) => x.beat), [null, 1, 1, 2]);
  const uses = m.flatMap((x) => x.content).filter((b: { type: string }) => b.type === "tool_use");
  assert.equal(uses.length, 1, JSON.stringify(m));
  assert.equal(m[2].content[0].tool_use_id, uses[0].id);
  assert.ok(exported.some((e) => e.kind === "tool_call"), "the events export keeps the tool_call");
  for (const x of m) {
    const e = luaEvents.find((l) => l.seq === x.seq);
    assert.equal(e.kind, x.kind);
    assert.equal(e.epoch_ms, x.epoch_ms);
  }
  assert.equal(m[2].content[0].content, "5");
  assert.equal(m[3].content[0].text, "five");

  const ls = await runCli(["knl", "sessions", "--json", "--label", "job=drain", "--limit", "5"], {
    cwd: dir,
  });
  assert.equal(ls.code, 0, ls.stderr);
  const sessions = jsonLines(ls.stdout);
  assert.equal(sessions.length, 1);
  assert.equal(sessions[0].id, id);
  assert.equal(sessions[0].closed, true);
  assert.equal(sessions[0].beats, 2);
  assert.equal(sessions[0].tokens, 43);
  assert.equal(sessions[0].labels.run_id, "run-42");
  const none = await runCli(["knl", "sessions", "--json", "--label", "job=other"], { cwd: dir });
  assert.equal(none.stdout, "");
});

Deno.test("knl export: unknown session, missing database, bad flags", async () => {
  const dir = await project({ "s.lua": `require("knl").session({ owner = "x" }, function() end)` });
  assert.equal((await runCli(["-s", "s.lua"], { cwd: dir })).code, 0);
  const r = await runCli(["knl", "export", "--session", "nope", "--as", "events"], { cwd: dir });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  assert.match(r.stderr, /^error: no session 'nope' in /);
  const missing = await runCli(["knl", "export", "--session", "x", "--store", "absent.sqlite"], { cwd: dir });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^error: no kernel database at .*absent\.sqlite/);
  const bad = await runCli(["knl", "export", "--session", "x", "--as", "xml"], { cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /\(run agent-block knl export --help for usage\)/,
    "points at the command's own help",
  );
  const noSession = await runCli(["knl", "export"], { cwd: dir });
  assert.equal(noSession.code, 2);
  assert.match(noSession.stderr, /knl export: name the session: knl export SESSION, or --session SESSION/);
  assert.match(noSession.stderr, /\(run agent-block knl export --help for usage\)/);
});

Deno.test("knl show and knl export take the session the same way: positional or --session", async () => {
  const dir = await project({
    "s.lua": `print(require("knl").session({ owner = "x" }, function(s) return s.id end))`,
  });
  const ran = await runCli(["-s", "s.lua"], { cwd: dir });
  assert.equal(ran.code, 0, ran.stderr);
  const id = ran.stdout.trim();
  for (const cmd of ["show", "export"]) {
    const positional = await runCli(["knl", cmd, id], { cwd: dir });
    const flagged = await runCli(["knl", cmd, "--session", id], { cwd: dir });
    const both = await runCli(["knl", cmd, id, "--session", id], { cwd: dir });
    assert.equal(positional.code, 0, positional.stderr);
    assert.equal(flagged.code, 0, flagged.stderr);
    assert.equal(both.code, 0, both.stderr);
    assert.equal(positional.stdout, flagged.stdout, `knl ${cmd}: the same session either way`);
    assert.equal(both.stdout, flagged.stdout);
    const two = await runCli(["knl", cmd, id, "--session", "other"], { cwd: dir });
    assert.equal(two.code, 2);
    assert.match(two.stderr, new RegExp(`knl ${cmd}: one session at a time, got 2`));
    assert.match(two.stderr, new RegExp(`\\(run agent-block knl ${cmd} --help for usage\\)`));
    const none = await runCli(["knl", cmd], { cwd: dir });
    assert.equal(none.code, 2);
    assert.match(none.stderr, new RegExp(`knl ${cmd}: name the session`));
  }
});

Deno.test("stores: AGENT_BLOCK_KNL_PATH, { sqlite = path } and --store agree", async () => {
  const dir = await project({
    "s.lua": `local knl = require("knl")
      local a = knl.session({ owner = "env" }, function(s) return s.id end)
      local b = knl.session({ owner = "file", store = { sqlite = "logs/other.sqlite" } }, function(s) return s.id end)
      local c = knl.session({ owner = "mem", store = "mem" }, function(s) return s.id end)
      print(a, b, c)`,
  });
  const r = await runCli(["-s", "s.lua"], { cwd: dir, env: { AGENT_BLOCK_KNL_PATH: "env.sqlite" } });
  assert.equal(r.code, 0, r.stderr);
  const [a, b, c] = r.stdout.trim().split("\t");
  const viaEnv = await runCli(["knl", "export", "--session", a], {
    cwd: dir,
    env: { AGENT_BLOCK_KNL_PATH: "env.sqlite" },
  });
  assert.equal(viaEnv.code, 0, viaEnv.stderr);
  assert.equal(jsonLines(viaEnv.stdout)[0].data.owner, "env");
  const viaStore = await runCli(["knl", "export", "--session", b, "--store", join("logs", "other.sqlite")], {
    cwd: dir,
  });
  assert.equal(viaStore.code, 0, viaStore.stderr);
  assert.equal(jsonLines(viaStore.stdout)[0].data.owner, "file");
  // the in-memory session is gone with its process; the default database was never written
  const gone = await runCli(["knl", "export", "--session", c, "--store", "env.sqlite"], { cwd: dir });
  assert.equal(gone.code, 1);
  assert.throws(() => Deno.statSync(join(dir, ".agent-block", "knl.sqlite")), Deno.errors.NotFound);
});

const LONG_SESSION = `
local knl = require("knl")
knl.session({ owner = "victim" }, function(s)
  for i = 1, 3 do s:append({ kind = "note", data = { i = i } }) end
  print("READY " .. s.id)
  io.stdout:flush()
  std.task.sleep(120)
end)
`;

/** Starts the long session and resolves with the child and the session id once it is open. */
async function startLong(dir: string): Promise<{ child: Deno.ChildProcess; id: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, "-s", "long.lua"],
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.getReader();
  let text = "";
  while (!/READY (\S+)\n/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the run ended before its session opened: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  child.stdout.cancel();
  return { child, id: /READY (\S+)\n/.exec(text)![1] };
}

Deno.test("attack: a run killed with SIGKILL leaves a readable log whose session is visibly not closed", async () => {
  const dir = await project({ "long.lua": LONG_SESSION });
  const { child, id } = await startLong(dir);
  child.kill("SIGKILL");
  const status = await child.status;
  assert.equal(status.signal, "SIGKILL");
  const ex = await runCli(["knl", "export", "--session", id, "--as", "events"], { cwd: dir });
  assert.equal(ex.code, 0, ex.stderr);
  const kinds = jsonLines(ex.stdout).map((e) => e.kind);
  assert.deepEqual(kinds, ["session_open", "note", "note", "note"]);
  const ls = jsonLines((await runCli(["knl", "sessions", "--json"], { cwd: dir })).stdout);
  assert.equal(ls[0].id, id);
  assert.equal(ls[0].closed, false);
  assert.equal(ls[0].status, null);
});

Deno.test("a run stopped with SIGTERM closes its session as interrupted", async () => {
  const dir = await project({ "long.lua": LONG_SESSION });
  const { child, id } = await startLong(dir);
  child.kill("SIGTERM");
  const status = await child.status;
  assert.equal(status.code, 130);
  const events = jsonLines((await runCli(["knl", "export", "--session", id], { cwd: dir })).stdout);
  assert.equal(events.at(-1).kind, "session_close");
  assert.equal(events.at(-1).data.status, "interrupted");
});

Deno.test("attack: four processes appending 1,000 events each lose nothing and keep per-stream order", async () => {
  const dir = await project({
    "w.lua": `require("knl").session({ owner = "writer", labels = { w = os.getenv("W") } }, function(s)
      for i = 1, 1000 do s:append({ kind = "tick", data = { i = i } }) end
    end)`,
  });
  const runs = await Promise.all(
    [1, 2, 3, 4].map((w) => runCli(["-s", "w.lua"], { cwd: dir, env: { W: String(w) } })),
  );
  for (const r of runs) assert.equal(r.code, 0, r.stderr);
  const store = openStore(join(dir, ".agent-block", "knl.sqlite"));
  const ticks = store.db.prepare("SELECT stream, seq, data FROM events WHERE kind = 'tick' ORDER BY position")
    .all() as {
      stream: string;
      seq: number;
      data: string;
    }[];
  assert.equal(ticks.length, 4000);
  const byStream = new Map<string, number[]>();
  for (const t of ticks) {
    const list = byStream.get(t.stream) ?? [];
    list.push(JSON.parse(t.data).i);
    byStream.set(t.stream, list);
    assert.equal(t.seq, JSON.parse(t.data).i + 1); // seq 1 is the open event
  }
  assert.equal(byStream.size, 4);
  for (const list of byStream.values()) assert.deepEqual(list, Array.from({ length: 1000 }, (_, k) => k + 1));
  const ls = jsonLines((await runCli(["knl", "sessions", "--json"], { cwd: dir })).stdout);
  assert.deepEqual(ls.map((s) => s.labels.w).sort(), ["1", "2", "3", "4"]);
  assert.ok(ls.every((s) => s.closed));
});

Deno.test("attack: four processes appending to ONE stream get a gap-free seq in each writer's order", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_knl_shared_" });
  const path = join(dir, "shared.sqlite");
  openStore(path); // create the file and its layout before the writers race
  const writer = join(REPO_ROOT, "tests", "knl", "shared_writer.ts");
  const children = [1, 2, 3, 4].map((w) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", writer, path, `w${w}`, "1000"],
      stdout: "null",
      stderr: "piped",
    }).output()
  );
  for (const out of await Promise.all(children)) {
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  }
  const rows = openStore(path).read("shared");
  assert.equal(rows.length, 4000);
  assert.deepEqual(rows.map((r) => r.seq), Array.from({ length: 4000 }, (_, k) => k + 1));
  const last = new Map<string, number>();
  for (const r of rows) {
    const w = String(r.data.w);
    const i = Number(r.data.i);
    assert.equal(i, (last.get(w) ?? 0) + 1, `writer ${w} out of order at seq ${r.seq}`);
    last.set(w, i);
  }
  const positions = rows.map((r) => r.position);
  assert.deepEqual(positions, [...positions].sort((a, b) => a - b)); // seq order is commit order
});

Deno.test("a filesystem copy of a sealed module is refused before the script runs", async () => {
  const dir = await project({
    "lib/knl/init.lua": `return { fake = true }`,
    "s.lua": `print("ran")`,
  });
  const r = await runCli(["-s", "s.lua"], { cwd: dir });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(
    r.stderr,
    /sealed module 'knl' cannot be replaced from the filesystem: lib\/knl\/init\.lua would/,
  );
  const shadowT = await project({ ".agent-block/lib/lshape/t.lua": `return {}`, "s.lua": `print("ran")` });
  const r2 = await runCli(["-s", "s.lua"], { cwd: shadowT });
  assert.equal(r2.code, 1);
  assert.match(
    r2.stderr,
    /sealed module 'lshape\.t' cannot be replaced .*\.agent-block\/lib\/lshape\/t\.lua/,
  );
  const unsealed = await runCli(["-s", "s.lua"], { cwd: dir, env: { AGENT_BLOCK_UNSEAL: "1" } });
  assert.equal(unsealed.code, 0, unsealed.stderr);
  assert.equal(unsealed.stderr.match(/sealed module 'knl' is replaced by lib\/knl\/init\.lua/g)?.length, 1);
  // A directory with no Lua file in it is no copy.
  const empty = await project({ "s.lua": `print(type(require("knl").beat))` });
  Deno.mkdirSync(join(empty, "lib", "knl"), { recursive: true });
  const r3 = await runCli(["-s", "s.lua"], { cwd: empty });
  assert.equal(r3.code, 0, r3.stderr);
  assert.equal(r3.stdout, "function\n");
  // reading the embedded kernel is fine
  const read = await project({ "s.lua": `print(type(require("embedded.knl").beat))` });
  assert.equal((await runCli(["-s", "s.lua"], { cwd: read })).stdout, "function\n");
});

Deno.test("os.exit inside the bracket closes the session as exit; job.defer likewise", async () => {
  const dir = await project({
    "x.lua": `require("knl").session({ owner = "x" }, function(s) print(s.id); os.exit(3) end)`,
    "d.lua": `require("knl").session({ owner = "d" }, function(s) print(s.id); job.defer("not yet") end)`,
  });
  const x = await runCli(["-s", "x.lua"], { cwd: dir });
  assert.equal(x.code, 3, x.stderr);
  const xe = jsonLines((await runCli(["knl", "export", "--session", x.stdout.trim()], { cwd: dir })).stdout);
  assert.deepEqual([xe.at(-1).kind, xe.at(-1).data.status], ["session_close", "exit"]);
  const d = await runCli(["-s", "d.lua"], { cwd: dir });
  assert.equal(d.code, 75, d.stderr);
  const de = jsonLines((await runCli(["knl", "export", "--session", d.stdout.trim()], { cwd: dir })).stdout);
  assert.equal(de.at(-1).data.status, "exit");
});

Deno.test("knl export reads an earlier-layout database, upcast to today's shape", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_knl_old_" });
  Deno.copyFileSync(join(REPO_ROOT, "tests", "fixtures", "knl_layout1.sqlite"), join(dir, "old.sqlite"));
  const r = await runCli(
    ["knl", "export", "--session", "old-a", "--as", "messages", "--store", "old.sqlite"],
    {
      cwd: dir,
    },
  );
  assert.equal(r.code, 0, r.stderr);
  const m = jsonLines(r.stdout);
  assert.deepEqual(m[1].content, [{ type: "text", text: "calling add" }]);
  assert.deepEqual(m[1].usage, { input_tokens: 12, output_tokens: 7, total_tokens: 19 });
  assert.equal(m[1].beat, 1);
  const ls = jsonLines(
    (await runCli(["knl", "sessions", "--json", "--store", "old.sqlite"], { cwd: dir })).stdout,
  );
  assert.deepEqual(ls.map((s) => [s.id, s.closed]), [["old-b", false], ["old-a", true]]);
});

Deno.test("a project's .agent-block/ gets a .gitignore for its local state: git status stays clean", async () => {
  const dir = await project({ "s.lua": `require("knl").session({ owner = "x" }, function() end)` });
  const git = (...args: string[]) =>
    new Deno.Command("git", { args, cwd: dir, stdout: "piped", stderr: "piped" }).output();
  assert.equal((await git("init", "-q")).code, 0);
  assert.equal((await runCli(["-s", "s.lua"], { cwd: dir })).code, 0);
  assert.ok(Deno.statSync(join(dir, ".agent-block", "knl.sqlite")).isFile);
  const status = new TextDecoder().decode(
    (await git("status", "--porcelain", "--untracked-files=all")).stdout,
  );
  assert.doesNotMatch(status, /\.agent-block/, "nothing of .agent-block is untracked");
  assert.match(status, /\?\? s\.lua/);
  // a file of the user's own there is not ignored, and their own .gitignore is never replaced
  Deno.mkdirSync(join(dir, ".agent-block", "lib"));
  Deno.writeTextFileSync(join(dir, ".agent-block", "lib", "mine.lua"), "return {}");
  Deno.writeTextFileSync(join(dir, ".agent-block", ".gitignore"), "# mine\n");
  assert.equal((await runCli(["-s", "s.lua"], { cwd: dir })).code, 0);
  assert.equal(Deno.readTextFileSync(join(dir, ".agent-block", ".gitignore")), "# mine\n");
  const after = new TextDecoder().decode(
    (await git("status", "--porcelain", "--untracked-files=all")).stdout,
  );
  assert.match(after, /\?\? \.agent-block\/lib\/mine\.lua/);
});
