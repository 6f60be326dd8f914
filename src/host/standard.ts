/**
 * The standard library's host modules, in installation order.
 *
 * Owns the list every run installs (after the core, before the prelude runs). A package of the
 * standard library is one file under `src/host/` exporting a `HostModule`; adding it here is
 * the only registration it needs.
 */
import type { HostModule } from "./context.ts";
import { installIo } from "./io.ts";
import { installMcp } from "./mcp.ts";
import { installOs } from "./os.ts";
import { installTool } from "./tool.ts";

/** Host modules every run gets. */
export const STANDARD_MODULES: readonly HostModule[] = [
  installIo,
  installOs,
  installTool,
  installMcp,
];
