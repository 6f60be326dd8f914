/**
 * The runtime's logger: one line per message on stderr, never stdout.
 *
 * Owns the log line format (`[level] <scope>: message`: a newline continues the line, indented,
 * and every other control character — ESC, CR, DEL, the C1 range — is written escaped as
 * `\xNN` / `\uNNNN`, so text from outside (a forged mesh `from`, a server's error) cannot
 * colour, rewrite or forge a terminal's or a log file's lines) and level filtering
 * (`debug`, `info` (default), `warn`, `error`, `off`: the edge reads a run's level from
 * `AGENT_BLOCK_LOG`, `src/config/env_settings.ts`), and the filter every
 * message passes before it is written (a run's logger scrubs its secrets and URL credentials
 * there: `src/obs/secrets.ts`). stdout belongs to the
 * script's `print` and, in `agent-block mcp`, to the protocol; nothing the runtime logs goes there.
 * A stdout whose reader has gone is not an error of the run: what is written to it afterwards is
 * dropped, with one warning (`writeStdout`).
 */

/** Log levels, most verbose first. */
export type LogLevel = "debug" | "info" | "warn" | "error";
const RANK: Record<LogLevel | "off", number> = { debug: 10, info: 20, warn: 30, error: 40, off: 100 };

const enc = new TextEncoder();

/** Writes every byte to stderr (blocking; logs are small). */
export function writeStderr(bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += Deno.stderr.writeSync(bytes.subarray(off));
}

let stdoutClosed = false;

/**
 * Writes every byte to stdout. Once the reader has gone (`agent-block … | head`: a broken pipe),
 * the rest of the process's stdout is discarded — the run goes on to its own end instead of
 * failing at its next `print` — and stderr says so once.
 */
export function writeStdout(bytes: Uint8Array): void {
  if (stdoutClosed) return;
  let off = 0;
  try {
    while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
  } catch (e) {
    if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
    stdoutClosed = true;
    try {
      writeStderr(
        enc.encode(
          "[warn] agent-block: stdout was closed by its reader; the rest of the output is discarded\n",
        ),
      );
    } catch { /* stderr is gone too: nothing is left to tell */ }
  }
}

/**
 * `text` with every control character but newline and tab escaped (`\x1b`, `\r`, `\x7f`,
 * `\u0085`...): what a log line may carry of text that came from outside.
 */
export function escapeControls(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]/g, (c) => {
    if (c === "\r") return "\\r";
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`;
  });
}

/** A logger bound to a scope (normally the script name). */
export class Logger {
  /** Numeric rank below which messages are dropped. */
  readonly threshold: number;
  /**
   * A logger for `scope`.
   * @param scope what each line names (the script)
   * @param level the lowest level written
   * @param sink where lines go (default stderr)
   * @param filter applied to every message before it is written (a run's `Secrets.scrub`)
   */
  constructor(
    readonly scope: string,
    level: LogLevel | "off" = "info",
    private readonly sink: (bytes: Uint8Array) => void = writeStderr,
    private readonly filter?: (message: string) => string,
  ) {
    this.threshold = RANK[level];
  }

  /** True when messages at `level` are written. */
  enabled(level: LogLevel): boolean {
    return RANK[level] >= this.threshold;
  }

  /** Writes `message` at `level` (newlines continue the line, indented). */
  log(level: LogLevel, message: string): void {
    if (RANK[level] < this.threshold) return;
    const m = escapeControls(this.filter ? this.filter(message) : message);
    this.sink(enc.encode(`[${level}] ${this.scope}: ${m.replace(/\n/g, "\n  ")}\n`));
  }

  /** Writes at debug level. */
  debug(message: string): void {
    this.log("debug", message);
  }
  /** Writes at info level. */
  info(message: string): void {
    this.log("info", message);
  }
  /** Writes at warn level. */
  warn(message: string): void {
    this.log("warn", message);
  }
  /** Writes at error level. */
  error(message: string): void {
    this.log("error", message);
  }
}
