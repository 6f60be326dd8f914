// src/blocks/registry.ts
import { join, resolve } from "node:path";
function blockRoots(projectRoot, home, extraDirs = []) {
  return [
    {
      tier: "project-local",
      dir: join(projectRoot, ".agent-block", "blocks")
    },
    {
      tier: "project",
      dir: join(projectRoot, "blocks")
    },
    {
      tier: "user",
      dir: join(home, "blocks")
    },
    ...extraDirs.map((d) => ({
      tier: "extra",
      dir: resolve(d)
    }))
  ];
}
var NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
function leadingDescription(source) {
  const lines = source.split(/\r?\n/);
  const out = [];
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
function readIfFile(path) {
  try {
    if (!Deno.statSync(path).isFile) return void 0;
    return Deno.readTextFileSync(path);
  } catch {
    return void 0;
  }
}
function scanRoot(root) {
  let entries;
  try {
    entries = [
      ...Deno.readDirSync(root.dir)
    ];
  } catch {
    return [];
  }
  const out = [];
  for (const e of entries) {
    if (e.name.startsWith(".")) continue;
    let name;
    let path;
    if (e.name.endsWith(".lua") && !e.isDirectory) {
      name = e.name.slice(0, -4);
      path = join(root.dir, e.name);
    } else if (e.isDirectory || e.isSymlink) {
      name = e.name;
      path = join(root.dir, e.name, "init.lua");
    } else continue;
    if (!NAME.test(name)) continue;
    const src = readIfFile(path);
    if (src === void 0) continue;
    out.push({
      name,
      tier: root.tier,
      path,
      description: leadingDescription(src)
    });
  }
  return out;
}
function scanBlocks(roots) {
  const byName = /* @__PURE__ */ new Map();
  for (const root of roots) {
    for (const b of scanRoot(root).sort((a, b2) => a.name < b2.name ? -1 : 1)) {
      if (!byName.has(b.name)) byName.set(b.name, b);
    }
  }
  return [
    ...byName.values()
  ].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}
function findBlock(roots, name) {
  return scanBlocks(roots).find((b) => b.name === name);
}

export {
  blockRoots,
  scanBlocks,
  findBlock
};
