/**
 * The model-facing file tools behind `std.fs.tool_specs` / `std.fs.register_tools`
 * (`fs_tools.lua` builds the specs and registers them through `tool.register`).
 *
 * Owns:
 * - confinement: every path resolves against the project root and must stay inside it or one
 *   of `opts.roots`, both lexically (`..`) and after resolving symlinks (the deepest existing
 *   ancestor is `realpath`ed; a dangling symlink on the way is refused, since writing through it
 *   would land wherever it points);
 * - `fs_read {path, start_line?, end_line?}`: the text with line numbers (`cat -n` style), at
 *   most `READ_MAX_LINES` at once;
 * - `fs_edit {path, start_line, end_line, expect, content}`: replaces lines start..end (inclusive,
 *   1-based) after checking that `expect` is exactly their current text; a mismatch is an error
 *   that shows the actual lines. `end_line = start_line - 1` with `expect = ""` inserts before
 *   `start_line`. The file keeps (or keeps lacking) its final newline;
 * - `fs_write {path, content}` (creates parent directories), `fs_rollback {path}` (undoes this
 *   run's newest remaining edit of that file: edits, writes and replacements alike; a file the
 *   run created is removed again) and `fs_search_replace {path, search, replace}` (a unique
 *   verbatim snippet, carried out as an `fs_edit` of the lines it spans, with the same checks;
 *   zero or several matches is an error that says which).
 * Tool failures are answered as `nil, message` to the Lua wrapper, which raises the message
 * without a position: it is written for the model.
 *
 * Invariant: the undo history is per run (shared by every tool set of the run), newest first.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { LuaEngine } from "../lua/engine.ts";
import { LuaArgError } from "../lua/args.ts";
import { LuaMulti, luaTypeName } from "../json/values.ts";
import type { RunContext } from "./context.ts";
import { osError } from "./os_error.ts";
import fsToolsSource from "./fs_tools.lua" with { type: "text" };

const READ_MAX_LINES = 2000;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const enc = new TextEncoder();

/** A failure reported to the model. */
class ToolError extends Error {}

interface ToolSet {
  roots: string[];
}

