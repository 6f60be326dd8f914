/**
 * Landlock: the kernel layer that denies writes outside the policy's paths and, when asked,
 * every TCP bind and connect.
 *
 * Owns the ruleset: which rights are handled at the kernel's ABI (`planLandlock`, pure: what is
 * enforced, what an older ABI drops, and when start-up must fail instead) and installing it on
 * the calling thread (`applyLandlock`: one PATH_BENEATH rule per writable path, then
 * `PR_SET_NO_NEW_PRIVS` and `landlock_restrict_self`).
 *
 * What it catches: any write-type operation (create, write, truncate, remove, rename or link
 * across directories, make a fifo, socket or symlink, device ioctl) outside the writable paths,
 * and making a block or character device anywhere (those two rights are handled and never
 * granted: a disk's node made in `/tmp` would be a way to every file system), by this thread and
 * every process it then starts or becomes, whatever the language: Lua through our TypeScript, a
 * shell, a compiled program, an MCP server. Reads and executes are not handled, so they stay
 * unrestricted. It also denies mount and umount to the confined process (Landlock's rule for
 * domains that restrict the file system), which keeps `mount_ns.ts`'s read-only `.git` in place.
 * It does not catch UDP, and its TCP rules are by port, not host.
 *
 * Invariant: Landlock confines the calling thread only (no TSYNC before ABI 8), so it is applied
 * by the launcher on its main thread right before that thread starts the runtime as its child
 * (`launcher.ts`): the child, and every thread of it, is created after it. Fail-closed: no ABI, or an explicit TCP denial without network
 * rules (ABI < 4), is an error, never a silent weaker run.
 */
import { AgentBlockError } from "../errors.ts";
import { cstring, LANDLOCK, lastError, type Sys } from "./sys.ts";
import type { WritableRoot } from "./policy.ts";

/** File-system rights (`LANDLOCK_ACCESS_FS_*`) with the ABI that introduced them. */
const FS = {
  WRITE_FILE: 1n << 1n,
  REMOVE_DIR: 1n << 4n,
  REMOVE_FILE: 1n << 5n,
  MAKE_CHAR: 1n << 6n,
  MAKE_DIR: 1n << 7n,
  MAKE_REG: 1n << 8n,
  MAKE_SOCK: 1n << 9n,
  MAKE_FIFO: 1n << 10n,
  MAKE_BLOCK: 1n << 11n,
  MAKE_SYM: 1n << 12n,
  REFER: 1n << 13n,
  TRUNCATE: 1n << 14n,
  IOCTL_DEV: 1n << 15n,
} as const;

/** The write-type rights of ABI 1. */
const ABI1_WRITES = FS.WRITE_FILE | FS.REMOVE_DIR | FS.REMOVE_FILE | FS.MAKE_CHAR | FS.MAKE_DIR |
  FS.MAKE_REG |
  FS.MAKE_SOCK | FS.MAKE_FIFO | FS.MAKE_BLOCK | FS.MAKE_SYM;

/** Rights added by later ABIs: what an older kernel drops, and the Linux release that has it. */
const LATER_RIGHTS = [
  { abi: 2, right: FS.REFER, name: "REFER (rename and link across directories)", linux: "5.19" },
  { abi: 3, right: FS.TRUNCATE, name: "TRUNCATE", linux: "6.2" },
  { abi: 5, right: FS.IOCTL_DEV, name: "IOCTL_DEV (device ioctls)", linux: "6.10" },
] as const;

/**
 * Handled (so denied everywhere) but never granted, not even beneath a writable path: a device
 * node made in `/tmp` for a disk would open every file system to the run.
 */
const NEVER_GRANTED = FS.MAKE_CHAR | FS.MAKE_BLOCK;

/** The rights that apply to a single file (a rule on a file may hold no others). */
const FILE_RIGHTS = FS.WRITE_FILE | FS.TRUNCATE | FS.IOCTL_DEV;

const NET_BIND_TCP = 1n << 0n;
const NET_CONNECT_TCP = 1n << 1n;
/** The first ABI with network rules (Linux 6.7). */
export const NET_ABI = 4;

const LANDLOCK_CREATE_RULESET_VERSION = 1;
const LANDLOCK_RULE_PATH_BENEATH = 1;
const PR_SET_NO_NEW_PRIVS = 38;
const O_PATH = 0o10000000;
const O_CLOEXEC = 0o2000000;

/** What will be enforced at one ABI. */
export interface LandlockPlan {
  /** The ABI the ruleset is built for. */
  abi: number;
  handledFs: bigint;
  /** 0n: TCP is not handled (allowed). */
  handledNet: bigint;
  /** Rights of the default set this ABI cannot enforce (the start-up warning names them). */
  dropped: string[];
}

