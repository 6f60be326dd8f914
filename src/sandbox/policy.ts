/**
 * The sandbox's policy: what a sandboxed run may write, what stays read-only inside that, and
 * whether it may use TCP — from the typed `SandboxSettings` the edge read
 * (`sandboxSettingsFromEnv`, `src/config/env_settings.ts`: from the environment of whoever starts
 * the run, made stricter, never looser, by what the project's `.env` adds), the project root and
 * the agent-block home. Nothing here reads an environment.
 *
 * Owns the rules of the seed's "Sandbox mode (Linux)" and of issue 25's invariant — a confined
 * run can write nothing that is later read as configuration, code or a switch by agent-block or
 * by git outside the sandbox:
 * - the settings come from where the run cannot write: the edge takes `AGENT_BLOCK_SANDBOX_FS_RW`,
 *   `AGENT_BLOCK_SANDBOX_GIT_RW`, `AGENT_BLOCK_HOME` (and `HOME`, its default's base), the allow
 *   list and the test seams from the starter's environment only (the same names in the project's
 *   `.env` are ignored and listed in `ignored`, for a warning); `AGENT_BLOCK_SANDBOX_TCP` from
 *   `.env` counts only when it denies TCP;
 * - writable: the project root, the home (`settings.home`), `/tmp`, `/dev/null`, `/dev/urandom`,
 *   `/dev/tty`, and each `AGENT_BLOCK_SANDBOX_FS_RW` entry (`settings.fsRw`); an entry that does
 *   not exist is skipped (and listed as skipped); the project root must resolve, or the run does
 *   not start (it is the primary write grant);
 * - TCP: as `settings.tcp` says (allowed unless `AGENT_BLOCK_SANDBOX_TCP` is spelt off);
 * - read-only inside the grants (`mount_ns.ts` makes them so): the project's `.git` directory, or
 *   the `gitdir:` target of a `.git` file (and that target's `commondir`, where a worktree's
 *   hooks live), and those of each checkout enclosing the project whose repository lies inside a
 *   grant (`repositoryDirs`), unless `AGENT_BLOCK_SANDBOX_GIT_RW=1` (`gitDirs`); and agent-block's own
 *   configuration and code (`configPaths`): the project's `.env`, the home's `lib/` and `blocks/`
 *   tiers, `serve`'s token and record (`serve.token`, `serve.sqlite` and its `-wal`/`-shm`/`-journal`,
 *   `SERVE_RECORD_FILES`, which the launcher creates empty where absent, so that a run can neither
 *   make a record on a fresh home nor leave a journal the next opener replays into one) and
 *   the MCP token store (`mcp-auth/`: logins a later unconfined run trusts), and the flow runs'
 *   locks (`flow-locks/`: a lock a confined run could create or hold would make a dead flow run
 *   look live, `flows/run_lock.ts`) and `serve`'s managers' locks (`serve-locks/`: one a confined
 *   run could hold would keep every later manager of the project from starting), each where it
 *   exists (the launcher creates `lib/`, `blocks/`, `mcp-auth/`, `flow-locks/` and `serve-locks/`
 *   first, so they always do), the notes of the repository sweeps launchers owe
 *   (`sandbox-sweeps/`, created first too; `git_sweep.ts`: a note a run could write or remove would
 *   widen or cancel a sweep), and the mesh's replay memories (`mesh-seen/`, created first too: one
 *   a run could write would accept a captured message again; the launcher keeps the run's own);
 * - what no grant can refuse — a new `.git` anywhere in the grants, and a configuration file that
 *   did not exist at the start (a mount covers only what exists: the project's `.env` when there
 *   was none, `configAbsent`; a `.env` anywhere else, the root of a project a later run may be
 *   started on) — is the launcher's sweep after the run (`git_sweep.ts`), not this policy's. Both
 *   lists come from one, `configCandidates` (`PROJECT_CONFIG`, `HOME_READ_ONLY`);
 * - the test seam `AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI=N` (`testAbi`): pretend the kernel's
 *   Landlock ABI is N. It is honoured only where it makes start-up fail (`landlock.ts`); and
 *   `AGENT_BLOCK_SANDBOX_TEST_USERNS=1` (`testUserNs`): take the unprivileged path to the
 *   read-only paths (a user namespace) even as root, an error where it cannot be taken
 *   (`mount_ns.ts`); `AGENT_BLOCK_SANDBOX_TEST_NO_NETNS=1` (`testNoNetns`): as if no network
 *   namespace could be had, which fails an allow-list start (`net_launch.ts`) and changes nothing
 *   else.
 * The network's mode and allow-list are `net_policy.ts`'s.
 *
 * `sandboxRequest` is pure (no file touched); `resolvePolicy` resolves the paths through the
 * file-system view it is given (`realPath`, `lstat`, `readTextFile`), so tests can hand in their
 * own. Paths are resolved (symlinks followed) because Landlock grants the object, not the name.
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import { AgentBlockError } from "../errors.ts";
import type { SandboxSettings } from "../run_settings.ts";
import { SWEEPS_DIR } from "./sweep_notes.ts";

/** The fixed device files a sandboxed run may write. */
export const DEVICE_FILES = ["/dev/null", "/dev/urandom", "/dev/tty"] as const;

