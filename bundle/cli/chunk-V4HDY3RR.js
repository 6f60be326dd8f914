// src/config/dotenv.ts
var LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;
function parseDotenv(text, label = ".env") {
  const vars = [];
  const warnings = [];
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
          out += n === "n" ? "\n" : n === "t" ? "	" : n === "r" ? "\r" : n;
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
    vars.push([
      key,
      value
    ]);
  }
  return {
    vars,
    warnings
  };
}
function loadDotenv(path, label = path) {
  let text;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    return [
      `${label}: cannot read: ${e.message}`
    ];
  }
  const { vars, warnings } = parseDotenv(text, label);
  for (const [k, v] of vars) if (Deno.env.get(k) === void 0) Deno.env.set(k, v);
  return warnings;
}

export {
  loadDotenv
};