/**
 * What to enforce at Landlock ABI `abi` with TCP allowed or not; an error when start-up must
 * fail instead (no Landlock; TCP denial without network rules).
 * @param seam set when `abi` comes from the test seam (named in the error)
 */
export function planLandlock(abi: number, tcp: boolean, seam = false): LandlockPlan | AgentBlockError {
  const how = seam ? ` (pretended by AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI=${abi})` : "";
  if (abi < 1) {
    return new AgentBlockError(
      `--sandbox: this kernel enforces no Landlock${how}, so nothing would confine the run's writes; ` +
        `a requested sandbox does not run unconfined (Linux 5.13 or later with Landlock enabled is needed)`,
    );
  }
  if (!tcp && abi < NET_ABI) {
    return new AgentBlockError(
      `--sandbox: AGENT_BLOCK_SANDBOX_TCP denies TCP, but this kernel's Landlock (ABI ${abi}${how}) has no ` +
        `network rules (ABI ${NET_ABI}, Linux 6.7): start-up stops rather than leave TCP open`,
    );
  }
  let handledFs = ABI1_WRITES;
  const dropped: string[] = [];
  for (const r of LATER_RIGHTS) {
    if (abi >= r.abi) handledFs |= r.right;
    else dropped.push(`${r.name}, Linux ${r.linux}`);
  }
  return { abi, handledFs, handledNet: tcp ? 0n : NET_BIND_TCP | NET_CONNECT_TCP, dropped };
}

/** The kernel's Landlock ABI (0: none, or the syscall is not there). */
export function landlockAbi(c: Sys): number {
  const r = Number(
    c.syscall(LANDLOCK.create_ruleset, 0n, 0n, BigInt(LANDLOCK_CREATE_RULESET_VERSION), 0n, 0n, 0n),
  );
  return r > 0 ? r : 0;
}

/** The rights a rule on a writable directory (`dir`) or file grants: never a device node. */
export function grantedRights(plan: LandlockPlan, dir: boolean): bigint {
  return (dir ? plan.handledFs : plan.handledFs & FILE_RIGHTS) & ~NEVER_GRANTED;
}

function address(buf: Uint8Array<ArrayBuffer>): bigint {
  return BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(buf)));
}

function fail(c: Sys, what: string): never {
  const e = lastError(c);
  throw new AgentBlockError(`--sandbox: ${what} failed: ${e.text} (errno ${e.errno})`);
}

/**
 * Confines the calling thread (and what it becomes or starts) to `plan` with `roots` writable.
 * Throws `AgentBlockError` when any step fails: a half-built ruleset is never skipped.
 */
export function applyLandlock(c: Sys, plan: LandlockPlan, roots: readonly WritableRoot[]): void {
  const attr = new Uint8Array(24);
  const view = new DataView(attr.buffer);
  view.setBigUint64(0, plan.handledFs, true);
  view.setBigUint64(8, plan.handledNet, true);
  const size = plan.abi >= NET_ABI ? 16n : 8n; // the struct as this ABI knows it (no scopes used)
  const ruleset = Number(c.syscall(LANDLOCK.create_ruleset, address(attr), size, 0n, 0n, 0n, 0n));
  if (ruleset < 0) fail(c, "landlock_create_ruleset");
  try {
    for (const root of roots) {
      const fd = c.open(cstring(root.path), O_PATH | O_CLOEXEC, 0);
      if (fd < 0) fail(c, `opening ${root.path} for its Landlock rule`);
      try {
        // struct landlock_path_beneath_attr, packed: u64 allowed_access, s32 parent_fd.
        const rule = new Uint8Array(12);
        const rv = new DataView(rule.buffer);
        rv.setBigUint64(0, grantedRights(plan, root.dir), true);
        rv.setInt32(8, fd, true);
        const r = Number(
          c.syscall(
            LANDLOCK.add_rule,
            BigInt(ruleset),
            BigInt(LANDLOCK_RULE_PATH_BENEATH),
            address(rule),
            0n,
            0n,
            0n,
          ),
        );
        if (r !== 0) fail(c, `landlock_add_rule for ${root.path}`);
      } finally {
        c.close(fd);
      }
    }
    if (c.prctl(PR_SET_NO_NEW_PRIVS, 1n, 0n, 0n, 0n) !== 0) fail(c, "prctl(PR_SET_NO_NEW_PRIVS)");
    if (Number(c.syscall(LANDLOCK.restrict_self, BigInt(ruleset), 0n, 0n, 0n, 0n, 0n)) !== 0) {
      fail(c, "landlock_restrict_self");
    }
  } finally {
    c.close(ruleset);
  }
}
