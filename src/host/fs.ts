/**
 * `std.fs.*`: files and directories on the real filesystem, for scripts.
 *
 * Owns read/write (text and binary), exists/is_file/is_dir/stat, mkdir (parents always),
 * remove (a directory only with `{ recursive = true }`), copy, walk and glob.
 *
 * Invariants:
 * - Relative paths resolve against the RUN's working directory (`run.resolve`), exactly as
 *   `io.open` does, so `std.fs` and `io` always name the same file; results (`walk`, `glob`)
 *   and messages keep the path as the script wrote it. (The model-facing file tools are different:
 *   they resolve against the project root and are confined; see `fs_tools.ts`.)
 * - A failure raises a Lua error naming the function and the path with the C-library reason:
 *   `std.fs.read: missing.txt: No such file or directory`. Only the predicates (`exists`,
 *   `is_file`, `is_dir`) answer false instead of raising.
 * - `read` returns text and refuses bytes that are not UTF-8 (use `read_binary`); `read_binary`
 *   returns the exact bytes. Both writers write the exact bytes of the Lua string.
 * - `walk` and `glob` answer sorted paths and never follow a symlinked directory (no loops);
 *   `walk` lists files only.
 */
import { join } from "node:path";
import type { LuaEngine } from "../lua/engine.ts";
import { type Args, optField } from "../lua/args.ts";
import type { RunContext } from "./context.ts";
import { osError } from "./os_error.ts";
import { exists } from "../util/fs.ts";

const enc = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A filesystem failure as `fn: path: reason`. */
export function fsFailure(fn: string, path: string, e: unknown): Error {
  return new Error(`${fn}: ${path}: ${osError(e).message}`);
}

function toBytes(v: string | Uint8Array): Uint8Array {
  return typeof v === "string" ? enc.encode(v) : v;
}

