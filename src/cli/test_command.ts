/**
 * `agent-block test [-p DIR] [PATH|SUBSTRING]...`: run Lua spec files with the embedded `lspec`.
 *
 * Owns spec discovery (every `*_spec.lua` under the project, hidden directories and
 * `node_modules` skipped; a PATH that exists narrows to that file or directory, anything else is
 * a filename substring), running each file in a fresh engine of its own (`runSpecFile`), the
 * report on stdout and the summary line `N passed, N failed`. Exit 1 on any failure or when no
 * spec was found.
 */
import { basename, dirname, join, resolve } from "node:path";
import { runBlock } from "../runtime/run.ts";
import { AgentBlockError, EXIT } from "../errors.ts";
import { parseFlags } from "./args.ts";
import { edgeCwd, edgeEnvironment } from "./environment.ts";
import { isDir, isFile } from "../util/fs.ts";
import { displayPath } from "../modules/resolver.ts";

/** The outcome of one spec file. */
export interface SpecFileResult {
  path: string;
  passed: number;
  failed: number;
  failures: { name: string; error: string }[];
  output: string[];
}

const DRIVER = `local lspec = require("lspec")
lspec.expose()
local fn, err = loadfile(SPEC_PATH)
if not fn then lspec.file_error(err) else
  local ok, e = xpcall(fn, debug.traceback)
  if not ok then lspec.file_error(e) end
end
return std.json.encode(lspec.results())
`;

/** Where a spec file runs: the environment and working directory its run gets. */
export interface SpecRunEnvironment {
  /** The run's environment (`RunSpec.env`). */
  env: Readonly<Record<string, string>>;
  /** The run's working directory (absolute); `path` and `projectRoot` resolve against it. */
  cwd: string;
}

/** Runs one spec file in a fresh engine. */
export async function runSpecFile(
  path: string,
  projectRoot: string,
  where: SpecRunEnvironment,
): Promise<SpecFileResult> {
  const abs = resolve(where.cwd, path);
  const chunks: string[] = [];
  const outcome = await runBlock({
    script: { source: DRIVER, name: "lspec_driver.lua", dir: dirname(abs) },
    projectRoot,
    env: where.env,
    cwd: where.cwd,
    globals: { SPEC_PATH: displayPath(abs, where.cwd) },
    stdout: (b) => chunks.push(new TextDecoder().decode(b)),
  });
  if (outcome.status !== "returned" || typeof outcome.value !== "string") {
    const why = outcome.status === "raised" ? outcome.message : outcome.status;
    return { path, passed: 0, failed: 1, failures: [{ name: "(spec file)", error: why }], output: chunks };
  }
  const r = JSON.parse(outcome.value) as Omit<SpecFileResult, "path">;
  const printed = chunks.join("").split("\n").filter((l) => l.length).map((l) => `  | ${l}`);
  return {
    path,
    passed: r.passed,
    failed: r.failed,
    failures: Array.isArray(r.failures) ? r.failures : [],
    output: [...printed, ...(Array.isArray(r.output) ? r.output : [])],
  };
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
  const print = (s: string) => Deno.stdout.writeSync(enc.encode(s + "\n"));
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
    else substrings.push(p);
  }
  if (substrings.length) {
    const pool = parsed.positionals.length > substrings.length ? files : findSpecs(at(project));
    files = pool.filter((f) => substrings.some((s) => basename(f).includes(s)));
  } else if (parsed.positionals.length === 0) {
    files = findSpecs(at(project));
  }
  if (files.length === 0) throw new AgentBlockError("no spec files found (looked for *_spec.lua)");
  const edge = edgeEnvironment(project);
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
