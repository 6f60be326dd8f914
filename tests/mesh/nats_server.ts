/**
 * A real `nats-server` (Debian's package) for the mesh tests, on 127.0.0.1 and a free port.
 *
 * Owns starting one (`startNats`), learning its port from its log, restarting it on the same
 * port (`restart`: the clients' reconnect test), stalling it (`pause` and `resume`: SIGSTOP and
 * SIGCONT, so a request sent meanwhile waits unanswered in its socket — the run queue's lost
 * request tests) and stopping it (a paused server too: it is killed). With `{ jetstream: true }` it runs
 * JetStream (`-js`) with its store in the test's temporary directory, kept across `restart` (file
 * storage: what the run queue tests restart it for). It stops by itself too: the
 * server runs under a small shell that ends it when its stdin closes, and stdin is a pipe from
 * the test process — if the test process dies, the server follows.
 *
 * A test holds it with `await using srv = await startNats()`: the server is stopped when the
 * test's scope ends, an assertion failure included, and stopping is bounded (the shell and the
 * server are killed if they have not ended within 5 s), so a failing test never leaves a server
 * behind or hangs the suite. Starting is bounded too (20 s), however the server behaves.
 */
import { join } from "node:path";
import { tempDir } from "../helpers.ts";

/** Why the NATS tests are skipped, or `undefined` when `nats-server` is on PATH. */
export function natsMissing(): string | undefined {
  try {
    const r = new Deno.Command("nats-server", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync();
    return r.success ? undefined : "nats-server --version failed";
  } catch {
    return "nats-server is not installed (Debian package nats-server; .ci/run installs it)";
  }
}

/** True when every thread of process `pid` is in the stopped state (`T` in its `/proc` stat). */
function allStopped(pid: number): boolean {
  const states: string[] = [];
  for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/stat`);
      states.push(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
    } catch { /* the thread ended */ }
  }
  return states.length > 0 && states.every((c) => c === "T" || c === "t");
}

/** One running server; disposing of it stops it. */
export interface NatsServer extends AsyncDisposable {
  /** `nats://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /**
   * Stops the server and starts it again on the same port (core state is lost; a JetStream store is
   * kept). A paused server is killed as it is: what it had not read yet is lost.
   */
  restart(): Promise<void>;
  /**
   * Stalls the running server (SIGSTOP) and returns once every thread of it is stopped (Linux's
   * `/proc`, bounded): from then on it answers nothing until `resume`.
   */
  pause(): Promise<void>;
  /** Lets a paused server go on (SIGCONT). */
  resume(): void;
  /** Stops it (idempotent). */
  stop(): Promise<void>;
}

interface Running {
  child: Deno.ChildProcess;
  /** The server's own pid (from its log). */
  pid: number;
  stdin: WritableStreamDefaultWriter<Uint8Array>;
}

/**
 * Starts `nats-server` on 127.0.0.1. `config` is extra server configuration text (for example
 * `max_payload: 4096`, or an `authorization` block).
 */
export async function startNats(config = "", opts: { jetstream?: boolean } = {}): Promise<NatsServer> {
  const dir = await tempDir("ab_nats_");
  const conf = join(dir, "nats.conf");
  await Deno.writeTextFile(conf, config);
  let port = -1;
  let running: Running | undefined;

  const start = async (): Promise<void> => {
    const args = ["-c", conf, "-a", "127.0.0.1", "-p", String(port)];
    if (opts.jetstream) args.push("-js", "-sd", join(dir, "store"));
    const child = new Deno.Command("sh", {
      // the server ends when the test process's pipe to this shell closes
      args: ["-c", 'nats-server "$@" & pid=$!; cat >/dev/null; kill -KILL $pid; wait $pid', "sh", ...args],
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stdin = child.stdin.getWriter();
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let log = "";
    // the read races a deadline, so a server that neither logs nor exits cannot hold the test
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((res) => (timer = setTimeout(() => res("late"), 20_000)));
    try {
      while (true) {
        const m = /Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(log);
        if (m) {
          port = Number(m[1]);
          break;
        }
        const next = /Fatal|Error/.test(log) ? "late" : await Promise.race([reader.read(), late]);
        if (next === "late" || next.done) {
          running = { child, stdin, pid: Number(/^\[(\d+)\]/m.exec(log)?.[1] ?? 0) };
          await reader.cancel().catch(() => {});
          await stop();
          throw new Error(`nats-server did not start:\n${log}`);
        }
        log += next.value;
      }
    } finally {
      clearTimeout(timer);
    }
    // keep draining its log so the server never blocks on a full pipe
    (async () => {
      try {
        while (!(await reader.read()).done) { /* drain */ }
      } catch { /* ended */ }
    })();
    running = { child, stdin, pid: Number(/^\[(\d+)\]/m.exec(log)?.[1] ?? 0) };
  };

  const stop = async (): Promise<void> => {
    const r = running;
    running = undefined;
    if (!r) return;
    await r.stdin.close().catch(() => {});
    // the shell ends the server when its stdin closes; should it not within 5 s, both are killed
    let timer: ReturnType<typeof setTimeout> | undefined;
    const exited = await Promise.race([
      r.child.status.then(() => true),
      new Promise<boolean>((res) => (timer = setTimeout(() => res(false), 5000))),
    ]);
    clearTimeout(timer);
    if (!exited) {
      const kills = [() => r.child.kill("SIGKILL")];
      if (r.pid > 0) kills.unshift(() => Deno.kill(r.pid, "SIGKILL")); // never 0: that is our group
      for (const kill of kills) {
        try {
          kill();
        } catch { /* already gone */ }
      }
      await r.child.status;
    }
  };

  const signalServer = (signal: Deno.Signal): number => {
    const pid = running?.pid ?? 0;
    if (pid <= 0) throw new Error("nats-server is not running (or its pid is unknown)");
    Deno.kill(pid, signal);
    return pid;
  };

  await start();
  return {
    get url() {
      return `nats://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    restart: async () => {
      await stop();
      await start();
    },
    pause: async () => {
      const pid = signalServer("SIGSTOP");
      // the signal is delivered asynchronously: wait until no thread of the server can still run
      const deadline = Date.now() + 10_000;
      while (!allStopped(pid)) {
        if (Date.now() > deadline) throw new Error(`nats-server ${pid} did not stop within 10 s of SIGSTOP`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    resume: () => {
      signalServer("SIGCONT");
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
