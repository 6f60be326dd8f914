/**
 * Where the kernel database of a run lives.
 *
 * Owns the resolution shared by `knl.open{}` in a script and `agent-block knl` on the command
 * line, so both name the same file: `AGENT_BLOCK_KNL_PATH` when set (`:memory:` included), else
 * `<project>/.agent-block/knl.sqlite`. A relative `{ sqlite = path }` is taken from the project root.
 */
import { isAbsolute, join, resolve } from "node:path";

/** The literal that names an in-memory database. */
export const MEMORY = ":memory:";

/** The variable that moves the kernel database (`:memory:` included). */
export const KNL_PATH_VAR = "AGENT_BLOCK_KNL_PATH";

/** The project's kernel database, honouring `AGENT_BLOCK_KNL_PATH`. */
export function defaultStorePath(projectRoot: string, env: (k: string) => string | undefined): string {
  const override = env(KNL_PATH_VAR);
  if (override !== undefined && override.trim() !== "") {
    return override === MEMORY ? MEMORY : resolve(projectRoot, override);
  }
  return join(projectRoot, ".agent-block", "knl.sqlite");
}

/** A store path given by a script or a flag, made absolute against `base`. */
export function storePathFrom(base: string, path: string): string {
  if (path === MEMORY) return MEMORY;
  return isAbsolute(path) ? path : resolve(base, path);
}
