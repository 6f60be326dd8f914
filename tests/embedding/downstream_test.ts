/**
 * The package as a downstream project sees it: a Deno project outside this repository depends on
 * `@agent-block/agent-block` and runs a block.
 *
 * The downstream form: a temporary workspace whose root `deno.json` links this repository as a
 * local JSR package (`"links": [<repo>]`) and whose member `app/` imports
 * `jsr:@agent-block/agent-block@^<version>` (and its `/unstable-engine` entry) through its own
 * import map. The link resolves through this repository's `name`, `version` and `exports`, and
 * the package's bare npm specifiers through the package's own import map, so the test fails when
 * any of those is broken. Nothing is written into this repository (the workspace and its lock
 * live in the temp dir); npm packages come from this machine's cache (`DENO_DIR`).
 *
 * The README's "Use it from your own program" recipe is run as written too: its shell block,
 * taken from the README, in an empty directory with `AGENT_BLOCK` naming this checkout.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, tempDir, testEnv } from "../helpers.ts";
import { VERSION } from "../../src/version.ts";

const MAIN = `import { BlockConfig, exitCodeOf, runBlock, ScriptSource } from "@agent-block/agent-block";
import { LuaEngine } from "@agent-block/agent-block/unstable-engine";

const config = BlockConfig.builder(ScriptSource.inline("return 'hello from ' .. _PROMPT", "inline.lua"), Deno.cwd())
  .prompt("downstream")
  .build();
const { outcome } = await runBlock(config);
console.log(JSON.stringify({ outcome, exit: exitCodeOf(outcome), engine: typeof LuaEngine }));
`;

Deno.test("downstream: a project outside the repository imports the package and runs a block", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agent-block-downstream-" });
  try {
    const app = join(dir, "app");
    await Deno.mkdir(app);
    await Deno.writeTextFile(
      join(dir, "deno.json"),
      JSON.stringify({ workspace: ["./app"], links: [REPO_ROOT] }, null, 2),
    );
    const pkg = `jsr:@agent-block/agent-block@^${VERSION}`;
    await Deno.writeTextFile(
      join(app, "deno.json"),
      JSON.stringify({
        imports: {
          "@agent-block/agent-block": pkg,
          "@agent-block/agent-block/unstable-engine": `${pkg}/unstable-engine`,
        },
      }),
    );
    await Deno.writeTextFile(join(app, "main.ts"), MAIN);
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "main.ts"],
      cwd: app,
      env: testEnv(),
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(r.stderr);
    assert.equal(r.code, 0, `downstream run failed:\n${stderr}`);
    const lines = new TextDecoder().decode(r.stdout).trim().split("\n");
    assert.deepEqual(JSON.parse(lines[lines.length - 1]), {
      outcome: { status: "returned", value: "hello from downstream" },
      exit: 0,
      engine: "function",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** The shell block under the README's "Use it from your own program" heading. */
function readmeRecipe(): string {
  const readme = Deno.readTextFileSync(join(REPO_ROOT, "README.md"));
  const at = readme.indexOf("### Use it from your own program");
  assert.ok(at >= 0, "the README has the recipe");
  const m = /```sh\n([\s\S]*?)\n```/.exec(readme.slice(at));
  assert.ok(m, "the recipe has a shell block");
  return m[1];
}

Deno.test("downstream: the README's own-program recipe works as written, outside the checkout", async () => {
  const dir = await tempDir("ab_recipe_");
  const recipe = readmeRecipe();
  assert.match(
    recipe,
    new RegExp(`@agent-block/agent-block@\\^${VERSION.replaceAll(".", "\\.")}`),
    "the version",
  );
  const r = await new Deno.Command("sh", {
    args: ["-e", "-c", recipe],
    cwd: dir,
    env: {
      ...testEnv(),
      AGENT_BLOCK: REPO_ROOT,
      PATH: `${join(Deno.execPath(), "..")}:${Deno.env.get("PATH")}`,
    },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(r.stderr);
  assert.equal(r.code, 0, `the recipe failed:\n${stderr}`);
  const app = join(Deno.realPathSync(dir), "my-app", "app");
  assert.equal(new TextDecoder().decode(r.stdout).trim(), `hello, you, from ${app}`);
});
