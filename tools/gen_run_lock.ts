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
 * Hoisting as `deno.lock` hoists: besides its packages' own `node_modules`, Deno links one
 * version of each package name for the whole install — a package the lockfile names itself
 * (its `specifiers`) at `node_modules/<name>`, any other at `node_modules/.deno/node_modules/<name>`,
 * the newest version of the name there is. A smaller set of packages can pick another version
 * (express's `content-type` was 2.1.0 among a run's packages, 3.1.1 among all of them), and a run
 * with this lockfile would then relink what `deno install` laid out. So for every name among the
 * run's packages this file also keeps what `deno.lock` hoists for it (the specifiers naming it,
 * or every package of its newest version) with their dependencies, until nothing is added: both
 * lockfiles link the same version for every name a run has. (A child agent-block starts never
 * installs at all: `src/proc/self.ts`; this keeps the runs people start from relinking too.)
 *
 * Usage: `deno task gen` writes it; `--check` (in `deno task check`) exits 1 when it is stale.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The checkout. */
const REPO = fileURLToPath(new URL("..", import.meta.url));

interface Lock {
  version: string;
  specifiers?: Record<string, string>;
  npm?: Record<string, { dependencies?: string[]; optionalDependencies?: string[] }>;
  workspace?: { dependencies?: string[] };
  [k: string]: unknown;
}

/** `name@version` of an npm lock key (the version may carry `_peer` suffixes). */
function nameOf(key: string): string {
  const at = key.indexOf("@", key.startsWith("@") ? 1 : 0);
  return key.slice(0, at);
}

/** The version of an npm lock key, without its `_peer` suffixes. */
function versionOf(key: string): string {
  return key.slice(nameOf(key).length + 1).split("_")[0];
}

/** Semver order: numbers first, a pre-release before its release, pre-release fields in order. */
function compareVersions(a: string, b: string): number {
  const [coreA, preA] = splitPre(a);
  const [coreB, preB] = splitPre(b);
  for (let i = 0; i < 3; i++) {
    const d = Number(coreA[i] ?? 0) - Number(coreB[i] ?? 0);
    if (d !== 0) return d;
  }
  if (preA === undefined || preB === undefined) return preA === preB ? 0 : preA === undefined ? 1 : -1;
  const fa = preA.split("."), fb = preB.split(".");
  for (let i = 0; i < Math.max(fa.length, fb.length); i++) {
    if (fa[i] === undefined || fb[i] === undefined) return fa[i] === undefined ? -1 : 1;
    const na = /^\d+$/.test(fa[i]), nb = /^\d+$/.test(fb[i]);
    const d = na && nb
      ? Number(fa[i]) - Number(fb[i])
      : na !== nb
      ? (na ? -1 : 1)
      : fa[i] < fb[i]
      ? -1
      : fa[i] > fb[i]
      ? 1
      : 0;
    if (d !== 0) return d;
  }
  return 0;
}

/** `[major, minor, patch]` and the pre-release of a version (build metadata dropped). */
function splitPre(v: string): [string[], string | undefined] {
  const plain = v.split("+")[0];
  const dash = plain.indexOf("-");
  return dash < 0 ? [plain.split("."), undefined] : [plain.slice(0, dash).split("."), plain.slice(dash + 1)];
}

/** The keys of `keys` (one package name) at its newest version. */
export function newest(keys: string[]): string[] {
  const top = keys.map(versionOf).reduce((a, b) => compareVersions(a, b) >= 0 ? a : b);
  return keys.filter((k) => versionOf(k) === top);
}

/** The run's part of `lock`: the closure of its workspace's npm dependencies. */
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
  const close = (todo: string[]) => {
    while (todo.length) {
      const key = todo.pop()!;
      if (keep.has(key)) continue;
      if (!npm[key]) throw new Error(`deno.lock: no entry for ${key}`);
      keep.add(key);
      for (const d of [...npm[key].dependencies ?? [], ...npm[key].optionalDependencies ?? []]) {
        todo.push(keyOfDependency(d));
      }
    }
  };
  close((lock.workspace?.dependencies ?? []).filter((d) => d.startsWith("npm:")).map(keyOfSpecifier));
  // What deno.lock hoists for each name the run has, until nothing is added.
  const topLevel = new Map<string, string[]>();
  for (const spec of Object.keys(specifiers).filter((s) => s.startsWith("npm:"))) {
    const key = keyOfSpecifier(spec);
    topLevel.set(nameOf(key), [...(topLevel.get(nameOf(key)) ?? []), key]);
  }
  for (let size = -1; size !== keep.size;) {
    size = keep.size;
    for (const name of new Set([...keep].map(nameOf))) {
      close([...topLevel.get(name) ?? newest(byName.get(name)!)]);
    }
  }
  return {
    ...lock,
    specifiers: Object.fromEntries(
      Object.entries(specifiers).filter(([s]) => !s.startsWith("npm:") || keep.has(keyOfSpecifier(s))),
    ),
    npm: Object.fromEntries(Object.entries(npm).filter(([k]) => keep.has(k))),
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
