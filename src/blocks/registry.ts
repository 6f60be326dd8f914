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

/**
 * Tier of a block root.
 *
 * ```ts
 * import { blockRoots, type BlockTier } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const tiers: BlockTier[] = blockRoots("/srv/project", "/home/ci/.agent-block", ["/opt/blocks"])
 *   .map((root) => root.tier);
 * assert.deepEqual(tiers, ["project-local", "project", "user", "extra"]); // nearest first
 * ```
 */
export type BlockTier = "project-local" | "project" | "user" | "extra";

/**
 * A directory blocks are found in.
 *
 * ```ts
 * import { type BlockRoot, scanBlocks } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(join(dir, "lint.lua"), "-- Lints the repository.\nreturn 'clean'\n");
 * const roots: BlockRoot[] = [{ tier: "extra", dir }]; // blocks of your own, outside any project
 * const [lint] = scanBlocks(roots);
 * assert.equal(lint.name, "lint");
 * assert.equal(lint.description, "Lints the repository."); // its leading comment
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export interface BlockRoot {
  /** Which tier the directory is. */
  tier: BlockTier;
  /** Absolute directory. */
  dir: string;
}

/**
 * One registered block.
 *
 * ```ts
 * import { type BlockEntry, blockRoots, scanBlocks } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * const project = await Deno.makeTempDir();
 * await Deno.mkdir(join(project, "blocks", "report"), { recursive: true });
 * await Deno.writeTextFile(join(project, "blocks", "report", "init.lua"), "-- Weekly report.\nreturn 1\n");
 * const menu = (blocks: BlockEntry[]) => blocks.map((b) => `${b.name} (${b.tier}): ${b.description}`);
 * assert.deepEqual(menu(scanBlocks(blockRoots(project, join(project, "home")))), [
 *   "report (project): Weekly report.",
 * ]);
 * await Deno.remove(project, { recursive: true });
 * ```
 */
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

/**
 * The roots for a project, in precedence order: `<project>/.agent-block/blocks`,
 * `<project>/blocks`, `<home>/blocks`, then `extraDirs` (absolute; the caller resolves them).
 *
 * @example The roots `agent-block -b` searches
 * ```ts
 * import { blockRoots } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(blockRoots("/srv/project", "/home/ci/.agent-block"), [
 *   { tier: "project-local", dir: "/srv/project/.agent-block/blocks" },
 *   { tier: "project", dir: "/srv/project/blocks" },
 *   { tier: "user", dir: "/home/ci/.agent-block/blocks" },
 * ]);
 * ```
 */
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

/**
 * Every registered block, nearer tier winning, sorted by name. Directories that do not exist are
 * skipped.
 *
 * @example The nearer tier wins
 * ```ts
 * import { blockRoots, scanBlocks } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * const project = await Deno.makeTempDir();
 * const home = join(project, "home"); // $AGENT_BLOCK_HOME
 * await Deno.mkdir(join(project, "blocks"));
 * await Deno.mkdir(join(home, "blocks"), { recursive: true });
 * await Deno.writeTextFile(join(project, "blocks", "triage.lua"), "-- The project's triage.\nreturn 1\n");
 * await Deno.writeTextFile(join(home, "blocks", "triage.lua"), "-- My triage.\nreturn 2\n");
 * await Deno.writeTextFile(join(home, "blocks", "standup.lua"), "-- Standup notes.\nreturn 3\n");
 *
 * const blocks = scanBlocks(blockRoots(project, home));
 * assert.deepEqual(blocks.map((b) => [b.name, b.tier, b.description]), [
 *   ["standup", "user", "Standup notes."],
 *   ["triage", "project", "The project's triage."],
 * ]);
 * await Deno.remove(project, { recursive: true });
 * ```
 */
export function scanBlocks(roots: BlockRoot[]): BlockEntry[] {
  const byName = new Map<string, BlockEntry>();
  for (const root of roots) {
    for (const b of scanRoot(root).sort((a, b) => a.name < b.name ? -1 : 1)) {
      if (!byName.has(b.name)) byName.set(b.name, b);
    }
  }
  return [...byName.values()].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * The block called `name`, or undefined.
 *
 * @example Run a block by name, as `agent-block -b` does
 * ```ts
 * import { BlockConfig, blockRoots, findBlock, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * const project = await Deno.makeTempDir();
 * await Deno.mkdir(join(project, "blocks"));
 * await Deno.writeTextFile(
 *   join(project, "blocks", "greet.lua"),
 *   "-- Greets.\nreturn 'hello, ' .. _PROMPT\n",
 * );
 *
 * const roots = blockRoots(project, join(project, "home"));
 * assert.equal(findBlock(roots, "nope"), undefined);
 * const block = findBlock(roots, "greet")!;
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.path(block.path), project).prompt("world").env({}).build(),
 * );
 * assert.equal(report.value, "hello, world");
 * await Deno.remove(project, { recursive: true });
 * ```
 */
export function findBlock(roots: BlockRoot[], name: string): BlockEntry | undefined {
  return scanBlocks(roots).find((b) => b.name === name);
}
