/**
 * The standard library's host modules, in installation order.
 *
 * Owns the list every run installs (after the core, before the prelude runs). A package of the
 * standard library is one file under `src/host/` exporting a `HostModule`; adding it here is
 * the only registration it needs.
 *
 * Which ones are installed on first use (`lazily`, see `lazy.ts`): every package that neither the
 * prelude nor another package's setup needs, and whose whole Lua surface lives in tables it owns
 * (or behind `require`) — so a block pays start-up only for what it touches. `io`, `os`, `tool`,
 * `json_file`, `env`, `path` and `time` are installed eagerly: the prelude builds on `io`/`os`,
 * other packages register tools through `tool`, and the rest write into tables they share.
 */
import type { HostModule } from "./context.ts";
import { lazily } from "./lazy.ts";
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
import { type BusHost, busModule, installBus } from "./bus.ts";
import { installHttp } from "./http.ts";
import { installMesh } from "./mesh.ts";
import { installA2a } from "./a2a.ts";

const LAZY_BUS = lazily({ tables: ["bus"] }, installBus);

/** Host modules every run gets. */
export const STANDARD_MODULES: readonly HostModule[] = [
  installIo,
  installOs,
  installTool,
  lazily({ preload: ["knl.host"] }, installKnl),
  lazily({ tables: ["llm"], preload: ["llm_proto.transport"] }, installLlm),
  lazily({ tables: ["std.fs"] }, function installFsAndTools(engine, run) {
    installFs(engine, run);
    installFsTools(engine, run);
  }),
  installJsonFile,
  installEnv,
  installPath,
  installTime,
  lazily({ tables: ["sh"] }, installSh),
  lazily({ tables: ["std.kv", "std.sql", "std.ts"] }, installStores),
  LAZY_BUS,
  lazily({ tables: ["http"] }, installHttp),
  lazily({ tables: ["mcp"] }, installMcp),
  lazily({ tables: ["mesh"] }, installMesh),
  lazily({ tables: ["a2a"] }, installA2a),
];

/**
 * The standard modules of a run whose bus is `bus` (an embedder's): the same list with that bus
 * in place of the fresh one, installed on first use or, `eager`, before the script runs.
 */
export function standardModules(bus: BusHost | undefined, eager: boolean): readonly HostModule[] {
  if (!bus) return STANDARD_MODULES;
  const install = busModule(bus);
  return STANDARD_MODULES.map((
    m,
  ) => (m !== LAZY_BUS ? m : eager ? install : lazily({ tables: ["bus"] }, install)));
}
