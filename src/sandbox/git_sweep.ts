/**
 * The repository and configuration sweep: after a confined run has ended, every git repository in
 * its write grants that the run created, moved, replaced or reconfigured is renamed to a name git
 * does not read, and so is every file agent-block reads as configuration that the run created or
 * changed (a `.env`; a place of the home that no mount could cover).
 *
 * Why: Landlock grants by object, not by name, and a mount can only cover a path that exists, so
 * nothing inside the run can refuse the creation of a `.git` entry. A run could make one anywhere
 * it may write — also at the root of a project that sits inside a larger checkout, where it
 * shadows the outer repository — with `core.fsmonitor`, `core.hooksPath`, `core.pager` or a hook
 * set, and the next `git status` the user runs there, outside the sandbox, would run its command.
 * The same holds for agent-block's own configuration: the read-only mounts (`mount_ns.ts`,
 * `policy.ts`'s `configPaths`) cover the files that exist at the start, but a project without a
 * `.env` can be given one, which the next unconfined run loads (`ANTHROPIC_BASE_URL` or
 * `OPENAI_BASE_URL` pointing at another server, which then receives the user's API key), and a
 * `.env` in a subdirectory or another granted directory is the root of a project a later run may
 * be started on. So the launcher (`launcher.ts`) keeps a process outside the run, which calls
 * `runSweep` once every process of the run has ended, before it exits itself: whoever started the
 * run sees it end only after the sweep.
 *
 * The rule (`since`: the run's start, to the file system's second — Deno's `ctime` has no finer
 * grain, so a change in the second before the start counts as the run's too):
 * - an entry named `.git` (in any case: a casefolded directory finds `.GIT` for `.git`; directory,
 *   file or symlink) whose own status changed at or after
 *   `since` — created, renamed or hard-linked into place, or rewritten (a `gitdir:` file) — is
 *   quarantined; the kernel sets `ctime` on each of these and nothing in the run can set it back
 *   (that takes the clock, `CAP_SYS_TIME`, which the run does not have);
 * - a `.git` directory that existed before is quarantined when any entry of its tree outside
 *   `objects/` changed at or after `since`: its `config`, `config.worktree`, `commondir`, `hooks/`
 *   and each hook, `modules/*` (submodules' own repositories) included. (Git rewrites its files
 *   through a lock file and a rename, so a repository the run used with git at all counts: the
 *   sweep cannot tell a commit from a planted hook, and keeps neither.) `objects/` holds only
 *   content-addressed data git does not run;
 * - a directory laid out as a repository itself (a bare one, or a linked worktree's: `HEAD` with
 *   `objects/` and `refs/`, or with `commondir`), which git uses when it is started inside it, is
 *   quarantined by the same test by renaming its `HEAD` (without one git does not take the
 *   directory for a repository);
 * - a file or symlink named as one of `policy.ts`'s `PROJECT_CONFIG` (`.env`, in any case; not a
 *   directory, which agent-block does not read and which is often a Python virtualenv) whose own
 *   status changed at or after `since` — created, rewritten, renamed or linked into place — is
 *   quarantined, anywhere in the walk (and at the top of `/tmp`), except the files in `keep`: the
 *   ones a read-only mount covered for the whole run (the run could not change them; the user may
 *   have, meanwhile);
 * - each place of `watch` — agent-block's configuration places that did not resolve at the start
 *   (`policy.ts`'s `configAbsent`: the project's `.env` when there was none, a home entry the
 *   launcher could not create, such as a `lib` that is a symlink to nothing) — that resolves after
 *   the run is quarantined whatever its times say (`sweepWatched`: one `stat` each);
 * - quarantine is a rename beside the entry, to `<name>.agent-block-quarantined-<run id>` (and, for
 *   a `.git` directory, of its `HEAD` inside the same way first, or the directory aside would still
 *   be a repository to git started inside it): nothing is deleted; the user reviews it and renames
 *   it back. Each `Quarantined` says its `kind` (a repository, or configuration) for the launcher's
 *   one stderr line about it.
 * A directory the run made unlistable (mode 0311: git still reaches a `.git` in it by name) or
 * read-only (no rename in it) is given its owner's read, write and search back first: the sweep runs
 * without capabilities, as the user, and the run's directories are the user's. One it still cannot
 * list or rename in (another owner's) is reported, never passed over in silence.
 *
 * Skipped: the paths in `skip` (the project's own `.git`, read-only to the run: the user may be
 * using it meanwhile) and what lies below them — each only while it is the file or directory it
 * was at the start (`held`, by device and inode: a run that may write above one can rename it
 * away and put another in its place, which is then checked as new, and a configuration place so
 * replaced is quarantined whatever its times say). Symlinks are never followed. The roots are walked
 * whole — but `/tmp`, other programs' too and often large, which is checked by name only (its own
 * `.git`, its own layout), as is each directory between it and a root inside it (`between`) —
 * with synchronous calls on the caller's thread (the launcher's main thread is itself inside the
 * run's Landlock domain, so a rename can only land inside the grants).
 *
 * A launcher killed outright cannot sweep, so each notes its sweep first (`recordPending`, in the
 * home's `sandbox-sweeps/`, read-only to the run; emptied by `sweepDone`), and the next agent-block
 * command on the same project — a launch, or any command that reads its `.env` (`sweep_notes.ts`
 * says whether one is owed) — does the sweeps whose launchers are gone (`pendingSweeps`) first.
 *
 * Cost: one `readDir` per directory (entries are not stat'ed) and one `lstat` per `.git` or `.env`
 * entry and per file of a repository's tree outside `objects/`, plus one `stat` per watched place
 * (normally one: the project's `.env`, when it has none): 0.2-0.6 s for a tree of 100,000 files in 1,100
 * directories on a loaded 2-core machine (a single `find -name .git` over it took 0.2-0.4 s; not
 * worth a second way of walking), a few ms for a small project. `sweepRepositories` reports how
 * many directories it read.
 */
