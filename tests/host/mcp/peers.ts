/**
 * MCP test peers: real server processes the MCP tests talk to, started once per test file and
 * stopped by the test (each also exits on its own when its stdin closes or on SIGTERM).
 *
 * - our echo server (`examples/echo_mcp_server.ts`) and subscribe server, both eras;
 * - `@modelcontextprotocol/server-everything` (2025 era only), through
 *   `tests/fixtures/mcp/everything.ts`, which pins it to 127.0.0.1.
 * HTTP peers are ready when they print their URL (or, for server-everything, its port line).
 * Each peer's stdin is a pipe held by this process and every peer exits when it closes, so no
 * server outlives the test process, even one that is killed.
 */
import { join } from "node:path";
import { REPO_ROOT } from "../../helpers.ts";

export const DENO = Deno.execPath();
export const ECHO = join(REPO_ROOT, "examples/echo_mcp_server.ts");
export const SUBSCRIBE = join(REPO_ROOT, "examples/subscribe_test_server.ts");
export const EVERYTHING = join(REPO_ROOT, "tests/fixtures/mcp/everything.ts");
export const FIXTURES = join(REPO_ROOT, "tests/fixtures/mcp");

/** A running server process. */
export interface Peer {
  url: string;
  pid: number;
  /** Everything the process printed so far (stdout + stderr). */
  output(): string;
  stop(): Promise<void>;
}

/** A port that was free a moment ago (for servers that cannot pick their own). */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * Starts `deno run -A <args>` and resolves with the URL `toUrl` extracts from its output.
 * Rejects if the process exits first or prints nothing usable within 60 s.
 */
export async function startPeer(
  args: string[],
  toUrl: (output: string) => string | undefined,
  env: Record<string, string> = {},
): Promise<Peer> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", "--quiet", ...args],
    env,
    // Held open while the peer should live: the peers exit on EOF, so they end with this
    // process even if it dies without calling `stop`.
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdin = child.stdin.getWriter();
  let out = "";
  let onData: () => void = () => {};
  const pump = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) {
      out += dec.decode(chunk, { stream: true });
      onData();
    }
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]).catch(() => undefined);
  let stopped = false;
  const stop = async () => {
    if (!stopped) {
      stopped = true;
      await stdin.close().catch(() => undefined);
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
    }
    await child.status;
    await pumps;
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      onData = () => {
        const u = toUrl(out);
        if (u) resolve(u);
      };
      child.status.then((s) => reject(new Error(`peer ${args.join(" ")} exited (${s.code}): ${out}`)));
      timer = setTimeout(() => reject(new Error(`peer ${args.join(" ")} did not start: ${out}`)), 60_000);
    });
    return { url, pid: child.pid, output: () => out, stop };
  } catch (e) {
    await stop();
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/** Our echo server over HTTP (`extra` flags appended). */
export function startEchoHttp(extra: string[] = []): Promise<Peer> {
  return startPeer(
    [ECHO, "--transport", "http", "--port", "0", "--exit-on-stdin-close", ...extra],
    (o) => o.match(/ECHO_MCP_URL=(\S+)/)?.[1],
  );
}

/** The subscribe smoke server. */
export function startSubscribe(extra: string[] = []): Promise<Peer> {
  return startPeer(
    [SUBSCRIBE, "--exit-on-stdin-close", ...extra],
    (o) => o.match(/SUBSCRIBE_TEST_SERVER_URL=(\S+)/)?.[1],
  );
}

/** server-everything over `streamableHttp` (URL …/mcp) or `sse` (URL …/sse), on loopback. */
export function startEverything(mode: "streamableHttp" | "sse"): Promise<Peer> {
  const port = freePort();
  return startPeer(
    [EVERYTHING, mode],
    (o) =>
      /(listening|running) on port/i.test(o)
        ? `http://127.0.0.1:${port}/${mode === "sse" ? "sse" : "mcp"}`
        : undefined,
    { PORT: String(port), EXIT_ON_STDIN_CLOSE: "1" },
  );
}

/** Lua string literal for `s`. */
export function lq(s: string): string {
  return JSON.stringify(s);
}
