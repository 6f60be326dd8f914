/**
 * The sandbox's network proxy process (`src/sandbox/net_proxy.ts`), which the launcher starts
 * outside a run's network namespace under `--sandbox-net allow-list`: its configuration comes in
 * the variable the launcher sets for it (`PROXY_CONFIG_VAR`), read here, at this process's edge.
 *
 * Two ways in, one stage: the compiled binary is started as `<binary> --sandbox-stage=proxy`, which
 * `cli.ts` dispatches here before anything else of the CLI is loaded; from a source checkout the
 * launcher runs this file itself (`deno run --no-config`: its own entry, so that Deno starts
 * without the project's configuration — import map, lock file, npm state, ~15 ms of the proxy's
 * start — which it does not need: it imports only relative modules).
 * @module
 */
import { proxyStage } from "../sandbox/net_proxy.ts";
import { PROXY_CONFIG_VAR } from "../sandbox/net_bridge.ts";

/** Serves the proxy (configured by the launcher) until the run is gone; returns the exit code. */
export function runProxyStage(): Promise<number> {
  return proxyStage(Deno.env.get(PROXY_CONFIG_VAR));
}

if (import.meta.main) Deno.exit(await runProxyStage());