import { dirname, join } from "node:path";
import { PROJECT_CONFIG } from "./policy.ts";
import { launcherGone, processKey } from "./sweep_notes.ts";

/** A repository, or a configuration file, the sweep renamed. */
export interface Quarantined {
  /** The entry as it was (`…/.git`, a bare repository's `…/HEAD`, `…/.env`, a home's `lib`). */
  path: string;
  /** Where it is now. */
  to: string;
  /** What it was: a git repository, or a file or directory agent-block reads as configuration. */
  kind: "repository" | "config";
}

/** What one sweep found. */
export interface SweepResult {
  quarantined: Quarantined[];
  /** Entries that could not be checked (a directory it cannot read) or renamed, with why. */
  failed: { path: string; why: string }[];
  /** Directories read. */
  dirs: number;
  /**
   * Paths trusted by path (`SweepPlan.held`) that are not the file or directory they were at the
   * run's start: the run moved or replaced them (or an ancestor), so they were checked as new.
   */
  replaced?: string[];
}

/** The suffix of a quarantined entry's name. */
export const QUARANTINE_MARK = ".agent-block-quarantined-";

/** `PROJECT_CONFIG`'s names, lower-cased: a file or symlink of that name anywhere is swept. */
const CONFIG_NAMES: ReadonlySet<string> = new Set(PROJECT_CONFIG.map((n) => n.toLowerCase()));

/** Where `path` is renamed to: beside it, named with the run id (numbered when taken). */
function asideName(path: string, runId: string): string {
  let to = `${path}${QUARANTINE_MARK}${runId}`;
  for (let n = 2; exists(to); n++) to = `${path}${QUARANTINE_MARK}${runId}-${n}`;
  return to;
}

/**
 * Walks `roots` (directories) and quarantines what the rule above says.
 * @param since the run's start (ms since the epoch)
 * @param runId what the quarantined names end with
 * @param skip directories neither checked nor walked (resolved paths)
 * @param depth how many levels below each root to walk (default: all; 0: the root's own entries;
 *   -1: the root not even read — a shared directory such as `/tmp`, too big and busy to list — but
 *   checked by name: its own `.git`, and whether it is itself laid out as a repository)
 */