/** Installs `std.fs.*`. */
export function installFs(engine: LuaEngine, run: RunContext): void {
  const at = run.resolve;
  const def = (name: string, fn: (a: Args) => unknown) => engine.define(`std.fs.${name}`, { sync: fn });

  def("read", (a) => {
    const path = a.string(1, "path");
    let bytes: Uint8Array;
    try {
      bytes = Deno.readFileSync(at(path));
    } catch (e) {
      throw fsFailure("std.fs.read", path, e);
    }
    try {
      return strictUtf8.decode(bytes);
    } catch {
      throw new Error(`std.fs.read: ${path}: not valid UTF-8 text (use std.fs.read_binary)`);
    }
  });

  def("read_binary", (a) => {
    const path = a.string(1, "path");
    try {
      return Deno.readFileSync(at(path));
    } catch (e) {
      throw fsFailure("std.fs.read_binary", path, e);
    }
  });

  const writer = (fn: string) => (a: Args) => {
    const path = a.string(1, "path");
    const content = a.bytes(2, fn.endsWith("binary") ? "bytes" : "content");
    try {
      Deno.writeFileSync(at(path), toBytes(content));
      return true;
    } catch (e) {
      throw fsFailure(fn, path, e);
    }
  };
  def("write", writer("std.fs.write"));
  def("write_binary", writer("std.fs.write_binary"));

  const statOr = (path: string): Deno.FileInfo | undefined => {
    try {
      return Deno.statSync(at(path));
    } catch {
      return undefined;
    }
  };
  def("exists", (a) => {
    const path = a.string(1, "path");
    return exists(at(path));
  });
  def("is_file", (a) => statOr(a.string(1, "path"))?.isFile ?? false);
  def("is_dir", (a) => statOr(a.string(1, "path"))?.isDirectory ?? false);

  def("stat", (a) => {
    const path = a.string(1, "path");
    let info: Deno.FileInfo;
    let link: Deno.FileInfo;
    try {
      link = Deno.lstatSync(at(path));
      info = link.isSymlink ? Deno.statSync(at(path)) : link;
    } catch (e) {
      throw fsFailure("std.fs.stat", path, e);
    }
    return {
      size: info.size,
      is_file: info.isFile,
      is_dir: info.isDirectory,
      is_symlink: link.isSymlink,
      mode: info.mode ?? undefined,
      mtime: info.mtime ? info.mtime.getTime() / 1000 : undefined,
      atime: info.atime ? info.atime.getTime() / 1000 : undefined,
      ctime: info.ctime ? info.ctime.getTime() / 1000 : undefined,
    };
  });

  def("mkdir", (a) => {
    const path = a.string(1, "path");
    try {
      Deno.mkdirSync(at(path), { recursive: true });
      return true;
    } catch (e) {
      throw fsFailure("std.fs.mkdir", path, e);
    }
  });

  def("remove", (a) => {
    const path = a.string(1, "path");
    const opts = a.optTable(2, "opts");
    const recursive = optField<boolean>(a, 2, "opts", opts, "recursive", "boolean") ?? false;
    try {
      Deno.removeSync(at(path), { recursive });
      return true;
    } catch (e) {
      if (!recursive && e instanceof Error && /Directory not empty|os error 39/.test(e.message)) {
        throw new Error(
          `std.fs.remove: ${path}: Directory not empty (pass { recursive = true } to remove a tree)`,
        );
      }
      throw fsFailure("std.fs.remove", path, e);
    }
  });

  def("copy", (a) => {
    const src = a.string(1, "src");
    const dst = a.string(2, "dst");
    try {
      Deno.copyFileSync(at(src), at(dst));
      return true;
    } catch (e) {
      // Name the side that failed: the source when it cannot be read, else the destination.
      const srcBad = statOr(src) === undefined || statOr(src)?.isDirectory;
      throw fsFailure("std.fs.copy", srcBad ? src : dst, e);
    }
  });

  def("walk", (a) => {
    const dir = a.string(1, "dir");
    const out: string[] = [];
    try {
      if (!Deno.statSync(at(dir)).isDirectory) throw new Deno.errors.NotADirectory("not a directory");
    } catch (e) {
      throw fsFailure("std.fs.walk", dir, e);
    }
    walkFiles(dir, out, 0, "std.fs.walk", at);
    return out.sort();
  });

  def("glob", (a) => glob(a.string(1, "pattern"), at));
}

const WALK_MAX_DEPTH = 256;
const WALK_MAX_ENTRIES = 100_000;

/**
 * Appends every file below `dir` (not following symlinked directories), as paths starting with
 * `dir`; `at` makes a path absolute for the filesystem.
 */
function walkFiles(dir: string, out: string[], depth: number, fn: string, at: (p: string) => string): void {
  if (depth > WALK_MAX_DEPTH) throw new Error(`${fn}: ${dir}: deeper than ${WALK_MAX_DEPTH} levels`);
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(at(dir))];
  } catch (e) {
    throw fsFailure(fn, dir, e);
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory) walkFiles(p, out, depth + 1, fn, at);
    else if (e.isFile || e.isSymlink) out.push(p);
    if (out.length > WALK_MAX_ENTRIES) throw new Error(`${fn}: ${dir}: more than ${WALK_MAX_ENTRIES} files`);
  }
}

/**
 * `*`, `?`, `[...]` (`[!...]` negated, `a-z` ranges, a `]` first is a member) within one segment;
 * `**` as a whole segment matches any number of segments. A pattern that cannot mean anything —
 * a `[` never closed, a range running backwards, `**` inside a segment — raises
 * `std.fs.glob: invalid pattern '<pattern>': <why>` rather than silently matching nothing.
 */
