/**
 * The libc calls the sandbox launcher makes, bound once through `src/proc/libc.ts`'s opener.
 *
 * Owns the symbol set and the small conversions around it: C strings, `errno` after a failed
 * call, and the architecture facts the filters need (syscall numbers of `landlock_*` and
 * `seccomp`, the audit architecture). Only the launcher loads this module (lazily, on
 * `--sandbox`); the sandboxed runtime does not load it.
 *
 * `syscall` is declared with all seven arguments: declared with fewer, the later arguments of a
 * call arrive as garbage (`landlock_add_rule`'s `flags` did, and every rule failed `EINVAL`).
 */
import { openLibc } from "../proc/libc.ts";

const SYMBOLS = {
  syscall: { parameters: ["i64", "i64", "i64", "i64", "i64", "i64", "i64"], result: "i64" },
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  open: { parameters: ["buffer", "i32", "u32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  ioctl: { parameters: ["i32", "u64", "u64"], result: "i32" },
  unshare: { parameters: ["i32"], result: "i32" },
  mount: { parameters: ["buffer", "buffer", "buffer", "u64", "pointer"], result: "i32" },
  execve: { parameters: ["buffer", "buffer", "buffer"], result: "i32" },
  capset: { parameters: ["buffer", "buffer"], result: "i32" },
  strerror: { parameters: ["i32"], result: "pointer" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

/** The bound symbols. */
export type Sys = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

let opened: Sys | string | undefined;

/** libc with the launcher's symbols, or why not. */
export function sys(): Sys | string {
  return opened ??= openLibc(SYMBOLS);
}

/** A NUL-terminated copy of `s`. */
export function cstring(s: string): Uint8Array<ArrayBuffer> {
  const bytes = new TextEncoder().encode(s);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}

/** `errno` now, with its text: call right after the failed call. */
export function lastError(c: Sys): { errno: number; text: string } {
  const loc = c.__errno_location();
  const errno = loc ? new Deno.UnsafePointerView(loc).getInt32() : 0;
  const msg = c.strerror(errno);
  return { errno, text: msg ? Deno.UnsafePointerView.getCString(msg) : `errno ${errno}` };
}

/** Architecture facts the filters need, or undefined on an architecture they do not know. */
export interface ArchInfo {
  /** `AUDIT_ARCH_*` the seccomp filter checks. */
  auditArch: number;
  seccompNr: number;
  /** x86_64 only: the x32 syscall bit, denied outright. */
  x32Bit?: number;
  /** `socket`'s number. */
  socketNr: number;
  /** The 32-bit compat mode's socket-making syscalls (i386: `socketcall`, `socket`; arm: `socket`). */
  compatSocketNrs: number[];
}

const LANDLOCK_NR = { create_ruleset: 444n, add_rule: 445n, restrict_self: 446n } as const;
/** landlock_* syscall numbers (the same on x86_64 and aarch64, from the unified table). */
export const LANDLOCK = LANDLOCK_NR;

/** The running architecture's facts. */
export function archInfo(arch: string = Deno.build.arch): ArchInfo | undefined {
  if (arch === "x86_64") {
    return {
      auditArch: 0xc000003e,
      seccompNr: 317,
      x32Bit: 0x40000000,
      socketNr: 41,
      compatSocketNrs: [102, 359],
    };
  }
  if (arch === "aarch64") {
    return { auditArch: 0xc00000b7, seccompNr: 277, socketNr: 198, compatSocketNrs: [281] };
  }
  return undefined;
}
