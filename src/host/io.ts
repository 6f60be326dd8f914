/**
 * Host side of Lua's `io` library and of `print`: real files, pipes and standard streams.
 *
 * Owns the handle table of one run. Handles 0, 1, 2 are stdin, stdout and stderr; others are
 * files opened with `io.open` (read and written synchronously: regular files do not block for
 * long) or pipes from `io.popen` (read and written asynchronously through `host_call`, so other
 * tasks run while a command produces output). The prelude implements the read formats in Lua on
 * top of `read_chunk`; this module only moves bytes.
 *
 * Paths: `io.open` (and `io.lines`, `io.input`/`io.output` with a name, built on it in the
 * prelude) resolves a relative path against the run's working directory (`run.resolve`), and
 * `io.popen` runs its command there; messages name the path as given.
 *
 * Invariants: every handle still open when the run ends is closed; every `io.popen` child is a
 * process group of the run's `ProcessGroups` and ends with it.
 */
import type { LuaEngine } from "../lua/engine.ts";
import { LuaMulti } from "../json/values.ts";
import type { RunContext } from "./context.ts";
import { osError } from "./os_error.ts";
import type { ManagedProcess } from "../proc/group.ts";

const CHUNK = 64 * 1024;
const enc = new TextEncoder();

type Handle =
  | { kind: "file"; file: Deno.FsFile }
  | {
    kind: "pipe";
    proc: ManagedProcess;
    reader?: ReadableStreamDefaultReader<Uint8Array>;
    writer?: WritableStreamDefaultWriter<Uint8Array>;
  }
  | { kind: "stdin"; reader?: ReadableStreamDefaultReader<Uint8Array> };

function toBytes(v: string | Uint8Array): Uint8Array {
  return typeof v === "string" ? enc.encode(v) : v;
}

function openOptions(mode: string): Deno.OpenOptions {
  switch (mode) {
    case "r":
      return { read: true };
    case "w":
      return { write: true, create: true, truncate: true };
    case "a":
      return { append: true, create: true };
    case "r+":
      return { read: true, write: true };
    case "w+":
      return { read: true, write: true, create: true, truncate: true };
    default: // "a+"
      return { read: true, append: true, create: true };
  }
}

