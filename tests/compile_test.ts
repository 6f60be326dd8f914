/**
 * What `deno compile` carries: every Lua source the runtime loads must be in cli.ts's module graph
 * (text imports), and so must the precompiled bytecode of the runtime and of the embedded library
 * and the wasmoon package with its `glue.wasm`, since a compiled binary has no source tree to read. The compile itself needs
 * Deno's `denort` runtime binary, which is downloaded from Deno's servers; it runs here only when
 * `DENORT_BIN` points at one (CI release jobs have it), and is skipped with a message otherwise.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { REPO_ROOT } from "./helpers.ts";
import { glueWasmPath } from "../src/lua/wasm.ts";

function luaFilesUnder(dir: string, skipSpec: boolean): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) {
      if (skipSpec && e.name === "spec") continue;
      out.push(...luaFilesUnder(p, skipSpec));
    } else if (e.name.endsWith(".lua")) out.push(p);
  }
  return out;
}

Deno.test("every embedded library and runtime Lua file is in cli.ts's module graph", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", join(REPO_ROOT, "cli.ts")],
    cwd: REPO_ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: { specifier: string }[] };
  const inGraph = new Set(
    info.modules.filter((m) => m.specifier.startsWith("file://")).map((m) =>
      relative(REPO_ROOT, decodeURIComponent(new URL(m.specifier).pathname))
    ),
  );
  const needed = [
    ...luaFilesUnder(join(REPO_ROOT, "embedded"), true),
    ...luaFilesUnder(join(REPO_ROOT, "src"), false),
  ].map((p) => relative(REPO_ROOT, p));
  assert.ok(needed.includes("src/lua/runtime.lua") && needed.includes("src/lua/prelude.lua"));
  needed.push("src/lua/precompiled.gen.json", "embedded/precompiled.gen.json");
  const missing = needed.filter((p) => !inGraph.has(p));
  assert.deepEqual(missing, [], "Lua files or bytecode a compiled binary would not carry");
  // The wasm is read from the installed wasmoon package, which `deno compile` carries whole.
  assert.ok(info.modules.some((m) => /^npm:\/?wasmoon@/.test(m.specifier)), "wasmoon not in the graph");
  assert.ok(Deno.statSync(glueWasmPath()).isFile, "glue.wasm missing from the wasmoon package");
});

const denort = Deno.env.get("DENORT_BIN");

Deno.test({
  name: "deno compile produces a binary that runs a script (needs DENORT_BIN)",
  ignore: !denort,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ab_compile_" });
    const bin = join(dir, "agent-block");
    const c = await new Deno.Command(Deno.execPath(), {
      args: ["compile", "--frozen", "-A", "-o", bin, join(REPO_ROOT, "cli.ts")],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(c.code, 0, new TextDecoder().decode(c.stderr));
    Deno.writeTextFileSync(join(dir, "hello.lua"), `print("hello from " .. _SCRIPT_NAME)\nreturn "r"`);
    const r = await new Deno.Command(bin, {
      args: ["-s", "hello.lua", "--result", "out.txt"],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
    assert.equal(new TextDecoder().decode(r.stdout), "hello from hello.lua\n");
    assert.equal(Deno.readTextFileSync(join(dir, "out.txt")), "r");
    const v = await new Deno.Command(bin, { args: ["--version"], stdout: "piped" }).output();
    assert.match(new TextDecoder().decode(v.stdout), /^agent-block /);
  },
});

if (!denort) {
  console.error(
    "compile_test: skipping the `deno compile` test: set DENORT_BIN to a denort binary " +
      "(it is downloaded from Deno's servers, unreachable here).",
  );
}

Deno.test("every module behind a dynamic import is carried by deno compile (deno.json compile.include)", async () => {
  // deno.json sets `lazy-dynamic-imports` (start-up time), under which `deno compile` no longer
  // follows literal dynamic imports: each lazily imported module must be a compile root.
  interface Dep {
    code?: { specifier: string };
    isDynamic?: boolean;
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", join(REPO_ROOT, "cli.ts")],
    cwd: REPO_ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    roots: string[];
    modules: { specifier: string; dependencies?: Dep[] }[];
    redirects: Record<string, string>;
  };
  const deps = new Map(info.modules.map((m) => [m.specifier, m.dependencies ?? []]));
  const resolve = (s: string) => info.redirects[s] ?? s;
  const closure = (roots: string[], dynamic: boolean) => {
    const seen = new Set(roots);
    const todo = [...roots];
    while (todo.length) {
      for (const d of deps.get(todo.pop()!) ?? []) {
        if (!d.code || (d.isDynamic && !dynamic)) continue;
        const t = resolve(d.code.specifier);
        if (!seen.has(t)) {
          seen.add(t);
          todo.push(t);
        }
      }
    }
    return seen;
  };
  const config = JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.json")));
  const includes = ((config.compile?.include ?? []) as string[]).map((p) =>
    new URL(p, `file://${REPO_ROOT}/`).href
  );
  for (const inc of includes) assert.ok(deps.has(inc), `compile.include names ${inc}, not in cli.ts's graph`);
  const carried = closure([resolve(info.roots[0]), ...includes], false);
  const needed = closure([resolve(info.roots[0])], true);
  const missing = [...needed].filter((s) => !carried.has(s));
  assert.deepEqual(missing, [], "add the dynamically imported module(s) to deno.json compile.include");
});
