/**
 * Module resolution for `require`, and the seal check.
 *
 * Owns the search order, first hit wins:
 *   1. the running script's directory,
 *   2. `<project>/.agent-block/lib/`,
 *   3. `<project>/lib/`,
 *   4. `$AGENT_BLOCK_HOME/lib/` (default `~/.agent-block/lib/`),
 *   5. the embedded library.
 * In each directory `<name>.lua` then `<name>/init.lua`, dots in the name being directories.
 * `embedded.<name>` resolves from memory only, ahead of every directory, so no file can stand in
 * for it. No `blocks/` directory is ever searched: blocks are run by name, never required.
 *
 * Invariants:
 * - A module name is dot-separated identifiers-ish segments; `..`, slashes and empty segments
 *   are refused, so a name cannot walk out of a tier.
 * - A sealed module (see `embedded.ts`) never resolves to a file unless `AGENT_BLOCK_UNSEAL=1`;
 *   `checkSeals` finds every filesystem copy before the script starts.
 * - A miss reports every place searched, in order.
 */
import { isAbsolute, join, relative } from "node:path";
import {
  embeddedBytecode,
  embeddedChunkName,
  type EmbeddedModule,
  embeddedModules,
  rootOf,
  SEALED_ROOTS,
} from "./embedded.ts";
import { blockRoots } from "../blocks/registry.ts";
import { exists, isDir, isFile } from "../util/fs.ts";

/** One directory of the search path. */
export interface LibTier {
  label: string;
  dir: string;
}

/**
 * Where a name resolved. `mode` is how to load `source`: "b" only for an embedded module's
 * precompiled bytecode (never for a file), "t" for text.
 */
export type Resolution =
  | { found: true; source: Uint8Array; mode: "b" | "t"; chunkname: string; info: string }
  | { found: false; searched: string[] };

/** A filesystem copy of a sealed module. */
export interface SealViolation {
  module: string;
  file: string;
}

const NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const enc = new TextEncoder();

/** The library tiers for a run, in search order. */
export function libTiers(scriptDir: string, projectRoot: string, home: string): LibTier[] {
  const tiers = [
    { label: "project .agent-block/lib", dir: join(projectRoot, ".agent-block", "lib") },
    { label: "project lib", dir: join(projectRoot, "lib") },
    { label: "user lib", dir: join(home, "lib") },
  ];
  // A block's own directory is a block root (or inside one): never on the require path, so a
  // helper dropped beside a block is not requirable and a block is not a module by accident.
  const inBlocks = blockRoots(projectRoot, home).some((r) =>
    isWithin(canonical(r.dir), canonical(scriptDir))
  );
  return inBlocks ? tiers : [{ label: "script directory", dir: scriptDir }, ...tiers];
}

function canonical(p: string): string {
  try {
    return Deno.realPathSync(p);
  } catch {
    return p;
  }
}

function isWithin(root: string, dir: string): boolean {
  const rel = relative(root, dir);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** A path as errors show it: relative to `cwd` (the run's working directory) when below it. */
export function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

/** How an embedded module is loaded: its bytecode when fresh (see `embeddedBytecode`), else its text. */
function embeddedResolution(m: EmbeddedModule, textOnly: boolean): Resolution {
  const bytecode = textOnly ? undefined : embeddedBytecode(m);
  return {
    found: true,
    source: bytecode ?? enc.encode(m.source),
    mode: bytecode ? "b" : "t",
    chunkname: embeddedChunkName(m.path),
    info: `embedded:${m.path}`,
  };
}

/** Resolves module names for one run. */
export class ModuleResolver {
  /**
   * @param tiers the directories searched, in order (absolute)
   * @param unseal whether a sealed module may resolve to a file (with a warning)
   * @param warn where warnings go
   * @param cwd the run's working directory: chunk names are shown relative to it
   */
  constructor(
    readonly tiers: LibTier[],
    readonly unseal: boolean,
    private readonly warn: (message: string) => void,
    private readonly cwd: string,
  ) {}

  /**
   * Resolves `name`. An embedded module comes as its precompiled bytecode when there is bytecode
   * for its current text, unless `textOnly` (the loader's retry when that bytecode does not load).
   */
  resolve(name: string, textOnly = false): Resolution {
    const embedded = embeddedModules();
    if (name.startsWith("embedded.")) {
      const m = embedded.get(name.slice("embedded.".length));
      if (m) {
        return embeddedResolution(m, textOnly);
      }
      return { found: false, searched: [`no embedded module '${name.slice("embedded.".length)}'`] };
    }
    if (!NAME.test(name)) {
      return { found: false, searched: [`'${name}' is not a valid module name (dot-separated names only)`] };
    }
    const rel = name.replace(/\./g, "/");
    const sealed = SEALED_ROOTS.has(rootOf(name));
    const searched: string[] = [];
    if (!sealed || this.unseal) {
      for (const tier of this.tiers) {
        // One stat for a tier that does not exist (most do not), not one failing stat per candidate.
        const present = isDir(tier.dir);
        for (const candidate of [join(tier.dir, `${rel}.lua`), join(tier.dir, rel, "init.lua")]) {
          if (present && isFile(candidate)) {
            if (sealed) {
              this.warn(`sealed module '${name}' is replaced by ${candidate} (AGENT_BLOCK_UNSEAL=1)`);
            }
            const shown = displayPath(candidate, this.cwd);
            return {
              found: true,
              source: Deno.readFileSync(candidate),
              mode: "t",
              chunkname: `@${shown}`,
              info: shown,
            };
          }
          searched.push(`no file '${candidate}'`);
        }
      }
    }
    const m = embedded.get(name);
    if (m) {
      return embeddedResolution(m, textOnly);
    }
    searched.push(`no embedded module '${name}'`);
    return { found: false, searched };
  }

  /**
   * Every filesystem copy of a sealed module on any tier (`<root>.lua` or a `<root>` entry).
   * Runs before every script, so it probes only the candidate names (never lists a directory:
   * the script's directory may hold thousands of files): one `stat` per tier, then, for a tier
   * that exists, one `lstat` per candidate (a dangling symlink counts as a copy).
   */
  checkSeals(): SealViolation[] {
    const found: SealViolation[] = [];
    for (const tier of this.tiers) {
      if (!isDir(tier.dir)) continue; // nothing on this tier
      for (const root of SEALED_ROOTS) {
        for (const entry of [`${root}.lua`, root]) {
          const file = join(tier.dir, entry);
          if (exists(file)) found.push({ module: root, file });
        }
      }
    }
    return found;
  }
}
