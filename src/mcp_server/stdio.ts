/**
 * `agent-block mcp` over stdio: the block server on the process's stdin/stdout, for both eras.
 *
 * Owns the stdio lifetime: `serveStdio` (SDK v2) picks the era from the client's opening message
 * and pins one instance from the factory for the connection; the connection ends when stdin
 * reaches end-of-file (the client went away; requests in flight are aborted unanswered, as the
 * SDK does) or when `stop` aborts (then `drain` is awaited first, so calls in flight get their
 * answer), at which point the returned promise resolves.
 *
 * Invariant: stdout carries protocol messages only. Logs and everything the blocks print go to
 * stderr (see `src/runner/child.ts`); `StdioServerTransport` is created without arguments, which is
 * the form that works under Deno.
 */
import process from "node:process";
import type { Server } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { Logger } from "../obs/log.ts";

/** Serves `factory` over stdio; resolves when the client closes stdin or `stop` aborts. */
export function serveStdioUntilClosed(
  factory: () => Server,
  opts: { log: Logger; stop?: AbortSignal; drain?: () => Promise<unknown> },
): Promise<void> {
  return new Promise((resolve) => {
    const handle = serveStdio(factory, { onerror: (e) => opts.log.warn(`stdio: ${e.message}`) });
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      process.stdin.off("end", finish);
      process.stdin.off("close", finish);
      opts.stop?.removeEventListener("abort", stopped);
      handle.close().catch(() => undefined).finally(() => resolve());
    };
    // Stopped from outside: answer what is in flight (the runs are being ended) before closing.
    const stopped = () => {
      (opts.drain?.() ?? Promise.resolve())
        .then(() => new Promise((r) => setTimeout(r, 0)))
        .finally(finish);
    };
    process.stdin.on("end", finish);
    process.stdin.on("close", finish);
    if (opts.stop?.aborted) stopped();
    else opts.stop?.addEventListener("abort", stopped, { once: true });
  });
}
