/**
 * Job declarations: which blocks are jobs, and what their `job.toml` says.
 *
 * Owns the discovery rule and the file's grammar. A block of the project's registry
 * (`src/blocks/registry.ts`: `<project>/.agent-block/blocks`, `<project>/blocks`,
 * `$AGENT_BLOCK_HOME/blocks`, nearer tier winning a name) is a job when a `job.toml` lies beside
 * it: `<root>/<name>/job.toml` beside `<root>/<name>/init.lua`, or `<root>/<name>.job.toml`
 * beside `<root>/<name>.lua`. The job's name is the block's. Keys (TOML, parsed by smol-toml):
 * - `every`: a duration (`30s`, `2m`, `1h`, `1h30m`; units `ms`, `s`, `m`, `h`, `d`, in
 *   decreasing order, each at most once); absent: the job runs only on request;
 * - `timeout`: a duration, default `10m`;
 * - `prompt`, `context`: strings, handed to the run as `_PROMPT` / `_CONTEXT`;
 * - `sandbox`: a boolean, default false; true runs the job under `--sandbox` (and, once the
 *   manager has seen it, every job: `scheduler.ts`'s ratchet);
 * - `flow`: a Blueprint file, relative to the project root (`flows/x.bp.json`, `.yaml`, `.bp.lua`):
 *   the job runs that flow (`agent-block flow run`) instead of its block; `init` (a table) is then
 *   its initial context. A flow job takes no `prompt`/`context`; sandboxed (its own `sandbox` or
 *   the ratchet), its steps run as confined child runs;
 * - `queue`: the run queue's queue the job's runs go to under `serve --nats` (default `default`;
 *   `[A-Za-z0-9_-]+`); `max_attempts`: how many attempts a run gets when its worker is lost
 *   (default 1); `project`: the project's id the workers know it by (default: the project
 *   directory's name; `[A-Za-z0-9_.-]+`).
 *
 * Invariants: scanning is a pure function of the file system at the time of the call (the
 * manager rescans every tick, so adding a file adds the job and removing it removes it); a file
 * that does not parse, has an unknown key (a misspelt one gets a "did you mean") or a bad value
 * never throws: it is a `JobFileError` naming the file and every problem of it at once, each with
 * its line (when one can be named) and the rule, and that job is not run.
 */
import { basename, dirname, isAbsolute, join } from "node:path";
import { parse, TomlError } from "smol-toml";
import { blockRoots, scanBlocks } from "../blocks/registry.ts";
import { didYouMean } from "../util/spelling.ts";

/** A job's default wall-clock limit: 10 minutes. */
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

/** One valid declaration. */
export interface JobDecl {
  /** The job's (= the block's) name. */
  name: string;
  /** The block's script (absolute). */
  script: string;
  /** The `job.toml` (absolute). */
  file: string;
  /** `every` as written, and in ms; both absent for a job run on request only. */
  every?: string;
  everyMs?: number;
  /** `timeout` as written (default `10m`), and in ms. */
  timeout: string;
  timeoutMs: number;
  prompt?: string;
  context?: string;
  /** `sandbox = true`: the job's runs get `--sandbox`. */
  sandbox?: true;
  /** `flow`: the Blueprint the job runs instead of its block (absolute). */
  flow?: string;
  /** `init`: the flow's initial context. */
  init?: Record<string, unknown>;
  /** `queue` (default `default`): where its runs go under `serve --nats`. */
  queue: string;
  /** `max_attempts` (default 1): attempts of a run whose worker was lost. */
  maxAttempts: number;
  /** `project`: the project's id for the workers (absent: the project directory's name). */
  project?: string;
}

/** A `job.toml` that cannot be used. */
export interface JobFileError {
  /** The job (= the block) it belongs to. */
  name: string;
  /** The block's script (absolute). */
  script: string;
  /** The file (absolute). */
  file: string;
  /** 1-based line of the problem, when one can be named. */
  line?: number;
  /** What is wrong and the rule: the first problem, then every other one (`; and line N: ...`). */
  message: string;
  /** Every problem of the file, in line order (the first is `line` / the start of `message`). */
  problems: JobProblem[];
}

