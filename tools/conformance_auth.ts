/**
 * Runs the MCP conformance suite's client `auth/*` scenarios against agent-block, through the
 * harness `tests/conformance/auth_client.ts` (which drives `agent-block mcp login` and runs), two
 * scenarios at a time (each starts its own servers on free ports, and the harness its own home):
 * - `npm:@modelcontextprotocol/conformance@0.1.16`, every `auth/*` scenario it lists (the 2025
 *   era), ending with the line `conformance auth: P/T`;
 * - `@0.2.0-alpha.12` with `--requirements 2026-07-28`: the client `auth/*` scenarios that
 *   revision requires (scored), its auth extensions (run and reported, never scored) and the two
 *   2025-03-26 scenarios (that version's fixed server for the one 0.1.16 fails), ending with
 *   `conformance auth 2026-07-28: P/T scored; extensions E/F; 2025-03-26 B/C`.
 *
 * Exit 0 when every scenario passed except those in the suite's `expected` list (each with its
 * reason); exit 1 on any other failure, or when an expected failure passes (the list is stale), as
 * the suite's own `--expected-failures` baseline does. `.ci/run` runs it.
 *
 * Usage: deno run -A tools/conformance_auth.ts [--verbose]
 */
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const HARNESS = `${Deno.execPath()} run -A --quiet ${
  fileURLToPath(new URL("../tests/conformance/auth_client.ts", import.meta.url))
}`;

/** One version of the suite: where its scenario list comes from, and what is known not to pass. */
interface Suite {
  spec: string;
  list: string[];
  /** The scenarios to run from the list's output: scored, and (2026-07-28) unscored extensions. */
  pick(listed: string): { scored: string[]; extensions: string[] };
  /** Scenarios of an earlier revision run besides (reported, not scored). */
  earlier?: string[];
  /** Scenarios agent-block does not pass, and why. */
  expected: Record<string, string>;
  /** The summary line's label. */
  label: string;
}

const AUTH = /^\s+- (auth\/[a-z0-9-]+)/gm;

const SUITES: Suite[] = [
  {
    spec: "npm:@modelcontextprotocol/conformance@0.1.16",
    list: ["list"],
    pick: (listed) => ({ scored: [...listed.matchAll(AUTH)].map((m) => m[1]), extensions: [] }),
    expected: {
      "auth/2025-03-26-oauth-metadata-backcompat":
        "the suite's server publishes authorization server metadata whose issuer (…/oauth) is not the URL it " +
        "was fetched for; the SDK refuses it (RFC 8414 §3.3), and agent-block keeps that check on (0.2.0-alpha.12's " +
        "server names the right issuer, and its version of the scenario passes: below)",
    },
    label: "conformance auth",
  },
  {
    spec: "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12",
    list: ["list", "--client", "--requirements", "2026-07-28"],
    pick: (listed) => {
      const cut = listed.indexOf("never scored");
      const required = cut < 0 ? listed : listed.slice(0, cut);
      const unscored = cut < 0 ? "" : listed.slice(cut);
      return {
        scored: [...required.matchAll(AUTH)].map((m) => m[1]),
        extensions: [...unscored.matchAll(/^\s+- (auth\/[a-z0-9-]+) \[client\]/gm)].map((m) => m[1]),
      };
    },
    earlier: ["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"],
    expected: {},
    label: "conformance auth 2026-07-28",
  },
];

async function run(spec: string, args: string[]): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", spec, ...args],
    cwd: ROOT,
    stdin: "null",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

/** `fn` over `items`, `width` at a time; the results in order. */
async function pool<T, R>(items: readonly T[], width: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return out;
}

const verbose = Deno.args.includes("--verbose");
const unexpected: string[] = [];
for (const s of SUITES) {
  const listed = await run(s.spec, s.list);
  const { scored, extensions } = s.pick(listed.out);
  if (scored.length === 0) {
    console.log(listed.out);
    console.log(`${s.label}: the suite listed no auth scenario`);
    Deno.exit(1);
  }
  const earlier = s.earlier ?? [];
  const all = [...scored, ...extensions, ...earlier];
  const results = await pool(all, 2, async (name) => {
    const r = await run(s.spec, ["client", "--command", HARNESS, "--scenario", name, "--timeout", "60000"]);
    return { name, ok: r.code === 0 && /OVERALL: PASSED/.test(r.out), out: r.out };
  });
  for (const r of results) {
    const checks = /Passed: (\d+\/\d+)/.exec(r.out)?.[1] ?? "?";
    const why = s.expected[r.name];
    const tag = extensions.includes(r.name)
      ? " [extension, unscored]"
      : earlier.includes(r.name)
      ? " [2025-03-26, unscored]"
      : "";
    console.log(
      `${r.ok ? "pass" : "FAIL"} ${r.name}${tag} (${checks} checks)${
        !r.ok && why ? ` — expected: ${why}` : ""
      }`,
    );
    if (!r.ok && !why) unexpected.push(r.name);
    if (r.ok && why) {
      unexpected.push(`${r.name} (listed as an expected failure, but passed: update the list)`);
    }
    if (verbose || (!r.ok && !why)) console.log(r.out);
  }
  const passed = (names: string[]) => results.filter((r) => r.ok && names.includes(r.name)).length;
  const counts = [`${passed(scored)}/${scored.length}${extensions.length ? " scored" : ""}`];
  if (extensions.length) counts.push(`extensions ${passed(extensions)}/${extensions.length}`);
  if (earlier.length) counts.push(`2025-03-26 ${passed(earlier)}/${earlier.length}`);
  console.log(`${s.label}: ${counts.join("; ")}`);
}
if (unexpected.length) {
  console.log(`unexpected: ${unexpected.join(", ")}`);
  Deno.exit(1);
}
