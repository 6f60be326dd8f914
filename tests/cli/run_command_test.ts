/**
 * The run path end to end: the real CLI as a subprocess (`deno run -A cli.ts ...`), checking exit
 * codes, stdout, stderr and result files (src/cli/run_command.ts, src/runtime/run.ts,
 * src/config/*, src/blocks/registry.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { evalLua, REPO_ROOT, runCli, tempProject } from "../helpers.ts";
import { SUBCOMMANDS } from "../../src/cli/main.ts";
import { LUA_VERSION } from "../../src/lua/wasm.ts";
import { VERSION } from "../../src/version.ts";

/** A fresh project directory with `files` written into it, and a private AGENT_BLOCK_HOME. */
async function project(files: Record<string, string> = {}) {
  const root = await tempProject(files, "ab_cli_");
  const home = join(root, "_home");
  const cli = (args: string[], opts: { env?: Record<string, string>; stdin?: string } = {}) =>
    runCli(args, { cwd: root, stdin: opts.stdin, env: { AGENT_BLOCK_HOME: home, ...opts.env } });
  return { root, home, cli };
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("--script runs a file: print goes to stdout, exit 0, the return value is not printed", async () => {
  const p = await project({ "hello.lua": `print("hello", 1, 2.5, nil)\nreturn "not printed"` });
  const r = await p.cli(["-s", "hello.lua"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "hello\t1\t2.5\tnil\n");
  assert.equal(r.stderr, "");
});

Deno.test("--prompt / -c set _PROMPT and _CONTEXT; absent when not given; _SCRIPT_NAME", async () => {
  const p = await project({
    "scripts/show.lua": `return table.concat({tostring(_PROMPT), tostring(_CONTEXT), _SCRIPT_NAME,
      tostring(rawget(_G, "_PROMPT") == nil)}, "|")`,
  });
  let r = await p.cli(["-s", "scripts/show.lua", "--prompt", "hi there", "-c", "ctx", "--result", "out.txt"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(Deno.readTextFileSync(join(p.root, "out.txt")), "hi there|ctx|show.lua|false");
  r = await p.cli(["--script", "scripts/show.lua", "--result", "out.txt"]);
  assert.equal(Deno.readTextFileSync(join(p.root, "out.txt")), "nil|nil|show.lua|true");
  r = await p.cli([
    "-s",
    "scripts/show.lua",
    "--label",
    "job=nightly",
    "--label=run=a=b",
    "--result",
    "out.txt",
  ]);
  assert.equal(r.code, 0, r.stderr);
  r = await p.cli(["-s", "scripts/show.lua", "--context", "", "--prompt", "", "--result", "out.txt"]);
  assert.equal(Deno.readTextFileSync(join(p.root, "out.txt")), "||show.lua|false");
  // Short flags written with '=' read as clap reads them: the value is what follows the '='.
  r = await p.cli(["-s=scripts/show.lua", "-c=foo", "--prompt=p", "--result", "out.txt"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(Deno.readTextFileSync(join(p.root, "out.txt")), "p|foo|show.lua|false");
  r = await p.cli(["-s", "scripts/show.lua", "-V=1"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^error: -V \(--version\) takes no value, got '-V=1'/);
});

Deno.test("--result: written only when the script returns; values are tostring'ed; bytes exact", async () => {
  const p = await project({
    "num.lua": `return 42`,
    "float.lua": `return 2.5`,
    "bool.lua": `return false`,
    "none.lua": `local x = 1`,
    "bytes.lua": `return "\\0\\xff\\n"`,
    "json.lua": `return std.json.encode({ok = true, n = 3})`,
    "raise.lua": `error("nope")`,
    "exit.lua": `os.exit(0)`,
  });
  const cases: [string, string | Uint8Array][] = [
    ["num.lua", "42"],
    ["float.lua", "2.5"],
    ["bool.lua", "false"],
    ["none.lua", ""],
    ["bytes.lua", new Uint8Array([0, 0xff, 0x0a])],
    ["json.lua", `{"n":3,"ok":true}`],
  ];
  for (const [script, expected] of cases) {
    const out = join(p.root, `${script}.out`);
    const r = await p.cli(["-s", script, "--result", out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "", "the result is not printed");
    if (typeof expected === "string") assert.equal(Deno.readTextFileSync(out), expected, script);
    else assert.deepEqual(Deno.readFileSync(out), expected, script);
  }
  for (const script of ["raise.lua", "exit.lua"]) {
    const out = join(p.root, `${script}.out`);
    await p.cli(["-s", script, "--result", out]);
    assert.ok(!exists(out), `${script} left a result file`);
  }
  // An existing result file is replaced whole, through a temporary file that does not remain.
  const out = join(p.root, "replace.out");
  Deno.writeTextFileSync(out, "old content that is longer");
  assert.equal((await p.cli(["-s", "num.lua", "--result", out])).code, 0);
  assert.equal(Deno.readTextFileSync(out), "42");
  const leftovers = [...Deno.readDirSync(p.root)].filter((e) => e.name.endsWith(".tmp"));
  assert.deepEqual(leftovers, []);
});

Deno.test("--result: a run that does not return removes the file an earlier run left", async () => {
  const p = await project({
    "num.lua": `return 42`,
    "raise.lua": `error("nope")`,
    "defer.lua": `job.defer("no input yet")`,
    "exit.lua": `os.exit(3)`,
    "blocks/ok.lua": `return "ok"`,
    "run.json": `{"result": "from_config.out"}`,
  });
  const out = join(p.root, "r.out");
  const runs: [string[], number][] = [
    [["-s", "raise.lua"], 1],
    [["-s", "defer.lua"], 75],
    [["-s", "exit.lua"], 3],
    [["-s", "missing.lua"], 1], // never started: no value either
    [["-b", "nope"], 1], // an unknown block
  ];
  for (const [args, code] of runs) {
    Deno.writeTextFileSync(out, "stale value of an earlier run");
    const r = await p.cli([...args, "--result", out]);
    assert.equal(r.code, code, `${args.join(" ")}: ${r.stderr}`);
    assert.ok(!exists(out), `${args.join(" ")} left the earlier run's result file`);
  }
  // The path from --config counts the same; a file that is not there is no error.
  const fromConfig = join(p.root, "from_config.out");
  Deno.writeTextFileSync(fromConfig, "stale");
  assert.equal((await p.cli(["-s", "raise.lua", "--config", "run.json"])).code, 1);
  assert.ok(!exists(fromConfig));
  const again = await p.cli(["-s", "raise.lua", "--result", out]);
  assert.equal(again.code, 1);
  assert.doesNotMatch(again.stderr, /result file/);
  // A directory there is no earlier value: left alone (an empty one too).
  Deno.mkdirSync(join(p.root, "dir.out"));
  assert.equal((await p.cli(["-s", "raise.lua", "--result", "dir.out"])).code, 1);
  assert.ok(Deno.statSync(join(p.root, "dir.out")).isDirectory);
  // A file that cannot be removed is named after the run's own error: a stale value must not pass
  // for this run's. (Linux's /proc refuses even root.)
  if (Deno.build.os === "linux") {
    const stuck = await p.cli(["-s", "raise.lua", "--result", "/proc/version"]);
    assert.equal(stuck.code, 1);
    assert.match(
      stuck.stderr,
      /^error: raise\.lua:1: nope\n(.|\n)*error: cannot remove the result file \/proc\/version/,
    );
  }
  // And a run that returns still writes it.
  assert.equal((await p.cli(["-b", "ok", "--result", out])).code, 0);
  assert.equal(Deno.readTextFileSync(out), "ok");
});

Deno.test("exit codes: 0 returned, 1 raised, 75 deferred, os.exit(n) after cleanup", async () => {
  const p = await project({
    "ok.lua": `return "work failed, but I returned"`,
    "raise.lua": `local t = {}\nlocal function f() error("it broke") end\nf()`,
    "table_err.lua": `error({code = "E42", detail = {1, 2}})`,
    "defer.lua": `job.defer("no input yet")\nprint("unreachable")`,
    "defer_pcall.lua": `pcall(job.defer, "caught but still deferred")\nprint("unreachable")`,
    "exit3.lua": `print("before")\npcall(os.exit, 3)\nprint("unreachable")`,
    "exit_true.lua": `os.exit(true)`,
    "exit_false.lua": `os.exit(false)`,
    "exit_popen.lua": `local p = io.popen("sleep 30")\nos.exit(4)`,
    "exit_xpcall.lua": `xpcall(os.exit, function(e) return "handled" end, 5)\nprint("unreachable")`,
    "exit_coroutine.lua": `local co = coroutine.create(function() os.exit(6) end)\n` +
      `print(coroutine.resume(co))\nprint("unreachable")`,
    "exit_wrap.lua":
      `local g = coroutine.wrap(function() os.exit(7) end)\nprint(pcall(g))\nprint("unreachable")`,
    "exit_task.lua": `std.task.spawn(function() pcall(os.exit, 8) print("unreachable") end)\n` +
      `std.task.sleep(30)\nprint("unreachable")`,
  });
  let r = await p.cli(["-s", "ok.lua"]);
  assert.equal(r.code, 0);
  r = await p.cli(["-s", "raise.lua"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: raise\.lua:2: it broke\nstack traceback:\n/);
  assert.match(r.stderr, /raise\.lua:2: in (local|upvalue) 'f'/);
  assert.match(r.stderr, /raise\.lua:3: in main chunk/);
  assert.doesNotMatch(r.stderr, /ab:runtime|ab:prelude/);
  r = await p.cli(["-s", "table_err.lua"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: \{"code":"E42","detail":\[1,2\]\}\n/);
  r = await p.cli(["-s", "defer.lua"]);
  assert.equal(r.code, 75);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /deferred: no input yet/);
  r = await p.cli(["-s", "defer_pcall.lua"]);
  assert.equal(r.code, 75);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /deferred: caught but still deferred/);
  r = await p.cli(["-s", "exit3.lua"]);
  assert.equal(r.code, 3);
  assert.equal(r.stdout, "before\n");
  for (
    const [script, code] of [
      ["exit_xpcall.lua", 5],
      ["exit_coroutine.lua", 6],
      ["exit_wrap.lua", 7],
      ["exit_task.lua", 8],
    ] as const
  ) {
    r = await p.cli(["-s", script]);
    assert.equal(r.code, code, r.stderr);
    assert.equal(r.stdout, "", `${script} kept running after os.exit`);
  }
  assert.equal((await p.cli(["-s", "exit_true.lua"])).code, 0);
  assert.equal((await p.cli(["-s", "exit_false.lua"])).code, 1);
  const t0 = performance.now();
  r = await p.cli(["-s", "exit_popen.lua"]);
  assert.equal(r.code, 4);
  assert.ok(performance.now() - t0 < 20_000, "os.exit waited for the child instead of ending it");
});

Deno.test("bad input: missing script, syntax error, unreadable project, contradictory flags", async () => {
  const p = await project({ "syntax.lua": `local x = 1\nlocal y = = 2\n`, "ok.lua": `return 1` });
  let r = await p.cli(["-s", "missing.lua"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /error: cannot read script missing\.lua: no such file/);
  r = await p.cli(["-s", "syntax.lua"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /error: syntax\.lua:2: unexpected symbol near '='/);
  r = await p.cli(["-s", "ok.lua", "-p", join(p.root, "no_such_dir")]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /project directory .*no_such_dir does not exist/);
  r = await p.cli(["-s", "ok.lua", "-b", "anything"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--script and --block contradict each other/);
  r = await p.cli(["-s", "."]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /it is a directory/);
});

Deno.test("command-line errors exit 2: unknown flag, missing value, nothing to run, bad numbers", async () => {
  const p = await project({ "ok.lua": `return 1` });
  for (
    const args of [
      ["-s", "ok.lua", "--no-such-flag"],
      ["-s"],
      [],
      ["-s", "ok.lua", "extra-positional"],
      ["-s", "ok.lua", "--cpu-limit", "fast"],
      ["-s", "ok.lua", "--label", "novalue"],
    ]
  ) {
    const r = await p.cli(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /^error: .*\n\(run agent-block --help for usage\)\n$/);
  }
});

Deno.test("--version names agent-block, its commit, Deno and Lua (the Lua of a real engine); --help", async () => {
  const p = await project();
  let r = await p.cli(["--version"]);
  assert.equal(r.code, 0);
  assert.equal(
    r.stdout,
    `agent-block ${VERSION}\ncommit none (not a release build)\nDeno ${Deno.version.deno}\n${LUA_VERSION}\n`,
  );
  assert.equal(await evalLua("return _VERSION"), LUA_VERSION);
  r = await p.cli(["-V"]);
  assert.match(r.stdout, /^agent-block /);
  r = await p.cli(["--help"]);
  assert.equal(r.code, 0);
  for (
    const flag of [
      "--script",
      "--block",
      "--project",
      "--prompt",
      "--context",
      "--config",
      "--result",
      "--label",
    ]
  ) {
    assert.ok(r.stdout.includes(flag), `--help does not mention ${flag}`);
  }
});

Deno.test("--block: three tiers, nearer wins, <name>/init.lua, unknown names list the known ones", async () => {
  const p = await project({
    ".agent-block/blocks/shared.lua": `return "project-local"`,
    "blocks/shared.lua": `return "project"`,
    "_home/blocks/shared.lua": `return "user"`,
    "blocks/proj_only/init.lua": `-- a directory block\nreturn "dir block " .. _SCRIPT_NAME`,
    "_home/blocks/user_only.lua": `return "user only"`,
    "blocks/helper_lib.lua": `return require("helper")`,
    "lib/helper.lua": `return "lib helper"`,
    "blocks/nested/deeper/x.lua": `return "too deep"`,
  });
  const res = join(p.root, "r.out");
  const runBlock = async (name: string) => {
    const r = await p.cli(["-b", name, "--result", res]);
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    return Deno.readTextFileSync(res);
  };
  assert.equal(await runBlock("shared"), "project-local");
  Deno.removeSync(join(p.root, ".agent-block/blocks/shared.lua"));
  assert.equal(await runBlock("shared"), "project");
  Deno.removeSync(join(p.root, "blocks/shared.lua"));
  assert.equal(await runBlock("shared"), "user");
  assert.equal(await runBlock("proj_only"), "dir block init.lua");
  assert.equal(await runBlock("user_only"), "user only");
  assert.equal(await runBlock("helper_lib"), "lib helper");
  const r = await p.cli(["--block", "nope"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /unknown block 'nope'; known blocks: helper_lib, proj_only, shared, user_only/);
  assert.equal((await p.cli(["-b", "deeper"])).code, 1, "only blocks directly inside a root count");
});

Deno.test("--block: names with any letters and spaces run; one that cannot be a name is listed with why", async () => {
  const p = await project({
    "blocks/rapport hebdo.lua": `-- Weekly report.\nreturn "weekly"`,
    "blocks/café/init.lua": `return "café"`,
    "blocks/-flag.lua": `return "never"`,
    "blocks/trailing .lua": `return "never"`,
  });
  for (const [name, value] of [["rapport hebdo", "weekly"], ["café", "café"], ["cafe\u0301", "café"]]) {
    const r = await p.cli(["-b", name, "--result", "r.out"]);
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    assert.equal(Deno.readTextFileSync(join(p.root, "r.out")), value);
  }
  const r = await p.cli(["-b", "trailing"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /unknown block 'trailing'; known blocks: café, rapport hebdo \(searched [^)]*\); /);
  assert.match(
    r.stderr,
    /not registered: \S*blocks\/-flag\.lua \(the name starts with '-', so it would read as a flag\)/,
  );
  assert.match(r.stderr, /blocks\/trailing \.lua \(the name starts or ends with white space\)/);
  const listing = await p.cli(["blocks"]);
  assert.equal(listing.code, 0, listing.stderr);
  assert.match(listing.stdout, /rapport hebdo +project +blocks\/rapport hebdo\.lua +Weekly report\./);
  assert.match(
    listing.stderr,
    /\[warn\] agent-block: not registered: blocks\/-flag\.lua \(the name starts with '-'/,
  );
});

Deno.test("--config: valid file, not JSON, wrong type naming the field, unknown field; flags win", async () => {
  const p = await project({
    "show.lua": `return tostring(_PROMPT) .. "|" .. tostring(_CONTEXT)`,
    "good.json": JSON.stringify({
      prompt: "from config",
      context: "ctx config",
      result: "cfg.out",
      labels: { job: "x" },
    }),
    "bad.json": `{ "prompt": "unterminated `,
    "wrongtype.json": JSON.stringify({ prompt: 12 }),
    "wronglabel.json": JSON.stringify({ labels: { job: 1 } }),
    "unknown.json": JSON.stringify({ promt: "typo" }),
    "array.json": `[1, 2]`,
  });
  let r = await p.cli(["-s", "show.lua", "--config", "good.json"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(Deno.readTextFileSync(join(p.root, "cfg.out")), "from config|ctx config");
  r = await p.cli([
    "-s",
    "show.lua",
    "--config",
    "good.json",
    "--prompt",
    "from flag",
    "--result",
    "flag.out",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(Deno.readTextFileSync(join(p.root, "flag.out")), "from flag|ctx config");
  const failing: [string, RegExp][] = [
    ["bad.json", /bad\.json: not valid JSON/],
    ["wrongtype.json", /wrongtype\.json: field 'prompt' must be a string, got number/],
    ["wronglabel.json", /field 'labels\.job' must be a string, got number/],
    ["unknown.json", /unknown\.json: unknown field 'promt'/],
    ["array.json", /must be a JSON object, got array/],
    ["missing.json", /cannot read config missing\.json: no such file/],
  ];
  for (const [file, re] of failing) {
    r = await p.cli(["-s", "show.lua", "--config", file]);
    assert.equal(r.code, 1, `${file}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
});

Deno.test("layering: config file < environment < flag (CPU limit)", async () => {
  const p = await project({
    "spin.lua": `while true do end`,
    "limits.json": JSON.stringify({ cpu_limit_secs: 0.2 }),
  });
  const limitOf = async (args: string[], env: Record<string, string> = {}) => {
    const r = await p.cli(["-s", "spin.lua", ...args], { env });
    assert.equal(r.code, 1, r.stderr);
    return /more than ([\d.]+) s/.exec(r.stderr)?.[1];
  };
  assert.equal(await limitOf(["--config", "limits.json"]), "0.2");
  assert.equal(await limitOf(["--config", "limits.json"], { AGENT_BLOCK_CPU_LIMIT_SECS: "0.3" }), "0.3");
  assert.equal(
    await limitOf(["--config", "limits.json", "--cpu-limit", "0.4"], { AGENT_BLOCK_CPU_LIMIT_SECS: "0.3" }),
    "0.4",
  );
  const bad = await p.cli(["-s", "spin.lua"], { env: { AGENT_BLOCK_CPU_LIMIT_SECS: "soon" } });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /AGENT_BLOCK_CPU_LIMIT_SECS must be a positive number, got 'soon'/);
});

Deno.test("attack: a busy loop and a pcall loop against --cpu-limit; a growing table against --memory-limit", async () => {
  const p = await project({
    "spin.lua": `while true do end`,
    "pcall_spin.lua": `while true do pcall(function() while true do end end) end`,
    "grow.lua": `local t = {}\nfor i = 1, math.maxinteger do t[i] = {i, tostring(i)} end`,
  });
  for (const script of ["spin.lua", "pcall_spin.lua"]) {
    const r = await p.cli(["-s", script, "--cpu-limit", "0.3"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^error: CPU limit exceeded: the script ran Lua code for more than 0\.3 s/);
  }
  const r = await p.cli(["-s", "grow.lua", "--memory-limit", "16"]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^error: memory limit exceeded: the script needed more than 16 MiB of Lua heap/);
});

Deno.test(".env: loaded without overriding the environment; a malformed line warns with its number", async () => {
  const p = await project({
    ".env":
      `# comment\nAB_TEST_FROM_FILE=file value # trailing\nAB_TEST_SET_BOTH=file\nthis line is bad\nexport AB_TEST_QUOTED="a\\nb"\n`,
    "env.lua": `return table.concat({os.getenv("AB_TEST_FROM_FILE"), os.getenv("AB_TEST_SET_BOTH"),
      os.getenv("AB_TEST_QUOTED")}, "|")`,
  });
  const r = await p.cli(["-s", "env.lua", "--result", "env.out"], { env: { AB_TEST_SET_BOTH: "process" } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(Deno.readTextFileSync(join(p.root, "env.out")), "file value|process|a\nb");
  assert.match(r.stderr, /\.env:4: malformed line/);
});

Deno.test("io.read reads the real stdin", async () => {
  const p = await project({
    "stdin.lua": `local first = io.read("l")\nlocal n = io.read("n")\nlocal rest = io.read("a")\n` +
      `local out = {first, tostring(n), rest}\nfor l in io.lines() do out[#out+1] = l end\nreturn table.concat(out, "|")`,
  });
  const r = await p.cli(["-s", "stdin.lua", "--result", "in.out"], { stdin: "line one\n 17 tail\nmore\n" });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(Deno.readTextFileSync(join(p.root, "in.out")), "line one|17| tail\nmore\n");
});

Deno.test("-s - reads the script from stdin; -s /dev/stdin on a pipe is read, not 'no such file'", async () => {
  const p = await project({ "lib/greet.lua": `return { hi = function() return "hi from lib" end }` });
  let r = await p.cli(["-s", "-", "--result", "out.txt"], {
    stdin: `print(_SCRIPT_NAME, io.read("a") == "")\nreturn require("greet").hi()`,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "stdin\ttrue\n", "the script was all of stdin");
  assert.equal(Deno.readTextFileSync(join(p.root, "out.txt")), "hi from lib", "the project's lib/ is found");
  r = await p.cli(["-s", "-"], { stdin: `local x = 1\nerror("boom")` });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /error: stdin:2: boom/);
  r = await p.cli(["-s", "/dev/stdin"], { stdin: `print("piped")` });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "piped\n");
});

Deno.test("--help lists every command, and its first example works in an empty directory", async () => {
  const r = await runCli(["--help"]);
  assert.equal(r.code, 0);
  const usage = r.stdout.slice(r.stdout.indexOf("agent-block <command>"), r.stdout.indexOf("Options:"));
  for (const name of Object.keys(SUBCOMMANDS)) assert.match(usage, new RegExp(`\\b${name}\\b`), name);
  const first = r.stdout.split("Examples:\n")[1].split("\n")[0].trim();
  const dir = await tempProject({}, "ab_help_");
  const agentBlock = `'${Deno.execPath()}' run -A --quiet '${join(REPO_ROOT, "cli.ts")}'`;
  const ran = await new Deno.Command("sh", {
    args: ["-c", first.replaceAll("agent-block", agentBlock)],
    cwd: dir,
    env: { NO_COLOR: "1", AGENT_BLOCK_HOME: join(dir, "_home") },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(ran.code, 0, new TextDecoder().decode(ran.stderr));
  assert.equal(Deno.readTextFileSync(join(dir, "hello.txt")), `hello from ${Deno.realPathSync(dir)}`);
});

Deno.test("io.write / io.stderr go to the real streams; print output is not buffered away", async () => {
  const p = await project({
    "streams.lua": `io.write("a", 1, "\\n")\nio.stderr:write("to stderr\\n")\nprint("b")\nerror("late")`,
  });
  const r = await p.cli(["-s", "streams.lua"]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "a1\nb\n");
  assert.match(r.stderr, /^to stderr\nerror: streams\.lua:4: late/);
});
