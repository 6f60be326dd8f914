/**
 * The text logic of the file tools, pure: no filesystem, no run.
 *
 * Owns:
 * - line splitting: a final newline and CRLF line ends are remembered (the lines are given
 *   without their "\r", and edits write CRLF back);
 * - `readWindow`: `fs_read`'s answer, lines numbered `cat -n` style, at most `READ_MAX_LINES`;
 * - `editLines`: `fs_edit`'s rule — lines start..end (inclusive, 1-based) are replaced after
 *   checking that `expect` is exactly their current text (a mismatch shows the actual lines);
 *   `end = start - 1` with `expect = ""` inserts before `start`; the text keeps (or keeps
 *   lacking) its final newline;
 * - `searchReplaceEdit`: `fs_search_replace`'s rule — a unique verbatim snippet, turned into the
 *   `editLines` call of the lines it spans (zero or several matches is an error saying which).
 *   Linear in the text and the number of hits, whatever either is: the lines of the hits are
 *   counted in one pass, and an error lists at most `SHOWN_HITS` of them (a model-made search
 *   text can occur hundreds of thousands of times).
 * Every failure is a `ToolError` written for the model; `shown` is how messages name the file.
 */
import { ToolError } from "./tool_error.ts";

/** Most lines `fs_read` answers at once. */
export const READ_MAX_LINES = 2000;

/** Most hit lines an ambiguous `fs_search_replace` error lists. */
export const SHOWN_HITS = 20;

/** A text as lines. */
export interface Lines {
  lines: string[];
  /** The text ended with a newline. */
  finalNewline: boolean;
  /** Every line ended in CRLF. */
  crlf: boolean;
}

/**
 * Splits text into lines; remembers whether it ended with a newline and whether every line
 * ends in CRLF (then the lines are given without their "\r").
 */
export function splitLines(text: string): Lines {
  if (text === "") return { lines: [], finalNewline: false, crlf: false };
  const finalNewline = text.endsWith("\n");
  let lines = (finalNewline ? text.slice(0, -1) : text).split("\n");
  const ended = finalNewline ? lines : lines.slice(0, -1);
  const crlf = ended.length > 0 && ended.every((l) => l.endsWith("\r"));
  if (crlf) lines = lines.map((l, i) => (i < ended.length ? l.slice(0, -1) : l));
  return { lines, finalNewline, crlf };
}

/** Lines numbered from `first`, `cat -n` style. */
export function numbered(lines: string[], first: number): string {
  return lines.map((l, i) => `${String(first + i).padStart(6)}\t${l}`).join("\n");
}

function stripOneNewline(s: string): string {
  return s.endsWith("\n") ? s.slice(0, -1) : s;
}

/**
 * `fs_read`'s answer for `lines` (non-empty): from `start` (default 1) to `askedEnd` (default:
 * `READ_MAX_LINES` lines on, saying how to read on).
 */
export function readWindow(shown: string, lines: string[], start = 1, askedEnd?: number): string {
  const n = lines.length;
  if (start < 1 || start > n) {
    throw new ToolError(`fs_read: start_line ${start} is not in ${shown}, which has ${n} line(s)`);
  }
  if (askedEnd !== undefined && askedEnd < start) {
    throw new ToolError(`fs_read: end_line ${askedEnd} is before start_line ${start}`);
  }
  const end = Math.min(askedEnd ?? start + READ_MAX_LINES - 1, n, start + READ_MAX_LINES - 1);
  const more = end < n && askedEnd === undefined
    ? `\n(${n - end} more line(s); read on with start_line = ${end + 1})`
    : "";
  return `${shown}: lines ${start}-${end} of ${n}\n${numbered(lines.slice(start - 1, end), start)}${more}`;
}

/** The result of a line edit: the new text and the report for the model. */
export interface EditResult {
  text: string;
  report: string;
}

/** Replaces lines `start`..`end` of `text` by `content` once `expect` matches them. */
export function editLines(
  tool: string,
  shown: string,
  text: string,
  start: number,
  end: number,
  expect: string,
  content: string,
): EditResult {
  const { lines, finalNewline, crlf } = splitLines(text);
  if (crlf) {
    expect = expect.replace(/\r\n/g, "\n");
    content = content.replace(/\r\n/g, "\n");
  }
  const n = lines.length;
  const insert = end === start - 1;
  if (start < 1 || start > n + 1 || (!insert && (end < start || end > n))) {
    throw new ToolError(
      `${tool}: lines ${start}-${end} are not in ${shown}, which has ${n} line(s) ` +
        `(to insert before line L, use start_line = L, end_line = L - 1, expect = "")`,
    );
  }
  const current = lines.slice(start - 1, end).join("\n");
  if (stripOneNewline(expect) !== current) {
    throw new ToolError(
      insert
        ? `${tool}: an insertion (end_line = start_line - 1) needs expect = "", got ${JSON.stringify(expect)}`
        : `${tool}: expect does not match lines ${start}-${end} of ${shown}; their current text is:\n` +
          numbered(lines.slice(start - 1, end), start),
    );
  }
  const body = stripOneNewline(content);
  const replacement = content === "" ? [] : body.split("\n");
  const next = [...lines.slice(0, start - 1), ...replacement, ...lines.slice(end)];
  const keepNewline = finalNewline || (n === 0 && content.endsWith("\n")) ||
    (end === n && content.endsWith("\n"));
  const eol = crlf ? "\r\n" : "\n";
  const shownLines = replacement.length ? `:\n${numbered(replacement, start)}` : "";
  return {
    text: next.join(eol) + (keepNewline && next.length ? eol : ""),
    report: `${tool}: ${shown}: lines ${start}-${end} replaced by ${replacement.length} line(s); ` +
      `the file now has ${next.length} line(s)${shownLines}`,
  };
}

/** The line edit a search-and-replace amounts to. */
export interface LineEdit {
  start: number;
  end: number;
  expect: string;
  content: string;
}

/** The `editLines` arguments replacing the one verbatim occurrence of `search` in `text`. */
export function searchReplaceEdit(
  tool: string,
  shown: string,
  text: string,
  search: string,
  replace: string,
): LineEdit {
  if (search === "") throw new ToolError(`${tool}: input field 'search' must not be empty`);
  const hits: number[] = [];
  for (let i = text.indexOf(search); i >= 0; i = text.indexOf(search, i + search.length)) hits.push(i);
  if (hits.length === 0) {
    throw new ToolError(`${tool}: the search text was not found in ${shown} (it must match verbatim)`);
  }
  // Line numbers of (the first) hits, counting newlines once from one hit to the next.
  const hitLines: number[] = [];
  let line = 1;
  let at = 0;
  for (const h of hits.slice(0, SHOWN_HITS)) {
    for (let nl = text.indexOf("\n", at); nl >= 0 && nl < h; nl = text.indexOf("\n", nl + 1)) line++;
    at = h;
    hitLines.push(line);
  }
  const lineOf = (off: number) => {
    let n = 1;
    for (let nl = text.indexOf("\n"); nl >= 0 && nl < off; nl = text.indexOf("\n", nl + 1)) n++;
    return n;
  };
  if (hits.length > 1) {
    const more = hits.length > SHOWN_HITS ? ` and ${hits.length - SHOWN_HITS} more` : "";
    throw new ToolError(
      `${tool}: the search text occurs ${hits.length} times in ${shown} ` +
        `(starting on lines ${hitLines.join(", ")}${more}); include more surrounding text to make it unique`,
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
  return { start: s, end: e, expect: lines.slice(s - 1, e).join("\n"), content: newRegion };
}
