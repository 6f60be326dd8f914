/**
 * Where the kernel database of a run lives.
 *
 * Owns the resolution shared by `knl.open{}` in a script and `agent-block knl` on the command
 * line, so both name the same file: the path the edge read from `AGENT_BLOCK_KNL_PATH` when set
 * (`:memory:` included), else
 * `<project>/.agent-block/knl.sqlite`. A relative `{ sqlite = path }` is taken from the project root.
 */
import { isAbsolute, join, resolve } from "node:path";

/** The literal that names an in-memory database. */
export const MEMORY = ":memory:";

/**
 * The project's kernel database, or `override` (the run's `AGENT_BLOCK_KNL_PATH`, parsed at the
 * edge: `RunSettings.stores.kernel`) when given and not blank.
 */
export function defaultStorePath(projectRoot: string, override?: string): string {
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
