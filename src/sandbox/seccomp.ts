/**
 * seccomp: the kernel layer that makes io_uring fail with `EPERM` and, when TCP is denied, the
 * sockets that would reach TCP peers around Landlock's TCP rules.
 *
 * Owns the BPF program (`seccompProgram`, pure) and installing it (`installSeccomp`, with
 * `SECCOMP_FILTER_FLAG_TSYNC` so every thread of the launcher has it, and every process after):
 * - always: `io_uring_setup`, `io_uring_enter` and `io_uring_register` (425–427 in the unified
 *   table of x86_64, aarch64 and their 32-bit compat modes) answer `ERRNO(EPERM)`; on x86_64
 *   every x32 syscall (`nr & 0x40000000`) does too, so the x32 numbering is no way around it. An
 *   io_uring ring would let a process issue file and network operations the kernel does not
 *   check syscall by syscall;
 * - TCP denied (`AGENT_BLOCK_SANDBOX_TCP=0`): Landlock's network rules cover plain TCP only, so
 *   `socket()` is refused (`EPERM`) for an `AF_INET`/`AF_INET6` stream socket of any protocol
 *   but TCP (multipath TCP, `IPPROTO_MPTCP`, connects to TCP peers; SCTP goes too), raw and
 *   packet sockets of those families, `AF_PACKET` and `AF_SMC` (SMC falls back to TCP). In a
 *   32-bit compat process every socket creation is refused (i386 `socketcall` hides its
 *   arguments from the filter). UDP and Unix sockets stay allowed.
 * Everything else is allowed. On an architecture other than x86_64 and aarch64 the filter is
 * skipped and the launcher warns.
 */
import { AgentBlockError } from "../errors.ts";
import { type ArchInfo, lastError, type Sys } from "./sys.ts";

/** io_uring_setup, io_uring_enter, io_uring_register. */
export const IO_URING_NRS = [425, 426, 427] as const;

/** What the filter denies besides io_uring. */
export interface FilterOptions {
  /** TCP allowed: no socket is refused. */
  tcp: boolean;
}

const LD_W_ABS = 0x20;
const ALU_AND_K = 0x54;
const JEQ_K = 0x15;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const OFF_NR = 0;
const OFF_ARCH = 4;
/** `seccomp_data.args[i]`'s low 32 bits (little-endian), where an `int` argument lies. */
const argLow = (i: number) => 16 + 8 * i;

const AF_INET = 2;
const AF_INET6 = 10;
const AF_PACKET = 17;
const AF_SMC = 43;
const SOCK_STREAM = 1;
const SOCK_RAW = 3;
const SOCK_PACKET = 10;
const SOCK_TYPE_MASK = 0xf;
const IPPROTO_IP = 0;
const IPPROTO_TCP = 6;

type Insn = { code: number; jt?: string; jf?: string; k: number; label?: string };

/** The filter for `arch`, as `struct sock_filter` entries (8 bytes each). */
export function seccompProgram(arch: ArchInfo, opts: FilterOptions = { tcp: true }): Uint8Array<ArrayBuffer> {
  const prog: Insn[] = [
    { code: LD_W_ABS, k: OFF_ARCH },
    { code: JEQ_K, k: arch.auditArch, jf: "compat" },
    { code: LD_W_ABS, k: OFF_NR },
  ];
  for (const nr of IO_URING_NRS) prog.push({ code: JEQ_K, k: nr, jt: "deny" });
  if (arch.x32Bit !== undefined) prog.push({ code: JSET_K, k: arch.x32Bit, jt: "deny" });
  if (!opts.tcp) {
    prog.push(
      { code: JEQ_K, k: arch.socketNr, jf: "allow" },
      { code: LD_W_ABS, k: argLow(0) },
      { code: JEQ_K, k: AF_PACKET, jt: "deny" },
      { code: JEQ_K, k: AF_SMC, jt: "deny" },
      { code: JEQ_K, k: AF_INET, jt: "inet" },
      { code: JEQ_K, k: AF_INET6, jt: "inet", jf: "allow" },
      { code: LD_W_ABS, k: argLow(1), label: "inet" },
      { code: ALU_AND_K, k: SOCK_TYPE_MASK },
      { code: JEQ_K, k: SOCK_RAW, jt: "deny" },
      { code: JEQ_K, k: SOCK_PACKET, jt: "deny" },
      { code: JEQ_K, k: SOCK_STREAM, jf: "allow" },
      { code: LD_W_ABS, k: argLow(2) },
      { code: JEQ_K, k: IPPROTO_IP, jt: "allow" },
      { code: JEQ_K, k: IPPROTO_TCP, jt: "allow", jf: "deny" },
    );
  }
  prog.push({ code: RET_K, k: RET_ALLOW, label: "allow" });
  // A 32-bit compat process: the same io_uring numbers; with TCP denied, no socket at all.
  prog.push({ code: LD_W_ABS, k: OFF_NR, label: "compat" });
  for (const nr of IO_URING_NRS) prog.push({ code: JEQ_K, k: nr, jt: "deny" });
  if (!opts.tcp) {
    for (const nr of arch.compatSocketNrs) prog.push({ code: JEQ_K, k: nr, jt: "deny" });
  }
  prog.push({ code: RET_K, k: RET_ALLOW });
  prog.push({ code: RET_K, k: RET_ERRNO | EPERM, label: "deny" });
  const at = new Map(prog.flatMap((p, i) => p.label ? [[p.label, i] as const] : []));
  const out = new Uint8Array(prog.length * 8);
  const v = new DataView(out.buffer);
  prog.forEach((p, i) => {
    const jump = (label?: string) => {
      if (label === undefined) return 0;
      const d = at.get(label)! - i - 1;
      if (d < 0 || d > 255) throw new Error(`seccomp program: jump to ${label} out of range`);
      return d;
    };
    v.setUint16(i * 8, p.code, true);
    v.setUint8(i * 8 + 2, jump(p.jt));
    v.setUint8(i * 8 + 3, jump(p.jf));
    v.setUint32(i * 8 + 4, p.k, true);
  });
  return out;
}

const PR_SET_NO_NEW_PRIVS = 38;
const SECCOMP_SET_MODE_FILTER = 1n;
const SECCOMP_FILTER_FLAG_TSYNC = 1n;

/** Installs the filter on every thread of this process; throws `AgentBlockError` on failure. */
export function installSeccomp(c: Sys, arch: ArchInfo, opts: FilterOptions): void {
  const filter = seccompProgram(arch, opts);
  // struct sock_fprog: u16 len, then (aligned) the pointer to the instructions.
  const fprog = new Uint8Array(16);
  const v = new DataView(fprog.buffer);
  v.setUint16(0, filter.length / 8, true);
  v.setBigUint64(8, BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(filter))), true);
  if (c.prctl(PR_SET_NO_NEW_PRIVS, 1n, 0n, 0n, 0n) !== 0) {
    const e = lastError(c);
    throw new AgentBlockError(`--sandbox: prctl(PR_SET_NO_NEW_PRIVS) failed: ${e.text}`);
  }
  const fp = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(fprog)));
  const r = Number(
    c.syscall(BigInt(arch.seccompNr), SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, fp, 0n, 0n, 0n),
  );
  if (r !== 0) {
    const e = lastError(c);
    throw new AgentBlockError(
      `--sandbox: installing the seccomp filter failed: ${e.text} (errno ${e.errno})`,
    );
  }
}
