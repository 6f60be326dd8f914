/**
 * Small filesystem predicates and the atomic write, shared by every layer (bottom layer: imports
 * nothing of ours).
 *
 * Owns `exists` (a directory entry is there; a symlink is not followed, so a dangling one counts),
 * `isFile` / `isDir` (what the path names after following symlinks; false when it names nothing
 * or cannot be read) and `writeAtomic`, every atomic write of agent-block (`--result`,
 * `--outcome`, `std.json.write_file`): a temporary file beside the target, written whole and
 * fsynced, then a rename over the target, then an fsync of the directory (not on Windows, which
 * cannot open one), so a reader sees the old content or the new, never half, and after a crash
 * the new content is there whole or not at all.
 *
 * Temporary files are named `.ab-tmp-<pid>-<host>-<random>.tmp` (`<host>`: a hash of the host
 * name). A process killed mid-write leaves its temporary file behind; the first atomic write of a
 * later process into the same directory removes every such file of this host whose process is
 * gone (on Linux, where `/proc` says so; elsewhere none is removed). A file of a live process, or
 * of another host sharing the directory, is never touched; one that cannot be removed stays, and
 * the write goes on.
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

/** Bytes written to a temporary file per write call. */
const CHUNK = 8 << 20;

/** Options of `writeAtomic`. */
export interface WriteAtomicOptions {
  /**
   * Test seam: called after each chunk reaches the temporary file, with its path and the bytes
   * written so far (a test stops the process there to kill it mid-write). Nothing else sets it.
   */
  afterChunk?: (tmp: string, written: number) => void;
  /** Permission bits of the new file (default 0o666 less the umask), set as it is created. */
  mode?: number;
}

/**
 * Writes `data` to `path` atomically and durably (see the module doc). On failure the temporary
 * file is removed and the error is rethrown unchanged, so the caller words the message (it knows
 * what the file is for).
 */
export function writeAtomic(path: string, data: Uint8Array | string, opts: WriteAtomicOptions = {}): void {
  const dir = dirname(path);
  sweepOnce(dir);
  const tmp = join(dir, tempName());
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  try {
    const f = Deno.openSync(tmp, { write: true, createNew: true, mode: opts.mode });
    try {
      let off = 0;
      while (off < bytes.length) {
        const end = Math.min(off + CHUNK, bytes.length);
        let at = off;
        while (at < end) at += f.writeSync(bytes.subarray(at, end));
        off = end;
        opts.afterChunk?.(tmp, off);
      }
      f.syncSync();
    } finally {
      f.close();
    }
    Deno.renameSync(tmp, path);
  } catch (e) {
    try {
      Deno.removeSync(tmp);
    } catch { /* never created */ }
    throw e;
  }
  if (Deno.build.os !== "windows") {
    const d = Deno.openSync(dir, { read: true });
    try {
      d.syncSync();
    } finally {
      d.close();
    }
  }
}

const TEMP = /^\.ab-tmp-(\d+)-([0-9a-f]{8})-[0-9a-f]{12}\.tmp$/;

let hostTagMemo: string | null | undefined;
/** FNV-1a of the host name as 8 hex digits; `null` when the name cannot be read. */
function hostTag(): string | null {
  if (hostTagMemo !== undefined) return hostTagMemo;
  try {
    let h = 0x811c9dc5;
    for (const c of new TextEncoder().encode(Deno.hostname())) h = Math.imul(h ^ c, 0x01000193) >>> 0;
    hostTagMemo = h.toString(16).padStart(8, "0");
  } catch {
    hostTagMemo = null;
  }
  return hostTagMemo;
}

function tempName(): string {
  const rnd = [...crypto.getRandomValues(new Uint8Array(6))].map((b) => b.toString(16).padStart(2, "0"));
  return `.ab-tmp-${Deno.pid}-${hostTag() ?? "00000000"}-${rnd.join("")}.tmp`;
}

/** Directories this process has swept already (once each is enough: its own files are live). */
const swept = new Set<string>();

/** Removes the temporary files in `dir` left by dead processes of this host, once per process. */
function sweepOnce(dir: string): void {
  if (swept.has(dir)) return;
  swept.add(dir);
  const host = hostTag();
  if (host === null || Deno.build.os !== "linux") return;
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return; // the write itself reports what is wrong with the directory
  }
  for (const e of entries) {
    const m = TEMP.exec(e.name);
    if (!m || m[2] !== host || Number(m[1]) === Deno.pid || linuxProcessAlive(Number(m[1]))) continue;
    try {
      Deno.removeSync(join(dir, e.name));
    } catch { /* removed by another sweeper, or not ours to remove: it stays */ }
  }
}

/** True while process `pid` exists and is not a zombie (Linux `/proc`). */
export function linuxProcessAlive(pid: number): boolean {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch (e) {
    return !(e instanceof Deno.errors.NotFound);
  }
  // "pid (comm) S ...": the state follows the last ')' (comm may contain one)
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}