/** Why a path is writable (shown in the start-up line and in errors). */
export type GrantSource = "project" | "home" | "tmp" | "device" | "fs_rw";

/** One writable path as asked for, before resolution. */
export interface WriteGrant {
  path: string;
  source: GrantSource;
}

/** What the run's settings ask of the sandbox (nothing resolved yet). */
export interface SandboxRequest {
  /** The project root (absolute). */
  project: string;
  grants: WriteGrant[];
  /** TCP bind and connect allowed. */
  tcp: boolean;
  /** `.git` stays writable (`AGENT_BLOCK_SANDBOX_GIT_RW=1`). */
  gitRw: boolean;
  /** The test seam's pretended Landlock ABI, when set. */
  testAbi?: number;
  /** The test seam `AGENT_BLOCK_SANDBOX_TEST_USERNS=1`: the read-only `.git` through a user namespace. */
  testUserNs: boolean;
  /** The test seam `AGENT_BLOCK_SANDBOX_TEST_NO_NETNS=1`: as if no network namespace could be had. */
  testNoNetns: boolean;
  /** Settings of the project's `.env` that were ignored because they would widen the sandbox. */
  ignored: string[];
}

/**
 * `serve`'s record and the files SQLite reads beside it (a `-wal` or hot `-journal` is replayed
 * into the database by its next opener): the launcher creates each, empty, where absent.
 */
export const SERVE_RECORD_FILES = [
  "serve.sqlite",
  "serve.sqlite-wal",
  "serve.sqlite-shm",
  "serve.sqlite-journal",
] as const;

/** The home's notes of the repository sweeps launchers owe (`git_sweep.ts`, `sweep_notes.ts`). */
export { SWEEPS_DIR };

/**
 * The home's mesh replay memories (`meshSeenDir` of `src/home.ts`): a run that could write them
 * could make its project's agent accept a captured message again. The launcher keeps the run's
 * own (`LaunchRequest.keep`).
 */
export const MESH_SEEN_DIR = "mesh-seen";

/**
 * The files agent-block reads from a project as configuration (the host half's variables: model
 * endpoints, keys, switches) — wherever a project may be, so a run may not leave one in any write
 * grant: kept read-only where it exists at the project's root, and one the run created or changed
 * anywhere in the grants is quarantined after it (`git_sweep.ts`). Every other file agent-block
 * reads from a project (`blocks/`, `lib/`, `.agent-block/lib/` and `.agent-block/blocks/`,
 * `flows/`, `job.toml`) is the project's own content, which the run is there to write.
 */
export const PROJECT_CONFIG = [".env"] as const;

/** The home's entries a confined run may not write (configuration and code of every project). */
export const HOME_READ_ONLY = [
  "lib",
  "blocks",
  "serve.token",
  ...SERVE_RECORD_FILES,
  "mcp-auth",
  "flow-locks",
  "serve-locks",
  SWEEPS_DIR,
  MESH_SEEN_DIR,
];

