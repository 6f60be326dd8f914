/**
 * A module whose loading makes Deno lay out `node_modules`: it imports a file of one of a run's
 * npm packages (wasmoon's `package.json`, the smallest thing a run's packages hold), and the
 * first npm module a process loads makes Deno install the packages of the lockfile it was started
 * with. Loaded only by `layOutPackages` (`src/proc/self.ts`), before a process starts agent-block
 * from source; a compile root (deno.json's `compile.include`) like every lazily imported module.
 */
import wasmoonPackage from "wasmoon/package.json" with { type: "json" };

/** The package whose file was loaded. */
export const LAID_OUT_WITH: string = `${wasmoonPackage.name}@${wasmoonPackage.version}`;
