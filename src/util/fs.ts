/**
 * Small filesystem predicates and the atomic write, shared by every layer (bottom layer: imports
 * nothing of ours).
 *
 * Owns `exists` (a directory entry is there; a symlink is not followed, so a dangling one counts),
 * `isFile` / `isDir` (what the path names after following symlinks; false when it names nothing
 * or cannot be read) and `writeAtomic`, every atomic write of agent-block (`--result`,
 * `--outcome`, `std.json.write_file`, the `types` files): a temporary file beside the target, written whole and
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
 * What the target may be (`writeTarget`, decided before anything is written): a regular file or
 * nothing → the atomic write; a character device or a FIFO (`/dev/null`, `/dev/stdout`, a named
 * pipe) → written in place, opened without creating or truncating, never fsynced — renaming a
 * regular file over `/dev/null` (as root) would replace the device and break every later step of
 * a CI job; a directory, a block device, a socket → refused (`WriteRefused`). A symbolic link is
 * followed: the rule applies to what it finally names, and an atomic write replaces that file (the
 * link stays a link, its target gets the new content); a link naming nothing is refused (where the
 * new file should go would be the link's choice, not the caller's).
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

/** A write target that is not a file to write (a directory, a socket, a dangling link, ...). */
export class WriteRefused extends Error {
  /** @param message what the path is and why it cannot be written */
  constructor(message: string) {
    super(message);
    this.name = "WriteRefused";
  }
}

/**
 * How `path` is written (see the module doc): `atomic` at `path` (the symlink-free path of the
 * file, or `path` itself when nothing is there), `in-place` (a character device or a FIFO), or
 * `WriteRefused`. Other errors (no such directory, permission) are thrown as the OS said them.
 */
export function writeTarget(path: string): { how: "atomic" | "in-place"; path: string } {
  let link: Deno.FileInfo;
  try {
    link = Deno.lstatSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { how: "atomic", path };
    throw e;
  }
  let info = link;
  if (link.isSymlink) {
    try {
      info = Deno.statSync(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        throw new WriteRefused("it is a symbolic link to nothing (a link is followed only to what exists)");
      }
      throw e;
    }
  }
  if (info.isFile) return { how: "atomic", path: link.isSymlink ? Deno.realPathSync(path) : path };
  if (info.isCharDevice || info.isFifo) return { how: "in-place", path };
  const what = info.isDirectory
    ? "a directory"
    : info.isBlockDevice
    ? "a block device"
    : info.isSocket
    ? "a socket"
    : "not a regular file";
  throw new WriteRefused(`it is ${what}`);
}

/**
 * Writes `data` to `path` atomically and durably, or in place to a character device or FIFO, or
 * refuses (see the module doc). On failure the temporary file is removed and the error is
 * rethrown unchanged, so the caller words the message (it knows what the file is for).
 */
export function writeAtomic(path: string, data: Uint8Array | string, opts: WriteAtomicOptions = {}): void {
  const target = writeTarget(path);
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  if (target.how === "in-place") return writeInPlace(path, bytes);
  replaceFile(target.path, bytes, opts);
}

/** Writes `bytes` to the device or FIFO `path` as it is (no create, no truncate, no fsync). */
function writeInPlace(path: string, bytes: Uint8Array): void {
  const f = Deno.openSync(path, { write: true });
  try {
    let at = 0;
    while (at < bytes.length) at += f.writeSync(bytes.subarray(at));
  } finally {
    f.close();
  }
}

/** The atomic write proper: a temporary file beside `path`, then a rename over it. */
function replaceFile(path: string, bytes: Uint8Array, opts: WriteAtomicOptions): void {
  const dir = dirname(path);
  sweepOnce(dir);
  const tmp = join(dir, tempName());
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
