/**
 * The one shared test support module: run Lua in-process through the real run path (`runLua`,
 * `evalLua`) or the real CLI as a subprocess (`runCli`, or `loadedModules`: which modules such a run
 * loads); give a run its environment (`testEnv`);
 * make temporary directories and projects (`tempDir`, `tempProject`, `writeTree`); read what a run
 * returned (`returnedValue`, `resultOf`); wait for a condition (`waitFor`) or, boundedly, for
 * cleanup to end (`settleWithin`); and the expected event kinds of an agent run (`agentRunKinds`).
 *
 * Every test that needs the engine goes through `runLua` (one engine per call, the shared wasm
 * module reused), so the suite pays the wasm start-up once per test file. Nothing here mutates
 * the process environment (`tests/arch/deno_env_test.ts` holds that): the suite runs
 * test files in parallel, in one process per file, so a test passes variables to its run
 * (`testEnv`) or to its subprocess (`runCli`'s `env`). Temporary directories made here are
 * removed when the test file's module unloads, after its last test.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runBlock, type RunSpec } from "../src/runtime/run.ts";
import { notStarted, type Outcome } from "../src/outcome.ts";
import { settingsFromEnv } from "../src/config/env_settings.ts";
import { lockIsHeld } from "../src/util/file_lock.ts";

/** Absolute path of the repository root. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Absolute path of `cli.ts`. */
export const CLI = join(REPO_ROOT, "cli.ts");

/** Result of `runLua`: the outcome plus everything written to stdout and stderr. */
export interface LuaRun {
  outcome: Outcome;
  stdout: string;
  stderr: string;
}

/** Variables of this process a test run may see: what finding programs and caches needs. */
const PASSED_THROUGH = [
  "PATH",
  "HOME",
  "TMPDIR",
  "DENO_DIR",
  "SYSTEMROOT",
  "USERPROFILE",
  // how this machine reaches the package registries (a child `deno` that installs needs them)
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "DENO_CERT",
  "DENO_TLS_CA_STORE",
  "NODE_EXTRA_CA_CERTS",
  "HTTPS_PROXY",
  "https_proxy",
  "HTTP_PROXY",
  "http_proxy",
  "NO_PROXY",
  "no_proxy",
];

/**
 * The environment of an in-process test run: the few process variables programs need (PATH,
 * HOME, ...), `NO_COLOR=1`, then `extra`. Nothing else of the developer's environment (keys,
 * `AGENT_BLOCK_*` knobs) reaches a test, and nothing a test sets reaches the process.
 */
export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const k of PASSED_THROUGH) {
    const v = Deno.env.get(k);
    if (v !== undefined) env[k] = v;
  }
  return { ...env, ...extra };
}

/**
 * Runs Lua `source` in-process (inline chunk named `name`, default `test.lua`) and captures its
 * output. `spec` overrides any RunSpec field (projectRoot defaults to a fresh `tempDir()`, removed
 * when the test file ends, so a test may still read what the run left there; `env` to
 * `testEnv()`, `cwd` to the project root).
 */
export async function runLua(
  source: string,
  spec: Partial<RunSpec> & { name?: string } = {},
): Promise<LuaRun> {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const projectRoot = spec.projectRoot ?? await tempDir();
  const dec = (parts: Uint8Array[]) => new TextDecoder().decode(concat(parts));
  const env = spec.env ?? testEnv();
  // The test is the run's edge: it parses the run's AGENT_BLOCK_* variables, as the CLI does.
  let settings = spec.settings;
  try {
    settings ??= settingsFromEnv(env);
  } catch (e) {
    return { outcome: notStarted((e as Error).message), stdout: "", stderr: "" };
  }
  const outcome = await runBlock({
    script: { source, name: spec.name ?? "test.lua", dir: projectRoot },
    stdout: (b) => out.push(b.slice()),
    stderr: (b) => err.push(b.slice()),
    ...spec,
    env,
    settings,
    projectRoot,
  });
  return { outcome, stdout: dec(out), stderr: dec(err) };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Returns the value a Lua chunk returned, failing the test if it did not return. */
export async function evalLua(
  source: string,
  spec: Partial<RunSpec> & { name?: string } = {},
): Promise<string | undefined> {
  const r = await runLua(source, spec);
  if (r.outcome.status !== "returned") {
    throw new Error(`Lua did not return: ${JSON.stringify(r.outcome)}\nstderr: ${r.stderr}`);
  }
  const v = r.outcome.value;
  return v instanceof Uint8Array ? new TextDecoder().decode(v) : v;
}

/**
 * The text a run returned (bytes decoded as UTF-8). Fails naming the outcome (and the run's
 * stderr, given a `LuaRun`) when the run did not return, or returned nothing.
 */
export function returnedValue(run: LuaRun | Outcome): string {
  const outcome = "outcome" in run ? run.outcome : run;
  const stderr = "outcome" in run ? `\nstderr: ${run.stderr}` : "";
  if (outcome.status !== "returned") {
    throw new Error(`the run did not return: ${JSON.stringify(outcome)}${stderr}`);
  }
  if (outcome.value === undefined) throw new Error(`the run returned nothing${stderr}`);
  return outcome.value instanceof Uint8Array ? new TextDecoder().decode(outcome.value) : outcome.value;
}

/**
 * The value a run returned, parsed as JSON (the chunk ends `return std.json.encode(...)`). Fails
 * as `returnedValue` does, and when the value is not JSON, quoting it.
 */
// deno-lint-ignore no-explicit-any
export function resultOf(run: LuaRun | Outcome): any {
  const text = returnedValue(run);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`the run returned ${JSON.stringify(text)}, which is not JSON: ${(e as Error).message}`);
  }
}

