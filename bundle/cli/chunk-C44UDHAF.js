// src/errors.ts
var AgentBlockError = class extends Error {
  exitCode;
  constructor(message, exitCode = 1) {
    super(message), this.exitCode = exitCode;
    this.name = "AgentBlockError";
  }
};
var UsageError = class extends AgentBlockError {
  constructor(message) {
    super(message, 2);
    this.name = "UsageError";
  }
};
var EXIT = {
  OK: 0,
  FAILED: 1,
  USAGE: 2,
  DEFERRED: 75,
  INTERRUPTED: 130
};

// src/obs/log.ts
var RANK = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  off: 100
};
function parseLevel(s) {
  const v = s?.trim().toLowerCase();
  if (v === "warning") return "warn";
  return v && v in RANK ? v : void 0;
}
var enc = new TextEncoder();
function writeStderr(bytes) {
  let off = 0;
  while (off < bytes.length) off += Deno.stderr.writeSync(bytes.subarray(off));
}
function writeStdout(bytes) {
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
}
var Logger = class _Logger {
  scope;
  sink;
  /** Numeric rank below which messages are dropped. */
  threshold;
  /**
   * A logger for `scope`.
   * @param scope what each line names (the script)
   * @param level the lowest level written
   * @param sink where lines go (default stderr)
   */
  constructor(scope, level = "info", sink = writeStderr) {
    this.scope = scope;
    this.sink = sink;
    this.threshold = RANK[level];
  }
  /** A logger reading its level from `AGENT_BLOCK_LOG`; an unknown value warns once. */
  static fromEnv(scope, sink) {
    const raw = Deno.env.get("AGENT_BLOCK_LOG");
    const level = parseLevel(raw);
    const logger = new _Logger(scope, level ?? "info", sink);
    if (raw !== void 0 && raw !== "" && level === void 0) {
      logger.warn(`AGENT_BLOCK_LOG must be one of debug, info, warn, error, off; got '${raw}' (using info)`);
    }
    return logger;
  }
  /** True when messages at `level` are written. */
  enabled(level) {
    return RANK[level] >= this.threshold;
  }
  /** Writes `message` at `level` (newlines continue the line, indented). */
  log(level, message) {
    if (RANK[level] < this.threshold) return;
    this.sink(enc.encode(`[${level}] ${this.scope}: ${message.replace(/\n/g, "\n  ")}
`));
  }
  /** Writes at debug level. */
  debug(message) {
    this.log("debug", message);
  }
  /** Writes at info level. */
  info(message) {
    this.log("info", message);
  }
  /** Writes at warn level. */
  warn(message) {
    this.log("warn", message);
  }
  /** Writes at error level. */
  error(message) {
    this.log("error", message);
  }
};

export {
  AgentBlockError,
  UsageError,
  EXIT,
  writeStderr,
  writeStdout,
  Logger
};
