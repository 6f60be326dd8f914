/**
 * What `deno compile` carries, proved without compiling: a binary has no source tree, so
 * - every Lua source the runtime loads, both precompiled bytecode tables and the build stamp must
 *   be in cli.ts's module graph (text and JSON imports), and wasmoon's `glue.wasm` in the npm
 *   package the graph names, read from the local `node_modules/` that `deno compile` embeds whole;
 * - every module behind a dynamic import must be a compile root (deno.json `compile.include`);
 * - a run must read nothing of the checkout at run time but those modules and that package: the
 *   release smoke test (tools/smoke_test.sh) runs against the source CLI with Deno's permission
 *   audit log (`DENO_AUDIT_PERMISSIONS`), and every file access inside the checkout it records
 *   must be a module of the compile graph or inside `node_modules/`.
 * The compile itself needs Deno's `denort` runtime binary, which is downloaded from Deno's servers;
 * it runs here only when `DENORT_BIN` points at one (the release workflow compiles on GitHub), and
 * is skipped with a message otherwise. The release stamp (`src/build_stamp.json`) is held
 * unstamped in git, and `deno task compile`'s command line is checked here too.
 */
import assert from "node:assert/strict";
import { join, relative, sep } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { REPO_ROOT, tempDir, testEnv } from "./helpers.ts";
import { glueWasmPath } from "../src/lua/wasm.ts";
import { BASE_VERSION } from "../src/version.ts";
import { compileArgs, STAMP_FILE, stampText, unstableFlags, UNSTAMPED } from "../tools/compile.ts";

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

interface Dep {
  code?: { specifier: string };
  isDynamic?: boolean;
}

interface Info {
  roots: string[];
  modules: { specifier: string; dependencies?: Dep[] }[];
  redirects: Record<string, string>;
}

let infoOnce: Promise<Info> | undefined;

/** `deno info --json cli.ts`, run once per test file. */
function cliGraph(): Promise<Info> {
  return infoOnce ??= (async () => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", join(REPO_ROOT, "cli.ts")],
      cwd: REPO_ROOT,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return JSON.parse(new TextDecoder().decode(out.stdout)) as Info;
  })();
}

/** The modules a compiled binary carries (static closure of cli.ts and `compile.include`), and all. */
async function compileGraph(): Promise<{ carried: Set<string>; needed: Set<string>; includes: string[] }> {
  const info = await cliGraph();
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
  return {
    carried: closure([resolve(info.roots[0]), ...includes], false),
    needed: closure([resolve(info.roots[0])], true),
    includes,
  };
}

Deno.test("compile inputs: every embedded Lua file, both bytecode tables, the build stamp and the wasm are carried", async () => {
  const info = await cliGraph();
  const inGraph = new Set(
    info.modules.filter((m) => m.specifier.startsWith("file://")).map((m) =>
      relative(REPO_ROOT, fromFileUrl(m.specifier))
    ),
  );
  const needed = [
    ...luaFilesUnder(join(REPO_ROOT, "embedded"), true),
    ...luaFilesUnder(join(REPO_ROOT, "src"), false),
  ].map((p) => relative(REPO_ROOT, p));
  assert.ok(needed.includes("src/lua/runtime.lua") && needed.includes("src/lua/prelude.lua"));
  assert.ok(needed.includes("embedded/agent/init.lua"));
  needed.push("src/lua/precompiled.gen.json", "embedded/precompiled.gen.json", "src/build_stamp.json");
  const missing = needed.filter((p) => !inGraph.has(p.split("/").join(sep)));
  assert.deepEqual(missing, [], "Lua files, bytecode or the stamp a compiled binary would not carry");
  // The wasm is read from the installed wasmoon package: the graph names the package, and the
  // file lies in the local node_modules directory (nodeModulesDir "auto"), which deno compile
  // embeds whole.
  assert.ok(info.modules.some((m) => /^npm:\/?wasmoon@/.test(m.specifier)), "wasmoon not in the graph");
  const config = JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.json")));
  assert.equal(config.nodeModulesDir, "auto", "the wasm reaches the binary through a local node_modules");
  const wasm = glueWasmPath();
  assert.ok(Deno.statSync(wasm).isFile, "glue.wasm missing from the wasmoon package");
  assert.ok(
    relative(join(REPO_ROOT, "node_modules"), wasm).split(sep)[0] !== "..",
    `glue.wasm (${wasm}) is not inside the checkout's node_modules`,
  );
});

