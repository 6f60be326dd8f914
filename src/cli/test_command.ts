/**
 * `agent-block test [-p DIR] [PATH|SUBSTRING]...`: run Lua spec files with the embedded `lspec`.
 *
 * Owns spec discovery (every `*_spec.lua` under the project, hidden directories and
 * `node_modules` skipped; an argument naming a file or directory narrows to it, an argument that
 * looks like a path (a `/`, or a `.lua` ending) and names nothing is an error naming it, anything
 * else is a filename substring), running each file in a fresh engine of its own (`runSpecFile`),
 * the report on stdout and the summary line `N passed, N failed`. Exit 1 on any failure or when
 * no spec was found, or when the environment asks for the sandbox, which specs do not run
 * under (`src/config/settings.ts`).
 *
 * Invariants of one spec file's run:
 * - it is isolated from the user's data: `AGENT_BLOCK_HOME` is a fresh temporary directory and
 *   the kv, sql, ts and kernel stores (`AGENT_BLOCK_KV_PATH`, `_SQL_PATH`, `_TS_PATH`,
 *   `_KNL_PATH`) are files in it, whatever the environment or `.env` said; the directory is
 *   removed when the file is done. A file whose leading comment has the line
 *   `-- lspec: real-home` runs with the home and stores a block would get instead (an unknown
 *   `-- lspec:` directive fails the file, naming it);
 * - the script is a driver chunk (`=ab:lspec_driver`, left out of tracebacks) named after the
 *   spec file, so `log.*` lines and `_SCRIPT_NAME` name the spec, not the driver;
 * - `os.exit` and `job.defer` raise instead of ending the run (`lspec.trap_run_enders`); a run
 *   that ends early all the same is a failure saying how it ended;
 * - `lspec.run_block` is available (src/cli/spec_run_block.ts).
 */
import { settingsFromEnv, STORE_PATH_VARS } from "../config/env_settings.ts";
import { basename, dirname, join, resolve } from "node:path";
import { InProcessRunner } from "../runner/in_process.ts";
import { AgentBlockError, EXIT } from "../errors.ts";
import { parseFlags } from "./args.ts";
import { edgeCwd, edgeEnvironment } from "./environment.ts";
import { refuseSandbox } from "../config/env_settings.ts";
import { isDir, isFile } from "../util/fs.ts";
import { displayPath } from "../modules/resolver.ts";
import type { Outcome } from "../outcome.ts";
import { writeStdout } from "../obs/log.ts";
import { specRunBlockModule } from "./spec_run_block.ts";

/** The outcome of one spec file. */
export interface SpecFileResult {
  path: string;
  passed: number;
  failed: number;
  /** `name` is the `describe / it` path; `where` the spec's `file:line`; `expected`/`actual` of a failed expectation. */
  failures: { name: string; error: string; where?: string; expected?: string; actual?: string }[];
  output: string[];
}

const DRIVER = `local lspec = require("lspec")
lspec.expose()
lspec.trap_run_enders()
lspec.run_file(SPEC_PATH)
return std.json.encode(lspec.results())
`;

/** Where a spec file runs: the environment and working directory its run gets. */
export interface SpecRunEnvironment {
  /** The run's environment (`RunSpec.env`). */
  env: Readonly<Record<string, string>>;
  /** The run's working directory (absolute); `path` and `projectRoot` resolve against it. */
  cwd: string;
  /** Sink for the run's logs and `io.stderr` (default the process stderr). */
  stderr?: (bytes: Uint8Array) => void;
}

/** The `-- lspec: NAME` directives a spec file's leading comment may carry. */
const DIRECTIVES = new Set(["real-home"]);

/** The directives in the leading comment of `source` (lines of `--` comments and blank lines). */
export function specDirectives(source: string): string[] {
  const out: string[] = [];
  const lines = source.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (i === 0 && line.startsWith("#")) continue;
    if (line === "") continue;
    if (!line.startsWith("--")) break;
    const m = /^--\s*lspec:\s*(.*?)\s*$/.exec(line);
    if (m) out.push(m[1]);
  }
  return out;
}

/** The store variables a spec's isolated run sets, and their file names in its home. */
const ISOLATED_STORES: [string, string][] = STORE_PATH_VARS.map((
  [kind, name],
) => [name, `${kind === "kernel" ? "knl" : kind}.sqlite`]);

/** Why a run that should have returned the report did not. */
function endedEarly(outcome: Outcome): string {
  switch (outcome.status) {
    case "exited":
      return `the spec file ended the run with os.exit(${outcome.code}) before it finished; its results are lost`;
    case "deferred":
      return `the spec file ended the run with job.defer(${
        JSON.stringify(outcome.reason)
      }) before it finished; ` +
        "its results are lost";
    case "raised":
      return outcome.message;
    case "cancelled":
      return `the spec file's run was cancelled: ${outcome.reason}`;
    case "timed_out":
      return `the spec file's run timed out after ${outcome.seconds} s`;
    default:
      return "the spec file's run returned no report";
  }
}

