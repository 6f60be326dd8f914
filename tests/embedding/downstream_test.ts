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
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, testEnv } from "../helpers.ts";
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