Deno.test("compile inputs: every module behind a dynamic import is carried (deno.json compile.include)", async () => {
  // deno.json sets `lazy-dynamic-imports` (start-up time), under which `deno compile` no longer
  // follows literal dynamic imports: each lazily imported module must be a compile root.
  const { carried, needed } = await compileGraph();
  // `node:` modules are built into the runtime a binary carries whole, whoever imports them
  const missing = [...needed].filter((s) => !carried.has(s) && !s.startsWith("node:"));
  assert.deepEqual(missing, [], "add the dynamically imported module(s) to deno.json compile.include");
});

Deno.test({
  name:
    "compile inputs: the smoke test's runs read nothing of the checkout but carried modules and node_modules",
  ignore: Deno.build.os === "windows", // tools/smoke_test.sh is POSIX sh
  fn: async () => {
    const dir = await tempDir("ab_compile_audit_");
    const audits = join(dir, "audit");
    Deno.mkdirSync(audits);
    // The "binary": the source CLI, one audit log per process (Deno truncates the file it names).
    const bin = join(dir, "agent-block");
    Deno.writeTextFileSync(
      bin,
      `#!/bin/sh\nDENO_AUDIT_PERMISSIONS="${audits}/$$.jsonl" exec "${Deno.execPath()}" run -A --quiet ` +
        `--config "${REPO_ROOT}/deno.json" "${REPO_ROOT}/cli.ts" "$@"\n`,
    );
    Deno.chmodSync(bin, 0o755);
    const r = await new Deno.Command("/bin/sh", {
      args: [join(REPO_ROOT, "tools", "smoke_test.sh"), bin, BASE_VERSION],
      env: testEnv({
        DENO: Deno.execPath(),
        SMOKE_NO_SANDBOX: "1", // the sandbox's own tests cover it; it reads no more of the checkout
        SMOKE_SERVER_ENV_AUDIT: join(dir, "echo_server_audit.jsonl"), // the server is not the runtime
      }),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = (b: Uint8Array) => new TextDecoder().decode(b);
    assert.equal(r.code, 0, `smoke test failed:\n${dec(r.stdout)}\n${dec(r.stderr)}`);
    assert.match(dec(r.stderr), /smoke: all passed/);

    const { carried } = await compileGraph();
    const nodeModules = join(REPO_ROOT, "node_modules");
    const logs = [...Deno.readDirSync(audits)].map((e) => join(audits, e.name));
    assert.ok(logs.length >= 6, `expected an audit log per run, got ${logs.length}`);
    const strays = new Set<string>();
    const execPath = Deno.realPathSync(Deno.execPath());
    let modules = 0;
    for (const log of logs) {
      for (const line of Deno.readTextFileSync(log).split("\n")) {
        if (!line) continue;
        const rec = JSON.parse(line) as { permission: string; value?: string };
        if ((rec.permission !== "read" && rec.permission !== "write") || !rec.value) continue;
        const isUrl = rec.value.startsWith("file://");
        const path = isUrl ? fromFileUrl(rec.value) : rec.value;
        if (relative(REPO_ROOT, path).split(sep)[0] === "..") continue; // outside the checkout
        // The executable itself (a checkout's npm-installed Deno here): a compiled binary is its
        // own executable, which the runtime may look up to re-execute itself.
        if (path === execPath) continue;
        if (isUrl && carried.has(rec.value)) {
          modules++;
          continue;
        }
        if (relative(nodeModules, path).split(sep)[0] !== "..") continue;
        strays.add(`${rec.permission} ${rec.value}`);
      }
    }
    assert.ok(
      modules > 50,
      `the audit saw ${modules} module loads: is DENO_AUDIT_PERMISSIONS still honoured?`,
    );
    assert.deepEqual([...strays], [], "read at run time from the checkout: a compiled binary has none of it");
  },
});

Deno.test("compile: the stamp in git is unstamped; the command line carries -A, --frozen and deno.json's unstable flags", () => {
  assert.equal(Deno.readTextFileSync(STAMP_FILE), UNSTAMPED, "commit src/build_stamp.json unstamped");
  const config = JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.json")));
  assert.deepEqual(unstableFlags(), (config.unstable as string[]).map((u) => `--unstable-${u}`));
  assert.ok(unstableFlags().includes("--unstable-lazy-dynamic-imports"));
  const args = compileArgs("aarch64-apple-darwin", "/out/agent-block");
  assert.deepEqual(args.slice(0, 3), ["compile", "--frozen", "-A"]);
  assert.deepEqual(args.slice(-5), [
    "--target",
    "aarch64-apple-darwin",
    "-o",
    "/out/agent-block",
    join(REPO_ROOT, "cli.ts"),
  ]);
  for (const f of unstableFlags()) assert.ok(args.includes(f), f);
  assert.equal(config.tasks.compile, "deno run --allow-read --allow-write --allow-run tools/compile.ts");
});

Deno.test("compile: a release stamp names a semver version and a full commit, or is refused", () => {
  const sha = "0123456789abcdef0123456789abcdef01234567";
  assert.deepEqual(JSON.parse(stampText("1.2.3", sha)), { version: "1.2.3", commit: sha });
  assert.deepEqual(JSON.parse(stampText("2.0.0-rc.1", sha)).version, "2.0.0-rc.1");
  assert.throws(
    () => stampText("v1.2.3", sha),
    /--release-version must be a version like 1\.2\.3.*'v1\.2\.3'/,
  );
  assert.throws(() => stampText("1.2", sha), /'1\.2'/);
  assert.throws(
    () => stampText("1.2.3", "abc123"),
    /--commit must be a full 40-hex commit hash, got 'abc123'/,
  );
});

const denort = Deno.env.get("DENORT_BIN");

Deno.test({
  name: "deno compile produces a binary that passes the release smoke test (needs DENORT_BIN)",
  ignore: !denort || Deno.build.os === "windows",
  fn: async () => {
    const dir = await tempDir("ab_compile_");
    const bin = join(dir, "agent-block");
    // Unstamped: a stamped compile rewrites src/build_stamp.json, which the parallel suite reads.
    const c = await new Deno.Command(Deno.execPath(), {
      args: compileArgs(Deno.build.target as Parameters<typeof compileArgs>[0], bin),
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(c.code, 0, new TextDecoder().decode(c.stderr));
    const r = await new Deno.Command("/bin/sh", {
      args: [join(REPO_ROOT, "tools", "smoke_test.sh"), bin, BASE_VERSION],
      env: testEnv({ DENO: Deno.execPath() }),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = (b: Uint8Array) => new TextDecoder().decode(b);
    assert.equal(r.code, 0, `smoke test failed:\n${dec(r.stdout)}\n${dec(r.stderr)}`);
  },
});

if (!denort) {
  console.error(
    "compile_test: skipping the `deno compile` test: set DENORT_BIN to a denort binary " +
      "(it is downloaded from Deno's servers, unreachable here).",
  );
}

Deno.test("compile: deno task compile refuses a bad command line (exit 2) before touching the stamp", async () => {
  const sha = "0123456789abcdef0123456789abcdef01234567";
  const cases: [string[], RegExp][] = [
    [
      ["--target", "riscv64-unknown-linux-gnu"],
      /error: unknown target 'riscv64-unknown-linux-gnu' \(one of: x86_64-unknown-linux-gnu, /,
    ],
    [["--release-version", "1.2.3"], /error: --release-version and --commit go together/],
    [
      ["--release-version", "v1.2.3", "--commit", sha],
      /error: --release-version must be a version like 1\.2\.3/,
    ],
    [["--bogus"], /error: Unknown option '--bogus'/],
  ];
  for (const [args, want] of cases) {
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-write",
        "--allow-run",
        join(REPO_ROOT, "tools", "compile.ts"),
        ...args,
      ],
      env: testEnv(),
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(r.code, 2, args.join(" "));
    assert.match(new TextDecoder().decode(r.stderr), want);
  }
  assert.equal(Deno.readTextFileSync(STAMP_FILE), UNSTAMPED);
});
