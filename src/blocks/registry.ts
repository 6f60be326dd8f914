/**
 * The block registry: which scripts are callable by name, shared by `agent-block -b NAME` and the
 * MCP server's `run_block`.
 *
 * Owns the roots, nearest first:
 *   1. `<project>/.agent-block/blocks/` (tier `project-local`),
 *   2. `<project>/blocks/` (tier `project`),
 *   3. `$AGENT_BLOCK_HOME/blocks/` (tier `user`),
 *   4. each extra directory (`--block-dir`, tier `extra`; absolute: the caller resolves it).
 * A block is `<name>.lua` or `<name>/init.lua` directly inside a root — nothing deeper, nothing
 * from `lib/`. The nearer tier wins a name clash. A block's description is its leading `--`
 * comment (a first line that is only the file's own path is skipped).
 *
 * Invariant: the registry is a pure function of the filesystem at the time of the call; callers
 * re-scan per request, so a block dropped into a root is callable at once.
 */
import { join } from "node:path";

/** Tier of a block root. */
export type BlockTier = "project-local" | "project" | "user" | "extra";

/** A directory blocks are found in. */
export interface BlockRoot {
  /** Which tier the directory is. */
  tier: BlockTier;
  /** Absolute directory. */
  dir: string;
}

/** One registered block. */
export interface BlockEntry {
  /** The name `-b` and `run_block` take. */
  name: string;
  /** The tier the block was found on. */
  tier: BlockTier;
  /** Absolute path of the script. */
  path: string;
  /** The block's leading `--` comment, as one line. */
  description: string;
}

/** The roots for a project, in precedence order. */
export function blockRoots(projectRoot: string, home: string, extraDirs: string[] = []): BlockRoot[] {
  return [
    { tier: "project-local", dir: join(projectRoot, ".agent-block", "blocks") },
    { tier: "project", dir: join(projectRoot, "blocks") },
    { tier: "user", dir: join(home, "blocks") },
    ...extraDirs.map((d) => ({ tier: "extra" as const, dir: d })),
  ];
}

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** The leading `--` comment of a Lua source, as one line of text. */
export function leadingDescription(source: string): string {
  const lines = source.split(/\r?\n/);
  const out: string[] = [];
  let i = 0;
  if (lines[0]?.startsWith("#!")) i++;
  for (; i < lines.length; i++) {
    const l = lines[i].trim();
    if (!l.startsWith("--")) break;
    if (l.startsWith("--[[") || l.startsWith("--[=")) break;
    const text = l.replace(/^-+\s?/, "").trim();
    if (out.length === 0 && (text === "" || /^[\w./-]+\.lua$/.test(text))) continue;
    if (text === "" && out.length) break;
    out.push(text);
  }
  return out.join(" ");
}

function readIfFile(path: string): string | undefined {
  try {
    if (!Deno.statSync(path).isFile) return undefined;
    return Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
}

/** Blocks found directly in one root (unsorted). */
function scanRoot(root: BlockRoot): BlockEntry[] {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(root.dir)];
  } catch {
    return [];
  }
  const out: BlockEntry[] = [];
  for (const e of entries) {
    if (e.name.startsWith(".")) continue;
    let name: string;
    let path: string;
    if (e.name.endsWith(".lua") && !e.isDirectory) {
      name = e.name.slice(0, -4);
      path = join(root.dir, e.name);
    } else if (e.isDirectory || e.isSymlink) {
      name = e.name;
      path = join(root.dir, e.name, "init.lua");
    } else continue;
    if (!NAME.test(name)) continue;
    const src = readIfFile(path);
    if (src === undefined) continue;
    out.push({ name, tier: root.tier, path, description: leadingDescription(src) });
  }
  return out;
}

/** Every registered block, nearer tier winning, sorted by name. */
export function scanBlocks(roots: BlockRoot[]): BlockEntry[] {
  const byName = new Map<string, BlockEntry>();
  for (const root of roots) {
    for (const b of scanRoot(root).sort((a, b) => a.name < b.name ? -1 : 1)) {
      if (!byName.has(b.name)) byName.set(b.name, b);
    }
  }
  return [...byName.values()].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** The block called `name`, or undefined. */
export function findBlock(roots: BlockRoot[], name: string): BlockEntry | undefined {
  return scanBlocks(roots).find((b) => b.name === name);
}
