/**
 * The stdio transport: an MCP server as a child process speaking newline-delimited JSON-RPC on
 * its stdin/stdout.
 *
 * Owns: starting the child through the `Spawner` it is given (the run's process groups, in
 * agent-block: the child is in its own process group, gets the run's credential-stripped
 * environment with the connection's `env` applied last, and is ended with the run whatever
 * happens — none of which this module needs to know); framing (newline-delimited, split in time
 * linear in the size of a message, one message at most `maxMessageBytes`: a longer one ends the
 * connection as soon as it gets there, `util/lines.ts`); a bounded tail
 * of the child's stderr (shown in connection errors; each line is also handed to the manager,
 * which logs it at debug level); stdout lines that are not JSON-RPC (a start-up banner, a stray
 * `print`), which are skipped: each is handed to the manager (which warns about the first and logs
 * the rest at debug level), the first is quoted in connection errors, and the connection goes on
 * — a server that writes one line of noise still works, and one that writes nothing else fails
 * at its timeout with the line quoted; and a description of how the child failed, for error
 * messages.
 *
 * Why not the SDK's `StdioClientTransport`: it spawns with cross-spawn outside our process
 * groups, strips the environment to six variables, and has no hook for either. The SDK
 * recognises stdio transports structurally (`pid` and `stderr` accessors), so version
 * negotiation treats this one as stdio (a silent probe means a legacy server) and probes on the
 * connection itself.
 *
 * Invariants: `onclose` fires exactly once (child exit, a message past the size limit, or
 * `close()`); after it, `send` rejects with the failure description. A non-protocol stdout line
 * never reaches the SDK and never ends the connection: lines are framed by newlines, so the next
 * line is read as it would have been without it.
 */
