/**
 * The files GitHub runs agree with the code they call, since they only run there: release.yml
 * builds and smoke-tests exactly the five targets of tools/release_archive.ts, through
 * `deno task compile` and tools/smoke_test.sh, and publishes both installers; action.yml maps every
 * input action/run.sh reads and exposes every output it writes (and nothing else).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers.ts";
import { TARGETS } from "../../tools/release_archive.ts";

const read = (p: string) => Deno.readTextFileSync(join(REPO_ROOT, p));

/** The keys of a top-level YAML mapping `section:` (two-space indented keys). */
function sectionKeys(yaml: string, section: string): string[] {
  const lines = yaml.split("\n");
  const start = lines.indexOf(`${section}:`);
  assert.ok(start >= 0, `no ${section}: section`);
  const keys: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break;
    const m = line.match(/^ {2}([a-z][a-z-]*):$/);
    if (m) keys.push(m[1]);
  }
  return keys;
}

Deno.test("release.yml: five targets built with deno task compile, each smoke-tested on its platform, installers published", () => {
  const yml = read(".github/workflows/release.yml");
  const built = [...yml.matchAll(/^ {10}- ([a-z0-9_-]+-[a-z0-9_-]+)$/gm)].map((m) => m[1]);
  assert.deepEqual(built, [...TARGETS]);
  const smoked = [...yml.matchAll(/\{ os: [a-z0-9.-]+, target: ([a-z0-9_-]+) \}/g)].map((m) => m[1]);
  assert.deepEqual(smoked, [...TARGETS]);
  assert.match(yml, /deno task compile --target \$\{\{ matrix\.target \}\} --package/);
  assert.match(
    yml,
    /--release-version "\$\{\{ needs\.version\.outputs\.version \}\}" --commit "\$GITHUB_SHA"/,
  );
  assert.match(yml, /sh tools\/smoke_test\.sh /);
  assert.match(yml, /tags: \["v\*"\]/);
  for (
    const f of [
      "dist/checksums.txt",
      "dist/install.sh",
      "dist/install.ps1",
      "dist/agent-block-installer.sh",
      "dist/agent-block-installer.ps1",
      "dist/*.sha256",
    ]
  ) {
    assert.ok(yml.includes(f), `release.yml does not publish ${f}`);
  }
  // the seed README's names are copies of the rewritten installers
  assert.match(yml, /^ +cp install\.sh agent-block-installer\.sh$/m);
  assert.match(yml, /^ +cp install\.ps1 agent-block-installer\.ps1$/m);
  // the installers' default repository is the line the publish step rewrites
  assert.match(read("install.sh"), /^DEFAULT_REPO="[^"]+"$/m);
  assert.match(read("install.ps1"), /^\$DefaultRepo = "[^"]+"$/m);
});

Deno.test("action.yml: every input reaches action/run.sh, every output it writes is exposed", () => {
  const yml = read("action.yml");
  const script = read("action/run.sh");
  const inputs = sectionKeys(yml, "inputs");
  assert.deepEqual(
    inputs,
    [
      "version",
      "block",
      "script",
      "prompt",
      "context",
      "project",
      "args",
      "sandbox",
      "export-artifact",
      "export-as",
      "download-url",
    ],
  );
  const envName = (k: string) => `INPUT_${k.toUpperCase().replaceAll("-", "_")}`;
  for (const k of inputs) {
    assert.match(
      yml,
      new RegExp(`${envName(k)}: \\$\\{\\{ inputs\\.${k} \\}\\}`),
      `action.yml does not pass ${k}`,
    );
  }
  const read_ = new Set([...script.matchAll(/\bINPUT_[A-Z_]+/g)].map((m) => m[0]));
  assert.deepEqual([...read_].sort(), inputs.map(envName).sort(), "run.sh reads exactly the inputs");
  const written = new Set([...script.matchAll(/put_output(?:_file)? ([a-z-]+) /g)].map((m) => m[1]));
  written.delete("version"); // resolve's outputs, read by action.yml itself
  written.delete("dir");
  const outputs = sectionKeys(yml, "outputs");
  assert.deepEqual(outputs.sort(), [...written].sort().filter((o) => o !== "export-file"));
  for (const o of outputs) assert.ok(yml.includes(`value: \${{ steps.run.outputs.${o} }}`), o);
  assert.match(yml, /path: \$\{\{ steps\.run\.outputs\.export-file \}\}/);
  assert.match(yml, /using: composite/);
});