/** Runs one spec file in a fresh engine. */
export async function runSpecFile(
  path: string,
  projectRoot: string,
  where: SpecRunEnvironment,
): Promise<SpecFileResult> {
  const abs = resolve(where.cwd, path);
  const fileFailure = (error: string, output: string[] = []): SpecFileResult => ({
    path,
    passed: 0,
    failed: 1,
    failures: [{ name: "(spec file)", error }],
    output: [...output, "FAIL (spec file)", ...error.split("\n").map((l) => `  ${l}`)],
  });
  let directives: string[] = [];
  try {
    directives = specDirectives(await Deno.readTextFile(abs));
  } catch { /* unreadable: loadfile in the driver reports it */ }
  const unknown = directives.filter((d) => !DIRECTIVES.has(d));
  if (unknown.length) {
    return fileFailure(
      `unknown lspec directive '-- lspec: ${unknown[0]}' in ${displayPath(abs, where.cwd)} ` +
        `(known: ${[...DIRECTIVES].join(", ")})`,
    );
  }
  const scratch = await Deno.makeTempDir({ prefix: "agent-block-spec-", dir: where.env.TMPDIR || undefined });
  const env: Record<string, string> = { ...where.env };
  if (!directives.includes("real-home")) {
    env.AGENT_BLOCK_HOME = scratch;
    for (const [name, file] of ISOLATED_STORES) env[name] = join(scratch, file);
  }
  const chunks: string[] = [];
  try {
    const runner = new InProcessRunner({
      envSettings: settingsFromEnv,
      stdout: (b) => chunks.push(new TextDecoder().decode(b)),
      stderr: where.stderr,
      modules: [specRunBlockModule(scratch)],
    });
    const { outcome } = await runner.run({
      script: { source: DRIVER, name: basename(abs), chunkname: "=ab:lspec_driver", dir: dirname(abs) },
      projectRoot,
      env,
      cwd: where.cwd,
      globals: { SPEC_PATH: displayPath(abs, where.cwd) },
    });
    const printed = chunks.join("").split("\n").filter((l) => l.length).map((l) => `  | ${l}`);
    if (outcome.status !== "returned" || typeof outcome.value !== "string") {
      return fileFailure(endedEarly(outcome), printed);
    }
    const r = JSON.parse(outcome.value) as Omit<SpecFileResult, "path">;
    return {
      path,
      passed: r.passed,
      failed: r.failed,
      failures: Array.isArray(r.failures) ? r.failures : [],
      output: [...printed, ...(Array.isArray(r.output) ? r.output : [])],
    };
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch((e) => {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    });
  }
}

/** Every `*_spec.lua` below `dir` (absolute), as paths starting with `dir`. */
export function findSpecs(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(d)];
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name < b.name ? -1 : 1)) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const p = join(d, e.name);
      if (e.isDirectory) walk(p);
      else if (e.isFile && e.name.endsWith("_spec.lua")) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** The test command. */
export async function testCommand(argv: string[]): Promise<number> {
  const parsed = parseFlags(argv, {
    project: { type: "string", short: "p" },
    help: { type: "boolean", short: "h" },
  }, { allowPositionals: true });
  const enc = new TextEncoder();
  const print = (s: string) => writeStdout(enc.encode(s + "\n"));
  if (parsed.values.help) {
    print(
      "Usage: agent-block test [-p DIR] [PATH|SUBSTRING]...\n" +
        "Runs *_spec.lua files (all under the project when no PATH is given) and prints N passed, N failed.\n\n" +
        "Example:\n  agent-block test lib/ triage",
    );
    return EXIT.OK;
  }
  const project = (parsed.values.project as string | undefined) ?? ".";
  const cwd = edgeCwd();
  const at = (p: string) => resolve(cwd, p);
  if (!isDir(at(project))) throw new AgentBlockError(`project directory ${project} does not exist`);
  let files: string[] = [];
  const substrings: string[] = [];
  for (const p of parsed.positionals) {
    if (isDir(at(p))) files.push(...findSpecs(at(p)));
    else if (isFile(at(p))) files.push(at(p));
    else if (/[\\/]/.test(p) || p.endsWith(".lua")) {
      throw new AgentBlockError(`spec file or directory ${p} does not exist (looked for ${at(p)})`);
    } else substrings.push(p);
  }
  if (substrings.length) {
    const pool = parsed.positionals.length > substrings.length ? files : findSpecs(at(project));
    files = pool.filter((f) => substrings.some((s) => basename(f).includes(s)));
    if (files.length === 0) {
      throw new AgentBlockError(
        `no spec files found: no *_spec.lua file name ${
          parsed.positionals.length > substrings.length ? "among the paths given" : `under ${project}`
        } contains ${substrings.map((s) => `'${s}'`).join(" or ")}`,
      );
    }
  } else if (parsed.positionals.length === 0) {
    files = findSpecs(at(project));
  }
  if (files.length === 0) {
    const where = parsed.positionals.length ? parsed.positionals.join(", ") : project;
    throw new AgentBlockError(`no spec files found under ${where} (looked for *_spec.lua)`);
  }
  const edge = await edgeEnvironment(project);
  refuseSandbox(edge.env, "test"); // specs run Lua too, unconfined: a requested sandbox fails closed
  let passed = 0;
  let failed = 0;
  for (const f of files) {
    const r = await runSpecFile(f, project, edge);
    print(`${displayPath(f, cwd)}`);
    for (const line of r.output) print(`  ${line}`);
    passed += r.passed;
    failed += r.failed;
  }
  print(`${passed} passed, ${failed} failed`);
  return failed > 0 ? EXIT.FAILED : EXIT.OK;
}