/** Result of running the CLI. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `deno run -A cli.ts ...args` as a real subprocess. */
export async function runCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; stdin?: string; clearEnv?: boolean } = {},
): Promise<CliRun> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, ...args],
    cwd: opts.cwd,
    env: { NO_COLOR: "1", ...opts.env },
    clearEnv: opts.clearEnv,
    stdin: opts.stdin !== undefined ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const r = await child.output();
  return {
    code: r.code,
    stdout: new TextDecoder().decode(r.stdout),
    stderr: new TextDecoder().decode(r.stderr),
  };
}

/**
 * The modules one `deno run -A --quiet cli.ts ...args` (a real subprocess) loads: the `file:`
 * URLs of every script V8 compiled, read from the run's coverage (`--coverage`), so type-only
 * imports and dynamic imports that never ran are not among them. npm packages are there by their
 * path under `node_modules`. Throws, with the run's stderr, when the run does not exit 0.
 */
export async function loadedModules(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<string[]> {
  const cov = await Deno.makeTempDir({ prefix: "ab_cov_" });
  try {
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", `--coverage=${cov}`, CLI, ...args],
      cwd: opts.cwd,
      env: { NO_COLOR: "1", ...opts.env },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (r.code !== 0) {
      throw new Error(`cli.ts ${args.join(" ")} exited ${r.code}: ${new TextDecoder().decode(r.stderr)}`);
    }
    const urls = new Set<string>();
    for (const e of Deno.readDirSync(cov)) {
      const url = (JSON.parse(Deno.readTextFileSync(join(cov, e.name))) as { url: string }).url;
      if (url.startsWith("file:")) urls.add(url);
    }
    return [...urls].sort();
  } finally {
    Deno.removeSync(cov, { recursive: true });
  }
}

/** Directories `tempDir` made in this test module, removed when the module unloads. */
const made: string[] = [];
globalThis.addEventListener("unload", () => {
  for (const dir of made) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) console.error(`could not remove ${dir}: ${e}`);
    }
  }
});

/**
 * A fresh temporary directory (under the system temp dir, named `prefix` + random), removed with
 * everything in it when the test file's module unloads, after its last test. A test removing it
 * earlier is fine.
 */
export async function tempDir(prefix = "ab_test_"): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  made.push(dir);
  return dir;
}

/** PEM files made by `testCertificate`: the CA (and its key) and the server's certificate and key. */
export interface TestCertificate {
  ca: string;
  caKey: string;
  cert: string;
  key: string;
}

/**
 * A CA and a server certificate for `name` (a DNS name) signed by it, made now with `openssl` in
 * `dir`: PEM files, valid for two days. For TLS tests that must check a server's real name. With
 * `signer` (an earlier one), its CA signs the new certificate instead of a new CA.
 */
export async function testCertificate(
  dir: string,
  name: string,
  signer?: TestCertificate,
): Promise<TestCertificate> {
  const run = async (...args: string[]) => {
    const r = await new Deno.Command("openssl", { args, cwd: dir, stdout: "null", stderr: "piped" }).output();
    if (!r.success) throw new Error(`openssl ${args[0]}: ${new TextDecoder().decode(r.stderr)}`);
  };
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const ca = signer?.ca ?? join(dir, "ca.pem");
  const caKey = signer?.caKey ?? join(dir, "ca.key");
  if (signer === undefined) {
    await run(
      "req",
      "-x509",
      ...ec,
      "-keyout",
      caKey,
      "-out",
      ca,
      "-subj",
      "/CN=agent-block test CA",
      "-days",
      "2",
    );
  }
  await run("req", ...ec, "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", `/CN=${name}`);
  await Deno.writeTextFile(
    join(dir, "leaf.ext"),
    `subjectAltName=${
      /^[\d.]+$/.test(name) ? "IP" : "DNS"
    }:${name}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`,
  );
  await run(
    "x509",
    "-req",
    "-in",
    "leaf.csr",
    "-CA",
    ca,
    "-CAkey",
    caKey,
    "-CAserial",
    join(dir, "ca.srl"),
    "-CAcreateserial",
    "-out",
    "leaf.pem",
    "-days",
    "2",
    "-extfile",
    "leaf.ext",
  );
  return { ca, caKey, cert: join(dir, "leaf.pem"), key: join(dir, "leaf.key") };
}

