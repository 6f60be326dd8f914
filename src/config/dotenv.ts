/**
 * The project's `.env` file: the host half's configuration (databases, sandbox, home).
 *
 * Owns parsing (`NAME=value`, optional `export `, `#` comments, single quotes literal, double
 * quotes with `\n` `\t` `\"` `\\` escapes, unquoted values trimmed with ` #` comments removed) and
 * loading without overriding variables already set. A malformed line is reported with its line
 * number and skipped; nothing else in the file is lost.
 */

/** Result of parsing a `.env` text. */
export interface DotenvParse {
  vars: [string, string][];
  /** Human-readable problems, each naming the line (`.env:3: ...`). */
  warnings: string[];
}

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;

/** Parses `.env` text; `label` names the file in warnings. */
export function parseDotenv(text: string, label = ".env"): DotenvParse {
  const vars: [string, string][] = [];
  const warnings: string[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    if (!raw.trim() || raw.trim().startsWith("#")) continue;
    const m = LINE.exec(raw);
    if (!m) {
      warnings.push(`${label}:${i + 1}: malformed line (expected NAME=value), skipped`);
      continue;
    }
    const [, key, rest] = m;
    let value = rest.trim();
    if (value.startsWith("'")) {
      const end = value.indexOf("'", 1);
      if (end < 0) {
        warnings.push(`${label}:${i + 1}: unterminated single quote in ${key}, skipped`);
        continue;
      }
      value = value.slice(1, end);
    } else if (value.startsWith('"')) {
      let out = "";
      let j = 1;
      let closed = false;
      for (; j < value.length; j++) {
        const c = value[j];
        if (c === "\\" && j + 1 < value.length) {
          const n = value[++j];
          out += n === "n" ? "\n" : n === "t" ? "\t" : n === "r" ? "\r" : n;
        } else if (c === '"') {
          closed = true;
          break;
        } else out += c;
      }
      if (!closed) {
        warnings.push(`${label}:${i + 1}: unterminated double quote in ${key}, skipped`);
        continue;
      }
      value = out;
    } else {
      value = value.replace(/\s+#.*$/, "").trim();
    }
    vars.push([key, value]);
  }
  return { vars, warnings };
}

/**
 * Loads `path` into the process environment without overriding what is already set.
 * A missing file is not an error. Returns the warnings to report.
 */
export function loadDotenv(path: string, label = path): string[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    return [`${label}: cannot read: ${(e as Error).message}`];
  }
  const { vars, warnings } = parseDotenv(text, label);
  for (const [k, v] of vars) if (Deno.env.get(k) === undefined) Deno.env.set(k, v);
  return warnings;
}
