/**
 * The confined runtime's side of `--sandbox-net allow-list`: a loopback listener inside the run's
 * network namespace, bridged to the proxy's Unix socket outside it (`net_proxy.ts`), and the
 * subscription to the proxy's denial feed.
 *
 * Why in the runtime process: the namespace has no route out, so whatever speaks to the proxy
 * must be inside; the runtime is the first process there and outlives every request it makes
 * itself. `HTTPS_PROXY`, `HTTP_PROXY` and `ALL_PROXY` (set by the launcher, `net_launch.ts`)
 * name `http://127.0.0.1:BRIDGE_PORT`, so `fetch`, `curl`, `git`, `npm` and the MCP clients of
 * the run and of its children find the proxy unchanged; the mesh transports, which read no
 * variable, are handed the same URL by the CLI edge (`RunSpec.netProxy`). A fresh namespace has
 * no other listener, so the fixed port is free. Started from the CLI edge at `--sandbox-stage=runtime`
 * (`src/cli/main.ts`), before any Lua; the proxy starts beside the runtime, so the bridge's
 * first connection waits for its socket (`connectProxy`).
 *
 * Also names the variables through which the launcher hands the proxy across a process start:
 * the socket and token this stage reads, and the proxy's own configuration (`PROXY_CONFIG_VAR`,
 * read at the proxy's entry, `src/cli/proxy_stage.ts`).
 */
import { connectProxy, type Denial, DENIAL_FEED, splice, writeAll } from "./net_pipe.ts";

/** The loopback port the bridge listens on inside the run's network namespace. */
export const BRIDGE_PORT = 3128;

/** The variable naming the proxy's Unix socket for the confined runtime. */
export const SOCKET_VAR = "AGENT_BLOCK_SANDBOX_NET_SOCKET";

/** The variable holding the proxy's token for the confined runtime (`net_proxy.ts`). */
export const TOKEN_VAR = "AGENT_BLOCK_SANDBOX_NET_TOKEN";

/**
 * The variable holding the proxy's own configuration (`ProxyStageConfig` as JSON), set by the
 * launcher in the proxy's environment alone and read at the proxy stage's entry.
 */
export const PROXY_CONFIG_VAR = "AGENT_BLOCK_SANDBOX_PROXY_CONFIG";

/** The bridge while the run lasts. */
export interface Bridge {
  /**
   * Resolves once the proxy has registered the denial feed; rejects when the proxy never answered
   * (`connectProxy`: it starts beside the run, and is waited for here).
   */
  ready: Promise<void>;
  close(): void;
}

/**
 * Listens on `127.0.0.1:BRIDGE_PORT` and carries each connection to the proxy at `socket`, each
 * opened with the proxy's `token` line;
 * `onDenial` is told of every connection the proxy refuses.
 */
export function startBridge(socket: string, token: string, onDenial: (d: Denial) => void): Bridge {
  const hello = new TextEncoder().encode(`${token}\r\n`);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: BRIDGE_PORT });
  void (async () => {
    try {
      for await (const conn of listener) {
        conn.setNoDelay(true);
        void Deno.connect({ transport: "unix", path: socket }).then(
          async (up) => {
            await writeAll(up, hello).then(() => splice(conn, up), () => {
              up.close();
              conn.close();
            });
          },
          () => conn.close(),
        );
      }
    } catch {
      // closed
    }
  })();
  let feed: Deno.UnixConn | undefined;
  let registered = () => {};
  let unreachable = (_: Error) => {};
  const ready = new Promise<void>((resolve, reject) => {
    registered = resolve;
    unreachable = reject;
  });
  void (async () => {
    try {
      feed = await connectProxy(socket);
    } catch (e) {
      unreachable(e as Error);
      return;
    }
    try {
      await writeAll(feed, new TextEncoder().encode(`${token}\r\n${DENIAL_FEED}\r\n\r\n`));
      const dec = new TextDecoder();
      let pending = "";
      const buf = new Uint8Array(4096);
      while (true) {
        const n = await feed.read(buf);
        if (n === null) break;
        pending += dec.decode(buf.subarray(0, n), { stream: true });
        let nl;
        while ((nl = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line === "") {
            registered();
            continue;
          }
          try {
            onDenial(JSON.parse(line) as Denial);
          } catch {
            // a line that is not a denial: ignored
          }
        }
      }
    } catch {
      // the proxy is gone: requests fail, nothing more to record
    }
    registered();
  })();
  return {
    ready,
    close: () => {
      try {
        listener.close();
      } catch {
        // closed already
      }
      try {
        feed?.close();
      } catch {
        // closed already
      }
    },
  };
}
