/**
 * `--sandbox-stage=proxy` (its configuration in its environment): the compiled binary's way to the sandbox's network proxy
 * (`src/sandbox/net_proxy.ts`), which the launcher starts outside a run's network namespace
 * under `--sandbox-net allow-list`. `cli.ts` dispatches here before anything else of the CLI is
 * loaded; from a source checkout the launcher starts `src/sandbox/net_proxy_main.ts` instead.
 * @module
 */
import { proxyStage } from "../sandbox/net_proxy.ts";

/** Serves the proxy (configured by the launcher) until the run is gone; returns the exit code. */
export function runProxyStage(): Promise<number> {
  return proxyStage();
}
