/**
 * `agent-block blocks [-p DIR] [--json]`: the blocks `-b NAME` can run from this project.
 *
 * Owns the listing's output: one row per registered block (`src/blocks/registry.ts`: nearer tier
 * winning, sorted by name) with its name, tier, path (relative to the working directory when
 * below it) and description, or one JSON line each with `--json` (`BlockEntry`, absolute path).
 * An empty registry says which directories were searched; a file that looks like a block but is
 * not registered (its name cannot be one, it cannot be read) is a warning on stderr naming it and
 * why; a block whose header declares an MCP tool, resource or prompt badly (`---@tool` ...,
 * `src/blocks/declaration.ts`) is a warning naming its file and line. The project's `.env` is loaded first,
 * so `AGENT_BLOCK_HOME` set there moves the user tier as it does for a run.
 */
import { agentBlockHome } from "../config/env_settings.ts";
import { resolve } from "node:path";
import { AgentBlockError, EXIT } from "../errors.ts";
import { parseFlags } from "./args.ts";
import { edgeEnvironment } from "./environment.ts";
import { blockRoots, scanRegistry } from "../blocks/registry.ts";
import { displayPath } from "../modules/resolver.ts";
import { stringifyJson } from "../json/codec.ts";
import { writeStderr, writeStdout } from "../obs/log.ts";
import { isDir } from "../util/fs.ts";
import { table } from "./format.ts";

export const BLOCKS_HELP = `agent-block blocks — the blocks -b NAME can run

Usage:
  agent-block blocks [-p DIR] [--json]

Lists the registered blocks, nearer tier first winning a name: <project>/.agent-block/blocks/
(project-local), <project>/blocks/ (project), $AGENT_BLOCK_HOME/blocks/ (user). A block is
NAME.lua or NAME/init.lua directly in one of them; its description is its leading -- comment.

Options:
  -p, --project DIR   project root (default .)
      --json          one JSON line per block: name, tier, path (absolute), description
  -h, --help          print this help

Example:
  agent-block blocks -p ~/work/site
`;

const enc = new TextEncoder();

/** `agent-block blocks ...`; returns the exit code. */
export async function blocksCommand(argv: string[]): Promise<number> {
  const { values: v } = parseFlags(argv, {
    project: { type: "string", short: "p" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  }, { command: "blocks" });
  if (v.help) {
    writeStdout(enc.encode(BLOCKS_HELP));
    return EXIT.OK;
  }
  const project = (v.project as string | undefined) ?? ".";
  const edge = await edgeEnvironment(project);
  for (const w of edge.warnings) writeStderr(enc.encode(`[warn] agent-block: ${w}\n`));
  const root = resolve(edge.cwd, project);
  if (!isDir(root)) throw new AgentBlockError(`project directory ${project} does not exist`);
  const roots = blockRoots(root, agentBlockHome(edge.env, edge.cwd));
  const { blocks, skipped } = scanRegistry(roots);
  for (const x of skipped) {
    writeStderr(
      enc.encode(`[warn] agent-block: not registered: ${displayPath(x.path, edge.cwd)} (${x.reason})\n`),
    );
  }
  for (const b of blocks) {
    if (!b.declarationError) continue;
    const e = b.declarationError;
    writeStderr(enc.encode(
      `[warn] agent-block: ${displayPath(b.path, edge.cwd)}:${e.line}: ${e.message} ` +
        `(the block is not served as an MCP tool, resource or prompt)\n`,
    ));
  }
  if (v.json) {
    if (blocks.length) writeStdout(enc.encode(blocks.map((b) => stringifyJson(b)).join("\n") + "\n"));
  } else if (blocks.length === 0) {
    writeStdout(
      enc.encode(`no blocks (searched ${roots.map((r) => displayPath(r.dir, edge.cwd)).join(", ")})\n`),
    );
  } else {
    writeStdout(enc.encode(table(
      ["NAME", "TIER", "PATH", "DESCRIPTION"],
      blocks.map((b) => [b.name, b.tier, displayPath(b.path, edge.cwd), b.description || "-"]),
    )));
  }
  return await Promise.resolve(EXIT.OK);
}
