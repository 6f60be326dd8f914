/**
 * Shared test helpers: run Lua in-process through the real run path, or the real CLI as a
 * subprocess. Every test that needs the engine goes through `runLua` (one engine per call, the
 * shared wasm module reused), so the suite pays the wasm start-up once per test file.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runBlock, type RunSpec } from "../src/runtime/run.ts";
import type { Outcome } from "../src/outcome.ts";

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
const PASSED_THROUGH = ["PATH", "HOME", "TMPDIR", "DENO_DIR", "SYSTEMROOT", "USERPROFILE"];

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
 * output. `spec` overrides any RunSpec field (projectRoot defaults to a fresh temp dir, `env` to
 * `testEnv()`, `cwd` to the project root).
 */
export async function runLua(
  source: string,
  spec: Partial<RunSpec> & { name?: string } = {},
): Promise<LuaRun> {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const projectRoot = spec.projectRoot ?? await Deno.makeTempDir({ prefix: "ab_test_" });
  const outcome = await runBlock({
    script: { source, name: spec.name ?? "test.lua", dir: projectRoot },
    stdout: (b) => out.push(b.slice()),
    stderr: (b) => err.push(b.slice()),
    env: testEnv(),
    ...spec,
    projectRoot,
  });
  const dec = (parts: Uint8Array[]) => new TextDecoder().decode(concat(parts));
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

/** A fresh temporary directory, removed when the returned disposer runs. */
export async function tempDir(prefix = "ab_test_"): Promise<string> {
  return await Deno.makeTempDir({ prefix });
}

/**
 * Runs `f` with `vars` set in this process's environment, after removing every name in `clear`;
 * restores the previous values afterwards, whatever happens. The environment is the process's:
 * this is why `deno task test` runs test files one at a time (parallel workers would see it).
 */
export async function withEnv<T>(
  vars: Record<string, string>,
  f: () => Promise<T>,
  clear: readonly string[] = [],
): Promise<T> {
  const names = [...new Set([...clear, ...Object.keys(vars)])];
  const saved = Object.fromEntries(names.map((k) => [k, Deno.env.get(k)]));
  for (const k of clear) Deno.env.delete(k);
  for (const [k, v] of Object.entries(vars)) Deno.env.set(k, v);
  try {
    return await f();
  } finally {
    for (const [k, v] of Object.entries(saved)) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
  }
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
