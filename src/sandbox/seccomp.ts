/**
 * seccomp: the kernel layer that makes `io_uring_setup`, `io_uring_enter` and
 * `io_uring_register` fail with `EPERM`.
 *
 * Owns the BPF program (`seccompProgram`, pure: the io_uring syscall numbers, 425–427 in the
 * unified table of x86_64, aarch64 and their 32-bit compat modes, answer `ERRNO(EPERM)`; on
 * x86_64 every x32 syscall, `nr & 0x40000000`, does too, so the x32 numbering is no way around
 * it; everything else is allowed) and installing it (`installSeccomp`, with
 * `SECCOMP_FILTER_FLAG_TSYNC` so every thread of the launcher has it, and every process after).
 *
 * What it catches: an io_uring ring, which would let a process issue file and network operations
 * the kernel does not check syscall by syscall. On an architecture other than x86_64 and aarch64
 * it is skipped and the launcher warns.
 */
import { AgentBlockError } from "../errors.ts";
import { type ArchInfo, lastError, type Sys } from "./sys.ts";

/** io_uring_setup, io_uring_enter, io_uring_register. */
export const IO_URING_NRS = [425, 426, 427] as const;

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const OFF_NR = 0;
const OFF_ARCH = 4;

type Insn = { code: number; jt?: string; jf?: string; k: number; label?: string };

/** The filter for `arch`, as `struct sock_filter` entries (8 bytes each). */
export function seccompProgram(arch: ArchInfo): Uint8Array<ArrayBuffer> {
  const prog: Insn[] = [{ code: LD_W_ABS, k: OFF_NR }];
  for (const nr of IO_URING_NRS) prog.push({ code: JEQ_K, k: nr, jt: "deny" });
  if (arch.x32Bit !== undefined) {
    prog.push({ code: LD_W_ABS, k: OFF_ARCH });
    prog.push({ code: JEQ_K, k: arch.auditArch, jf: "allow" });
    prog.push({ code: LD_W_ABS, k: OFF_NR });
    prog.push({ code: JSET_K, k: arch.x32Bit, jt: "deny" });
  }
  prog.push({ code: RET_K, k: RET_ALLOW, label: "allow" });
  prog.push({ code: RET_K, k: RET_ERRNO | EPERM, label: "deny" });
  const at = new Map(prog.flatMap((p, i) => p.label ? [[p.label, i] as const] : []));
  const out = new Uint8Array(prog.length * 8);
  const v = new DataView(out.buffer);
  prog.forEach((p, i) => {
    const jump = (label?: string) => label === undefined ? 0 : at.get(label)! - i - 1;
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
export function installSeccomp(c: Sys, arch: ArchInfo): void {
  const filter = seccompProgram(arch);
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