/** One problem of a `job.toml`. */
export interface JobProblem {
  /** 1-based line, when one can be named. */
  line?: number;
  /** What is wrong and the rule. */
  message: string;
}

/** What one scan found. */
export interface JobScan {
  jobs: JobDecl[];
  errors: JobFileError[];
}

const UNITS: [string, number][] = [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1000], [
  "ms",
  1,
]];
const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/;

/**
 * `text` (`30s`, `2m`, `1h30m`, `500ms`, `1d`) in ms, or undefined when it is not a duration
 * above zero.
 */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (!m || text.trim() === "") return undefined;
  let ms = 0;
  for (let i = 0; i < UNITS.length; i++) if (m[i + 1] !== undefined) ms += Number(m[i + 1]) * UNITS[i][1];
  return ms > 0 && Number.isSafeInteger(ms) ? ms : undefined;
}

/** The 1-based line where `key` is assigned at the top level of `text`, if it can be found. */
function lineOfKey(text: string, key: string): number | undefined {
  const lines = text.split(/\r?\n/);
  const re = new RegExp(`^\\s*["']?${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}["']?\\s*[=.]`);
  const i = lines.findIndex((l) => re.test(l));
  return i < 0 ? undefined : i + 1;
}

const KEYS = [
  "every",
  "timeout",
  "prompt",
  "context",
  "sandbox",
  "flow",
  "init",
  "queue",
  "max_attempts",
  "project",
];

/**
 * Parses one `job.toml` (`text`, read from `file`) of block `name` at `script`. Every problem of
 * the file is found in one pass (a file that is not TOML has only that one): the error's
 * `problems` lists them in line order, its `line` and `message` say the first, then how many more.
 *
 * @example
 * ```ts ignore
 * parseJobFile("drain", "/p/blocks/drain/init.lua", "/p/blocks/drain/job.toml", 'every = "2m"');
 * // { job: { name: "drain", every: "2m", everyMs: 120000, timeout: "10m", ... } }
 * ```
 */
