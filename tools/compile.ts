/**
 * `deno task compile`: builds agent-block as one self-contained binary per target with
 * `deno compile`, optionally stamped as a release and packed into its release archive.
 *
 *     deno task compile [--target T]... [--all] [--out DIR]
 *                       [--release-version X --commit SHA] [--package]
 *
 * Without `--target` it builds for this machine (`Deno.build.target`); `--all` builds the five
 * release targets (`TARGETS`). Each binary goes to `<out>/agent-block-<target>/agent-block[.exe]`
 * (out: `dist/`), the directory `--package` then packs (`tools/release_archive.ts`) and checksums.
 *
 * Owns the one `deno compile` command line (`compileArgs`): `--frozen` (the lockfile's pins),
 * `-A` (the runtime is the boundary: the Lua it runs is the caller's code, and `--sandbox` is
 * what confines it), `--unstable-<x>` for each entry of deno.json's `"unstable"`, and cli.ts as
 * the root. The embedded Lua, the precompiled bytecode and the MCP/LLM modules that cli.ts loads
 * lazily reach the binary through the module graph and deno.json's `compile.include`; wasmoon's
 * `glue.wasm` through the local `node_modules/`, which `deno compile` embeds whole
 * (tests/compile_test.ts proves these inputs, since `denort` cannot be downloaded everywhere).
 *
 * Release stamp: `--release-version X --commit SHA` (both or neither; X a semver without the
 * tag's `v`, SHA a full 40-hex commit) writes `src/build_stamp.json` for the duration of the
 * compile and restores the unstamped file afterwards, also when the compile fails or is
 * interrupted (SIGINT/SIGTERM); see
 * `src/version.ts` for why a stamp file rather than an environment variable.
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  binaryName,
  isTarget,
  packageTarget,
  stageDirName,
  type Target,
  TARGETS,
  writeChecksums,
} from "./release_archive.ts";

/** The checkout this tool belongs to. */
export const REPO = resolve(fileURLToPath(new URL("..", import.meta.url)));

/** The build stamp file `src/version.ts` imports. */
export const STAMP_FILE = join(REPO, "src", "build_stamp.json");

/** The text of the stamp as git holds it. */
export const UNSTAMPED = '{ "version": null, "commit": null }\n';

/** A bad command line (exit 2); any other failure exits 1. */
export class CompileUsageError extends Error {}

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const COMMIT = /^[0-9a-f]{40}$/;

/** The stamp's text for a release, after checking both values; throws naming the bad one. */
export function stampText(version: string, commit: string): string {
  if (!SEMVER.test(version)) {
    throw new CompileUsageError(
      `--release-version must be a version like 1.2.3 (the tag without its v), got '${version}'`,
    );
  }
  if (!COMMIT.test(commit)) {
    throw new CompileUsageError(`--commit must be a full 40-hex commit hash, got '${commit}'`);
  }
  return JSON.stringify({ version, commit }) + "\n";
}

/** The `--unstable-*` flags deno.json's `"unstable"` asks for. */
export function unstableFlags(repo: string = REPO): string[] {
  const config = JSON.parse(Deno.readTextFileSync(join(repo, "deno.json"))) as { unstable?: string[] };
  return (config.unstable ?? []).map((u) => `--unstable-${u}`);
}

/** The arguments of `deno` that compile cli.ts for `target` into `output`. */
export function compileArgs(target: Target, output: string, repo: string = REPO): string[] {
  return [
    "compile",
    "--frozen",
    "-A",
    ...unstableFlags(repo),
    "--target",
    target,
    "-o",
    output,
    join(repo, "cli.ts"),
  ];
}

/** Compiles one target; answers the binary's path. */
async function compileOne(target: Target, out: string): Promise<string> {
  const bin = join(out, stageDirName(target), binaryName(target));
  Deno.mkdirSync(join(out, stageDirName(target)), { recursive: true });
  const args = compileArgs(target, bin);
  console.error(`deno ${args.join(" ")}`);
  const status = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: REPO,
    stdout: "inherit",
    stderr: "inherit",
  })
    .spawn().status;
  if (!status.success) throw new Error(`deno compile for ${target} failed (exit ${status.code})`);
  return bin;
}

/** Runs the tool; answers the exit code. */
export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        target: { type: "string", multiple: true },
        all: { type: "boolean" },
        out: { type: "string" },
        "release-version": { type: "string" },
        commit: { type: "string" },
        package: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    throw new CompileUsageError((e as Error).message);
  }
  const values = parsed.values;
  if (values.help) {
    console.log(
      "usage: deno task compile [--target T]... [--all] [--out DIR] [--release-version X --commit SHA] [--package]",
    );
    return 0;
  }
  const targets = values.all ? [...TARGETS] : values.target ?? [Deno.build.target];
  for (const t of targets) {
    if (!isTarget(t)) throw new CompileUsageError(`unknown target '${t}' (one of: ${TARGETS.join(", ")})`);
  }
  const version = values["release-version"];
  const commit = values.commit;
  if ((version === undefined) !== (commit === undefined)) {
    throw new CompileUsageError("--release-version and --commit go together (a release names both)");
  }
  const stamp = version !== undefined ? stampText(version, commit!) : undefined;
  const out = resolve(values.out ?? join(REPO, "dist"));
  const original = Deno.readTextFileSync(STAMP_FILE);
  // An interrupted compile puts the unstamped file back too (a signal skips `finally`).
  const restore = () => {
    Deno.writeTextFileSync(STAMP_FILE, original);
    Deno.exit(130);
  };
  const signals: Deno.Signal[] = stamp && Deno.build.os !== "windows" ? ["SIGINT", "SIGTERM"] : [];
  for (const sig of signals) Deno.addSignalListener(sig, restore);
  if (stamp) Deno.writeTextFileSync(STAMP_FILE, stamp);
  try {
    for (const t of targets as Target[]) {
      const bin = await compileOne(t, out);
      console.error(`built ${bin}`);
      if (values.package) console.error(`packed ${await packageTarget(out, t, REPO)}`);
    }
  } finally {
    if (stamp) Deno.writeTextFileSync(STAMP_FILE, original);
    for (const sig of signals) Deno.removeSignalListener(sig, restore);
  }
  if (values.package) console.error(`wrote ${join(out, "checksums.txt")}:\n${writeChecksums(out)}`);
  return 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (e) {
    console.error(`error: ${(e as Error).message}`);
    Deno.exit(e instanceof CompileUsageError ? 2 : 1);
  }
}
