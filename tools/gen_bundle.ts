/**
 * Generates `bundle/cli/`: the prebuilt run path `cli.ts` loads when it matches the sources
 * (see `src/cli/prebuilt.ts` for why and for the freshness rule).
 *
 * Steps: `deno info --json src/cli/main.ts` lists the local files of the CLI's module graph
 * (dynamic imports included); `deno bundle --code-splitting` builds the chunks with every npm
 * package of deno.json's import map left external; `manifest.json` records the entry chunk, the
 * source list (plus deno.json, whose import map decides what stays external) and their SHA-256.
 * It refuses to build while `src/lua/precompiled.gen.ts` is stale (the bundle trusts its bytecode).
 * deno.lock is left out: the npm packages are resolved when the bundle runs, as from source. The output depends only on the
 * sources: chunk names are content hashes and the chunks name sources by relative path.
 *
 * Usage: part of `deno task gen`; `--check` builds into a temporary directory and exits 1 when the
 * committed bundle differs from it, naming the files that differ.
 */
import { join, relative } from "node:path";
import { hashSources, MANIFEST_NAME, type PrebuiltManifest } from "../src/cli/prebuilt.ts";
import { render as renderPrecompiled, TARGET as PRECOMPILED } from "./gen_precompiled.ts";

const ROOT = decodeURIComponent(new URL("..", import.meta.url).pathname);
const ROOT_URL = new URL("..", import.meta.url);
const ENTRY = "src/cli/main.ts";
/** Where the bundle lives, relative to the repository root. */
export const BUNDLE_DIR = "bundle/cli";

async function deno(args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) {
    throw new Error(`deno ${args.join(" ")} failed:\n${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** Local files of the entry's module graph, relative to the root, sorted; with deno.json. */
async function graphSources(): Promise<string[]> {
  const info = JSON.parse(await deno(["info", "--json", ENTRY])) as { modules: { specifier: string }[] };
  const files = new Set(["deno.json"]);
  for (const m of info.modules) {
    if (!m.specifier.startsWith("file://")) continue;
    const rel = relative(ROOT, decodeURIComponent(new URL(m.specifier).pathname));
    if (rel.startsWith("..") || rel.split("/").includes("node_modules")) continue;
    files.add(rel);
  }
  return [...files].sort();
}

/** `--external` flags for every bare specifier of deno.json's import map (npm packages). */
function externals(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))) as {
    imports: Record<string, string>;
  };
  const out = ["--external", "npm:*"];
  for (const key of Object.keys(config.imports)) out.push("--external", key.endsWith("/") ? key + "*" : key);
  return out;
}

/** Builds the bundle and its manifest into `outDir`. */
async function build(outDir: string): Promise<void> {
  // The bundle's runtime trusts its precompiled bytecode without re-hashing the texts
  // (src/lua/prebuilt_flag.ts): never build it from bytecode that does not match them.
  if (Deno.readTextFileSync(PRECOMPILED) !== await renderPrecompiled()) {
    console.error("src/lua/precompiled.gen.ts is stale: run `deno task gen` (it regenerates it first)");
    Deno.exit(1);
  }
  const sources = await graphSources();
  await deno([
    "bundle",
    "--quiet",
    "--platform",
    "deno",
    "--code-splitting",
    ...externals(),
    "--outdir",
    outDir,
    ENTRY,
  ]);
  const manifest: PrebuiltManifest = {
    entry: "./main.js",
    sources,
    sha256: await hashSources(ROOT_URL, sources),
  };
  Deno.statSync(join(outDir, "main.js")); // the entry chunk keeps the entry's name
  Deno.writeTextFileSync(join(outDir, MANIFEST_NAME), JSON.stringify(manifest, null, 2) + "\n");
}

/** File name → bytes of a directory's files. */
function readDir(dir: string): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  try {
    for (const e of Deno.readDirSync(dir)) {
      // Dot files are local state (the CLI's record of its last verification), not the bundle.
      if (e.isFile && !e.name.startsWith(".")) out.set(e.name, Deno.readFileSync(join(dir, e.name)));
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

if (import.meta.main) {
  const target = join(ROOT, BUNDLE_DIR);
  const tmp = await Deno.makeTempDir({ prefix: "ab_bundle_" });
  try {
    await build(tmp);
    const want = readDir(tmp);
    if (Deno.args.includes("--check")) {
      const have = readDir(target);
      const differ = [...new Set([...want.keys(), ...have.keys()])].filter((name) => {
        const a = want.get(name);
        const b = have.get(name);
        return !a || !b || !sameBytes(a, b);
      }).sort();
      if (differ.length) {
        console.error(
          `${BUNDLE_DIR} is stale (differs in ${differ.join(", ")}): run \`deno task gen\` and commit it ` +
            `(cli.ts runs the sources meanwhile)`,
        );
        Deno.exit(1);
      }
    } else {
      try {
        Deno.removeSync(target, { recursive: true });
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      Deno.mkdirSync(target, { recursive: true });
      for (const [name, bytes] of want) Deno.writeFileSync(join(target, name), bytes);
    }
  } finally {
    Deno.removeSync(tmp, { recursive: true });
  }
}
