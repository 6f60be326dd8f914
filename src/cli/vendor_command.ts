/**
 * `agent-block vendor`: make an embedded module this project's own.
 *
 * Owns the flags — `vendor NAME…`, `--list`, `-p/--project DIR` (the project root, default `.`),
 * `--path DIR` (the seed's "write somewhere other than the project root": DIR is taken as the
 * project root, so the copy lands in `DIR/.agent-block/lib/NAME/`, the one place `require` looks
 * first; with `-p` it is a contradiction), `--force` (overwrite an existing copy) — and the
 * report: what was written goes to stdout, a pack's warning to stderr, refusals (sealed, a
 * sub-module on its own, an existing copy, a root that is not a directory) are errors with exit 1,
 * and a refusal of any name writes nothing at all. The rules themselves live in
 * `src/modules/vendor.ts`.
 */
import { resolve } from "node:path";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { parseFlags } from "./args.ts";
import { edgeCwd } from "./environment.ts";
import { writeStderr, writeStdout } from "../obs/log.ts";
import type { EmbeddedModule } from "../modules/embedded.ts";
import { displayPath } from "../modules/resolver.ts";
import { listLines, planVendor, projectLibDir, writeVendored } from "../modules/vendor.ts";
import { VERSION } from "../version.ts";

export const VENDOR_HELP = `agent-block ${VERSION} vendor — copy an embedded module into this project

Usage:
  agent-block vendor NAME... [--force] [-p DIR | --path DIR]
  agent-block vendor --list [-p DIR | --path DIR]

Writes the embedded module NAME whole (sub-modules included) to
<project>/.agent-block/lib/NAME/, the first library tier: require("NAME") then resolves to the
copy in this project, and require("embedded.NAME") still reaches the original. Every NAME is
checked first: when one is refused, nothing is written.

Options:
  -p, --project DIR   project root (default .)
      --path DIR      take DIR as the project root instead: writes DIR/.agent-block/lib/NAME/
      --force         overwrite a copy that is already there
      --list          one line per embedded module: name (+sub-modules), lib, sealed or
                      pack, vendored when this project has a copy
  -h, --help          print this help

Sealed modules (knl, knl_adapter, knl_types, lshape) are refused: read them with
require("embedded.NAME"). Packs (policy, supervisor) are written with a warning: a pack is a
value handed to knl.device, so a partial change is better made by shadowing the module and
delegating to require("embedded.NAME").

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
  if (v.path !== undefined && v.project !== undefined) {
    throw new UsageError("vendor: --path and -p/--project both name the project root; give one");
  }
  const given = v.path ?? v.project ?? ".";
  const project = resolve(cwd, given);
  try {
    if (!Deno.statSync(project).isDirectory) throw new Error();
  } catch {
    const flag = v.path !== undefined ? "--path" : "project";
    throw new AgentBlockError(`vendor: ${flag} directory ${given} does not exist`);
  }
  const dir = projectLibDir(project);
  if (v.list) {
    if (parsed.positionals.length) throw new UsageError("vendor: --list takes no module names");
    if (v.force) throw new UsageError("vendor: --list and --force contradict each other");
    for (const line of listLines(dir, modules)) out(line);
    return Promise.resolve(EXIT.OK);
  }
  if (parsed.positionals.length === 0) {
    throw new UsageError("vendor: name a module to vendor, or pass --list (see vendor --help)");
  }
  // Every name is checked before a file is written: one refusal leaves the project as it was.
  const plans = planVendor(parsed.positionals, dir, { force: v.force, modules });
  for (const plan of plans) {
    const r = writeVendored(plan);
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
