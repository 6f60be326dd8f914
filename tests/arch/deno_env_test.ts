/**
 * The process environment is read at the edge only, and tests never change it.
 *
 * - Sources: `Deno.env` (any use: `Deno.env.get`, `.set`, `.toObject`, `Deno["env"]`, a
 *   destructured `{ env } = Deno`) appears only in the edge modules `cli.ts`, `mod.ts` and
 *   `src/cli/**`. Everything below them gets its environment from the run (`RunEnv`), so two
 *   runs in one process never see each other's variables.
 * - Tests: no file under `tests/` sets or deletes a process variable, or calls `withEnv`: the
 *   suite runs test files in parallel, and a test passes variables to its run
 *   (`runLua(src, { env: testEnv({...}) })`) or to its subprocess's `env` instead. Reading the
 *   process environment (`testEnv` picks PATH, HOME, ... from it) is fine.
 *
 * The source text is scanned with comments blanked out (line numbers kept), so a doc comment may
 * name `Deno.env`; string literals still count. Each failure lists every `file:line` with the
 * rule it breaks.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, tsFiles } from "../helpers.ts";
import { blankComments } from "./scan.ts";

/** This file names the patterns it looks for; it is not scanned. */
const SELF = "tests/arch/deno_env_test.ts";

/** Lines of `file` (1-based) where one of `patterns` matches, outside comments. */
function hits(file: string, patterns: RegExp[]): { file: string; line: number; text: string }[] {
  const source = Deno.readTextFileSync(join(REPO_ROOT, file));
  const lines = blankComments(source).split("\n");
  const original = source.split("\n");
  const out: { file: string; line: number; text: string }[] = [];
  lines.forEach((l, i) => {
    if (patterns.some((p) => p.test(l))) out.push({ file, line: i + 1, text: original[i].trim() });
  });
  return out;
}

/** Any use of the process environment object. */
const ANY_ENV = [
  /\bDeno\s*\??\.\s*env\b/,
  /\bDeno\s*\[\s*["'`]env["'`]\s*\]/,
  /\{[^}]*\benv\b[^}]*\}\s*=\s*Deno\b/,
];
/** A change of the process environment, or the helper that makes one. */
const MUTATION = [/\bDeno\s*\??\.\s*env\s*\??\.\s*(set|delete)\s*\(/, /\bwithEnv\s*\(/];

/** The edge modules, which may read the process environment. */
const isEdge = (f: string) => f === "cli.ts" || f === "mod.ts" || f.startsWith("src/cli/");

Deno.test("Deno.env appears only in the edge modules: cli.ts, mod.ts and src/cli/**", () => {
  const bad = tsFiles("src").filter((f) => !isEdge(f)).flatMap((f) => hits(f, ANY_ENV));
  assert.ok(
    bad.length === 0,
    "rule broken: only cli.ts, mod.ts and src/cli/** may use Deno.env; below the edge a run's " +
      `environment comes from its RunEnv. ${bad.length} use(s):\n` +
      bad.map((h) => `  ${h.file}:${h.line}: ${h.text}`).join("\n"),
  );
});

Deno.test("no test sets or deletes a process environment variable (or calls withEnv)", () => {
  const bad = tsFiles("tests").filter((f) => f !== SELF).flatMap((f) => hits(f, MUTATION));
  assert.ok(
    bad.length === 0,
    "rule broken: tests must not mutate the process environment (the suite runs files in parallel); " +
      "pass variables through the run (runLua(src, { env: testEnv({...}) })) or a subprocess's env. " +
      `${bad.length} mutation(s):\n` + bad.map((h) => `  ${h.file}:${h.line}: ${h.text}`).join("\n"),
  );
});

Deno.test("the scan ignores comments, keeps strings and line numbers", () => {
  const src = [
    "/** Reads Deno.env at the edge. */",
    "const a = 1; // not Deno.env here",
    'const s = "Deno.env in a string counts";',
    "/**",
    " * Deno.env in a doc line",
    " */ const t = '/* not a comment */'; Deno.env.toObject();",
    "const u = `x // y`; Deno.env.get('X');",
  ].join("\n");
  const lines = blankComments(src).split("\n");
  assert.equal(lines.length, 7);
  assert.deepEqual(
    lines.map((l) => ANY_ENV.some((p) => p.test(l))),
    [false, false, true, false, false, true, true],
  );
  assert.ok(MUTATION.some((p) => p.test("Deno.env.set('A', 'b')")));
  assert.ok(MUTATION.some((p) => p.test("await withEnv({ A: 'b' }, f)")));
  assert.ok(!MUTATION.some((p) => p.test("Deno.env.get('A')")));
  assert.ok(ANY_ENV.some((p) => p.test("const { env } = Deno;")));
});
