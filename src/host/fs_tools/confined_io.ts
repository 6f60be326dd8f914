/**
 * The file tools' reads, writes and removals, on the very file confinement approved.
 *
 * Owns the rule that the check (`confine.ts`: a symlink-free path inside a root) and the operation
 * refer to the same file, whatever changes on disk in between: the path is walked again from its
 * root, one component at a time, each opened relative to the directory opened before it
 * (`/proc/self/fd/<fd>/<name>`, Linux's `openat`) with `O_NOFOLLOW`, so a directory or file
 * swapped for a symbolic link after the check makes the walk fail instead of leaving the roots;
 * missing directories of a write are created the same way (`mkdir` inside the opened parent).
 * The file reached is then checked by what the kernel says it opened (`/proc/self/fd/<fd>`): its
 * path must still be inside a root (a directory moved out in the middle of the walk is refused).
 * Everything after is done through that one descriptor: the size check, the read, the previous
 * content a write keeps for `fs_rollback`, the truncation and the write.
 *
 * Size: the tools hold a whole file in memory, so a file past the tool set's `max_file_bytes` is
 * refused (`bounded_read.ts`: `FileTooLarge`, naming its size and the limit), checked on the
 * opened descriptor's `fstat` before any of it is read; a write over such a file is refused before
 * anything is changed, since no undo copy of it could be kept.
 *
 * A write refuses a file with more than one hard link (`nlink > 1`): its other names may be
 * outside the roots, and writing through it would change them too. Reads of such a file are
 * allowed, on purpose (issue 26 §1 asked to refuse them or say precisely why not):
 * - where a file's other names are cannot be known: an inode records how many names it has, not
 *   where they are, and only a walk of every file system could tell "one name outside the
 *   project" from "two names inside it";
 * - so refusing would mean refusing every multi-link file, and ordinary projects are full of
 *   them: pnpm's `node_modules` and uv's `.venv` (its Linux default) hard-link from a store, and
 *   `git clone --local` hard-links `.git/objects` — a coding agent reading a dependency's source
 *   would fail;
 * - such a link gives nothing the tools' own access would not: the tools never create links, and
 *   a hard link to a file needs write access to the project plus (with Linux's default
 *   `fs.protected_hardlinks`) ownership of that file — whoever can plant one can read the file
 *   directly.
 * A read shows the file's content under its name inside the roots; a write would change what
 * other names show, so only writes are refused. Anything but a regular file is refused (FIFOs and
 * devices; a FIFO is opened non-blocking, so it cannot hang the run).
 *
 * Platforms: Linux only, where `/proc/self/fd` makes this sound; elsewhere the tools refuse every
 * operation with an error that says why (fail closed), as they do when `/proc` is not mounted.
 *
 * Test seam: `confinedIoSeam.beforeOpen` runs between the check and the walk (the race tests swap
 * a directory for a symlink there), `beforeLast` between opening the file's directory and the
 * file (they move that directory out of the roots); nothing else sets them.
 */
import { relative, sep } from "node:path";
import type * as NodeFs from "node:fs";
import { osError } from "../os_error.ts";
import { ToolError } from "./tool_error.ts";
import { within } from "./confine.ts";
import { FileTooLarge, fileTooLarge, readBounded } from "./bounded_read.ts";

// node:fs, loaded by the first operation: importing it statically would cost every run's
// start-up several milliseconds (it is not otherwise loaded), for tools most runs never call.
let nfs: typeof NodeFs;
let C: typeof NodeFs.constants;
function load(): void {
  if (nfs) return;
  nfs = process.getBuiltinModule("node:fs");
  C = nfs.constants;
}
/**
 * Linux's `O_PATH` (not among `node:fs`'s constants): a directory opened only to look names up
 * in, which needs the search permission a path walk needs and not the read permission a listing
 * does.
 */
const O_PATH = 0o10000000;

/** Test seam (see the module doc). */
export const confinedIoSeam: {
  /** Runs after the check, before anything is opened. */
  beforeOpen?: (real: string) => void;
  /** Runs once the directory holding the file is open, before the file is. */
  beforeLast?: (real: string) => void;
} = {};