export function parseJobFile(
  name: string,
  script: string,
  file: string,
  text: string,
  projectRoot?: string,
): { job: JobDecl } | { error: JobFileError } {
  const problems: JobProblem[] = [];
  const problem = (message: string, line?: number) => void problems.push({ line, message });
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof TomlError) {
      const first = e.message.split("\n")[0].replace(/^Invalid TOML document:\s*/, "");
      problem(`not valid TOML: ${first}`, e.line);
    } else {
      problem(`not valid TOML: ${(e as Error).message}`);
    }
    return { error: errorOf(name, script, file, problems) };
  }
  for (const key of Object.keys(doc)) {
    if (!KEYS.includes(key)) {
      const near = didYouMean(key, KEYS);
      problem(
        `unknown key '${key}'${near ? ` (did you mean '${near}'?)` : ""} (a job.toml has ${KEYS.join(", ")})`,
        lineOfKey(text, key),
      );
    }
  }
  const str = (key: string): string | undefined => {
    const v = doc[key];
    if (v === undefined || typeof v === "string") return v;
    problem(`'${key}' must be a string, got ${JSON.stringify(v)}`, lineOfKey(text, key));
    return undefined;
  };
  const job: JobDecl = {
    name,
    script,
    file,
    timeout: "10m",
    timeoutMs: DEFAULT_TIMEOUT_MS,
    queue: "default",
    maxAttempts: 1,
  };
  for (const key of ["every", "timeout"] as const) {
    const v = str(key);
    if (v === undefined) continue;
    const ms = parseDuration(v);
    if (ms === undefined) {
      problem(
        `'${key}' is not a duration: '${v}' (write e.g. "30s", "2m", "1h", "1h30m")`,
        lineOfKey(text, key),
      );
    } else if (key === "every") {
      job.every = v;
      job.everyMs = ms;
    } else {
      job.timeout = v;
      job.timeoutMs = ms;
    }
  }
  for (const key of ["prompt", "context"] as const) {
    const v = str(key);
    if (v !== undefined) job[key] = v;
  }
  for (
    const [key, re] of [["queue", /^[A-Za-z0-9_-]{1,64}$/], ["project", /^[A-Za-z0-9_.-]{1,128}$/]] as const
  ) {
    const v = str(key);
    if (v === undefined) continue;
    if (re.test(v)) job[key] = v;
    else problem(`'${key}' must match ${re.source}, got '${v}'`, lineOfKey(text, key));
  }
  if (doc.max_attempts !== undefined) {
    const v = doc.max_attempts;
    if (typeof v !== "number" && typeof v !== "bigint" || !Number.isSafeInteger(Number(v)) || Number(v) < 1) {
      problem(
        `'max_attempts' must be a whole number of at least 1, got ${String(v)}`,
        lineOfKey(text, "max_attempts"),
      );
    } else job.maxAttempts = Number(v);
  }
  if (doc.sandbox !== undefined) {
    if (typeof doc.sandbox !== "boolean") {
      problem(
        `'sandbox' must be true or false, got ${JSON.stringify(doc.sandbox)}`,
        lineOfKey(text, "sandbox"),
      );
    } else if (doc.sandbox) job.sandbox = true;
  }
  if (doc.flow !== undefined) {
    const line = lineOfKey(text, "flow");
    if (typeof doc.flow !== "string" || doc.flow === "") {
      problem(`'flow' must be a Blueprint file's path`, line);
    } else if (isAbsolute(doc.flow) || doc.flow.split(/[\\/]/).includes("..")) {
      problem(`'flow' is a path inside the project (relative, no '..'), got '${doc.flow}'`, line);
    } else {
      job.flow = join(projectRoot ?? dirname(script), doc.flow);
    }
    for (const k of ["prompt", "context"] as const) {
      if (job[k] !== undefined) {
        problem(`a flow job takes no '${k}' (its input is 'init')`, lineOfKey(text, k));
      }
    }
  }
  if (doc.init !== undefined) {
    if (doc.flow === undefined) {
      problem(`'init' is a flow job's initial context: give 'flow' too`, lineOfKey(text, "init"));
    } else if (typeof doc.init !== "object" || doc.init === null || Array.isArray(doc.init)) {
      problem(`'init' must be a table`, lineOfKey(text, "init"));
    } else {
      job.init = JSON.parse(JSON.stringify(doc.init)) as Record<string, unknown>; // plain objects (TOML dates as text)
    }
  }
  return problems.length ? { error: errorOf(name, script, file, problems) } : { job };
}

/** The one error of a file with `problems` (at least one): the first, sorted by line, leads. */
function errorOf(name: string, script: string, file: string, problems: JobProblem[]): JobFileError {
  const sorted = [...problems].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  const [first, ...rest] = sorted;
  const more = rest.map((p) => `${p.line ? `line ${p.line}: ` : ""}${p.message}`);
  return {
    name,
    script,
    file,
    line: first.line,
    message: first.message + (more.length ? `; and ${more.join("; ")}` : ""),
    problems: sorted,
  };
}

/** The `job.toml` beside a block's script: `<dir>/job.toml` for `init.lua`, else `<name>.job.toml`. */
export function jobFileOf(script: string, name: string): string {
  return basename(script) === "init.lua" && basename(dirname(script)) === name
    ? join(dirname(script), "job.toml")
    : join(dirname(script), `${name}.job.toml`);
}

/** Every job of `projectRoot` (with `home` = `$AGENT_BLOCK_HOME`), and every unusable job file. */
export function scanJobs(projectRoot: string, home: string): JobScan {
  const out: JobScan = { jobs: [], errors: [] };
  for (const block of scanBlocks(blockRoots(projectRoot, home))) {
    const file = jobFileOf(block.path, block.name);
    let text: string;
    try {
      text = Deno.readTextFileSync(file);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) continue;
      out.errors.push(
        errorOf(block.name, block.path, file, [{ message: `cannot read: ${(e as Error).message}` }]),
      );
      continue;
    }
    const r = parseJobFile(block.name, block.path, file, text, projectRoot);
    if ("job" in r) out.jobs.push(r.job);
    else out.errors.push(r.error);
  }
  return out;
}
