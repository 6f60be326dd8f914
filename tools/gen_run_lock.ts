/**
 * Generates `deno.run.lock`: the part of `deno.lock` a run needs — the npm packages of deno.json's
 * import map and everything they depend on, at the versions `deno.lock` pins — so a command that
 * only runs blocks (`deno task agent-block`, the installed launcher, agent-block starting itself)
 * installs those and not the packages only tests and benchmarks use (playwright-core, the
 * provider SDKs, the MCP reference server), which tests import by full `npm:` specifier.
 *
 * Why a second lockfile: Deno installs every npm package a lockfile holds, whatever the module
 * graph reaches, so one lockfile for runs and tests makes every first run fetch the test tools.
 * `deno.lock` stays the one that is edited (`deno install`); this file is derived from it, never
 * resolved afresh, so the two can never pin different versions.
 *
 * Optional peer dependencies are left out, with their edge: Deno links a package's optional peer
 * whenever the lockfile holds that package at all, so `@a2a-js/sdk`, whose Express router only
 * the tests' reference agent loads, got the tests' `express` and ~60 packages with it. A run
 * that needs such a package names it in the import map, which brings it in as a dependency.
 *
 * Usage: `deno task gen` writes it; `--check` (in `deno task check`) exits 1 when it is stale.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The checkout. */
const REPO = fileURLToPath(new URL("..", import.meta.url));

/** One package of a lockfile's `npm` section. */
interface NpmEntry {
  dependencies?: string[];
  optionalDependencies?: string[];
  optionalPeers?: string[];
  [k: string]: unknown;
}

/** `entry` without its optional peers: neither the edges to them nor the list naming them. */
function withoutOptionalPeers(entry: NpmEntry): NpmEntry {
  const peers = new Set(entry.optionalPeers ?? []);
  if (peers.size === 0) return entry;
  const { optionalPeers: _, ...rest } = entry;
  return { ...rest, dependencies: (entry.dependencies ?? []).filter((d) => !peers.has(d)) };
}

interface Lock {
  version: string;
  specifiers?: Record<string, string>;
  npm?: Record<string, NpmEntry>;
  workspace?: { dependencies?: string[] };
  [k: string]: unknown;
}

/** `name@version` of an npm lock key (the version may carry `_peer` suffixes). */
function nameOf(key: string): string {
  const at = key.indexOf("@", key.startsWith("@") ? 1 : 0);
  return key.slice(0, at);
}

/** The run's part of `lock`: the closure of its workspace's npm dependencies, optional peers left out. */
export function runLock(lock: Lock): Lock {
  const npm = lock.npm ?? {};
  const specifiers = lock.specifiers ?? {};
  const byName = new Map<string, string[]>();
  for (const key of Object.keys(npm)) byName.set(nameOf(key), [...(byName.get(nameOf(key)) ?? []), key]);
  const keyOfSpecifier = (spec: string) => `${nameOf(spec.slice("npm:".length))}@${specifiers[spec]}`;
  const keyOfDependency = (dep: string): string => {
    if (npm[dep]) return dep;
    const keys = byName.get(dep) ?? [];
    if (keys.length !== 1) {
      throw new Error(`deno.lock: cannot tell which '${dep}' is meant (${keys.join(", ")})`);
    }
    return keys[0];
  };
  const keep = new Set<string>();
  const todo = (lock.workspace?.dependencies ?? []).filter((d) => d.startsWith("npm:")).map(keyOfSpecifier);
  while (todo.length) {
    const key = todo.pop()!;
    if (keep.has(key)) continue;
    if (!npm[key]) throw new Error(`deno.lock: no entry for ${key}`);
    keep.add(key);
    const entry = withoutOptionalPeers(npm[key]);
    for (const d of [...entry.dependencies ?? [], ...entry.optionalDependencies ?? []]) {
      todo.push(keyOfDependency(d));
    }
  }
  return {
    ...lock,
    specifiers: Object.fromEntries(
      Object.entries(specifiers).filter(([s]) => !s.startsWith("npm:") || keep.has(keyOfSpecifier(s))),
    ),
    npm: Object.fromEntries(
      Object.entries(npm).filter(([k]) => keep.has(k)).map(([k, e]) => [k, withoutOptionalPeers(e)]),
    ),
  };
}

/** The text of `deno.run.lock` for the text of `deno.lock`. */
export function render(lockText: string): string {
  return JSON.stringify(runLock(JSON.parse(lockText)), null, 2) + "\n";
}

if (import.meta.main) {
  const target = join(REPO, "deno.run.lock");
  const want = render(Deno.readTextFileSync(join(REPO, "deno.lock")));
  if (Deno.args.includes("--check")) {
    let have = "";
    try {
      have = Deno.readTextFileSync(target);
    } catch { /* missing: stale */ }
    if (have !== want) {
      console.error("deno.run.lock is stale: run `deno task gen` (it is derived from deno.lock)");
      Deno.exit(1);
    }
  } else {
    Deno.writeTextFileSync(target, want);
  }
}