export function sweepRepositories(
  roots: readonly string[],
  since: number,
  runId: string,
  skip: readonly string[] = [],
  depth = Infinity,
): SweepResult {
  const floor = Math.floor(since / 1000) * 1000;
  const skipSet = new Set(skip);
  const out: SweepResult = { quarantined: [], failed: [], dirs: 0 };
  const changed = (path: string): boolean => {
    try {
      return (Deno.lstatSync(path).ctime?.getTime() ?? Infinity) >= floor;
    } catch {
      return false; // gone meanwhile: nothing left to read
    }
  };
  // any entry of a repository's tree (its objects aside) changed since the start
  const treeChanged = (dir: string): boolean => {
    if (changed(dir)) return true;
    const entries = list(dir);
    if (!entries) return false;
    out.dirs++;
    for (const e of entries) {
      if (e.name === "objects") continue;
      const p = join(dir, e.name);
      if (e.isDirectory ? treeChanged(p) : changed(p)) return true;
    }
    return false;
  };
  const quarantine = (path: string, kind: Quarantined["kind"] = "repository") => {
    const to = asideName(path, runId);
    const move = () => {
      // a repository directory renamed aside is still one to git started inside it: its HEAD too
      const head = join(path, "HEAD");
      if (kind === "repository" && Deno.lstatSync(path).isDirectory && exists(head)) {
        Deno.renameSync(head, `${head}${QUARANTINE_MARK}${runId}`);
      }
      Deno.renameSync(path, to);
    };
    try {
      try {
        move();
      } catch (e) {
        if (!(e instanceof Deno.errors.PermissionDenied)) throw e;
        // the run may have made the directories read-only: it made them, so they are ours to open
        openUp(dirname(path));
        if (isDir(path)) openUp(path);
        move();
      }
      out.quarantined.push({ path, to, kind });
    } catch (e) {
      out.failed.push({ path, why: (e as Error).message });
    }
  };
  // a directory's entries; one the run made unreadable (or only searchable: its names still work
  // for git) is opened up first — the run made it, so it is ours
  const list = (dir: string): Deno.DirEntry[] | undefined => {
    try {
      return [...Deno.readDirSync(dir)];
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined; // gone: nothing to read
      if (!(e instanceof Deno.errors.PermissionDenied)) {
        out.failed.push({ path: dir, why: `cannot read it: ${(e as Error).message}` });
        return undefined;
      }
      try {
        openUp(dir);
        return [...Deno.readDirSync(dir)];
      } catch (e2) {
        out.failed.push({ path: dir, why: `cannot read it: ${(e2 as Error).message}` });
        return undefined;
      }
    }
  };
  const walk = (dir: string, level: number) => {
    const subdirs: string[] = [];
    const dotGits: Deno.DirEntry[] = [];
    const configs: string[] = [];
    let head = false;
    let objects = false;
    let refs = false;
    let commondir = false;
    const entries = list(dir);
    if (!entries) return;
    for (const e of entries) {
      const name = e.name;
      if (e.isDirectory) subdirs.push(name);
      // only these names matter: one comparison of the first letter for the rest
      const c = name.charCodeAt(0);
      // any case: on a case-insensitive file system (a casefolded directory) git finds `.GIT` too,
      // and agent-block `.ENV` for `.env`
      if (c === 46) {
        const lower = name.toLowerCase();
        if (lower === ".git") dotGits.push(e);
        else if (!e.isDirectory && CONFIG_NAMES.has(lower)) configs.push(name); // a directory: a venv
      } else if (c === 72 && name === "HEAD") head = !e.isDirectory;
      else if (c === 111 && name === "objects") objects = e.isDirectory;
      else if (c === 114 && name === "refs") refs = e.isDirectory;
      else if (c === 99 && name === "commondir") commondir = true;
    }
    out.dirs++;
    if (head && (commondir || (objects && refs))) {
      // a directory git takes for a repository when started inside it
      if (treeChanged(dir)) quarantine(join(dir, "HEAD"));
      return;
    }
    for (const g of dotGits) {
      const p = join(dir, g.name);
      if (!skipSet.has(p) && (changed(p) || (g.isDirectory && treeChanged(p)))) quarantine(p);
    }
    for (const name of configs) {
      const p = join(dir, name);
      if (!skipSet.has(p) && changed(p)) quarantine(p, "config");
    }
    if (level >= depth) return;
    for (const name of subdirs) {
      // a repository's insides are not walked for more: treeChanged read them
      if (dotGits.some((g) => g.name === name)) continue;
      const p = dir + "/" + name;
      if (!skipSet.has(p)) walk(p, level + 1);
    }
  };
  for (const root of roots) {
    if (skipSet.has(root)) continue;
    if (depth >= 0) {
      walk(root, 0);
      continue;
    }
    const dotGit = join(root, ".git");
    if (
      !skipSet.has(dotGit) && exists(dotGit) && (changed(dotGit) || (isDir(dotGit) && treeChanged(dotGit)))
    ) {
      quarantine(dotGit);
    }
    for (const name of PROJECT_CONFIG) {
      const p = join(root, name);
      if (!skipSet.has(p) && exists(p) && !isDir(p) && changed(p)) quarantine(p, "config");
    }
    const head = join(root, "HEAD");
    const layout = exists(head) &&
      (exists(join(root, "commondir")) || (isDir(join(root, "objects")) && isDir(join(root, "refs"))));
    // its entries of a repository by name (treeChanged would read the whole directory)
    if (
      layout &&
      ["HEAD", "objects", "refs", "commondir", "config", "hooks"].some((n) => changed(join(root, n)))
    ) {
      quarantine(head);
    }
  }
  return out;
}

