/**
 * The sandbox proxy's entry from a source checkout: `deno run -A --no-config
 * src/sandbox/net_proxy_main.ts`, its configuration in its environment (`net_launch.ts`). Its own entry so that Deno starts
 * without the project's configuration (import map, lock file, npm state: ~15 ms of the proxy's
 * start) — the proxy imports only relative modules. The compiled binary reaches the same
 * `proxyStage` through `cli.ts --sandbox-stage=proxy`.
 * @module
 */
import { proxyStage } from "./net_proxy.ts";

Deno.exit(await proxyStage());
