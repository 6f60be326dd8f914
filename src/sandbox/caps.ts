/**
 * Capabilities: the confined runtime holds none, and can gain none.
 *
 * Run as root (containers, CI runners) a process keeps every capability across `execve`, and
 * the user-namespace hop keeps the namespace's on purpose (`--keep-caps`, for the mounts). With
 * `CAP_MKNOD` a child could make a disk's device node and write any file system; with
 * `CAP_SYS_ADMIN`, `CAP_NET_RAW` and the rest it could reach around Landlock in other ways.
 *
 * Owns `dropCapabilities`, called by the launcher on its main thread after its mounts and before
 * it starts the runtime (capabilities are a thread's own; the child inherits that thread's):
 * 1. every capability is dropped from the bounding set (`PR_CAPBSET_DROP`, 0 to the kernel's
 *    `cap_last_cap`), so no later `execve` can grant one, not even to uid 0 (root's file
 *    capabilities are masked by the bounding set); an unprivileged user, who may not change it
 *    and holds no capability, keeps it (no-new-privs already stops every way to gain one);
 * 2. the ambient set is cleared (`PR_CAP_AMBIENT_CLEAR_ALL`);
 * 3. the effective, permitted and inheritable sets are emptied (`capset`), so the launcher itself
 *    thread holds none when it starts the runtime (inheritable is what root's `execve` would add
 *    back).
 * The runtime needs none (it signals only its own children, and writes only what Landlock grants
 * by ownership). Any failing step is an `AgentBlockError`: a half-dropped set is never run.
 */
import { AgentBlockError } from "../errors.ts";
import { lastError, type Sys } from "./sys.ts";

const PR_CAPBSET_DROP = 24;
const PR_CAP_AMBIENT = 47;
const PR_CAP_AMBIENT_CLEAR_ALL = 4n;
const LINUX_CAPABILITY_VERSION_3 = 0x20080522;
const EINVAL = 22;
const EPERM = 1;

/** True when `/proc/self/status` text shows an empty permitted set. */
export function permittedEmpty(status: string): boolean {
  const m = /^CapPrm:\s*([0-9a-f]+)/m.exec(status);
  return m !== null && BigInt("0x" + m[1]) === 0n;
}

/** The highest capability number this kernel knows (`/proc/sys/kernel/cap_last_cap`, else 63). */
function lastCap(): number {
  try {
    const n = Number(Deno.readTextFileSync("/proc/sys/kernel/cap_last_cap").trim());
    return Number.isInteger(n) && n >= 0 ? n : 63;
  } catch {
    return 63;
  }
}

function fail(c: Sys, what: string): never {
  const e = lastError(c);
  throw new AgentBlockError(`--sandbox: ${what} failed: ${e.text} (errno ${e.errno})`);
}

/** Drops every capability of this process for good (see the module doc). */
export function dropCapabilities(c: Sys, status = () => Deno.readTextFileSync("/proc/self/status")): void {
  const last = lastCap();
  for (let cap = 0; cap <= last; cap++) {
    if (c.prctl(PR_CAPBSET_DROP, BigInt(cap), 0n, 0n, 0n) === 0) continue;
    const errno = lastError(c).errno;
    // past the kernel's last capability (a guessed bound): nothing more to drop
    if (errno === EINVAL && cap > 0) break;
    // an unprivileged user cannot change the bounding set (no CAP_SETPCAP); holding no capability,
    // it has none to keep, and no-new-privs (set before the exec) stops setuid and file
    // capabilities from granting one
    if (errno === EPERM && permittedEmpty(status())) break;
    fail(c, `dropping capability ${cap} from the bounding set (prctl PR_CAPBSET_DROP)`);
  }
  if (c.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0n, 0n, 0n) !== 0) {
    fail(c, "clearing the ambient capabilities (prctl PR_CAP_AMBIENT)");
  }
  // struct __user_cap_header_struct { u32 version; s32 pid } and two
  // struct __user_cap_data_struct { u32 effective, permitted, inheritable }, all zero.
  const header = new Uint8Array(8);
  new DataView(header.buffer).setUint32(0, LINUX_CAPABILITY_VERSION_3, true);
  const data = new Uint8Array(24);
  if (c.capset(header, data) !== 0) fail(c, "emptying the capability sets (capset)");
}
