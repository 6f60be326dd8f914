/**
 * Runs the MCP conformance suite's server scenarios (`npm:@modelcontextprotocol/conformance`,
 * pinned in deno.json; `--suite all`: the active and the pending ones) against
 * `agent-block mcp --http 127.0.0.1:0 --expose blocks` serving the fixture project
 * `tests/conformance/` (Lua blocks declaring the suite's `test_*` tools, `test://` resources and
 * prompts), and ends with the line `conformance: P/T` (scenarios passed / run).
 *
 * Exit 0 when every scenario passed except those in `EXPECTED_FAILURES` (each with its reason);
 * exit 1 on any other failure, or when an expected failure passes (the list is stale). The
 * server is started here and stopped at the end, whatever happened. `.ci/run` runs it.
 *
 * Usage: deno run -A tools/conformance_server.ts [--verbose] [SCENARIO...]
 */
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SUITE = "npm:@modelcontextprotocol/conformance@0.1.16";
const FIXTURES = fileURLToPath(new URL("../tests/conformance", import.meta.url));

/** Scenarios agent-block does not pass, and why (none today). */
const EXPECTED_FAILURES: Record<string, string> = {};

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
  env: { NO_COLOR: "1", AGENT_BLOCK_LOG: verbose ? "info" : "warn" },
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

let status = 0;
try {
  const url = await listening();
  const args = ["run", "-A", "--quiet", SUITE, "server", "--url", url];
  if (only.length === 1) args.push("--scenario", only[0]);
  else args.push("--suite", "all");
  const r = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdin: "null",
    env: { NO_COLOR: "1" },
  })
    .output();
  const out = new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
  if (verbose) console.log(out);
  // One summary line per scenario: "✓ name: N passed, M failed" or "✗ ...".
  const rows = [...out.matchAll(/^([✓✗]) ([a-z0-9-]+): (\d+) passed, (\d+) failed/gm)];
  if (only.length === 1 && rows.length === 0) {
    const ok = r.code === 0 && /Passed: \d+\/\d+, 0 failed/.test(out);
    rows.push(
      [`${ok ? "✓" : "✗"} ${only[0]}: -`, ok ? "✓" : "✗", only[0], "", ""] as unknown as RegExpExecArray,
    );
  }
  if (rows.length === 0) {
    console.log(out);
    throw new Error("the suite printed no scenario summary");
  }
  const unexpected: string[] = [];
  let passed = 0;
  for (const [, mark, name] of rows) {
    const ok = mark === "✓";
    const why = EXPECTED_FAILURES[name];
    if (ok) passed++;
    else console.log(`FAIL ${name}${why ? ` — expected: ${why}` : ""}`);
    if (!ok && !why) unexpected.push(name);
    if (ok && why) unexpected.push(`${name} (listed as an expected failure, but passed: update the list)`);
  }
  if (unexpected.length && !verbose) console.log(out);
  console.log(`conformance: ${passed}/${rows.length}`);
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