/** What every operation needs: the tool set's roots, the tool and how messages show the path. */
export interface Target {
  /** Absolute, canonical roots of the tool set. */
  roots: readonly string[];
  /** The confined, symlink-free absolute path (`confine`'s answer). */
  real: string;
  /** The tool's name, for messages. */
  tool: string;
  /** The path as messages show it. */
  shown: string;
  /** The largest file read (the tool set's `max_file_bytes`). */
  maxBytes: number;
}

/** The bytes of the regular file at `t.real`. */
export function readConfined(t: Target): Uint8Array {
  load();
  const { dir, name } = walk(t, false);
  try {
    const fd = openLast(t, dir, name, C.O_RDONLY);
    try {
      const st = nfs.fstatSync(fd);
      if (st.isDirectory()) throw new ToolError(`${t.tool}: ${t.shown} is a directory`);
      if (!st.isFile()) throw new ToolError(`${t.tool}: ${t.shown} is not a regular file`);
      return readAll(t, fd, st.size);
    } finally {
      nfs.closeSync(fd);
    }
  } catch (e) {
    throw toolError(t, e);
  } finally {
    nfs.closeSync(dir);
  }
}

/**
 * Replaces the content of the regular file at `t.real` by `data`, creating it (and its missing
 * directories) when absent. Answers the previous content (with `keep`; a file past
 * `t.maxBytes` is then refused untouched, as it could not be restored), `null` when the file was
 * created or without `keep`.
 */
export function writeConfined(t: Target, data: Uint8Array, keep = true): Uint8Array | null {
  load();
  const { dir, name } = walk(t, true);
  try {
    let created = false;
    let fd: number;
    try {
      fd = openLast(t, dir, name, C.O_RDWR);
    } catch (e) {
      if ((e as { code?: string }).code !== "ENOENT") throw e;
      fd = openLast(t, dir, name, C.O_RDWR | C.O_CREAT | C.O_EXCL);
      created = true;
    }
    try {
      const st = nfs.fstatSync(fd);
      if (!st.isFile()) throw new ToolError(`${t.tool}: ${t.shown} is not a regular file`);
      if (st.nlink > 1) {
        throw new ToolError(
          `${t.tool}: ${t.shown} has ${st.nlink} hard links; the file tools do not write through a ` +
            `hard link, whose other names may be outside the allowed roots`,
        );
      }
      let before: Uint8Array | null = null;
      if (keep && !created) {
        try {
          before = readAll(t, fd, st.size);
        } catch (e) {
          if (e instanceof FileTooLarge) {
            throw new ToolError(`${e.message}, so it cannot be replaced undoably`);
          }
          throw e;
        }
      }
      nfs.ftruncateSync(fd, 0);
      let off = 0;
      while (off < data.length) off += nfs.writeSync(fd, data, off, data.length - off, off);
      return before;
    } finally {
      nfs.closeSync(fd);
    }
  } catch (e) {
    throw toolError(t, e);
  } finally {
    nfs.closeSync(dir);
  }
}

/** Removes the file at `t.real` (the directory entry itself: a symlink there is removed, not followed). */
export function removeConfined(t: Target): void {
  load();
  const { dir, name } = walk(t, false);
  try {
    nfs.unlinkSync(`/proc/self/fd/${dir}/${name}`);
  } catch (e) {
    throw toolError(t, e);
  } finally {
    nfs.closeSync(dir);
  }
}

/**
 * Opens the directory holding `t.real` by a no-follow walk from its root (creating missing
 * directories when `create`); answers its descriptor, checked to be inside a root, and the last
 * component's name.
 */
