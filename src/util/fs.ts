/**
 * Small filesystem predicates and the atomic write, shared by every layer (bottom layer: imports
 * nothing of ours).
 *
 * Owns `exists` (a directory entry is there; a symlink is not followed, so a dangling one counts),
 * `isFile` / `isDir` (what the path names after following symlinks; false when it names nothing
 * or cannot be read) and `writeAtomic` (a temporary file beside the target, then a rename, so a
 * reader sees the old content or the new, never half).
 *
 * Invariant: every path given here is used as is. Callers make it absolute first (against their
 * run's working directory): nothing here depends on the process working directory by choice.
 */
import { dirname, join } from "node:path";

/** True when `path` names a directory entry (a symlink counts, even a dangling one). */
export function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** True when `path` is (or links to) a regular file. */
export function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** True when `path` is (or links to) a directory. */
export function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Writes `data` to `path` atomically: a temporary file in the same directory, then a rename over
 * the target. On failure the temporary file is removed and the error is rethrown unchanged, so the
 * caller words the message (it knows what the file is for).
 */
export function writeAtomic(path: string, data: Uint8Array | string): void {
  const tmp = join(dirname(path), `.${crypto.randomUUID()}.tmp`);
  try {
    if (typeof data === "string") Deno.writeTextFileSync(tmp, data);
    else Deno.writeFileSync(tmp, data);
    Deno.renameSync(tmp, path);
  } catch (e) {
    try {
      Deno.removeSync(tmp);
    } catch { /* never created */ }
    throw e;
  }
}
