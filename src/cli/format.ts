/**
 * How the CLI's human listings print values: aligned tables (`knl sessions`, `blocks`), local
 * ISO 8601 times, durations, costs and one-line truncation (`knl show`).
 *
 * Pure functions, no I/O. Times are the process's local time zone (`TZ`), since they are read by a
 * person at this machine; the `--json` forms carry epoch milliseconds instead.
 */

/** `rows` under `headers`, columns padded to their widest cell and two spaces apart; the last column is not padded. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(length(h), ...rows.map((r) => length(r[i] ?? ""))));
  const line = (cells: string[]) =>
    cells.map((c, i) => i === cells.length - 1 ? c : c + " ".repeat(widths[i] - length(c))).join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n") + "\n";
}

/** Length in code points (what a terminal shows for text without wide or combining characters). */
function length(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** `ms` since the epoch as local ISO 8601 with the offset, to the second: `2026-05-01T14:03:09+02:00`. */
export function isoLocal(ms: number): string {
  const d = new Date(ms);
  const off = -d.getTimezoneOffset();
  const a = Math.abs(off);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:` +
    `${pad(d.getMinutes())}:${pad(d.getSeconds())}${off >= 0 ? "+" : "-"}${pad(Math.floor(a / 60))}:${
      pad(a % 60)
    }`;
}

/** A duration for people: `850 ms`, `3.4 s`, `2m05s`, `1h02m`. */
export function duration(ms: number): string {
  if (ms < 999.5) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
}

/** USD to four decimals (`$0.0123`), or `-` when unknown. */
export function cost(usd: number | null | undefined): string {
  return usd === null || usd === undefined ? "-" : `$${usd.toFixed(4)}`;
}

/** `text` on one line (runs of whitespace with a line break become one space), cut to `width` code points with `…`; 0: no limit. */
export function oneLine(text: string, width: number): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, " ");
  if (width <= 0) return flat;
  const chars = [...flat];
  return chars.length <= width ? flat : chars.slice(0, Math.max(1, width - 1)).join("") + "…";
}