function segmentRegex(seg: string, pattern: string): RegExp {
  const invalid = (why: string) => new Error(`std.fs.glob: invalid pattern '${pattern}': ${why}`);
  if (seg.includes("**")) throw invalid(`'**' must be a whole path segment, got '${seg}'`);
  let re = "";
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i];
    if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const negated = seg[i + 1] === "!";
      const first = i + (negated ? 2 : 1); // a ']' right here is a member, not the end
      const end = seg.indexOf("]", first + 1);
      if (end < 0) throw invalid(`the '[' of '${seg.slice(i)}' is never closed`);
      const members = [...seg.slice(first, end)];
      let body = "";
      for (let k = 0; k < members.length; k++) {
        if (members[k + 1] === "-" && k + 2 < members.length) {
          const [lo, hi] = [members[k], members[k + 2]];
          if (lo.codePointAt(0)! > hi.codePointAt(0)!) {
            throw invalid(`the range '${lo}-${hi}' runs backwards`);
          }
          body += `${escapeClass(lo)}-${escapeClass(hi)}`;
          k += 2;
        } else body += escapeClass(members[k]);
      }
      re += `[${negated ? "^" : ""}${body}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "u");
}

/** One member of a bracket expression, as a regular expression's character class holds it. */
function escapeClass(ch: string): string {
  return /[\\\]\[^-]/.test(ch) ? `\\${ch}` : ch;
}

const WILD = /[*?[]/;

/**
 * Paths matching `pattern`, sorted. The walk starts at the longest wildcard-free prefix; a
 * leading `./` is dropped from the results; hidden files match only when the segment says so.
 * `at` makes a (relative) path absolute for the filesystem: the run's `resolve`.
 */
export function glob(pattern: string, at: (p: string) => string): string[] {
  const abs = pattern.startsWith("/");
  const segs = pattern.split("/").filter((s, i) => s !== "" && !(s === "." && i === 0));
  let base = abs ? "/" : "";
  let k = 0;
  while (k < segs.length - 1 && !WILD.test(segs[k])) {
    base = base === "" ? segs[k] : join(base, segs[k]);
    k++;
  }
  const rest = segs.slice(k);
  const out = new Set<string>();
  if (rest.length === 0) return [];
  const matchers = rest.map((s) => (s === "**" ? "**" : WILD.test(s) ? segmentRegex(s, pattern) : s));
  const visit = (dir: string, i: number, depth: number): void => {
    if (depth > WALK_MAX_DEPTH) return;
    const m = matchers[i];
    const last = i === matchers.length - 1;
    const fsDir = dir === "" ? "." : dir;
    if (m === "**") {
      if (last) {
        // `a/**` matches everything below a
        for (const f of listAll(fsDir, at)) out.add(dir === "" ? f : join(dir, f));
        return;
      }
      visit(dir, i + 1, depth + 1); // zero segments
      for (const e of readDir(at(fsDir))) {
        if (e.isDirectory && !e.name.startsWith(".")) {
          visit(dir === "" ? e.name : join(dir, e.name), i, depth + 1);
        }
      }
      return;
    }
    if (typeof m === "string") {
      const p = dir === "" ? m : join(dir, m);
      if (last) {
        if (exists(at(p))) out.add(p);
      } else visit(p, i + 1, depth + 1);
      return;
    }
    for (const e of readDir(at(fsDir))) {
      if (e.name.startsWith(".") && !rest[i].startsWith(".")) continue;
      if (!m.test(e.name)) continue;
      const p = dir === "" ? e.name : join(dir, e.name);
      if (last) out.add(p);
      else if (e.isDirectory) visit(p, i + 1, depth + 1);
    }
  };
  visit(base, 0, 0);
  return [...out].sort();
}

function readDir(dir: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(dir)];
  } catch {
    return [];
  }
}

/** Every non-hidden entry below `dir`, as paths relative to it. */
function listAll(dir: string, at: (p: string) => string): string[] {
  const files: string[] = [];
  const rec = (rel: string, depth: number) => {
    if (depth > WALK_MAX_DEPTH) return;
    for (const e of readDir(at(rel === "" ? dir : join(dir, rel)))) {
      if (e.name.startsWith(".")) continue;
      const p = rel === "" ? e.name : join(rel, e.name);
      files.push(p);
      if (e.isDirectory) rec(p, depth + 1);
    }
  };
  rec("", 0);
  return files;
}