/** Gives the owner read, write and search on `dir` (what the sweep needs to list and rename). */
function openUp(dir: string): void {
  const mode = Deno.lstatSync(dir).mode ?? 0;
  Deno.chmodSync(dir, (mode & 0o7777) | 0o700);
}

function isDir(path: string): boolean {
  try {
    return Deno.lstatSync(path).isDirectory;
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** One run's sweep: what `runSweep` walks, and the quarantine names' run id. */
export interface SweepPlan {
  /** The run's start (ms since the epoch). */
  since: number;
  /** Directories swept whole (the project first). */
  roots: string[];
  /** Directories checked only for a repository of their own (`/tmp`: other programs' too). */
  topOnly: string[];
  /** Directories neither checked nor walked (the project's own repository). */
  skip: string[];
  runId: string;
  /**
   * agent-block's configuration places that did not resolve at the start (`configAbsent` of the
   * policy: no mount covered them): each that resolves after the run is quarantined, whatever its
   * times say (a symlink to nothing the run gave a target keeps its own `ctime`).
   */
  watch?: string[];
  /**
   * Configuration files a read-only mount covered for the whole run (`configPaths`, resolved):
   * the run could not change them, so they are not checked (a change the user made meanwhile is
   * theirs). Empty where no mount namespace could be had. Never taken from a note.
   */
  keep?: string[];
  /**
   * The identity (`identity`) at the run's start of each path the sweep would otherwise take on
   * trust by its name — the grants, the `skip` repositories and the configuration places (`config`:
   * the `keep` files, or all of them where no mount covered them): a run that may write in a
   * directory above one of them (a project or home inside `/tmp` or inside another grant) can
   * rename it away and put another in its place, which no mount covers. One whose identity changed
   * is neither skipped nor kept: it is checked like anything new, and a configuration place is
   * quarantined if anything is there now (`sweepWatched`). Never taken from a note (a later launch
   * checks every change by its time).
   */
  held?: { path: string; id: string; config?: boolean }[];
}

/** A file or directory's identity (device and inode, not following a symlink); undefined when absent. */
export function identity(path: string): string | undefined {
  try {
    const i = Deno.lstatSync(path);
    return `${i.dev}:${i.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * The directories strictly between each of `shared` (a grant checked by name only, `/tmp`) and
 * each of `roots` inside it, nearest the shared one first: git started in a root looks for a
 * repository in each of them, so a run that may write there could plant one the root's own
 * missing `.git` would not shadow. `between(["/tmp"], ["/tmp/a/b/p"])` is `/tmp/a`, `/tmp/a/b`.
 */
export function between(shared: readonly string[], roots: readonly string[]): string[] {
  const out = new Set<string>();
  for (const top of shared) {
    for (const root of roots) {
      if (!root.startsWith(top + "/")) continue;
      const chain: string[] = [];
      for (let d = dirname(root); d !== top && d.startsWith(top + "/"); d = dirname(d)) chain.unshift(d);
      chain.forEach((d) => out.add(d));
    }
  }
  return [...out];
}

/**
 * `plan` swept: its roots whole, its `topOnly` directories for a repository (or a `.env`) of their
 * own, then its `watch` places — after telling which of its `held` paths were replaced.
 */
export function runSweep(plan: SweepPlan): SweepResult {
  const changed = (plan.held ?? []).filter((h) => identity(h.path) !== h.id);
  const replaced = changed.map((h) => h.path);
  const same = (p: string) => !replaced.includes(p);
  const skip = [...plan.skip, ...(plan.keep ?? [])].filter(same);
  const whole = sweepRepositories(plan.roots, plan.since, plan.runId, skip);
  const top = sweepRepositories(plan.topOnly, plan.since, plan.runId, skip, -1);
  // a configuration place replaced: whatever is there now is the run's
  const watch = [...(plan.watch ?? []), ...changed.filter((h) => h.config).map((h) => h.path)];
  const watched = sweepWatched([...new Set(watch)], plan.runId);
  return {
    quarantined: [...whole.quarantined, ...top.quarantined, ...watched.quarantined],
    failed: [...whole.failed, ...top.failed, ...watched.failed],
    dirs: whole.dirs + top.dirs,
    ...(replaced.length ? { replaced } : {}),
  };
}

/**
 * Quarantines each of `places` (configuration places absent at the run's start) that resolves now
 * (a file or directory, or a symlink to one): renamed beside itself, as a repository is.
 */
export function sweepWatched(places: readonly string[], runId: string): SweepResult {
  const out: SweepResult = { quarantined: [], failed: [], dirs: 0 };
  for (const path of places) {
    try {
      Deno.statSync(path); // follows a symlink: one to nothing is nothing to read
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) {
        out.failed.push({ path, why: `cannot check it: ${(e as Error).message}` });
      }
      continue;
    }
    const to = asideName(path, runId);
    try {
      Deno.renameSync(path, to);
      out.quarantined.push({ path, to, kind: "config" });
    } catch (e) {
      out.failed.push({ path, why: (e as Error).message });
    }
  }
  return out;
}

/**
 * Notes `plan` in `dir` (the home's `sandbox-sweeps/`, read-only to the run) before the run starts,
 * under this process's pid and start time (the user-namespace hop's second launcher, the same
 * process after `execve`, rewrites the first one's note). Returns the note, open for writing, so
 * `sweepDone` can empty it once the mounts make its directory read-only to this process too; or
 * undefined when it cannot be written (the launcher says so: a killed launcher leaves no sweep).
 */
export function recordPending(dir: string, plan: SweepPlan): Deno.FsFile | undefined {
  const key = processKey(Deno.pid);
  if (!key) return undefined;
  try {
    const f = Deno.openSync(join(dir, `${key}.json`), {
      write: true,
      create: true,
      truncate: true,
      mode: 0o600,
    });
    f.writeSync(new TextEncoder().encode(JSON.stringify(plan)));
    return f;
  } catch {
    return undefined;
  }
}

/** Empties the note `recordPending` opened: the sweep it names is done. */
export function sweepDone(note: Deno.FsFile | undefined): void {
  try {
    note?.truncateSync(0);
    note?.close();
  } catch {
    // the next launch sweeps again: more quarantine, never less
  }
}

/**
 * The sweeps earlier launchers on `current`'s project noted and never did (killed outright before it), done
 * now; called before the run is confined. A note whose launcher still lives is another run's,
 * left alone; an empty one (done) is removed; one of another project waits for that project's
 * next run. A note is only trusted as far as the run could not have written it: the roots must be
 * `current`'s (this run's, so a note names nothing this run could not write), so is `skip`, its
 * `watch` places must be among `candidates` (this launch's `configCandidates`), its `keep` is not
 * read (a configuration file changed since that run's start is quarantined, even one the user
 * changed: more quarantine, never less), and its start is no earlier than 2 s before the note's
 * own `ctime` (which no process can set).
 */
export function pendingSweeps(
  dir: string,
  current: SweepPlan,
  candidates: readonly string[] = [],
): SweepResult {
  const project = current.roots[0];
  const out: SweepResult = { quarantined: [], failed: [], dirs: 0 };
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!e.isFile || !launcherGone(e.name)) continue; // not a note, or its launcher is still there
    const path = join(dir, e.name);
    let plan: SweepPlan | undefined;
    let ctime = 0;
    try {
      const info = Deno.lstatSync(path);
      ctime = info.ctime?.getTime() ?? Date.now();
      const text = Deno.readTextFileSync(path);
      if (text !== "") plan = JSON.parse(text) as SweepPlan;
    } catch {
      plan = undefined; // unreadable: nothing to go by
    }
    if (plan && plan.roots?.[0] !== project) continue; // that project's next run sweeps it
    if (plan) {
      const r = runSweep({
        since: Math.max(Number(plan.since) || 0, ctime - 2000),
        roots: current.roots.filter((r) => plan!.roots.includes(r)),
        topOnly: current.topOnly.filter((t) => (plan!.topOnly ?? []).includes(t)),
        skip: current.skip,
        runId: String(plan.runId).replace(/[^0-9a-z]/gi, "").slice(0, 16) || "earlier",
        watch: (Array.isArray(plan.watch) ? plan.watch : []).filter((w) => candidates.includes(w)),
      });
      out.quarantined.push(...r.quarantined);
      out.failed.push(...r.failed);
      out.dirs += r.dirs;
    }
    try {
      Deno.removeSync(path);
    } catch {
      // left for the next one
    }
  }
  return out;
}
