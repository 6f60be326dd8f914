/**
 * `agent-block vendor`: make an embedded module this project's own.
 *
 * Owns the flags — `vendor NAME…`, `--list`, `--path DIR` (write elsewhere than
 * `<project>/.agent-block/lib/`), `--force` (overwrite an existing copy), `-p/--project DIR` — and
 * the report: what was written goes to stdout, a pack's warning to stderr, refusals (sealed, a
 * sub-module on its own, an existing copy) are errors with exit 1. The rules themselves live in
 * `src/modules/vendor.ts`.
 */
import { resolve } from "node:path";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { parseFlags } from "./args.ts";
import { edgeCwd } from "./environment.ts";
import { writeStderr, writeStdout } from "../obs/log.ts";
import type { EmbeddedModule } from "../modules/embedded.ts";
import { displayPath } from "../modules/resolver.ts";
import { listLines, projectLibDir, vendorModule } from "../modules/vendor.ts";
import { VERSION } from "../version.ts";

export const VENDOR_HELP = `agent-block ${VERSION} vendor — copy an embedded module into this project

Usage:
  agent-block vendor NAME... [--force] [--path DIR] [-p DIR]
  agent-block vendor --list [--path DIR] [-p DIR]

Writes the embedded module NAME whole (sub-modules included) to
<project>/.agent-block/lib/NAME/, the first library tier: require("NAME") then resolves to the
copy in this project, and require("embedded.NAME") still reaches the original.

Options:
  -p, --project DIR   project root (default .)
      --path DIR      write to DIR/NAME/ instead of <project>/.agent-block/lib/NAME/
      --force         overwrite a copy that is already there
      --list          one line per embedded module: name (+sub-modules), lib, sealed|pack,
                      vendored when this project has a copy
  -h, --help          print this help

Sealed modules (knl, knl_adapter, knl_types, lshape) are refused: read them with
require("embedded.NAME"). Packs (policy, supervisor) are written with a warning.

Example:
  agent-block vendor agent && $EDITOR .agent-block/lib/agent/init.lua
`;

const enc = new TextEncoder();
const out = (line: string) => writeStdout(enc.encode(line + "\n"));

/** Runs `agent-block vendor`; `modules` replaces the embedded library (tests). */
export function vendorCommand(
  argv: string[],
  modules?: ReadonlyMap<string, EmbeddedModule>,
): Promise<number> {
  const parsed = parseFlags(argv, {
    project: { type: "string", short: "p" },
    path: { type: "string" },
    force: { type: "boolean" },
    list: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  }, { allowPositionals: true, command: "vendor" });
  const v = parsed.values as {
    project?: string;
    path?: string;
    force?: boolean;
    list?: boolean;
    help?: boolean;
  };
  if (v.help) {
    writeStdout(enc.encode(VENDOR_HELP));
    return Promise.resolve(EXIT.OK);
  }
  const cwd = edgeCwd();
  const project = resolve(cwd, v.project ?? ".");
  if (v.path === undefined) {
    try {
      if (!Deno.statSync(project).isDirectory) throw new Error();
    } catch {
      throw new AgentBlockError(`vendor: project directory ${v.project ?? "."} does not exist`);
    }
  }
  const dir = v.path !== undefined ? resolve(cwd, v.path) : projectLibDir(project);
  if (v.list) {
    if (parsed.positionals.length) throw new UsageError("vendor: --list takes no module names");
    if (v.force) throw new UsageError("vendor: --list and --force contradict each other");
    for (const line of listLines(dir, modules)) out(line);
    return Promise.resolve(EXIT.OK);
  }
  if (parsed.positionals.length === 0) {
    throw new UsageError("vendor: name a module to vendor, or pass --list (see vendor --help)");
  }
  for (const name of parsed.positionals) {
    const r = vendorModule(name, dir, { force: v.force, modules });
    if (r.warning) writeStderr(enc.encode(`warning: ${r.warning}\n`));
    if (r.removed) out(`removed ${displayPath(r.removed, cwd)} (it would shadow the new copy)`);
    out(
      `vendored ${r.root} into ${displayPath(r.dir, cwd)}/ (${r.written.length} file${
        r.written.length === 1 ? "" : "s"
      }):`,
    );
    for (const f of r.written) out(`  ${displayPath(f, cwd)}`);
    out(`require("${r.root}") now resolves to this copy; require("embedded.${r.root}") is the original.`);
  }
  return Promise.resolve(EXIT.OK);
}