function within(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * Splits text into lines; remembers whether it ended with a newline and whether every line
 * ends in CRLF (then the lines are given without their "\r", and edits write CRLF back).
 */
function splitLines(text: string): { lines: string[]; finalNewline: boolean; crlf: boolean } {
  if (text === "") return { lines: [], finalNewline: false, crlf: false };
  const finalNewline = text.endsWith("\n");
  let lines = (finalNewline ? text.slice(0, -1) : text).split("\n");
  const ended = finalNewline ? lines : lines.slice(0, -1);
  const crlf = ended.length > 0 && ended.every((l) => l.endsWith("\r"));
  if (crlf) lines = lines.map((l, i) => (i < ended.length ? l.slice(0, -1) : l));
  return { lines, finalNewline, crlf };
}

function numbered(lines: string[], first: number): string {
  return lines.map((l, i) => `${String(first + i).padStart(6)}\t${l}`).join("\n");
}

function stripOneNewline(s: string): string {
  return s.endsWith("\n") ? s.slice(0, -1) : s;
}

/** Installs the primitives and `std.fs.tool_specs` / `register_tools`. */
export function installFsTools(engine: LuaEngine, run: RunContext): void {
  const sets: ToolSet[] = [];
  /** Per file (absolute, resolved): contents before each edit of this run, oldest first. */
  const history = new Map<string, (Uint8Array | null)[]>();

  const show = (abs: string) => {
    const rel = relative(run.projectRoot, abs);
    return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : abs;
  };

  /** Resolves and confines `path`; answers the real absolute path to operate on. */
  const confine = (set: ToolSet, tool: string, path: unknown): string => {
    if (typeof path !== "string" || path === "") {
      throw new ToolError(`${tool}: input field 'path' must be a non-empty string, got ${luaTypeName(path)}`);
    }
    const abs = resolve(run.projectRoot, path);
    const outside = () =>
      new ToolError(`${tool}: path '${path}' is outside the allowed roots (${set.roots.join(", ")})`);
    if (!set.roots.some((r) => within(r, abs))) throw outside();
    // Resolve symlinks on the deepest existing ancestor, keep the rest as written.
    let existing = abs;
    const rest: string[] = [];
    while (true) {
      let isLink = false;
      try {
        isLink = Deno.lstatSync(existing).isSymlink;
      } catch {
        // does not exist: go up
        rest.unshift(basename(existing));
        existing = dirname(existing);
        continue;
      }
      try {
        existing = Deno.realPathSync(existing);
        break;
      } catch (e) {
        if (isLink) throw new ToolError(`${tool}: path '${path}' goes through a dangling symbolic link`);
        throw new ToolError(`${tool}: ${path}: ${osError(e).message}`);
      }
    }
    const real = rest.length ? join(existing, ...rest) : existing;
    if (!set.roots.some((r) => within(r, real))) throw outside();
    return real;
  };

  const readText = (tool: string, abs: string): string => {
    let bytes: Uint8Array;
    try {
      if (Deno.statSync(abs).isDirectory) throw new ToolError(`${tool}: ${show(abs)} is a directory`);
      bytes = Deno.readFileSync(abs);
    } catch (e) {
      if (e instanceof ToolError) throw e;
      throw new ToolError(`${tool}: ${show(abs)}: ${osError(e).message}`);
    }
    try {
      return strictUtf8.decode(bytes);
    } catch {
      throw new ToolError(`${tool}: ${show(abs)} is not UTF-8 text`);
    }
  };

  const remember = (abs: string) => {
    let before: Uint8Array | null = null;
    try {
      before = Deno.readFileSync(abs);
    } catch { /* absent: a rollback removes it again */ }
    const h = history.get(abs) ?? [];
    h.push(before);
    history.set(abs, h);
  };

  const writeText = (tool: string, abs: string, text: string) => {
    try {
      Deno.mkdirSync(dirname(abs), { recursive: true });
      remember(abs);
      Deno.writeFileSync(abs, enc.encode(text));
    } catch (e) {
      history.get(abs)?.pop();
      throw new ToolError(`${tool}: ${show(abs)}: ${osError(e).message}`);
    }
  };

  const int = (
    tool: string,
    input: Record<string, unknown>,
    k: string,
    required: boolean,
  ): number | undefined => {
    const v = input[k];
    if (v === undefined && !required) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v)) {
      throw new ToolError(`${tool}: input field '${k}' must be an integer, got ${luaTypeName(v)}`);
    }
    return v;
  };
  const str = (tool: string, input: Record<string, unknown>, k: string): string => {
    const v = input[k];
    if (typeof v !== "string") {
      throw new ToolError(`${tool}: input field '${k}' must be a string, got ${luaTypeName(v)}`);
    }
    return v;
  };

  /** The line-addressed edit shared by fs_edit and fs_search_replace. */
  const edit = (
    tool: string,
    abs: string,
    start: number,
    end: number,
    expect: string,
    content: string,
  ): string => {
    const { lines, finalNewline, crlf } = splitLines(readText(tool, abs));
    if (crlf) {
      expect = expect.replace(/\r\n/g, "\n");
      content = content.replace(/\r\n/g, "\n");
    }
    const n = lines.length;
    const insert = end === start - 1;
    if (start < 1 || start > n + 1 || (!insert && (end < start || end > n))) {
      throw new ToolError(
        `${tool}: lines ${start}-${end} are not in ${show(abs)}, which has ${n} line(s) ` +
          `(to insert before line L, use start_line = L, end_line = L - 1, expect = "")`,
      );
    }
    const current = lines.slice(start - 1, end).join("\n");
    if (stripOneNewline(expect) !== current) {
      throw new ToolError(
        insert
          ? `${tool}: an insertion (end_line = start_line - 1) needs expect = "", got ${
            JSON.stringify(expect)
          }`
          : `${tool}: expect does not match lines ${start}-${end} of ${show(abs)}; their current text is:\n` +
            numbered(lines.slice(start - 1, end), start),
      );
    }
    const body = stripOneNewline(content);
    const replacement = content === "" ? [] : body.split("\n");
    const next = [...lines.slice(0, start - 1), ...replacement, ...lines.slice(end)];
    const keepNewline = finalNewline || (n === 0 && content.endsWith("\n")) ||
      (end === n && content.endsWith("\n"));
    const eol = crlf ? "\r\n" : "\n";
    writeText(tool, abs, next.join(eol) + (keepNewline && next.length ? eol : ""));
    const shown = replacement.length ? `:\n${numbered(replacement, start)}` : "";
    return `${tool}: ${show(abs)}: lines ${start}-${end} replaced by ${replacement.length} line(s); ` +
      `the file now has ${next.length} line(s)${shown}`;
  };

  const ops: Record<string, (set: ToolSet, input: Record<string, unknown>) => string> = {
    fs_read: (set, input) => {
      const abs = confine(set, "fs_read", input.path);
      const { lines } = splitLines(readText("fs_read", abs));
      const n = lines.length;
      if (n === 0) return `${show(abs)}: (empty file)`;
      const start = int("fs_read", input, "start_line", false) ?? 1;
      const askedEnd = int("fs_read", input, "end_line", false);
      if (start < 1 || start > n) {
        throw new ToolError(`fs_read: start_line ${start} is not in ${show(abs)}, which has ${n} line(s)`);
      }
      if (askedEnd !== undefined && askedEnd < start) {
        throw new ToolError(`fs_read: end_line ${askedEnd} is before start_line ${start}`);
      }
      const end = Math.min(askedEnd ?? start + READ_MAX_LINES - 1, n, start + READ_MAX_LINES - 1);
      const more = end < n && askedEnd === undefined
        ? `\n(${n - end} more line(s); read on with start_line = ${end + 1})`
        : "";
      return `${show(abs)}: lines ${start}-${end} of ${n}\n${
        numbered(lines.slice(start - 1, end), start)
      }${more}`;
    },
    fs_edit: (set, input) => {
      const abs = confine(set, "fs_edit", input.path);
      return edit(
        "fs_edit",
        abs,
        int("fs_edit", input, "start_line", true)!,
        int("fs_edit", input, "end_line", true)!,
        str("fs_edit", input, "expect"),
        str("fs_edit", input, "content"),
      );
    },
    fs_write: (set, input) => {
      const abs = confine(set, "fs_write", input.path);
      const content = str("fs_write", input, "content");
      writeText("fs_write", abs, content);
      return `fs_write: wrote ${show(abs)} (${enc.encode(content).length} bytes)`;
    },
    fs_rollback: (set, input) => {
      const abs = confine(set, "fs_rollback", input.path);
      const h = history.get(abs);
      if (!h || h.length === 0) {
        throw new ToolError(`fs_rollback: this run has no edit of ${show(abs)} to undo`);
      }
      const before = h.pop()!;
      try {
        if (before === null) Deno.removeSync(abs);
        else Deno.writeFileSync(abs, before);
      } catch (e) {
        h.push(before);
        throw new ToolError(`fs_rollback: ${show(abs)}: ${osError(e).message}`);
      }
      return `fs_rollback: ${show(abs)} ${before === null ? "removed (this run created it)" : "restored"}; ` +
        `${h.length} earlier edit(s) of it can still be undone`;
    },
    fs_search_replace: (set, input) => {
      const abs = confine(set, "fs_search_replace", input.path);
      const search = str("fs_search_replace", input, "search");
      const replace = str("fs_search_replace", input, "replace");
      if (search === "") throw new ToolError("fs_search_replace: input field 'search' must not be empty");
      const text = readText("fs_search_replace", abs);
      const hits: number[] = [];
      for (let i = text.indexOf(search); i >= 0; i = text.indexOf(search, i + search.length)) hits.push(i);
      const lineOf = (off: number) => text.slice(0, off).split("\n").length;
      if (hits.length === 0) {
        throw new ToolError(
          `fs_search_replace: the search text was not found in ${show(abs)} (it must match verbatim)`,
        );
      }
      if (hits.length > 1) {
        throw new ToolError(
          `fs_search_replace: the search text occurs ${hits.length} times in ${show(abs)} ` +
            `(starting on lines ${
              hits.map(lineOf).join(", ")
            }); include more surrounding text to make it unique`,
        );
      }
      const m = hits[0];
      const lineStart = (line: number) => {
        let off = 0;
        for (let l = 1; l < line; l++) off = text.indexOf("\n", off) + 1;
        return off;
      };
      const s = lineOf(m);
      let e = lineOf(m + search.length - 1);
      const { lines } = splitLines(text);
      const regionEnd = (line: number) => (line >= lines.length ? text.length : lineStart(line + 1));
      let newRegion: string;
      while (true) {
        const rs = lineStart(s);
        const re = regionEnd(e);
        newRegion = text.slice(rs, m) + replace + text.slice(m + search.length, re);
        // A region that ended with a newline must still end with one, or it would merge into the next line.
        if (
          !text.slice(rs, re).endsWith("\n") || newRegion === "" || newRegion.endsWith("\n") ||
          e >= lines.length
        ) break;
        e++;
      }
      const expect = lines.slice(s - 1, e).join("\n");
      const content = newRegion === "" ? "" : newRegion;
      return edit("fs_search_replace", abs, s, e, expect, content);
    },
  };

  engine.define("@fs_tools_new", {
    sync: (a) => {
      const opts = a.optTable(1, "opts");
      const roots = [run.projectRoot];
      const extra = opts?.roots;
      if (extra !== undefined) {
        if (!Array.isArray(extra)) {
          throw new LuaArgError(
            `${a.fn}: argument 1 (opts) field 'roots' must be an array of strings, got ${luaTypeName(extra)}`,
          );
        }
        extra.forEach((r, i) => {
          if (typeof r !== "string") {
            throw new LuaArgError(
              `${a.fn}: argument 1 (opts) field 'roots' element ${i + 1} must be a string, got ${
                luaTypeName(r)
              }`,
            );
          }
          try {
            roots.push(Deno.realPathSync(resolve(run.projectRoot, r)));
          } catch (e) {
            throw new Error(`${a.fn}: root '${r}': ${osError(e).message}`);
          }
        });
      }
      sets.push({ roots });
      return sets.length;
    },
  });
  engine.define("@fs_tool", {
    sync: (a) => {
      const set = sets[a.integer(1, "set") - 1];
      const op = ops[a.string(2, "tool")];
      const input = a.at(3);
      if (!set || !op) throw new Error(`fs tool: unknown tool set or tool`);
      if (luaTypeName(input) !== "table") {
        return new LuaMulti([undefined, `${a.at(2)}: input must be an object, got ${luaTypeName(input)}`]);
      }
      try {
        return op(set, input as Record<string, unknown>);
      } catch (e) {
        if (e instanceof ToolError) return new LuaMulti([undefined, e.message]);
        throw e;
      }
    },
  });
  engine.exec(fsToolsSource, "=ab:fs_tools");
}
