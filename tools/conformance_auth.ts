/**
 * Runs every `auth/*` client scenario of the MCP conformance suite
 * (`npm:@modelcontextprotocol/conformance`, pinned in deno.json) against agent-block, through the
 * harness `tests/conformance/auth_client.ts` (which drives `agent-block mcp login` and runs), one
 * scenario at a time, and ends with the line `conformance auth: P/T`.
 *
 * Exit 0 when every scenario passed except those in `EXPECTED_FAILURES` (each with its reason);
 * exit 1 on any other failure, or when an expected failure passes (the list is stale), as the
 * suite's own `--expected-failures` baseline does. `.ci/run` runs it.
 *
 * Usage: deno run -A tools/conformance_auth.ts [--verbose] [SCENARIO...]
 */
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SUITE = "npm:@modelcontextprotocol/conformance@0.1.16";
const HARNESS = `${Deno.execPath()} run -A --quiet ${
  fileURLToPath(new URL("../tests/conformance/auth_client.ts", import.meta.url))
}`;

/** Scenarios agent-block does not pass, and why. */
const EXPECTED_FAILURES: Record<string, string> = {
  "auth/2025-03-26-oauth-metadata-backcompat":
    "the suite's server publishes authorization server metadata whose issuer (…/oauth) is not the URL it " +
    "was fetched for; the SDK refuses it (RFC 8414 §3.3), and agent-block keeps that check on",
};

async function suite(args: string[]): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", SUITE, ...args],
    cwd: ROOT,
    stdin: "null",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

const verbose = Deno.args.includes("--verbose");
let scenarios = Deno.args.filter((a) => !a.startsWith("--"));
if (scenarios.length === 0) {
  const list = await suite(["list"]);
  scenarios = [...list.out.matchAll(/^\s+- (auth\/[a-z0-9-]+)/gm)].map((m) => m[1]);
  if (scenarios.length === 0) {
    console.log(list.out);
    console.log("conformance auth: the suite listed no auth scenario");
    Deno.exit(1);
  }
}
let passed = 0;
const unexpected: string[] = [];
for (const s of scenarios) {
  const r = await suite(["client", "--command", HARNESS, "--scenario", s, "--timeout", "60000"]);
  const ok = r.code === 0 && /OVERALL: PASSED/.test(r.out);
  const checks = /Passed: (\d+\/\d+)/.exec(r.out)?.[1] ?? "?";
  const why = EXPECTED_FAILURES[s];
  if (ok) passed++;
  console.log(`${ok ? "pass" : "FAIL"} ${s} (${checks} checks)${!ok && why ? ` — expected: ${why}` : ""}`);
  if (!ok && !why) unexpected.push(s);
  if (ok && why) unexpected.push(`${s} (listed as an expected failure, but passed: update the list)`);
  if (verbose || (!ok && !why)) console.log(r.out);
}
console.log(`conformance auth: ${passed}/${scenarios.length}`);
if (unexpected.length) {
  console.log(`unexpected: ${unexpected.join(", ")}`);
  Deno.exit(1);
}
