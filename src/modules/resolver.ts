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
 *   `checkSeals` finds every filesystem copy before the script starts. A copy is a Lua file that
 *   `require` would load for a name under a sealed root (`knl.lua`, `knl/init.lua`,
 *   `knl/views.lua`, ...) — a directory with no Lua file in it is not one. With the unseal, each
 *   sealed module replaced by a file is warned about once per run, naming the file.
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
/** One dot-free segment of a module name. */
const SEGMENT = /^[A-Za-z0-9_-]+$/;
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

  /** Sealed modules already warned about (`AGENT_BLOCK_UNSEAL=1`): one warning per module a run. */
  #warnedSealed = new Set<string>();

  /** Warns, once per module, that the sealed `module` is replaced by `file`. */
  warnUnsealed(module: string, file: string): void {
    if (this.#warnedSealed.has(module)) return;
    this.#warnedSealed.add(module);
    this.warn(
      `sealed module '${module}' is replaced by ${displayPath(file, this.cwd)} (AGENT_BLOCK_UNSEAL=1)`,
    );
  }

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
            if (sealed) this.warnUnsealed(name, candidate);
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
   * Every filesystem copy of a sealed module on any tier, one per module (the file `require`
   * would load: the nearest tier's, `<name>.lua` before `<name>/init.lua`), in search order.
   * Runs before every script, so it never lists a tier (the script's directory may hold
   * thousands of files): one `stat` per tier, then for a tier that exists one `lstat` of
   * `<root>.lua` per sealed root (a dangling symlink counts: it is a copy that cannot be read)
   * and, only where a `<root>/` directory exists, a walk of that directory for `.lua` files.
   */
  checkSeals(): SealViolation[] {
    const byModule = new Map<string, SealViolation>();
    const add = (module: string, file: string) => {
      if (!byModule.has(module)) byModule.set(module, { module, file });
    };
    for (const tier of this.tiers) {
      if (!isDir(tier.dir)) continue; // nothing on this tier
      for (const root of SEALED_ROOTS) {
        const single = join(tier.dir, `${root}.lua`);
        const dir = join(tier.dir, root);
        const inDir = isDir(dir) ? luaModulesIn(dir, root) : [];
        // The order `resolve` tries: <root>.lua, then <root>/init.lua (then sub-modules).
        if (exists(single)) add(root, single);
        for (const m of inDir) add(m.module, m.file);
      }
    }
    return [...byModule.values()];
  }
}

/** Deepest directory level `luaModulesIn` looks at (a sealed root's own tree is shallow). */
const SEAL_WALK_DEPTH = 16;

/**
 * The Lua files under `dir` (the directory of module `root`) as the modules `require` would load
 * them for: `init.lua` is `root` itself, `a/b.lua` and `a/b/init.lua` are `root.a.b`. Files whose
 * name is not a module name (`a.b.lua`, `my file.lua`) are never loaded and are left out.
 * Sorted, `init.lua` of a directory first, so the first file of a module is the one that loads.
 */
function luaModulesIn(dir: string, root: string, depth = 0): { module: string; file: string }[] {
  if (depth > SEAL_WALK_DEPTH) return [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return []; // unreadable: require cannot load from it either
  }
  const out: { module: string; file: string }[] = [];
  const subdirs: string[] = [];
  for (const e of entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) {
    if (e.name.endsWith(".lua") && !e.isDirectory) {
      const stem = e.name.slice(0, -4);
      if (stem === "init") out.unshift({ module: root, file: join(dir, e.name) });
      else if (SEGMENT.test(stem)) out.push({ module: `${root}.${stem}`, file: join(dir, e.name) });
    } else if ((e.isDirectory || e.isSymlink) && SEGMENT.test(e.name)) subdirs.push(e.name);
  }
  for (const d of subdirs) {
    const sub = join(dir, d);
    if (isDir(sub)) out.push(...luaModulesIn(sub, `${root}.${d}`, depth + 1));
  }
  return out;
}