/** A writable path, resolved. */
export interface WritableRoot {
  /** The resolved path (what Landlock's rule opens). */
  path: string;
  /** As asked for, when it differs from `path`. */
  asked?: string;
  source: GrantSource;
  /** A directory (its whole tree is writable) or a single file. */
  dir: boolean;
}

/** The resolved policy a launcher applies. */
export interface SandboxPolicy {
  project: string;
  writable: WritableRoot[];
  /** `AGENT_BLOCK_SANDBOX_FS_RW` entries that do not exist (skipped, as the seed says). */
  skipped: string[];
  tcp: boolean;
  /** Version-control directories to keep read-only (empty with the opt-out or without `.git`). */
  gitDirs: string[];
  /** agent-block's configuration and code inside the grants, kept read-only (those that exist). */
  configPaths: string[];
  /**
   * The places of `configCandidates` that do not resolve (absent, or a symlink to nothing): no
   * mount can cover them, so the sweep after the run quarantines any of them that resolves then.
   */
  configAbsent: string[];
  gitRw: boolean;
  /** Settings of the project's `.env` ignored because they would widen the sandbox. */
  ignored: string[];
  testAbi?: number;
  testUserNs: boolean;
  testNoNetns: boolean;
}

/**
 * What `settings` (read at the edge) ask of the sandbox of a run of `project` (absolute): the
 * seed's grants, in order — the project, the home, `/tmp`, the device files, then each
 * `AGENT_BLOCK_SANDBOX_FS_RW` entry.
 */
export function sandboxRequest(settings: SandboxSettings, project: string): SandboxRequest {
  const grants: WriteGrant[] = [
    { path: project, source: "project" },
    { path: settings.home, source: "home" },
    { path: "/tmp", source: "tmp" },
    ...DEVICE_FILES.map((path) => ({ path, source: "device" as const })),
    ...settings.fsRw.map((path) => ({ path, source: "fs_rw" as const })),
  ];
  return {
    project,
    grants,
    tcp: settings.tcp,
    gitRw: settings.gitRw,
    testAbi: settings.testAbi,
    testUserNs: settings.testUserNs,
    testNoNetns: settings.testNoNetns,
    ignored: [...settings.ignored],
  };
}

/** The file-system view `resolvePolicy` reads through. */
export interface PolicyFs {
  realPath(path: string): string;
  lstat(path: string): { isFile: boolean; isDirectory: boolean; isSymlink: boolean };
  readTextFile(path: string): string;
}

/** The process's file system. */
export const DENO_FS: PolicyFs = {
  realPath: (p) => Deno.realPathSync(p),
  lstat: (p) => Deno.lstatSync(p),
  readTextFile: (p) => Deno.readTextFileSync(p),
};

