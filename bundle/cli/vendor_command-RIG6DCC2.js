import {
  displayPath,
  embeddedModules,
  layerOf,
  rootOf
} from "./chunk-VKEBFTIZ.js";
import "./chunk-QFKUF32L.js";
import {
  VERSION
} from "./chunk-HI6AAJID.js";
import {
  AgentBlockError,
  EXIT,
  UsageError,
  writeStderr,
  writeStdout
} from "./chunk-C44UDHAF.js";

// src/cli/vendor_command.ts
import { parseArgs } from "node:util";
import { resolve } from "node:path";

// src/modules/vendor.ts
import { dirname, join } from "node:path";
function embeddedRoots(modules = embeddedModules()) {
  const roots = /* @__PURE__ */ new Map();
  for (const m of modules.values()) {
    const root = rootOf(m.name);
    let r = roots.get(root);
    if (!r) {
      r = {
        name: root,
        layer: layerOf(root),
        subs: []
      };
      roots.set(root, r);
    }
    if (m.name === root) r.main = m;
    else r.subs.push(m);
  }
  for (const r of roots.values()) r.subs.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return [
    ...roots.values()
  ].sort((a, b) => a.name < b.name ? -1 : 1);
}
function projectLibDir(projectRoot) {
  return join(projectRoot, ".agent-block", "lib");
}
function exists(path) {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
function copyPaths(dir, root) {
  return [
    join(dir, root),
    join(dir, `${root}.lua`)
  ];
}
function isVendored(dir, root) {
  return copyPaths(dir, root).some(exists);
}
function listLines(dir, modules = embeddedModules()) {
  const rows = embeddedRoots(modules).map((r) => {
    const subs = r.subs.map((s) => s.name.slice(r.name.length + 1));
    const name = subs.length ? `${r.name} (+${subs.join(", ")})` : r.name;
    const flags = [
      "lib"
    ];
    if (r.layer !== "lib") flags.push(r.layer);
    if (isVendored(dir, r.name)) flags.push("vendored");
    return [
      name,
      flags.join("  ")
    ];
  });
  const width = Math.max(0, ...rows.map(([n]) => n.length));
  return rows.map(([n, f]) => `${n.padEnd(width)}  ${f}`);
}
function copyRelPath(root, m) {
  if (m.path === `${root}.lua`) return "init.lua";
  if (m.path.startsWith(`${root}/`)) return m.path.slice(root.length + 1);
  const rest = m.name === root ? [
    "init"
  ] : m.name.slice(root.length + 1).split(".");
  return `${rest.join("/")}.lua`;
}
function vendorModule(name, dir, opts = {}) {
  const modules = opts.modules ?? embeddedModules();
  const roots = embeddedRoots(modules);
  const root = rootOf(name);
  const r = roots.find((x) => x.name === root);
  if (!r) {
    throw new AgentBlockError(`vendor: no embedded module '${name}'; embedded: ${roots.map((x) => x.name).join(", ") || "(none)"}`);
  }
  if (name !== root) {
    throw new AgentBlockError(`vendor: '${name}' is part of '${root}' and a module is vendored whole (half on disk and half in memory would be two versions under one name); run: agent-block vendor ${root}`);
  }
  if (r.layer === "sealed") {
    throw new AgentBlockError(`vendor: '${root}' is sealed: a project cannot shadow it (a copy would fail the next run). Read it with require("embedded.${root}"); change it upstream.`);
  }
  const target = join(dir, root);
  const single = join(dir, `${root}.lua`);
  const existing = [
    target,
    single
  ].filter(exists);
  if (existing.length && !opts.force) {
    throw new AgentBlockError(`vendor: ${existing[0]} already exists \u2014 it is this project's copy now, likely edited; pass --force to overwrite it with the embedded source`);
  }
  const report = {
    root,
    dir: target,
    written: []
  };
  if (r.layer === "pack") {
    report.warning = `'${root}' is a pack: a value you hand to knl.device, not a registry the host reads, so a whole copy is rarely the change you meant; for a partial change shadow it and delegate through require("embedded.${root}")`;
  }
  try {
    if (exists(single)) {
      Deno.removeSync(single);
      report.removed = single;
    }
    for (const m of [
      ...r.main ? [
        r.main
      ] : [],
      ...r.subs
    ]) {
      const out2 = join(target, copyRelPath(root, m));
      Deno.mkdirSync(dirname(out2), {
        recursive: true
      });
      Deno.writeTextFileSync(out2, m.source);
      report.written.push(out2);
    }
  } catch (e) {
    throw new AgentBlockError(`vendor: cannot write ${target}: ${e.message}`);
  }
  return report;
}

// src/cli/vendor_command.ts
var VENDOR_HELP = `agent-block ${VERSION} vendor \u2014 copy an embedded module into this project

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
`;
var enc = new TextEncoder();
var out = (line) => writeStdout(enc.encode(line + "\n"));
function vendorCommand(argv, modules) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        project: {
          type: "string",
          short: "p"
        },
        path: {
          type: "string"
        },
        force: {
          type: "boolean"
        },
        list: {
          type: "boolean"
        },
        help: {
          type: "boolean",
          short: "h"
        }
      }
    });
  } catch (e) {
    throw new UsageError(`vendor: ${e.message}`);
  }
  const v = parsed.values;
  if (v.help) {
    writeStdout(enc.encode(VENDOR_HELP));
    return Promise.resolve(EXIT.OK);
  }
  const project = resolve(v.project ?? ".");
  if (v.path === void 0) {
    try {
      if (!Deno.statSync(project).isDirectory) throw new Error();
    } catch {
      throw new AgentBlockError(`vendor: project directory ${v.project ?? "."} does not exist`);
    }
  }
  const dir = v.path !== void 0 ? resolve(v.path) : projectLibDir(project);
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
    const r = vendorModule(name, dir, {
      force: v.force,
      modules
    });
    if (r.warning) writeStderr(enc.encode(`warning: ${r.warning}
`));
    if (r.removed) out(`removed ${displayPath(r.removed)} (it would shadow the new copy)`);
    out(`vendored ${r.root} into ${displayPath(r.dir)}/ (${r.written.length} file${r.written.length === 1 ? "" : "s"}):`);
    for (const f of r.written) out(`  ${displayPath(f)}`);
    out(`require("${r.root}") now resolves to this copy; require("embedded.${r.root}") is the original.`);
  }
  return Promise.resolve(EXIT.OK);
}
export {
  VENDOR_HELP,
  vendorCommand
};
