/**
 * The project's `.env` file: the host half's configuration (databases, sandbox, home).
 *
 * Owns parsing (`NAME=value`, optional `export `, `#` comments, single quotes literal, double
 * quotes with `\n` `\t` `\"` `\\` escapes, unquoted values trimmed with ` #` comments removed),
 * reading the file into a record, and the seed's layering rule (`layerDotenv`: a variable already
 * set is never overridden). A malformed line is reported with its line number and skipped;
 * nothing else in the file is lost. Nothing here writes the process environment: the edge layers
 * the record into the environment it hands the run.
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

/** A `.env` file read into a record, with the problems found in it. */
export interface DotenvFile {
  /** The variables, later lines winning over earlier ones. */
  vars: Record<string, string>;
  /** Human-readable problems, each naming the file and line. */
  warnings: string[];
}

/** Reads and parses `path`. A missing file is an empty record, not an error. */
export function readDotenv(path: string, label = path): DotenvFile {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { vars: {}, warnings: [] };
    return { vars: {}, warnings: [`${label}: cannot read: ${(e as Error).message}`] };
  }
  const { vars, warnings } = parseDotenv(text, label);
  return { vars: Object.fromEntries(vars), warnings };
}

/** `base` with every variable of `dotenv` that `base` does not set (the seed's rule). */
export function layerDotenv(
  base: Readonly<Record<string, string>>,
  dotenv: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = { ...base };
  for (const [k, v] of Object.entries(dotenv)) if (!Object.hasOwn(out, k)) out[k] = v;
  return out;
}
