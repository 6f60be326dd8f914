/**
 * The replay window's memory kept by another process: how a confined run (`--sandbox`) checks
 * message ids against a file it may not write.
 *
 * The memory's file (`FileSeenIds`, `seen_ids.ts`) must outlive a run, so a confined run could
 * make it forget ids if it could write it (a captured message would be accepted again by the
 * agent's next run). So the sandbox launcher, which stays the run's parent outside the boundary,
 * opens the file before confining itself (an open descriptor keeps the write access the mount and
 * Landlock refuse the run) and serves it here; the runtime reaches it over a Unix socket.
 *
 * Owns:
 * - `serveSeenIds` (the launcher's side): a Unix socket in a fresh private directory, and one
 *   operation, `add(id, ts, now) → new | replay`. Add-only: nothing a client can send makes the
 *   memory forget an id, but for `SEEN_MAX`'s eviction of the oldest — so it serves ONE client,
 *   the first connection that opens with the token (`SEEN_TOKEN_VAR`); it then stops listening and
 *   removes its socket. The runtime connects at start-up, before any Lua runs or any child exists
 *   (`connectSeenIds`, from the CLI edge), so no child of the run can be that client, nor flood the
 *   memory to evict real ids; a connection without the token is closed unanswered. A malformed
 *   line ends the connection;
 * - `connectSeenIds` (the runtime's side): a `SeenIds` whose `add` asks the launcher. When the
 *   launcher is gone (or never answered), every `add` rejects: the transport drops the message
 *   rather than accept it unchecked (fail closed).
 * What holds where the sandbox has no mount namespace (its start-up line says `agent-block config
 * WRITABLE`): the one-client rule, so no child floods the memory through the launcher; not the
 * file, which the run may then write like the rest of that configuration.
 * The wire: the client's first line is the token; then one line `<id> <ts> <now>` per add, and one
 * answer line per add, in order: `new`, `replay`, or `error <text>`.
 */
import { join } from "node:path";
import type { SeenIds } from "./seen_ids.ts";
import { writeAll } from "../../net/byte_stream.ts";

/** The variable naming the launcher's socket for the confined runtime. */
export const SEEN_SOCKET_VAR = "AGENT_BLOCK_MESH_SEEN_SOCKET";
/** The variable holding the socket's token for the confined runtime. */
export const SEEN_TOKEN_VAR = "AGENT_BLOCK_MESH_SEEN_TOKEN";

const enc = new TextEncoder();
/** The longest line either side sends (an id is 36 characters, two numbers follow). */
const MAX_LINE = 256;
const LINE = /^([0-9a-fA-F-]{36}) (-?\d{1,16}) (-?\d{1,16})$/;

/** The launcher's service, listening. */
export interface SeenService {
  /** The socket's path. */
  socket: string;
  /** What the client's first line must be. */
  token: string;
  /** Settles once a client has been accepted (or the service closed). */
  accepted: Promise<void>;
  /** Stops listening, ends the client's connection and removes the socket's directory. */
  close(): void;
}

/**
 * Listens (synchronously: the socket exists on return, before the caller confines itself) on a
 * Unix socket in a fresh private directory under `tmp`, answering one client's adds from `store`.
 * `store` stays the caller's to close.
 */
export function serveSeenIds(store: SeenIds, tmp = "/tmp"): SeenService {
  const dir = Deno.makeTempDirSync({ dir: tmp, prefix: "agent-block-seen-" });
  Deno.chmodSync(dir, 0o700);
  const socket = join(dir, "seen.sock");
  const token = Array.from(crypto.getRandomValues(new Uint8Array(24)), (b) => b.toString(16).padStart(2, "0"))
    .join("");
  const listener = Deno.listen({ transport: "unix", path: socket });
  let client: Deno.UnixConn | undefined;
  let closed = false;
  let settle = () => {};
  const accepted = new Promise<void>((r) => (settle = r));
  const stopListening = () => {
    try {
      listener.close();
    } catch {
      // closed
    }
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // not removable where the caller is now (its own confinement): an empty directory is left
    }
  };
  void (async () => {
    try {
      for await (const conn of listener) {
        void (async () => {
          const lines = readLines(conn);
          const first = await lines.next().catch(() => ({ done: true, value: undefined }));
          if (first.done || first.value !== token || client !== undefined || closed) {
            conn.close();
            return;
          }
          client = conn;
          stopListening(); // one client: the runtime, connected before any child of the run exists
          settle();
          await answer(conn, lines, store).catch(() => undefined);
          try {
            conn.close();
          } catch {
            // closed
          }
        })();
      }
    } catch {
      // the listener closed
    }
  })();
  return {
    socket,
    token,
    accepted,
    close: () => {
      closed = true;
      stopListening();
      try {
        client?.close();
      } catch {
        // closed
      }
      settle();
    },
  };
}

