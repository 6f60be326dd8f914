/**
 * Vendoring: copying an embedded module, whole, into a project so it becomes the project's own.
 *
 * Owns:
 * - grouping embedded modules under their root (`lshape.t` belongs to `lshape`), because a
 *   module is vendored whole — half a module on disk and half in memory would be two versions
 *   of it under one name;
 * - the file layout of a copy: `<dir>/<root>/init.lua` for the root, `<dir>/<root>/<sub>.lua`
 *   (and deeper) for sub-modules — exactly where the `require` resolver looks, so the copy is
 *   what `require("<root>")` resolves in that project while `require("embedded.<root>")` still
 *   reaches the original;
 * - the layer rules: a sealed root is refused (the copy would only fail the next run), a pack
 *   is written with a warning, everything else is written;
 * - never overwriting an existing copy without `force` (by then it is the project's, likely
 *   edited);
 * - the `--list` lines: one per root — name with its sub-modules folded
 *   (`lshape (+t, check, …)`), `lib`, `sealed` or `pack`, and `vendored` when a copy exists.
 *
 * Every function takes the module map as a parameter (default: the embedded library) so the
 * rules can be checked against any set of modules.
 */
import { dirname, join } from "node:path";
import { AgentBlockError } from "../errors.ts";
import { exists } from "../util/fs.ts";
import { type EmbeddedModule, embeddedModules, layerOf, rootOf } from "./embedded.ts";

/** One embedded root and everything under it. */
export interface EmbeddedRoot {
  name: string;
  layer: "sealed" | "pack" | "lib";
  /** The root module itself, if it has a source of its own. */
  main?: EmbeddedModule;
  /** Sub-modules, sorted by name. */
  subs: EmbeddedModule[];
}

/** Every embedded root, sorted by name. */
export function embeddedRoots(
  modules: ReadonlyMap<string, EmbeddedModule> = embeddedModules(),
): EmbeddedRoot[] {
  const roots = new Map<string, EmbeddedRoot>();
  for (const m of modules.values()) {
    const root = rootOf(m.name);
    let r = roots.get(root);
    if (!r) {
      r = { name: root, layer: layerOf(root), subs: [] };
      roots.set(root, r);
    }
    if (m.name === root) r.main = m;
    else r.subs.push(m);
  }
  for (const r of roots.values()) r.subs.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return [...roots.values()].sort((a, b) => a.name < b.name ? -1 : 1);
}

/** The default place copies go: `<project>/.agent-block/lib`. */
export function projectLibDir(projectRoot: string): string {
  return join(projectRoot, ".agent-block", "lib");
}

/** The paths a copy of `root` in `dir` occupies (either makes it "vendored"). */
function copyPaths(dir: string, root: string): string[] {
  return [join(dir, root), join(dir, `${root}.lua`)];
}

/** True when `dir` holds a copy of `root`. */
export function isVendored(dir: string, root: string): boolean {
  return copyPaths(dir, root).some(exists);
}

/** The `--list` lines for every root, vendored state read from `dir`. */
export function listLines(
  dir: string,
  modules: ReadonlyMap<string, EmbeddedModule> = embeddedModules(),
): string[] {
  const rows = embeddedRoots(modules).map((r) => {
    const subs = r.subs.map((s) => s.name.slice(r.name.length + 1));
    const name = subs.length ? `${r.name} (+${subs.join(", ")})` : r.name;
    const flags = ["lib"];
    if (r.layer !== "lib") flags.push(r.layer);
    if (isVendored(dir, r.name)) flags.push("vendored");
    return [name, flags.join("  ")];
  });
  const width = Math.max(0, ...rows.map(([n]) => n.length));
  return rows.map(([n, f]) => `${n.padEnd(width)}  ${f}`);
}

/** Where one module of a root lands inside the copy directory `<dir>/<root>/`. */
export function copyRelPath(root: string, m: EmbeddedModule): string {
  if (m.path === `${root}.lua`) return "init.lua";
  if (m.path.startsWith(`${root}/`)) return m.path.slice(root.length + 1);
  // A file named differently from its module (not produced by the index today): derive it.
  const rest = m.name === root ? ["init"] : m.name.slice(root.length + 1).split(".");
  return `${rest.join("/")}.lua`;
}

/** What `vendor` did. */
export interface VendorReport {
  root: string;
  dir: string;
  /** Absolute paths written. */
  written: string[];
  /** A warning to show (packs). */
  warning?: string;
  /** A single-file copy that was removed because it would shadow the new directory (`force`). */
  removed?: string;
}

/** Writes the embedded module `name`, whole, to `<dir>/<name>/`. */
export function vendorModule(
  name: string,
  dir: string,
  opts: { force?: boolean; modules?: ReadonlyMap<string, EmbeddedModule> } = {},
): VendorReport {
  const modules = opts.modules ?? embeddedModules();
  const roots = embeddedRoots(modules);
  const root = rootOf(name);
  const r = roots.find((x) => x.name === root);
  if (!r) {
    throw new AgentBlockError(
      `vendor: no embedded module '${name}'; embedded: ${roots.map((x) => x.name).join(", ") || "(none)"}`,
    );
  }
  if (name !== root) {
    throw new AgentBlockError(
      `vendor: '${name}' is part of '${root}' and a module is vendored whole ` +
        `(half on disk and half in memory would be two versions under one name); run: agent-block vendor ${root}`,
    );
  }
  if (r.layer === "sealed") {
    throw new AgentBlockError(
      `vendor: '${root}' is sealed: a project cannot shadow it (a copy would fail the next run). ` +
        `Read it with require("embedded.${root}"); change it upstream.`,
    );
  }
  const target = join(dir, root);
  const single = join(dir, `${root}.lua`);
  const existing = [target, single].filter(exists);
  if (existing.length && !opts.force) {
    throw new AgentBlockError(
      `vendor: ${existing[0]} already exists — it is this project's copy now, likely edited; ` +
        `pass --force to overwrite it with the embedded source`,
    );
  }
  const report: VendorReport = { root, dir: target, written: [] };
  if (r.layer === "pack") {
    report.warning = `'${root}' is a pack: a value you hand to knl.device, not a registry the host reads, ` +
      `so a whole copy is rarely the change you meant; for a partial change shadow it and delegate ` +
      `through require("embedded.${root}")`;
  }
  try {
    if (exists(single)) {
      Deno.removeSync(single);
      report.removed = single;
    }
    for (const m of [...(r.main ? [r.main] : []), ...r.subs]) {
      const out = join(target, copyRelPath(root, m));
      Deno.mkdirSync(dirname(out), { recursive: true });
      Deno.writeTextFileSync(out, m.source);
      report.written.push(out);
    }
  } catch (e) {
    throw new AgentBlockError(`vendor: cannot write ${target}: ${(e as Error).message}`);
  }
  return report;
}
