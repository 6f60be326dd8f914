/**
 * Runs the MCP conformance suite's server scenarios against
 * `agent-block mcp --http 127.0.0.1:0 --expose blocks` serving the fixture project
 * `tests/conformance/` (Lua blocks declaring the suite's `test_*` tools, `test://` resources and
 * prompts), twice, both suites pinned in deno.json:
 * - `@modelcontextprotocol/conformance@0.1.16` `--suite all` (the 2025 era: the 32 server
 *   scenarios, active and pending), ending with the line `conformance: P/T`;
 * - `@modelcontextprotocol/conformance@0.2.0-alpha.12` `--requirements 2026-07-28` (the scenarios
 *   that revision requires), ending with `conformance 2026-07-28: P/T scored`; the unscored
 *   extension and pending scenarios it also runs are listed with their result, and do not fail
 *   the run.
 *
 * Exit 0 when every scored scenario passed except those in `EXPECTED_FAILURES` (each with its
 * reason); exit 1 on any other failure, or when an expected failure passes (the list is stale).
 * The server is started here and stopped at the end, whatever happened. `.ci/run` runs it.
 *
 * Usage: deno run -A tools/conformance_server.ts [--verbose] [--only-2025|--only-2026] [SCENARIO]
 */
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SUITE = "npm:@modelcontextprotocol/conformance@0.1.16";
const SUITE_2026 = "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12";
const FIXTURES = fileURLToPath(new URL("../tests/conformance", import.meta.url));

/** Scored scenarios agent-block does not pass, and why (none today). */
const EXPECTED_FAILURES: Record<string, string> = {};

/** Why an unscored (extension or pending) 2026-07-28 scenario fails. */
const UNSCORED_REASONS: Record<string, string> = {
  "http-custom-header-server-validation":
    "pending SEP-2243: agent-block has no x-mcp-header tool annotations, so the suite finds nothing to test",
  tasks: "the tasks extension (tasks/* methods, task-augmented calls) is not implemented",
};

const verbose = Deno.args.includes("--verbose");
const only = Deno.args.filter((a) => !a.startsWith("--"));

const server = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    "--quiet",
    "cli.ts",
    "mcp",
    "-p",
    FIXTURES,
    "--expose",
    "blocks",
    "--http",
    "127.0.0.1:0",
  ],
  cwd: ROOT,
  stdin: "null",
  stdout: "null",
  stderr: "piped",
  // Each call's kernel session goes to a scratch log, not into the fixture project.
  env: {
    NO_COLOR: "1",
    AGENT_BLOCK_LOG: verbose ? "info" : "warn",
    AGENT_BLOCK_KNL_PATH: `${Deno.makeTempDirSync({ prefix: "ab_conformance_" })}/knl.sqlite`,
  },
}).spawn();

/** Reads the server's stderr until it says where it listens; the rest is echoed when verbose. */
async function listening(): Promise<string> {
  const reader = server.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  for (;;) {
    const r = await reader.read();
    if (r.done) throw new Error(`the server ended before listening:\n${seen}`);
    seen += r.value;
    const m = /listening on (http:\/\/\S+)/.exec(seen);
    if (m) {
      void (async () => {
        for (;;) {
          const more = await reader.read();
          if (more.done) return;
          if (verbose) await Deno.stderr.write(new TextEncoder().encode(more.value));
        }
      })();
      return m[1];
    }
  }
}

/** The summary rows of a suite's output: [ok, name]. */
function summary(out: string): [boolean, string][] {
  return [...out.matchAll(/^([✓✗]) ([a-z0-9-]+): \d+ passed, \d+ failed/gm)].map((m) => [m[1] === "✓", m[2]]);
}

async function suite(spec: string, args: string[]): Promise<string> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", spec, ...args],
    cwd: ROOT,
    stdin: "null",
    env: { NO_COLOR: "1" },
  }).output();
  const out = new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
  if (verbose) console.log(out);
  return out;
}

/** Judges scored rows against the expected failures; prints failures; returns the unexpected. */
function judge(rows: [boolean, string][], out: string): { passed: number; unexpected: string[] } {
  const unexpected: string[] = [];
  let passed = 0;
  for (const [ok, name] of rows) {
    const why = EXPECTED_FAILURES[name];
    if (ok) passed++;
    else console.log(`FAIL ${name}${why ? ` — expected: ${why}` : ""}`);
    if (!ok && !why) unexpected.push(name);
    if (ok && why) unexpected.push(`${name} (listed as an expected failure, but passed: update the list)`);
  }
  if (unexpected.length && !verbose) console.log(out);
  return { passed, unexpected };
}

let status = 0;
try {
  const url = await listening();
  const unexpected: string[] = [];
  if (!Deno.args.includes("--only-2026")) {
    const args = ["server", "--url", url, ...(only.length ? ["--scenario", only[0]] : ["--suite", "all"])];
    const out = await suite(SUITE, args);
    let rows = summary(out);
    if (only.length && rows.length === 0) rows = [[/Passed: \d+\/\d+, 0 failed/.test(out), only[0]]];
    if (rows.length === 0) {
      console.log(out);
      throw new Error("the 2025-era suite printed no scenario summary");
    }
    const j = judge(rows, out);
    unexpected.push(...j.unexpected);
    console.log(`conformance: ${j.passed}/${rows.length}`);
  }
  if (!Deno.args.includes("--only-2025")) {
    const args = [
      "server",
      "--url",
      url,
      ...(only.length ? ["--scenario", only[0]] : ["--requirements", "2026-07-28"]),
    ];
    const out = await suite(SUITE_2026, args);
    // Everything after "Not scored" lists the unscored scenarios ("  ✗ name (extension)").
    const cut = out.indexOf("Not scored");
    const unscored = new Set(
      cut < 0 ? [] : [...out.slice(cut).matchAll(/^\s+[✓✗] ([a-z0-9-]+) \(/gm)].map((m) => m[1]),
    );
    let rows = summary(out);
    if (only.length && rows.length === 0) rows = [[/Passed: \d+\/\d+, 0 failed/.test(out), only[0]]];
    if (rows.length === 0) {
      console.log(out);
      throw new Error("the 2026-07-28 suite printed no scenario summary");
    }
    const scored = rows.filter(([, n]) => !unscored.has(n));
    const j = judge(scored, out);
    unexpected.push(...j.unexpected);
    for (const [ok, name] of rows.filter(([, n]) => unscored.has(n))) {
      const why = UNSCORED_REASONS[name] ?? UNSCORED_REASONS[name.split("-")[0]];
      console.log(`unscored ${ok ? "pass" : "FAIL"} ${name}${!ok && why ? ` — ${why}` : ""}`);
    }
    console.log(`conformance 2026-07-28: ${j.passed}/${scored.length} scored`);
  }
  if (unexpected.length) {
    console.log(`unexpected: ${unexpected.join(", ")}`);
    status = 1;
  }
} catch (e) {
  console.log(`conformance: ${(e as Error).message}`);
  status = 1;
} finally {
  try {
    server.kill("SIGTERM");
  } catch { /* already gone */ }
  await server.status;
}
Deno.exit(status);
