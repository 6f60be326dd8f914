/**
 * The read-only paths inside the grants: a private mount namespace in which each of them (the
 * project's version-control directories, and agent-block's configuration and code: the
 * project's `.env`, the home's `lib/`, `blocks/`, serve files and locks, MCP token store
 * `mcp-auth/` and flow locks `flow-locks/` — `policy.ts` lists them) is bind-mounted over itself and made
 * read-only.
 *
 * Landlock only grants, so it cannot take a path back out of the writable project root or home;
 * a mount can. What it catches: a block planting a hook (`.git/hooks/*`), rewriting `config` (a
 * `core.fsmonitor` or `core.hooksPath` command) or history, rewriting the `.env` that holds the
 * sandbox switch, or planting a module in the home's `lib/` that every project would load —
 * anything that would run later, outside the sandbox. Writes there fail with `EROFS`, and
 * removing or renaming over one of them with `EBUSY` (it is a mount point), for every process of
 * the run. The mount stays: Landlock denies mount and umount to the confined run, and the
 * namespace is the run's own (the host's mounts are untouched, propagation private).
 *
 * Owns how the namespace is had:
 * - with `CAP_SYS_ADMIN` (root), `unshare(CLONE_NEWNS)` on the launcher's main thread (a
 *   multi-threaded process may unshare its mount namespace; the runtime that thread starts inherits it);
 * - otherwise through a user namespace, which a multi-threaded process cannot enter: the
 *   launcher re-executes itself through util-linux `unshare --user --map-current-user
 *   --keep-caps --mount` (`userNamespaceHop`, probed once; `--keep-caps` because an `execve` as a
 *   non-root user would drop the namespace's capabilities), and the second launcher does the
 *   mounts, then drops every capability (`caps.ts`) before it starts the runtime;
 * - neither (no privilege, user namespaces disabled, no `unshare`): `protectPaths` says why, and
 *   the launcher warns once and says so in its start-up line.
 * The read-only flag is set with `mount_setattr(MOUNT_ATTR_RDONLY)`, which changes that flag
 * alone (a remount would have to restate the flags a user namespace locks).
 */
import { AgentBlockError } from "../errors.ts";
import { cstring, lastError, type Sys } from "./sys.ts";

const CLONE_NEWNS = 0x00020000;
const MS_BIND = 4096;
const MS_REC = 16384;
const MS_PRIVATE = 1 << 18;
const SYS_MOUNT_SETATTR = 442n; // the unified table: x86_64 and aarch64
const AT_FDCWD = -100n;
const AT_RECURSIVE = 0x8000n;
const MOUNT_ATTR_RDONLY = 1n;

/** Where util-linux `unshare` is looked for (fixed paths: never the run's PATH). */
const UNSHARE_PATHS = ["/usr/bin/unshare", "/bin/unshare"];

/** The outcome of `protectPaths`. */
export type GitProtection =
  | { status: "read-only" }
  | { status: "hop"; prefix: [string, ...string[]] }
  | { status: "unavailable"; why: string };

/**
 * Makes `dirs` (directories or files) read-only for this process's main thread (the whole process
 * after the user-namespace hop) and what it starts or becomes.
 * @param inUserNs this launcher was started by the `unshare` hop (its namespaces are new already)
 * @param viaUserNs take the user-namespace hop even with privilege (the test seam
 *   `AGENT_BLOCK_SANDBOX_TEST_USERNS=1`, so the unprivileged path is tested as root); without a
 *   hop to take that is an error, never a weaker run
 * @param net a hop also enters a network namespace (`--sandbox-net allow-list`)
 */
export function protectPaths(
  c: Sys,
  dirs: readonly string[],
  inUserNs: boolean,
  viaUserNs = false,
  net = false,
): GitProtection {
  if (dirs.length === 0) return { status: "read-only" };
  if (!inUserNs && viaUserNs) {
    const hop = userNamespaceHop(net);
    if ("prefix" in hop) return { status: "hop", prefix: hop.prefix };
    throw new AgentBlockError(
      `--sandbox: AGENT_BLOCK_SANDBOX_TEST_USERNS=1 asks for the user namespace, but ${hop.why}`,
    );
  }
  if (!inUserNs) {
    if (c.unshare(CLONE_NEWNS) !== 0) {
      const first = lastError(c).text;
      const hop = userNamespaceHop(net);
      if ("prefix" in hop) return { status: "hop", prefix: hop.prefix };
      return { status: "unavailable", why: `unshare(CLONE_NEWNS): ${first}; ${hop.why}` };
    }
    // The copy shares propagation with the host's mounts: cut it before mounting anything.
    if (c.mount(cstring("none"), cstring("/"), null, BigInt(MS_REC | MS_PRIVATE), null) !== 0) {
      return { status: "unavailable", why: `making the mount namespace private: ${lastError(c).text}` };
    }
  }
  for (const dir of dirs) {
    const d = cstring(dir);
    if (c.mount(d, d, null, BigInt(MS_BIND | MS_REC), null) !== 0) {
      return { status: "unavailable", why: `bind-mounting ${dir}: ${lastError(c).text}` };
    }
    const attr = new Uint8Array(32); // struct mount_attr: attr_set, attr_clr, propagation, userns_fd
    new DataView(attr.buffer).setBigUint64(0, MOUNT_ATTR_RDONLY, true);
    const r = c.syscall(
      SYS_MOUNT_SETATTR,
      AT_FDCWD,
      BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(d))),
      AT_RECURSIVE,
      BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(attr))),
      32n,
      0n,
    );
    if (Number(r) !== 0) {
      return { status: "unavailable", why: `making ${dir} read-only: ${lastError(c).text}` };
    }
  }
  return { status: "read-only" };
}

const hopProbes = new Map<boolean, { prefix: [string, ...string[]] } | { why: string }>();

/**
 * The `unshare` command that enters a user and mount namespace (and with `net` a network
 * namespace: `--sandbox-net allow-list`), or why there is none (probed once each).
 */
export function userNamespaceHop(net = false): { prefix: [string, ...string[]] } | { why: string } {
  const known = hopProbes.get(net);
  if (known) return known;
  const hop = probeHop(net);
  hopProbes.set(net, hop);
  return hop;
}

function probeHop(net: boolean): { prefix: [string, ...string[]] } | { why: string } {
  const path = UNSHARE_PATHS.find((p) => {
    try {
      return Deno.statSync(p).isFile;
    } catch {
      return false;
    }
  });
  if (!path) {
    return {
      why: `no user namespace: util-linux unshare not found in ${UNSHARE_PATHS.join(", ")}`,
    };
  }
  const prefix: [string, ...string[]] = [
    path,
    "--user",
    "--map-current-user",
    "--keep-caps",
    "--mount",
    ...(net ? ["--net"] : []),
    "--propagation",
    "private",
    "--",
  ];
  try {
    const r = new Deno.Command(path, {
      args: [...prefix.slice(1), "true"],
      clearEnv: true,
      stdout: "null",
      stderr: "piped",
    })
      .outputSync();
    if (r.code !== 0) {
      const err = new TextDecoder().decode(r.stderr).trim().split("\n")[0];
      return { why: `no user namespace (${path}: ${err || `exit ${r.code}`})` };
    }
  } catch (e) {
    return { why: `no user namespace (cannot run ${path}: ${(e as Error).message})` };
  }
  return { prefix };
}
