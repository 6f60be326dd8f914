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
 * from `lib/`. The nearer tier wins a name clash. A name is the file (or directory) name as it is,
 * any letters and spaces included (`-b "café au lait"`; compared in Unicode NFC, so a name typed
 * on one system finds a file named on another); hidden entries (`.name`) are skipped. A name that
 * cannot be one — it starts with `-` (it would read as a flag), starts or ends with white space
 * (it could not be told apart), or holds a control character — and a block file that cannot be
 * read are not registered, and `scanRegistry` lists each with the reason, so the unknown-block
 * error (`unknownBlockText`, the one wording of `-b` and `lspec.run_block`) can say why a file that
 * is there does not count. A block's description is its leading
 * comment: `--` lines or a `--[[ ]]` long comment, after any blank lines (a first line that is
 * only the file's own path is skipped). Its header may declare it an MCP tool, resource or prompt
 * (`declaration.ts`); a malformed declaration is kept as `declarationError` with its line.
 *
 * Invariant: the registry is a pure function of the filesystem at the time of the call; callers
 * re-scan per request, so a block dropped into a root is callable at once.
 */
import { join } from "node:path";
import { type Declaration, type DeclarationError, parseDeclaration } from "./declaration.ts";

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
  /** The block's leading comment (`--` lines or a `--[[ ]]` comment), as one line. */
  description: string;
  /** What its header declares it to be over MCP (`---@tool`, `---@resource`, `---@prompt`). */
  declaration?: Declaration;
  /** Its header's declaration is malformed: the line and why (the block is then served as none). */
  declarationError?: DeclarationError;
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

/**
 * Why `name` cannot be a block name, or undefined when it can: the rule of the module doc (a
 * leading `-`, white space at either end, a control character or a line separator).
 */
export function blockNameProblem(name: string): string | undefined {
  if (name === "") return "the name is empty";
  if (/[\p{Cc}\u2028\u2029]/u.test(name)) return "the name holds a control character";
  if (name.startsWith("-")) return "the name starts with '-', so it would read as a flag";
  if (/^\s|\s$/u.test(name)) return "the name starts or ends with white space";
  return undefined;
}

/** The leading comment of a Lua source (`--` lines or a `--[[ ]]` comment), as one line of text. */
export function leadingDescription(source: string): string {
  const lines = source.replace(/^\uFEFF/, "").split(/\r?\n/);
  const out: string[] = [];
  // One line of comment text; false when the description has ended.
  const take = (text: string): boolean => {
    if (text === "") return out.length === 0; // blank before the text is skipped, after it ends it
    if (out.length === 0 && /^[\w./-]+\.lua$/.test(text)) return true; // the file's own path
    out.push(text);
    return true;
  };
  let i = lines[0]?.startsWith("#") ? 1 : 0; // a shebang (or a lone '#') is not the description
  while (i < lines.length && lines[i].trim() === "") i++;
  for (; i < lines.length; i++) {
    const l = lines[i].trim();
    const long = /^--\[(=*)\[(.*)$/.exec(l);
    if (long) {
      const close = `]${long[1]}]`;
      let rest = long[2];
      for (;;) {
        const end = rest.indexOf(close);
        if (!take((end < 0 ? rest : rest.slice(0, end)).trim()) || end >= 0 || ++i >= lines.length) break;
        rest = lines[i];
      }
      if (out.length) break; // a long comment is a whole description
      continue;
    }
    if (l === "" && out.length === 0) continue;
    if (!l.startsWith("--") || !take(l.replace(/^-+\s?/, "").trim())) break;
  }
  return out.join(" ");
}

function readBlock(path: string): { source: string } | { error: string } | undefined {
  try {
    if (!Deno.statSync(path).isFile) return undefined;
  } catch {
    return undefined; // no such file (a directory without init.lua is no block)
  }
  try {
    return { source: Deno.readTextFileSync(path) };
  } catch (e) {
    return { error: `it cannot be read: ${(e as Error).message}` };
  }
}

/** A file in a block root that is not registered, and why. */
export interface SkippedBlock {
  /** The name it would have. */
  name: string;
  /** Absolute path of the script. */
  path: string;
  /** Why it is not a block. */
  reason: string;
}

/** Blocks found directly in one root (unsorted), and the files that are not blocks, with why. */
function scanRoot(root: BlockRoot): { blocks: BlockEntry[]; skipped: SkippedBlock[] } {
  const blocks: BlockEntry[] = [];
  const skipped: SkippedBlock[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(root.dir)];
  } catch {
    return { blocks, skipped };
  }
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
    const read = readBlock(path);
    if (read === undefined) continue;
    if ("error" in read) {
      skipped.push({ name, path, reason: read.error });
      continue;
    }
    const problem = blockNameProblem(name);
    if (problem !== undefined) {
      skipped.push({ name, path, reason: problem });
      continue;
    }
    const header = parseDeclaration(read.source);
    const entry: BlockEntry = {
      name: name.normalize("NFC"),
      tier: root.tier,
      path,
      description: leadingDescription(read.source),
    };
    if (header.declaration) entry.declaration = header.declaration;
    if (header.error) entry.declarationError = header.error;
    blocks.push(entry);
  }
  return { blocks, skipped };
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
  return scanRegistry(roots).blocks;
}

/**
 * `scanBlocks`, plus the files in the roots that look like blocks but are not registered (a name
 * `blockNameProblem` refuses, a file that cannot be read), each with its reason, in root order.
 */
export function scanRegistry(roots: BlockRoot[]): { blocks: BlockEntry[]; skipped: SkippedBlock[] } {
  const byName = new Map<string, BlockEntry>();
  const skipped: SkippedBlock[] = [];
  for (const root of roots) {
    const found = scanRoot(root);
    for (const b of found.blocks.sort((a, b) => a.name < b.name ? -1 : 1)) {
      if (!byName.has(b.name)) byName.set(b.name, b);
    }
    skipped.push(...found.skipped.sort((a, b) => a.name < b.name ? -1 : 1));
  }
  const blocks = [...byName.values()].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return { blocks, skipped };
}

/**
 * What an unknown-block error adds about the files that are there but not registered:
 * `; not registered: <path> (<reason>), ...`, or nothing when there are none.
 */
export function notRegisteredNote(skipped: readonly SkippedBlock[]): string {
  return skipped.length
    ? `; not registered: ${skipped.map((x) => `${x.path} (${x.reason})`).join(", ")}`
    : "";
}

/**
 * The message of an unknown-block error: the name, `near` as a "did you mean" when given, the
 * blocks there are, the directories searched (then `hint`, when given) and what is there but not
 * registered.
 */
export function unknownBlockText(
  name: string,
  roots: BlockRoot[],
  opts: { near?: string; hint?: string } = {},
): string {
  const { blocks, skipped } = scanRegistry(roots);
  const known = blocks.map((x) => x.name);
  return `unknown block '${name}'${opts.near ? ` (did you mean '${opts.near}'?)` : ""}; ` +
    `known blocks: ${known.length ? known.join(", ") : "(none)"} ` +
    `(searched ${roots.map((r) => r.dir).join(", ")}${opts.hint ? `; ${opts.hint}` : ""})` +
    notRegisteredNote(skipped);
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
  const wanted = name.normalize("NFC");
  return scanBlocks(roots).find((b) => b.name === wanted);
}
