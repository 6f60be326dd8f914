/**
 * The session stub: one tiny program that gives a child its own session and the parent-death
 * signal in a single exec, in place of `setsid` (`own_session.ts`) followed by `setpriv
 * --pdeathsig KILL` (`parent_death.ts`).
 *
 * Why: every child used to start through two util-linux programs before its own, each a dynamic
 * executable that loads libc, reads the locale's files and parses its options (~0.6-0.7 ms of
 * CPU each here, ~1.3 ms per spawn together: as much as the `/bin/sh -c true` it wrapped). The stub
 * is a static x86_64 ELF of 252 bytes that makes three system calls and execs the command: its
 * exec costs about nothing beside the command's (bench/llm_long_bench.ts, the `sh` turn).
 *
 * What it does, as `stub PROGRAM ARG...` (the program already resolved to a path: there is no
 * `PATH` search; `parent_death.ts` resolves it the way Deno would, and throws Deno's errors):
 * 1. `prctl(PR_SET_PDEATHSIG, SIGKILL)`;
 * 2. `setsid()` (a spawned child is never a group leader, so this cannot fail for it): the child
 *    leads a new session and process group whose ids are its pid;
 * 3. `execve(PROGRAM, [PROGRAM, ARG...], environ)`: same pid, the settings survive the exec.
 * It exits 125 when step 1 or 2 fails, 127 when the exec fails (as `env` and shells do) — say a
 * file that is neither a binary nor a `#!` script, which `setpriv`'s `execvp` used to hand to
 * `/bin/sh` and Deno's own spawn refuses (`Exec format error`). The
 * machine code is listed below instruction by instruction; `tests/proc/session_stub_test.ts` runs
 * it and checks each effect.
 *
 * Owns building that file, holding it (a sealed memfd of this process: no file on disk, nothing
 * to clean up, nothing another process can rewrite; children reach it as `/proc/self/fd/<n>`
 * while the fd is close-on-exec, so none of them inherits it) and probing it once per process:
 * the stub must run `/bin/sh -c :` and exit 0. Where that cannot be (not Linux on x86_64, no FFI
 * permission, `memfd_create` refused, exec of a memfd refused by `vm.memfd_noexec`, Deno's run
 * permission not covering the path), `sessionStub()` says why and the callers use `setsid` and
 * `setpriv` as before. Other architectures could get their own code; only x86_64 is written.
 */
import { sealedMemfd } from "./libc.ts";

/** Where the code is loaded (any page-aligned address above `vm.mmap_min_addr`). */
const BASE = 0x400000;
/** ELF header (64 bytes) and two program headers (56 bytes each): the code starts at 176. */
const CODE_AT = 64 + 2 * 56;

/**
 * x86_64 (System V, Linux syscall numbers). At entry `rsp` points at argc, then argv[0..argc],
 * NULL, then the environment.
 */
// deno-fmt-ignore
const CODE_X86_64 = [
  0xbf, 0x01, 0x00, 0x00, 0x00, //       mov edi, 1            PR_SET_PDEATHSIG
  0xbe, 0x09, 0x00, 0x00, 0x00, //       mov esi, 9            SIGKILL
  0xb8, 0x9d, 0x00, 0x00, 0x00, //       mov eax, 157          prctl
  0x0f, 0x05, //                         syscall
  0x85, 0xc0, //                         test eax, eax
  0x75, 0x2b, //                         jnz fail              (+0x2b: to 0x40)
  0xb8, 0x70, 0x00, 0x00, 0x00, //       mov eax, 112          setsid
  0x0f, 0x05, //                         syscall
  0x48, 0x85, 0xc0, //                   test rax, rax
  0x78, 0x1f, //                         js fail               (-errno; +0x1f: to 0x40)
  0x48, 0x8b, 0x0c, 0x24, //             mov rcx, [rsp]        argc
  0x48, 0x8d, 0x74, 0x24, 0x10, //       lea rsi, [rsp+16]     &argv[1]: the command's argv
  0x48, 0x8b, 0x3e, //                   mov rdi, [rsi]        argv[1]: its path
  0x48, 0x8d, 0x54, 0xcc, 0x10, //       lea rdx, [rsp+rcx*8+16]  &argv[argc+1]: environ
  0xb8, 0x3b, 0x00, 0x00, 0x00, //       mov eax, 59           execve (returns only on failure)
  0x0f, 0x05, //                         syscall
  0xbf, 0x7f, 0x00, 0x00, 0x00, //       mov edi, 127
  0xeb, 0x05, //                         jmp exit              (+5: to 0x45)
  0xbf, 0x7d, 0x00, 0x00, 0x00, // fail: mov edi, 125
  0xb8, 0xe7, 0x00, 0x00, 0x00, // exit: mov eax, 231          exit_group
  0x0f, 0x05, //                         syscall
];