/** Installs `print`'s sink and the `io` handle primitives. */
export function installIo(engine: LuaEngine, run: RunContext): void {
  const handles = new Map<number, Handle>([[0, { kind: "stdin" }]]);
  let next = 3;
  const failure = (what: string, e: unknown) => {
    const { message, errno } = osError(e);
    return new LuaMulti([undefined, `${what}: ${message}`, errno]);
  };
  const get = (h: number): Handle => {
    const handle = handles.get(h);
    if (!handle) throw new Error(`file handle ${h} is closed`);
    return handle;
  };

  run.onCleanup(() => {
    for (const [, h] of handles) {
      if (h.kind === "file") {
        try {
          h.file.close();
        } catch { /* already closed */ }
      }
    }
    handles.clear();
  });

  engine.define("@write", {
    sync: (a) => {
      const fd = a.integer(1, "fd");
      const data = toBytes(a.bytes(2, "data"));
      (fd === 2 ? run.stderr : run.stdout)(data);
    },
  });

  engine.define("@io_open", {
    sync: (a) => {
      const path = a.string(1, "path");
      try {
        const file = Deno.openSync(run.resolve(path), openOptions(a.string(2, "mode")));
        if (file.statSync().isDirectory && a.string(2, "mode") !== "r") {
          file.close();
          return new LuaMulti([undefined, `${path}: Is a directory`, 21]);
        }
        const id = next++;
        handles.set(id, { kind: "file", file });
        return id;
      } catch (e) {
        return failure(path, e);
      }
    },
  });

  engine.define("@io_read_chunk", {
    sync: (a) => {
      const h = get(a.integer(1, "handle"));
      if (h.kind !== "file") throw new Error("not a regular file");
      const buf = new Uint8Array(CHUNK);
      try {
        const n = h.file.readSync(buf);
        return n === null ? undefined : buf.subarray(0, n);
      } catch (e) {
        const { message } = osError(e);
        throw new Error(`read failed: ${message}`);
      }
    },
  });

  engine.define("@io_write", {
    sync: (a) => {
      const id = a.integer(1, "handle");
      const data = toBytes(a.bytes(2, "data"));
      if (id === 1 || id === 2) {
        (id === 2 ? run.stderr : run.stdout)(data);
        return true;
      }
      const h = get(id);
      if (h.kind !== "file") throw new Error("not a regular file");
      try {
        let off = 0;
        while (off < data.length) off += h.file.writeSync(data.subarray(off));
        return true;
      } catch (e) {
        const { message, errno } = osError(e);
        return new LuaMulti([undefined, message, errno]);
      }
    },
  });

  engine.define("@io_seek", {
    sync: (a) => {
      const h = get(a.integer(1, "handle"));
      if (h.kind !== "file") return new LuaMulti([undefined, "Illegal seek", 29]);
      const whence = a.string(2, "whence");
      const w = whence === "set"
        ? Deno.SeekMode.Start
        : whence === "end"
        ? Deno.SeekMode.End
        : Deno.SeekMode.Current;
      try {
        return h.file.seekSync(a.integer(3, "offset"), w);
      } catch (e) {
        const { message, errno } = osError(e);
        return new LuaMulti([undefined, message, errno]);
      }
    },
  });

  engine.define("@io_close", {
    sync: (a) => {
      const id = a.integer(1, "handle");
      const h = handles.get(id);
      handles.delete(id);
      if (h?.kind === "file") h.file.close();
      return true;
    },
  });

  engine.define("@io_popen", {
    sync: (a) => {
      const cmd = a.string(1, "command");
      const mode = a.string(2, "mode");
      try {
        const proc = run.procs.spawn({
          cmd: ["/bin/sh", "-c", cmd],
          cwd: run.cwd,
          stdin: mode === "w" ? "piped" : "null",
          stdout: mode === "r" ? "piped" : "inherit",
          stderr: "inherit",
        });
        const id = next++;
        handles.set(id, {
          kind: "pipe",
          proc,
          reader: mode === "r" ? proc.child.stdout.getReader() : undefined,
          writer: mode === "w" ? proc.child.stdin.getWriter() : undefined,
        });
        return id;
      } catch (e) {
        return failure(cmd, e);
      }
    },
  });

  engine.defineOp("io.read_chunk", {
    async: async (a) => {
      const id = a.integer(1, "handle");
      const h = get(id);
      if (h.kind === "stdin") {
        h.reader ??= Deno.stdin.readable.getReader();
        const r = await h.reader.read();
        return r.done ? undefined : r.value;
      }
      if (h.kind !== "pipe" || !h.reader) throw new Error("pipe is not open for reading");
      const r = await h.reader.read();
      return r.done ? undefined : r.value;
    },
  });

  engine.defineOp("io.write_pipe", {
    async: async (a) => {
      const h = get(a.integer(1, "handle"));
      if (h.kind !== "pipe" || !h.writer) throw new Error("pipe is not open for writing");
      try {
        await h.writer.write(toBytes(a.bytes(2, "data")));
        return true;
      } catch (e) {
        return new LuaMulti([undefined, osError(e).message, 32]);
      }
    },
  });

  engine.defineOp("io.pclose", {
    async: async (a) => {
      const id = a.integer(1, "handle");
      const h = get(id);
      handles.delete(id);
      if (h.kind !== "pipe") throw new Error("not a pipe");
      await h.writer?.close().catch(() => undefined);
      await h.reader?.cancel().catch(() => undefined);
      const status = await h.proc.status;
      return exitTriple(status);
    },
  });
}

/** Lua's `true|nil, "exit"|"signal", code` for a finished command. */
export function exitTriple(status: Deno.CommandStatus): LuaMulti {
  if (status.signal) {
    return new LuaMulti([undefined, "signal", signalNumber(status.signal)]);
  }
  return new LuaMulti([status.success ? true : undefined, "exit", status.code]);
}

const SIGNALS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
};

/** The number of a signal name (`SIGTERM` → 15). */
export function signalNumber(name: string): number {
  return SIGNALS[name] ?? 0;
}