import { deserializeMessage, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/client";
import { LineSplitter, LineTooLong } from "../../util/lines.ts";
import { MessageTooLarge } from "./limits.ts";

/** A started child, as the transport uses it. */
export interface SpawnedProcess {
  readonly pid: number;
  readonly child: Deno.ChildProcess;
  readonly status: Promise<Deno.CommandStatus>;
  readonly exited: boolean;
  /** Ends the child (and whatever it started); resolves once it is gone. */
  terminate(): Promise<void>;
}

/** Starts children for the transport (throws `Deno.errors.*` like `Deno.Command#spawn`). */
export interface Spawner {
  spawn(opts: {
    cmd: [string, ...string[]];
    cwd: string;
    /** Variables applied last, over the environment the spawner gives every child. */
    env: Record<string, string>;
    stdin: "piped";
    stdout: "piped";
    stderr: "piped";
  }): SpawnedProcess;
}

/** How to start the server. */
export interface StdioServerSpec {
  /** Server name (for messages). */
  name: string;
  command: string;
  args: string[];
  cwd: string;
  /** Variables applied after the credential removal. */
  env: Record<string, string>;
  /** Longest stdout line (one message) accepted, bytes; a longer one ends the connection. */
  maxMessageBytes: number;
}

/** Bytes of stderr kept for error messages. */
const STDERR_TAIL_BYTES = 4096;
/** How long a server may take to exit on stdin EOF before its group is terminated. */
const EOF_GRACE_MS = 500;
/** Size of the reused stdout read buffer. */
const READ_CHUNK_BYTES = 64 * 1024;
/** Longest stdout line quoted in a message. */
const QUOTE_CHARS = 200;

/** A stdout line that is not JSON-RPC, as handed to the transport's owner. */
export interface StrayLine {
  /** The line, quoted and cut to `QUOTE_CHARS` (a JSON string literal). */
  quoted: string;
  /** 1 for the connection's first such line, 2 for the next, ... */
  count: number;
}

/** A child-process MCP transport whose process is owned by the run's process groups. */
export class ProcessStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  #proc: SpawnedProcess | undefined;
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #stderrTail = "";
  #violation: string | undefined;
  /** The first stdout line that was not JSON-RPC (quoted), and how many there were. */
  #firstStray: string | undefined;
  #strays = 0;
  #exit: Deno.CommandStatus | undefined;
  /** The child ended before anyone asked it to (`close()`): its end is the failure to report. */
  #exitUnasked = false;
  #closed = false;
  #closing = false;
  #exited: Promise<void> = Promise.resolve();
  #enc = new TextEncoder();

  /**
   * @param onStderrLine receives each line the child writes to stderr (the manager logs them at
   *   debug level, so a server's own diagnostics stay reachable with `AGENT_BLOCK_LOG=debug`)
   * @param onStrayLine receives each stdout line that is not JSON-RPC, once, as it is skipped
   */
  constructor(
    readonly spec: StdioServerSpec,
    private readonly procs: Spawner,
    private readonly onStderrLine?: (line: string) => void,
    private readonly onStrayLine?: (stray: StrayLine) => void,
  ) {}

  /** Child pid (the SDK's structural stdio check reads `pid` and `stderr`). */
  get pid(): number | null {
    return this.#proc?.pid ?? null;
  }

  /** The child's stderr is consumed here (see `stderrTail`), so there is no stream to hand out. */
  get stderr(): null {
    return null;
  }

  /** True once the stream broke a rule that ended the connection (a message past the limit). */
  get violated(): boolean {
    return this.#violation !== undefined;
  }

  /** The last few KB the child wrote to stderr. */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  start(): Promise<void> {
    if (this.#proc) throw new Error(`mcp server '${this.spec.name}': transport already started`);
    try {
      this.#proc = this.procs.spawn({
        cmd: [this.spec.command, ...this.spec.args],
        cwd: this.spec.cwd,
        env: this.spec.env,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      });
    } catch (e) {
      const why = e instanceof Deno.errors.NotFound
        ? (isMissingDir(this.spec.cwd)
          ? `working directory ${this.spec.cwd} does not exist`
          : "no such command")
        : e instanceof Deno.errors.PermissionDenied
        ? "permission denied"
        : (e as Error).message;
      return Promise.reject(
        new Error(`cannot start server '${this.spec.name}' (command '${this.spec.command}'): ${why}`),
      );
    }
    const child = this.#proc.child;
    this.#writer = child.stdin.getWriter();
    const out = this.#readStdout(child.stdout);
    const err = this.#readStderr(child.stderr);
    this.#exited = child.status.then(async (status) => {
      this.#exit = status;
      this.#exitUnasked = !this.#closing;
      await Promise.allSettled([out, err]);
      this.#finish();
    }, () => this.#finish());
    return Promise.resolve();
  }

  async #readStdout(stream: ReadableStream<Uint8Array>): Promise<void> {
    // A BYOB reader over one reused buffer: the default reader allocates a fresh 64 KiB chunk
    // for every read, i.e. for every small message.
    const reader = stream.getReader({ mode: "byob" });
    const lines = new LineSplitter({ maxLineBytes: this.spec.maxMessageBytes });
    let space = new ArrayBuffer(READ_CHUNK_BYTES);
    try {
      while (true) {
        const { value, done } = await reader.read(new Uint8Array(space));
        if (done) break;
        let got: string[];
        try {
          got = lines.push(value);
        } catch (e) {
          if (!(e instanceof LineTooLong)) throw e;
          this.#fail(new MessageTooLarge(this.spec.name, e.limit).message);
          return;
        }
        space = value.buffer as ArrayBuffer;
        for (const line of got) {
          if (line.trim() === "") continue;
          if (!this.#deliver(line)) return;
        }
      }
      const rest = lines.finish();
      if (rest !== undefined && rest.trim() !== "") this.#deliver(rest);
    } catch {
      // The pipe broke: the exit handler reports it.
    } finally {
      // As leaving a for-await loop early would: a stream we stop reading is cancelled.
      reader.cancel().catch(() => undefined);
    }
  }

  /** Parses and delivers one line (a line that is not JSON-RPC is skipped); false once closed. */
  #deliver(line: string): boolean {
    if (this.#closed || this.#violation) return false;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch {
      const quoted = JSON.stringify(line.length > QUOTE_CHARS ? line.slice(0, QUOTE_CHARS) + "…" : line);
      this.#firstStray ??= quoted;
      this.onStrayLine?.({ quoted, count: ++this.#strays });
      return true;
    }
    try {
      this.onmessage?.(message);
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
    return true;
  }

  /** Records why the stream can no longer be trusted and ends the connection. */
  #fail(violation: string): void {
    this.#violation = violation;
    this.onerror?.(new Error(violation));
    void this.close();
  }

  async #readStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    let partial = "";
    try {
      for await (const chunk of stream) {
        const text = dec.decode(chunk, { stream: true });
        this.#stderrTail += text;
        if (this.#stderrTail.length > STDERR_TAIL_BYTES * 2) {
          this.#stderrTail = this.#stderrTail.slice(-STDERR_TAIL_BYTES);
        }
        if (this.onStderrLine) {
          const lines = (partial + text).split("\n");
          partial = lines.pop() ?? "";
          if (partial.length > STDERR_TAIL_BYTES) partial = partial.slice(-STDERR_TAIL_BYTES);
          for (const l of lines) if (l.trim()) this.onStderrLine(l);
        }
      }
      if (partial.trim()) this.onStderrLine?.(partial);
    } catch {
      // Ignored: stderr is diagnostics only.
    }
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#writer?.releaseLock();
    } catch {
      // A write still pending keeps the lock; the pipe is gone either way.
    }
    this.onclose?.();
  }

  /**
   * Why the connection is unusable, for error messages: a message past the size limit, or how
   * the child ended when it ended by itself (not when `close()` had asked it to first: the SDK
   * closes a transport whose handshake failed, and the child's own exit is still the reason),
   * plus what was skipped on stdout and the stderr tail. Empty while the child runs normally.
   */
  failure(): string {
    const parts: string[] = [];
    if (this.#violation) parts.push(this.#violation);
    else if (this.#exit && this.#exitUnasked) {
      parts.push(
        this.#exit.signal
          ? `server '${this.spec.name}' was killed by ${this.#exit.signal}`
          : `server '${this.spec.name}' exited with code ${this.#exit.code}`,
      );
    }
    if (parts.length === 0) return "";
    if (this.#firstStray !== undefined) parts.push(this.strayNote());
    const tail = this.#stderrTail.slice(-STDERR_TAIL_BYTES).trim();
    if (tail) parts.push(`stderr tail:\n${tail}`);
    return parts.join("; ");
  }

  /**
   * What a failed handshake's message adds: the first stdout line that was not JSON-RPC, if any
   * (a server that printed a banner and then nothing else times out; this says what it printed),
   * and the stderr tail. "" when there is neither.
   */
  handshakeNotes(): string {
    const stray = this.#firstStray === undefined ? "" : `; ${this.strayNote()}`;
    const tail = this.#stderrTail.slice(-STDERR_TAIL_BYTES).trim();
    return stray + (tail ? `; stderr tail:\n${tail}` : "");
  }

  /** Says what was skipped on stdout ("" when nothing was). */
  strayNote(): string {
    if (this.#firstStray === undefined) return "";
    const n = this.#strays === 1 ? "a line" : `${this.#strays} lines`;
    return `server '${this.spec.name}' wrote ${n} on stdout that ${this.#strays === 1 ? "is" : "are"} not ` +
      `JSON-RPC (skipped; stdout is reserved for JSON-RPC, log to stderr instead), the first: ${this.#firstStray}`;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed || !this.#writer) {
      throw new Error(this.failure() || `server '${this.spec.name}' is not connected`);
    }
    try {
      await this.#writer.write(this.#enc.encode(JSON.stringify(message) + "\n"));
    } catch {
      throw new Error(this.failure() || `server '${this.spec.name}' closed its stdin`);
    }
  }

  /**
   * Closes stdin (a well-behaved server exits on EOF), waits briefly, then ends the process
   * group. Resolves once the child is gone.
   */
  async close(): Promise<void> {
    if (!this.#proc) return;
    if (!this.#violation) this.#closing = true;
    const proc = this.#proc;
    try {
      await this.#writer?.close();
    } catch {
      // Already closed or broken.
    }
    if (!proc.exited) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const gone = await Promise.race([
        proc.status.then(() => true, () => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), EOF_GRACE_MS))),
      ]);
      clearTimeout(timer);
      if (!gone) await proc.terminate();
    }
    await this.#exited;
  }
}

function isMissingDir(path: string): boolean {
  try {
    return !Deno.statSync(path).isDirectory;
  } catch {
    return true;
  }
}