/**
 * A fresh temporary project: a `tempDir(prefix)` with `files` (relative path → content) written
 * into it, directories created. Returns its absolute path.
 */
export async function tempProject(files: Record<string, string> = {}, prefix = "ab_proj_"): Promise<string> {
  const root = await tempDir(prefix);
  writeTree(root, files);
  return root;
}

/**
 * Waits until no open file holds the `flock` of `path` (`lockIsHeld`), failing after 10 s. A
 * check made once, right after a holder let go, can still find the lock held: the suite's test
 * files share one process (`deno test --parallel` runs them on threads of it), and a child that
 * another file spawns holds a copy of every open file of the process until its `exec` closes them.
 * A holder that never lets go (what the tests look for) still fails.
 */
export async function waitUnlocked(path: string, what: string): Promise<void> {
  await waitFor(() => !lockIsHeld(path), { what, timeoutMs: 10_000 });
}

/**
 * Polls `condition` (every 20 ms, sync or async) until it holds. The deadline is generous
 * (`timeoutMs`, default 20 s) because it only bounds a failing test: a passing one returns as
 * soon as the condition holds, so nothing depends on how fast the machine is. The condition is
 * checked once more at the deadline; then it throws `timed out after N ms waiting for <what>`.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  opts: { what: string | (() => string); timeoutMs?: number },
): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() >= deadline) {
      if (await condition()) return;
      const what = typeof opts.what === "function" ? opts.what() : opts.what;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Waits until every one of `pending` has settled (resolved or rejected), or throws
 * `<what> did not end within N ms` after `timeoutMs` (default 60 s): the bound only tells "ended"
 * from "never", so cleanup in a `finally` (a run told to stop, a subprocess killed) can never
 * hang the suite when a test has already failed. Returns the settled results.
 */
export async function settleWithin<T>(
  pending: readonly Promise<T>[],
  what: string,
  timeoutMs = 60_000,
): Promise<PromiseSettledResult<T>[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const never = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([Promise.allSettled(pending), never]);
  } finally {
    clearTimeout(timer);
  }
}

/** The shape of an agent run's log, for `agentRunKinds`. */
export interface AgentRunShape {
  /**
   * One entry per model turn, in order: the number of tool calls the turn's response made (each
   * logged as `tool_call` then `tool_result`), or `"failed"` for a turn whose model call failed
   * (`llm_call_failed`, after which the loop ends). `[1, 0]`: one tool call, then the answer.
   */
  turns: (number | "failed")[];
  /** Each turn ends with a `budget_charge` (a kernel session with a budget). Default false. */
  budgetCharges?: boolean;
  /** `agent.run` ended the loop with an `agent_result`. Default true. */
  agentResult?: boolean;
  /** The session is closed (`session_close`). Default true (false: read before the close). */
  closed?: boolean;
}

/**
 * The event kinds an agent run leaves in the knl log, in order: `session_open`, `msg_user`, then
 * per turn `llm_request` and `llm_response` (or `llm_call_failed`), a `tool_call`/`tool_result`
 * pair per tool call, a `budget_charge` if charged; then `agent_result` and `session_close`.
 */
export function agentRunKinds(shape: AgentRunShape): string[] {
  const kinds = ["session_open", "msg_user"];
  for (const turn of shape.turns) {
    kinds.push("llm_request");
    if (turn === "failed") {
      kinds.push("llm_call_failed");
      continue;
    }
    kinds.push("llm_response");
    for (let i = 0; i < turn; i++) kinds.push("tool_call", "tool_result");
    if (shape.budgetCharges) kinds.push("budget_charge");
  }
  if (shape.agentResult ?? true) kinds.push("agent_result");
  if (shape.closed ?? true) kinds.push("session_close");
  return kinds;
}

/** Fails unless `actual` contains `expected`, showing `actual` (a literal substring, not a pattern). */
export function assertIncludes(actual: string, expected: string, msg?: string): void {
  if (!actual.includes(expected)) {
    throw new Error(`${msg ? msg + ": " : ""}expected to find ${JSON.stringify(expected)} in:\n${actual}`);
  }
}

/** Every `.ts` file below `dir` of the repository (repository-relative, `/`-separated), sorted. */
export function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(join(REPO_ROOT, dir))) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...tsFiles(p));
    else if (e.isFile && e.name.endsWith(".ts")) out.push(p);
  }
  return out.sort();
}

