/**
 * The model-facing file tools behind `std.fs.tool_specs` / `std.fs.register_tools`
 * (`fs_tools.lua` builds the specs and registers them through `tool.register`).
 *
 * Owns:
 * - confinement: every path resolves against the project root and must stay inside it or one
 *   of `opts.roots`, both lexically (`..`) and after resolving symlinks (the deepest existing
 *   ancestor is `realpath`ed; a dangling symlink on the way is refused, since writing through it
 *   would land wherever it points), and the operation on the very file that check approved (a
 *   no-follow walk from the root; no write through a hard link); with `opts.no_symlinks` a change
 *   (edit, replace, write, rollback) through any symbolic link is refused, so the file changed is
 *   the one its name says (a caller checking names, such as `coding.run`'s allow-list, then
 *   checks the file written); reads still follow symlinks inside the roots;
 * - `fs_read {path, start_line?, end_line?}`: the text with line numbers (`cat -n` style), at
 *   most `READ_MAX_LINES` at once;
 * - size: every tool reads the whole file (to number lines, check an edit, keep an undo copy), so
 *   a file past the set's `max_file_bytes` (default 16 MiB) — or anything but a regular file — is
 *   refused with an error that says so, checked on the opened file before it is read
 *   (`fs_tools/bounded_read.ts`), as is overwriting one;
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
 * This file is the binding: input fields, the files and the undo history. The rules live in
 * `fs_tools/confine.ts` (which real file a path names, and whether it may be touched),
 * `fs_tools/confined_io.ts` (reading, writing and removing exactly that file, whatever changes on
 * disk after the check) and `fs_tools/edit.ts` (the text logic, pure).
 *
 * Invariant: the undo history is per run (shared by every tool set of the run), newest first.
 */
import { isAbsolute, relative, resolve } from "node:path";
import type { LuaEngine } from "../lua/engine.ts";
import { LuaArgError } from "../lua/args.ts";
import { LuaMulti, luaTypeName } from "../json/values.ts";
import type { RunContext } from "./context.ts";
import { osError } from "./os_error.ts";
import { ToolError } from "./fs_tools/tool_error.ts";
import { confine as confineTo } from "./fs_tools/confine.ts";
import { readConfined, removeConfined, writeConfined } from "./fs_tools/confined_io.ts";
import { DEFAULT_MAX_FILE_BYTES } from "./fs_tools/bounded_read.ts";
import { editLines, readWindow, searchReplaceEdit, splitLines } from "./fs_tools/edit.ts";
import fsToolsSource from "./fs_tools.lua" with { type: "text" };

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const enc = new TextEncoder();

interface ToolSet {
  roots: string[];
  /** `opts.no_symlinks`: a change through any symbolic link is refused (the lexical name is the file). */
  noSymlinks: boolean;
  /** Largest file the tools read (`opts.max_file_bytes`). */
  maxFileBytes: number;
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
  const confine = (set: ToolSet, tool: string, path: unknown): string =>
    confineTo(set.roots, run.projectRoot, tool, path, set.noSymlinks && tool !== "fs_read");

  const target = (set: ToolSet, tool: string, abs: string) => ({
    roots: set.roots,
    real: abs,
    tool,
    shown: show(abs),
    maxBytes: set.maxFileBytes,
  });

  const readText = (set: ToolSet, tool: string, abs: string): string => {
    const bytes = readConfined(target(set, tool, abs));
    try {
      return strictUtf8.decode(bytes);
    } catch {
      throw new ToolError(`${tool}: ${show(abs)} is not UTF-8 text`);
    }
  };

  /**
   * Writes `text`, keeping what the file held before (absent: a rollback removes it again). A
   * file too large to keep a copy of is refused untouched, as the write could not be undone.
   */
  const writeText = (set: ToolSet, tool: string, abs: string, text: string) => {
    const before = writeConfined(target(set, tool, abs), enc.encode(text));
    const h = history.get(abs) ?? [];
    h.push(before);
    history.set(abs, h);
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

  /** The line-addressed edit shared by fs_edit and fs_search_replace: checked, written, reported. */
  const edit = (
    set: ToolSet,
    tool: string,
    abs: string,
    start: number,
    end: number,
    expect: string,
    content: string,
  ): string => {
    const r = editLines(tool, show(abs), readText(set, tool, abs), start, end, expect, content);
    writeText(set, tool, abs, r.text);
    return r.report;
  };

  const ops: Record<string, (set: ToolSet, input: Record<string, unknown>) => string> = {
    fs_read: (set, input) => {
      const abs = confine(set, "fs_read", input.path);
      const { lines } = splitLines(readText(set, "fs_read", abs));
      if (lines.length === 0) return `${show(abs)}: (empty file)`;
      const start = int("fs_read", input, "start_line", false);
      const askedEnd = int("fs_read", input, "end_line", false);
      return readWindow(show(abs), lines, start, askedEnd);
    },
    fs_edit: (set, input) => {
      const abs = confine(set, "fs_edit", input.path);
      return edit(
        set,
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
      writeText(set, "fs_write", abs, content);
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
        if (before === null) removeConfined(target(set, "fs_rollback", abs));
        else writeConfined(target(set, "fs_rollback", abs), before, false);
      } catch (e) {
        h.push(before);
        throw e;
      }
      return `fs_rollback: ${show(abs)} ${before === null ? "removed (this run created it)" : "restored"}; ` +
        `${h.length} earlier edit(s) of it can still be undone`;
    },
    fs_search_replace: (set, input) => {
      const abs = confine(set, "fs_search_replace", input.path);
      const search = str("fs_search_replace", input, "search");
      const replace = str("fs_search_replace", input, "replace");
      if (search === "") throw new ToolError("fs_search_replace: input field 'search' must not be empty");
      const e = searchReplaceEdit(
        "fs_search_replace",
        show(abs),
        readText(set, "fs_search_replace", abs),
        search,
        replace,
      );
      return edit(set, "fs_search_replace", abs, e.start, e.end, e.expect, e.content);
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
      const max = opts?.max_file_bytes;
      if (max !== undefined && !(typeof max === "number" && Number.isInteger(max) && max > 0)) {
        throw new LuaArgError(
          `${a.fn}: argument 1 (opts) field 'max_file_bytes' must be a positive whole number, got ${
            String(max)
          }`,
        );
      }
      const noSymlinks = opts?.no_symlinks;
      if (noSymlinks !== undefined && typeof noSymlinks !== "boolean") {
        throw new LuaArgError(
          `${a.fn}: argument 1 (opts) field 'no_symlinks' must be a boolean, got ${luaTypeName(noSymlinks)}`,
        );
      }
      sets.push({
        roots,
        noSymlinks: noSymlinks === true,
        maxFileBytes: (max as number | undefined) ?? DEFAULT_MAX_FILE_BYTES,
      });
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
