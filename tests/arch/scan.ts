/**
 * Source scanning shared by the arch tests that read text rather than the import graph
 * (`deno_env_test.ts`, `env_settings_test.ts`): comments blanked out, line numbers kept.
 */

/**
 * `source` with every `//` and `/* *\/` comment replaced by spaces (newlines kept), string and
 * template literals left as they are. Regular expression literals are not recognised: a quote or
 * `//` inside one may blank the rest of its line, which this scan accepts.
 */
export function blankComments(source: string): string {
  let out = "";
  let i = 0;
  const blank = (s: string) => s.replace(/[^\n]/g, " ");
  while (i < source.length) {
    const c = source[i];
    if (c === "/" && source[i + 1] === "/") {
      const end = source.indexOf("\n", i);
      const stop = end < 0 ? source.length : end;
      out += blank(source.slice(i, stop));
      i = stop;
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? source.length : end + 2;
      out += blank(source.slice(i, stop));
      i = stop;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < source.length && source[j] !== c) {
        if (source[j] === "\\") j++;
        else if (c !== "`" && source[j] === "\n") break; // unterminated: stop at the line end
        j++;
      }
      out += source.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