/** `deno info --json <root>` (a path or URL, run in the repository), parsed; throws when it fails. */
export async function denoInfo<T>(root: string): Promise<T> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`deno info --json ${root} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return JSON.parse(new TextDecoder().decode(out.stdout)) as T;
}

/** Parses JSON Lines output (blank lines skipped). */
// deno-lint-ignore no-explicit-any
export function jsonLines(text: string): any[] {
  return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/** Writes `files` (relative path → content) under `root`, creating directories. */
export function writeTree(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    const p = join(root, rel);
    Deno.mkdirSync(dirname(p), { recursive: true });
    Deno.writeTextFileSync(p, content);
  }
}

/** The pid files `writeDaemonScript`'s script leaves, one per way of detaching. */
export const DAEMON_PID_FILES = ["double_fork.pid", "setsid.pid"] as const;

/**
 * Writes `<dir>/daemons.sh` and returns its path: `sh daemons.sh DIR [env-cleared]` starts daemons
 * that detach as real ones do, each with its output on /dev/null and writing its pid (atomically)
 * to `DIR/<kind>.pid`, and returns once all are running:
 * - `double_fork.pid`: fork, `setsid`, fork — both intermediates exit (a classic daemon);
 * - `setsid.pid`: `setsid -f` — a new session whose parent exits at once;
 * - with `env-cleared`, also `env_cleared.pid`: `env -i setsid -f`, no environment at all.
 * Each daemon is a `sleep 300`, so one that survives a failing test ends by itself.
 */
export function writeDaemonScript(dir: string): string {
  const path = join(dir, "daemons.sh");
  Deno.writeTextFileSync(
    path,
    `dir=$1
( setsid sh -c 'sleep 300 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"' sh "$dir/double_fork.pid" & ) </dev/null >/dev/null 2>&1
setsid -f sh -c 'echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 300' sh "$dir/setsid.pid" </dev/null >/dev/null 2>&1
want="double_fork.pid setsid.pid"
if [ "$2" = env-cleared ]; then
  env -i /usr/bin/setsid -f /bin/sh -c 'echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 300' sh "$dir/env_cleared.pid" </dev/null >/dev/null 2>&1
  want="$want env_cleared.pid"
fi
for f in $want; do while [ ! -f "$dir/$f" ]; do sleep 0.02; done; done
`,
  );
  return path;
}

/** True while `pid` names a live process (a zombie, ended but not yet reaped, counts as gone). */
export function processAlive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const state = stat[stat.lastIndexOf(")") + 2];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** Why the process tests cannot run on this machine (not Linux, or a tool missing), or undefined. */
export function lacksProcessTools(...tools: string[]): string | undefined {
  if (Deno.build.os !== "linux") return `not Linux (${Deno.build.os})`;
  for (const t of tools) {
    if (!["/usr/bin/", "/bin/"].some((d) => fileExists(d + t))) return `${t} is not installed`;
  }
  return undefined;
}

function fileExists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** What the file-tool tests register: every tool, fs_write and the undoing ones included. */
const ALL_FS_TOOLS = `{ allowed = { "fs_write", "fs_rollback", "fs_search_replace" } }`;

/**
 * Runs `body` in project `dir` with the file tools registered by `std.fs.register_tools(opts)`
 * (the Lua table text; default every tool) and a local `call(name, input)` that answers a tool's
 * result or `"ERR <message>"`; returns the string `body` returns.
 */
export async function runFsTools(dir: string, body: string, opts = ALL_FS_TOOLS): Promise<string> {
  const r = await runLua(
    `local names = std.fs.register_tools(${opts})
     local function call(name, input)
       local ok, v = pcall(tool.call, name, input)
       return ok and v or ("ERR " .. tostring(v))
     end
     ${body}`,
    { projectRoot: dir },
  );
  if (r.outcome.status !== "returned") throw new Error(JSON.stringify(r.outcome));
  return r.outcome.value as string;
}

/**
 * Starts `agent-block -s script ...args` in `dir` as a long-running subprocess (stdout and stderr
 * piped, the environment exactly `env`, e.g. `testEnv({...})`); `stopBlocks`
 * ends whatever of them still runs.
 */
export function spawnBlock(
  dir: string,
  script: string,
  args: string[],
  env: Record<string, string>,
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, "-s", script, ...args],
    cwd: dir,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Kills whatever of `procs` still runs and waits for all of them. */
export async function stopBlocks(procs: Deno.ChildProcess[]): Promise<void> {
  for (const p of procs) {
    try {
      p.kill("SIGKILL");
    } catch { /* exited */ }
  }
  await Promise.allSettled(procs.map((p) => p.status));
}

/** True when `path` exists. */
export function pathExists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