/** The stub as an ELF executable for x86_64 (EM_X86_64), one read+execute segment. */
export function stubElf(): Uint8Array<ArrayBuffer> {
  const size = CODE_AT + CODE_X86_64.length;
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  // e_ident: magic, 64-bit, little-endian, version 1, System V ABI
  bytes.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]);
  v.setUint16(16, 2, true); // e_type: ET_EXEC
  v.setUint16(18, 0x3e, true); // e_machine: EM_X86_64
  v.setUint32(20, 1, true); // e_version
  v.setBigUint64(24, BigInt(BASE + CODE_AT), true); // e_entry
  v.setBigUint64(32, 64n, true); // e_phoff: right after this header
  v.setUint16(52, 64, true); // e_ehsize
  v.setUint16(54, 56, true); // e_phentsize
  v.setUint16(56, 2, true); // e_phnum (no section headers)
  // PT_LOAD: the whole file, read + execute, at BASE
  const load = 64;
  v.setUint32(load, 1, true);
  v.setUint32(load + 4, 5, true); // PF_R | PF_X
  v.setBigUint64(load + 16, BigInt(BASE), true); // p_vaddr
  v.setBigUint64(load + 24, BigInt(BASE), true); // p_paddr
  v.setBigUint64(load + 32, BigInt(size), true); // p_filesz
  v.setBigUint64(load + 40, BigInt(size), true); // p_memsz
  v.setBigUint64(load + 48, 0x1000n, true); // p_align
  // PT_GNU_STACK: the stack is read + write, not executable
  const stack = 64 + 56;
  v.setUint32(stack, 0x6474e551, true);
  v.setUint32(stack + 4, 6, true); // PF_R | PF_W
  v.setBigUint64(stack + 48, 16n, true);
  bytes.set(CODE_X86_64, CODE_AT);
  return bytes;
}

let probed: { path: string } | { why: string } | undefined;

/** The stub's path for children (`/proc/self/fd/<n>`), or why there is none. Probed once. */
export function sessionStub(): { path: string } | { why: string } {
  return probed ??= probe();
}

function probe(): { path: string } | { why: string } {
  if (Deno.build.os !== "linux") return { why: `not Linux (${Deno.build.os})` };
  if (Deno.build.arch !== "x86_64") return { why: `no stub for ${Deno.build.arch}` };
  const fd = sealedMemfd("agent-block-session-stub", stubElf());
  if (typeof fd === "string") return { why: fd };
  const path = `/proc/self/fd/${fd}`;
  try {
    // Without the permission already granted, the probe would prompt for a path nobody knows.
    if (Deno.permissions.querySync({ name: "run", command: path }).state !== "granted") {
      return { why: `no run permission for ${path}` };
    }
  } catch { /* no permissions API: the probe decides */ }
  try {
    const r = new Deno.Command(path, {
      args: ["/bin/sh", "-c", ":"],
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).outputSync();
    if (r.code !== 0) return { why: `the session stub exited ${r.code}` };
  } catch (e) {
    return { why: `cannot run the session stub: ${(e as Error).message}` };
  }
  return { path };
}
