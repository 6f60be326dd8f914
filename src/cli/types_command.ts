/**
 * `agent-block types [DIR]`: write the Lua API's editor types and linter config into a project.
 *
 * Owns the flags (`DIR`, default `.`; `--force`; `-h/--help`), the write rule and the report.
 * The files themselves are rendered from the API reference (`src/docs/project_files.ts`): the
 * LuaCATS annotation files under `DIR/.agent-block/types/`, `DIR/.luarc.json` and
 * `DIR/.luacheckrc`.
 *
 * The write rule: a file this command did not write is never overwritten without `--force`.
 * What it wrote is recorded in `DIR/.agent-block/types/manifest.json` (each path with the
 * SHA-256 of what was written), so a later run — of a newer agent-block too — knows its own
 * files: an existing file is replaced only when the manifest lists it with its current content
 * (the user has not edited it since) or when it already has the new content. Anything else is
 * refused, all of it named in one error (exit 1) before anything is written. Files an earlier
 * run wrote that are no longer generated are removed under the same rule. Every write is atomic.
 */
import { createHash } from "node:crypto";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { parseFlags } from "./args.ts";
import { edgeCwd } from "./environment.ts";
import { writeStdout } from "../obs/log.ts";
import { writeAtomic } from "../util/fs.ts";
import { VERSION } from "../version.ts";
import { projectFiles, TYPES_DIR } from "../docs/project_files.ts";

export const TYPES_HELP = `agent-block ${VERSION} types — editor types and lint config for the Lua API

Usage:
  agent-block types [DIR] [--force]

Writes into the project DIR (default .):
  ${TYPES_DIR}/*.lua  LuaCATS annotations (---@meta) of every agent-block global and of
                            require("agent"), knl, policy, supervisor and coding, for
                            lua-language-server
  .luarc.json               lua-language-server: Lua 5.4, workspace.library = ${TYPES_DIR},
                            the project's lib/ tiers on runtime.path, agent-block's globals
  .luacheckrc               luacheck: Lua 5.4 plus agent-block's globals (read-only, with their
                            fields, so a misspelt std.jsn or too.register is a warning), _PROMPT,
                            _CONTEXT, _SCRIPT_NAME, and the spec globals in *_spec.lua

Options:
      --force       overwrite files this command did not write, or that were edited since
  -h, --help        print this help

It never overwrites a file it did not write (or one edited since it wrote it) unless --force:
such files are named and nothing is written (exit 1). What it wrote is listed in
${TYPES_DIR}/manifest.json, so running it again after an upgrade refreshes its own files.
The reference they come from is docs/lua-api.md in agent-block's repository.

Example:
  agent-block types && luacheck blocks/
`;

const MANIFEST = `${TYPES_DIR}/manifest.json`;

/** What a previous run recorded: path → SHA-256 of what it wrote. */
type Manifest = Record<string, string>;

/** `path` relative to `cwd` when it is below it, else absolute. */
function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function readText(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw new AgentBlockError(`types: cannot read ${path}: ${(e as Error).message}`);
  }
}

/** The manifest at `text`, or undefined when it is not one this command wrote. */
function parseManifest(text: string | undefined): Manifest | undefined {
  if (text === undefined) return undefined;
  try {
    const m = JSON.parse(text);
    if (m?.written_by !== "agent-block types" || typeof m.files !== "object" || m.files === null) {
      return undefined;
    }
    return m.files as Manifest;
  } catch {
    return undefined;
  }
}

/** Runs `agent-block types`. */
export function typesCommand(argv: string[]): Promise<number> {
  const parsed = parseFlags(argv, {
    force: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  }, { allowPositionals: true, command: "types" });
  const v = parsed.values as { force?: boolean; help?: boolean };
  const enc = new TextEncoder();
  const out = (line: string) => writeStdout(enc.encode(line + "\n"));
  if (v.help) {
    out(TYPES_HELP.trimEnd());
    return Promise.resolve(EXIT.OK);
  }
  if (parsed.positionals.length > 1) {
    throw new UsageError(`types: takes one project directory, got ${parsed.positionals.length}`);
  }
  const cwd = edgeCwd();
  const given = parsed.positionals[0] ?? ".";
  const root = resolve(cwd, given);
  try {
    if (!Deno.statSync(root).isDirectory) throw new Error("not a directory");
  } catch {
    throw new AgentBlockError(`types: project directory ${given} does not exist`);
  }

  const files = projectFiles();
  const manifestText = readText(join(root, MANIFEST));
  const previous = parseManifest(manifestText);
  const ours = (rel: string, current: string) => previous?.[rel] === sha256(current);

  const refused: string[] = [];
  const plan: { rel: string; text: string; same: boolean }[] = [];
  for (const [rel, text] of files) {
    const current = readText(join(root, rel));
    const same = current === text;
    if (current !== undefined && !same && !ours(rel, current) && !v.force) refused.push(rel);
    plan.push({ rel, text, same });
  }
  if (manifestText !== undefined && previous === undefined && !v.force) refused.push(MANIFEST);
  const stale = Object.keys(previous ?? {}).filter((rel) => !files.has(rel)).flatMap((rel) => {
    const current = readText(join(root, rel));
    return current !== undefined && ours(rel, current) ? [rel] : [];
  });
  if (refused.length) {
    throw new AgentBlockError(
      `types: not overwriting ${refused.map((r) => displayPath(join(root, r), cwd)).join(", ")}: ` +
        `${
          refused.length === 1 ? "it was" : "they were"
        } not written by agent-block types, or edited since ` +
        "(--force overwrites); nothing was written",
    );
  }

  const show = (rel: string) => displayPath(join(root, rel), cwd);
  try {
    for (const p of plan) {
      if (p.same) {
        out(`unchanged ${show(p.rel)}`);
        continue;
      }
      Deno.mkdirSync(dirname(join(root, p.rel)), { recursive: true });
      writeAtomic(join(root, p.rel), p.text);
      out(`wrote ${show(p.rel)}`);
    }
    for (const rel of stale) {
      Deno.removeSync(join(root, rel));
      out(`removed ${show(rel)} (no longer generated)`);
    }
    const manifest = {
      written_by: "agent-block types",
      version: VERSION,
      files: Object.fromEntries(plan.map((p) => [p.rel, sha256(p.text)])),
    };
    writeAtomic(join(root, MANIFEST), JSON.stringify(manifest, null, 2) + "\n");
  } catch (e) {
    throw new AgentBlockError(
      `types: writing into ${displayPath(root, cwd)} failed: ${(e as Error).message}`,
    );
  }
  return Promise.resolve(EXIT.OK);
}
