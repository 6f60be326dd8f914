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
import { installKnl } from "./knl.ts";
import { installLlm } from "./llm/install.ts";
import { installFs } from "./fs.ts";
import { installFsTools } from "./fs_tools.ts";
import { installJsonFile } from "./json_file.ts";
import { installEnv } from "./env.ts";
import { installPath } from "./path.ts";
import { installTime } from "./time.ts";
import { installSh } from "./sh.ts";
import { installStores } from "./stores/index.ts";
import { installBus } from "./bus.ts";
import { installHttp } from "./http.ts";

/** Host modules every run gets. */
export const STANDARD_MODULES: readonly HostModule[] = [
  installIo,
  installOs,
  installTool,
  installKnl,
  installLlm,
  installFs,
  installFsTools,
  installJsonFile,
  installEnv,
  installPath,
  installTime,
  installSh,
  installStores,
  installBus,
  installHttp,
  installMcp,
];