function walk(t: Target, create: boolean): { dir: number; name: string } {
  if (Deno.build.os !== "linux") {
    throw new ToolError(
      `${t.tool}: the file tools need Linux's /proc/self/fd to open files without races; ` +
        `they refuse to run on ${Deno.build.os}`,
    );
  }
  const root = t.roots.find((r) => within(r, t.real));
  if (root === undefined) throw outside(t);
  if (t.real === root) throw new ToolError(`${t.tool}: ${t.shown} is a directory`);
  confinedIoSeam.beforeOpen?.(t.real);
  const parts = relative(root, t.real).split(sep);
  const name = parts.pop()!;
  let dir: number;
  try {
    dir = nfs.openSync(root, O_PATH | C.O_DIRECTORY);
  } catch (e) {
    throw toolError(t, e);
  }
  try {
    checkInside(t, dir);
    for (const part of parts) {
      const at = `/proc/self/fd/${dir}/${part}`;
      let next: number;
      try {
        next = nfs.openSync(at, O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW);
      } catch (e) {
        if ((e as { code?: string }).code !== "ENOENT" || !create) throw swapped(t, at, e);
        try {
          nfs.mkdirSync(at);
        } catch (m) {
          if ((m as { code?: string }).code !== "EEXIST") throw m;
        }
        try {
          next = nfs.openSync(at, O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW);
        } catch (e2) {
          throw swapped(t, at, e2);
        }
      }
      nfs.closeSync(dir);
      dir = next;
    }
    checkInside(t, dir);
    confinedIoSeam.beforeLast?.(t.real);
    return { dir, name };
  } catch (e) {
    nfs.closeSync(dir);
    throw toolError(t, e);
  }
}

/** Opens the last component in `dir` without following a symlink, checked to be inside a root. */
function openLast(t: Target, dir: number, name: string, flags: number): number {
  const at = `/proc/self/fd/${dir}/${name}`;
  let fd: number;
  try {
    fd = nfs.openSync(at, flags | C.O_NOFOLLOW | C.O_NONBLOCK, 0o666);
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") throw e; // the caller may create it
    throw swapped(t, at, e);
  }
  try {
    checkInside(t, fd);
    return fd;
  } catch (e) {
    nfs.closeSync(fd);
    // created just now in a directory that turned out to be outside: taken back
    if (flags & C.O_CREAT) {
      try {
        nfs.unlinkSync(at);
      } catch { /* gone already; the refusal below is what matters */ }
    }
    throw e;
  }
}

/** Refuses unless the kernel's path of what `fd` opened is inside a root. */
function checkInside(t: Target, fd: number): void {
  let opened: string;
  try {
    opened = nfs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch (e) {
    throw new ToolError(
      `${t.tool}: ${t.shown}: cannot tell what was opened (/proc/self/fd: ${osError(e).message}); refused`,
    );
  }
  if (!t.roots.some((r) => within(r, opened))) {
    throw new ToolError(
      `${t.tool}: ${t.shown} was moved outside the allowed roots (${t.roots.join(", ")}) while being opened`,
    );
  }
}

function outside(t: Target): ToolError {
  return new ToolError(`${t.tool}: path '${t.shown}' is outside the allowed roots (${t.roots.join(", ")})`);
}

/**
 * The error of a component that would not open: a symlink there now (the checked path had none)
 * means the path was changed after the check; anything else is the system's reason.
 */
function swapped(t: Target, at: string, e: unknown): unknown {
  const code = (e as { code?: string }).code;
  if (code !== "ELOOP" && code !== "ENOTDIR") return e;
  let link = code === "ELOOP";
  try {
    link ||= nfs.lstatSync(at).isSymbolicLink();
  } catch { /* gone again: judged by the error alone */ }
  if (!link) return e;
  return new ToolError(
    `${t.tool}: ${t.shown}: a symbolic link replaced part of the path after it was checked; ` +
      `nothing was read or written`,
  );
}

function toolError(t: Target, e: unknown): ToolError {
  return e instanceof ToolError ? e : new ToolError(`${t.tool}: ${t.shown}: ${osError(e).message}`);
}

/** Everything `fd` reads from its start, at most `t.maxBytes` (`size`: what fstat said). */
function readAll(t: Target, fd: number, size: number): Uint8Array {
  return readBounded(
    (buf, position) => nfs.readSync(fd, buf, 0, buf.length, position),
    size,
    t.maxBytes,
    (n) => fileTooLarge(t.tool, t.shown, n, t.maxBytes),
  );
}
