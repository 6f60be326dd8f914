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
 *   (none is embedded yet; `PACK_ROOTS` names the roots that will be) is written with a warning,
 *   everything else is written;
 * - never overwriting an existing copy without `force` (by then it is the project's, likely
 *   edited);
 * - all or nothing over several names: every name is checked (`planVendor`) before any file is
 *   written (`writeVendored`), so one refused name leaves the project as it was;
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

/** One root checked and ready to write: what `writeVendored` writes. */
export interface VendorPlan {
  root: EmbeddedRoot;
  /** `<dir>/<root>`. */
  target: string;
  /** `<dir>/<root>.lua`: removed when present (it would shadow the directory). */
  single: string;
  warning?: string;
}

/**
 * Checks every name before anything is written, so a refusal (unknown, a sub-module alone,
 * sealed, an existing copy without `force`) leaves `dir` untouched: `vendor a b` writes both or
 * neither. The first refusal is thrown; a name given twice is planned once.
 */
export function planVendor(
  names: readonly string[],
  dir: string,
  opts: { force?: boolean; modules?: ReadonlyMap<string, EmbeddedModule> } = {},
): VendorPlan[] {
  const roots = embeddedRoots(opts.modules ?? embeddedModules());
  const plans: VendorPlan[] = [];
  for (const name of new Set(names)) plans.push(planOne(name, dir, roots, opts.force === true));
  return plans;
}

function planOne(name: string, dir: string, roots: EmbeddedRoot[], force: boolean): VendorPlan {
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
  if (existing.length && !force) {
    throw new AgentBlockError(
      `vendor: ${existing[0]} already exists — it is this project's copy now, likely edited; ` +
        `pass --force to overwrite it with the embedded source`,
    );
  }
  const plan: VendorPlan = { root: r, target, single };
  if (r.layer === "pack") {
    plan.warning = `'${root}' is a pack: a value you hand to knl.device, not a registry the host reads, ` +
      `so a whole copy is rarely the change you meant; for a partial change shadow it and delegate ` +
      `through require("embedded.${root}")`;
  }
  return plan;
}

/** Writes one planned root, whole, to `<dir>/<root>/`. */
export function writeVendored(plan: VendorPlan): VendorReport {
  const r = plan.root;
  const report: VendorReport = { root: r.name, dir: plan.target, written: [] };
  if (plan.warning) report.warning = plan.warning;
  try {
    if (exists(plan.single)) {
      Deno.removeSync(plan.single);
      report.removed = plan.single;
    }
    for (const m of [...(r.main ? [r.main] : []), ...r.subs]) {
      const out = join(plan.target, copyRelPath(r.name, m));
      Deno.mkdirSync(dirname(out), { recursive: true });
      Deno.writeTextFileSync(out, m.source);
      report.written.push(out);
    }
  } catch (e) {
    throw new AgentBlockError(`vendor: cannot write ${plan.target}: ${(e as Error).message}`);
  }
  return report;
}

/** Writes the embedded module `name`, whole, to `<dir>/<name>/` (`planVendor` then `writeVendored`). */
export function vendorModule(
  name: string,
  dir: string,
  opts: { force?: boolean; modules?: ReadonlyMap<string, EmbeddedModule> } = {},
): VendorReport {
  return writeVendored(planVendor([name], dir, opts)[0]);
}