/** Answers `lines` (after the token) from `store`, one line each, in order. */
async function answer(conn: Deno.UnixConn, lines: AsyncGenerator<string>, store: SeenIds): Promise<void> {
  for await (const line of lines) {
    const m = LINE.exec(line);
    if (!m) return; // not this protocol: the connection ends
    let reply: string;
    try {
      reply = await store.add(m[1].toLowerCase(), Number(m[2]), Number(m[3])) ? "new" : "replay";
    } catch (e) {
      reply = `error ${(e as Error).message}`.replace(/[\r\n]+/g, " ").slice(0, MAX_LINE - 2);
    }
    await writeAll(conn, enc.encode(reply + "\n"));
  }
}

/** The lines of `conn` (without their newlines); ends at EOF, throws on a line longer than `MAX_LINE`. */
async function* readLines(conn: Deno.Conn): AsyncGenerator<string> {
  const dec = new TextDecoder();
  const buf = new Uint8Array(4096);
  let text = "";
  for (;;) {
    let nl: number;
    while ((nl = text.indexOf("\n")) >= 0) {
      yield text.slice(0, nl);
      text = text.slice(nl + 1);
    }
    if (text.length > MAX_LINE) throw new Error("line too long");
    const n = await conn.read(buf);
    if (n === null) return;
    text += dec.decode(buf.subarray(0, n), { stream: true });
  }
}

/** The launcher's memory is not there to ask: every add fails (the message is dropped). */
export class SeenServiceGone extends Error {
  constructor(why: string) {
    super(`the sandbox launcher's seen-id memory is gone (${why})`);
    this.name = "SeenServiceGone";
  }
}

/**
 * The memory the launcher at `socket` keeps, reached with `token`. Never throws: a connection that
 * cannot be made gives a memory whose every `add` rejects (fail closed).
 */
export async function connectSeenIds(socket: string, token: string): Promise<RemoteSeenIds> {
  let conn: Deno.UnixConn;
  try {
    conn = await Deno.connect({ transport: "unix", path: socket });
    await writeAll(conn, enc.encode(token + "\n"));
  } catch (e) {
    return new RemoteSeenIds(undefined, (e as Error).message);
  }
  return new RemoteSeenIds(conn);
}

/** A `SeenIds` asking the launcher (`serveSeenIds`) over one connection. */
export class RemoteSeenIds implements SeenIds {
  #conn: Deno.UnixConn | undefined;
  #gone: string | undefined;
  #pending: { ok: (fresh: boolean) => void; fail: (e: Error) => void }[] = [];
  #writing: Promise<void> = Promise.resolve();

  constructor(conn: Deno.UnixConn | undefined, gone?: string) {
    this.#conn = conn;
    this.#gone = gone;
    if (conn) void this.#read(conn);
  }

  async #read(conn: Deno.UnixConn): Promise<void> {
    let why = "it closed the connection";
    try {
      for await (const line of readLines(conn)) {
        const p = this.#pending.shift();
        if (!p) throw new Error("an answer nobody asked for");
        if (line === "new" || line === "replay") p.ok(line === "new");
        else p.fail(new Error(line.startsWith("error ") ? line.slice(6) : `unexpected answer: ${line}`));
      }
    } catch (e) {
      why = (e as Error).message;
    }
    this.#end(why);
  }

  #end(why: string): void {
    this.#gone ??= why;
    const err = new SeenServiceGone(this.#gone);
    for (const p of this.#pending.splice(0)) p.fail(err);
    try {
      this.#conn?.close();
    } catch {
      // closed
    }
    this.#conn = undefined;
  }

  add(id: string, ts: number, now: number): Promise<boolean> {
    const conn = this.#conn;
    if (this.#gone !== undefined || conn === undefined) {
      return Promise.reject(new SeenServiceGone(this.#gone ?? "closed"));
    }
    return new Promise<boolean>((ok, fail) => {
      this.#pending.push({ ok, fail });
      const line = enc.encode(`${id} ${Math.trunc(ts)} ${Math.trunc(now)}\n`);
      // one line after another: a partial write must not interleave with the next add's
      this.#writing = this.#writing.then(() => writeAll(conn, line)).catch((e) =>
        this.#end((e as Error).message)
      );
    });
  }

  close(): void {
    this.#end("closed");
  }
}