/** `request` resolved: every grant that exists, the `.git` directories to protect. */
export function resolvePolicy(request: SandboxRequest, fs: PolicyFs = DENO_FS): SandboxPolicy {
  const writable: WritableRoot[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  for (const g of request.grants) {
    let path: string;
    let dir: boolean;
    try {
      path = fs.realPath(g.path);
      dir = fs.lstat(path).isDirectory;
    } catch (e) {
      if (g.source === "project") {
        throw new AgentBlockError(
          `--sandbox: the project root ${g.path} cannot be resolved (${(e as Error).message}); ` +
            `it is the sandbox's primary write grant, so the run does not start`,
        );
      }
      if (g.source === "fs_rw") skipped.push(g.path);
      continue; // a missing home, /tmp or device grants nothing: there is nothing to write to
    }
    if (seen.has(path)) continue;
    seen.add(path);
    writable.push({ path, source: g.source, dir, ...(path !== g.path ? { asked: g.path } : {}) });
  }
  const project = writable.find((w) => w.source === "project")!;
  if (!project.dir) {
    throw new AgentBlockError(`--sandbox: the project root ${request.project} is not a directory`);
  }
  return {
    project: project.path,
    writable,
    skipped,
    tcp: request.tcp,
    gitDirs: request.gitRw ? [] : repositoryDirs(project.path, writable, fs),
    ...configPlaces(project.path, writable.find((w) => w.source === "home")?.path, fs),
    gitRw: request.gitRw,
    ignored: request.ignored,
    testAbi: request.testAbi,
    testUserNs: request.testUserNs,
    testNoNetns: request.testNoNetns,
  };
}

/**
 * Every place in the project and the home where agent-block reads configuration or code of every
 * project (unresolved): the project's `PROJECT_CONFIG` files and the home's `HOME_READ_ONLY`
 * entries. The one list both the read-only mounts (those that exist) and the sweep (those that do
 * not) are drawn from.
 */
export function configCandidates(project: string, home: string | undefined): string[] {
  return [
    ...PROJECT_CONFIG.map((n) => join(project, n)),
    ...(home ? HOME_READ_ONLY.map((n) => join(home, n)) : []),
  ];
}

/**
 * agent-block's configuration and code that exist inside the project and the home (resolved):
 * the project's `.env` and the home's `HOME_READ_ONLY` entries.
 */
export function configPathsOf(project: string, home: string | undefined, fs: PolicyFs = DENO_FS): string[] {
  return configPlaces(project, home, fs).configPaths;
}

/** `configCandidates` split: those that resolve (to a file or directory), those that do not. */
export function configPlaces(
  project: string,
  home: string | undefined,
  fs: PolicyFs = DENO_FS,
): { configPaths: string[]; configAbsent: string[] } {
  const out: string[] = [];
  const absent: string[] = [];
  for (const c of configCandidates(project, home)) {
    try {
      const real = fs.realPath(c);
      const info = fs.lstat(real);
      if (info.isFile || info.isDirectory) out.push(real);
    } catch {
      // absent (or a symlink to nothing): no mount covers it, so the sweep watches it (the
      // launcher creates the home's entries first, so normally only the project's .env)
      absent.push(c);
    }
  }
  return { configPaths: [...new Set(out)], configAbsent: absent };
}

/**
 * The repositories a run in `project` could rewrite for git run outside: the project's own
 * (`gitDirsOf`), and each enclosing checkout's — a `.git` in an ancestor of the project — whose
 * repository lies inside one of `writable` (a project at `/tmp/work/sub` in a checkout at
 * `/tmp/work`: `/tmp` is a grant, and that checkout's `config` would be the run's to set).
 * Enclosing ones outside every grant are out of the run's reach already and are not listed.
 */
export function repositoryDirs(
  project: string,
  writable: readonly { path: string; dir: boolean }[],
  fs: PolicyFs = DENO_FS,
): string[] {
  const inGrant = (p: string) => writable.some((w) => w.dir && (p === w.path || p.startsWith(w.path + "/")));
  const out = gitDirsOf(project, fs);
  for (let d = dirname(project);; d = dirname(d)) {
    out.push(...gitDirsOf(d, fs).filter(inGrant));
    if (d === dirname(d)) break;
  }
  return [...new Set(out)];
}

/** The `.git` directory of `project`, or the `gitdir:` target of a `.git` file and its common dir. */
export function gitDirsOf(project: string, fs: PolicyFs = DENO_FS): string[] {
  const dotGit = join(project, ".git");
  let info;
  try {
    info = fs.lstat(dotGit);
  } catch {
    return [];
  }
  if (info.isDirectory) return [fs.realPath(dotGit)];
  if (info.isSymlink) {
    try {
      return fs.lstat(fs.realPath(dotGit)).isDirectory ? [fs.realPath(dotGit)] : [];
    } catch {
      return [];
    }
  }
  if (!info.isFile) return [];
  let text: string;
  try {
    text = fs.readTextFile(dotGit);
  } catch {
    return []; // unreadable: git cannot use it either
  }
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m) return [];
  const out: string[] = [];
  try {
    const gitdir = fs.realPath(isAbsolute(m[1]) ? m[1] : resolve(project, m[1]));
    out.push(gitdir);
    try {
      const common = fs.readTextFile(join(gitdir, "commondir")).trim();
      if (common) out.push(fs.realPath(isAbsolute(common) ? common : resolve(gitdir, common)));
    } catch {
      // no commondir: not a linked worktree
    }
  } catch {
    // a gitdir that does not exist protects nothing
  }
  return [...new Set(out)];
}
