/**
 * The release archives: what `deno task compile --package` and the release workflow ship, and
 * what `install.sh` / `install.ps1` unpack.
 *
 * Owns the layout, so the installers and the workflow agree on one definition:
 * - `agent-block-<target>.tar.xz` (`.zip` for Windows) holding one directory
 *   `agent-block-<target>/` with the binary (`agent-block`, `agent-block.exe` on Windows), the
 *   README and both licence files;
 * - beside each archive `<archive>.sha256`: one line `<sha256 hex>  <archive name>` (the format
 *   `sha256sum -c` reads);
 * - `checksums.txt`: those lines for every archive in the directory, sorted by name.
 * Archives are made with the system's `tar` (xz) and `zip`, the tools a release runner has; the
 * binary keeps its executable bit inside the tarball.
 */
import { basename, join } from "node:path";

/** The five release targets (Deno's target triples, which are also the archive names). */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

/** One release target. */
export type Target = typeof TARGETS[number];

/** Whether `t` names a release target. */
export function isTarget(t: string): t is Target {
  return (TARGETS as readonly string[]).includes(t);
}

/** The binary's file name on `target`. */
export function binaryName(target: Target): string {
  return target.includes("windows") ? "agent-block.exe" : "agent-block";
}

/** The archive's file name for `target`. */
export function archiveName(target: Target): string {
  return `agent-block-${target}${target.includes("windows") ? ".zip" : ".tar.xz"}`;
}

/** The directory inside the archive (and where `deno task compile` writes the binary). */
export function stageDirName(target: Target): string {
  return `agent-block-${target}`;
}

/** The files of the repository every archive carries beside the binary. */
export const EXTRA_FILES = ["README.md", "LICENSE-MIT", "LICENSE-APACHE"];

/** Lowercase hex SHA-256 of `bytes`. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function run(cmd: string, args: string[], cwd: string): Promise<void> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  } catch (e) {
    throw new Error(`cannot run ${cmd} (needed to make the release archive): ${(e as Error).message}`);
  }
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
}

/**
 * Packs `<outDir>/agent-block-<target>/` (which must hold the binary) into its archive in
 * `outDir`, copying `EXTRA_FILES` from `repo` into the directory first, and writes the archive's
 * `.sha256` file. Answers the archive's path.
 */
export async function packageTarget(outDir: string, target: Target, repo: string): Promise<string> {
  const stage = stageDirName(target);
  const bin = join(outDir, stage, binaryName(target));
  if (!Deno.statSync(bin).isFile) throw new Error(`${bin} is not a file`);
  for (const f of EXTRA_FILES) Deno.copyFileSync(join(repo, f), join(outDir, stage, f));
  const archive = join(outDir, archiveName(target));
  await Deno.remove(archive).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
  if (target.includes("windows")) await run("zip", ["-q", "-r", "-X", archive, stage], outDir);
  else await run("tar", ["-cJf", archive, stage], outDir);
  const hex = await sha256Hex(Deno.readFileSync(archive));
  Deno.writeTextFileSync(`${archive}.sha256`, `${hex}  ${basename(archive)}\n`);
  return archive;
}

/** Writes `<outDir>/checksums.txt` from the `.sha256` files of every archive there; answers its text. */
export function writeChecksums(outDir: string): string {
  const lines = [...Deno.readDirSync(outDir)]
    .filter((e) => e.isFile && /^agent-block-.*\.(tar\.xz|zip)\.sha256$/.test(e.name))
    .map((e) => e.name)
    .sort()
    .map((n) => Deno.readTextFileSync(join(outDir, n)).trim());
  const text = lines.length ? lines.join("\n") + "\n" : "";
  Deno.writeTextFileSync(join(outDir, "checksums.txt"), text);
  return text;
}
