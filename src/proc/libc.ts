/**
 * libc through Deno FFI: the calls Deno has no API for. The one module that opens a native
 * library.
 *
 * Owns opening libc (`Deno.dlopen`, Linux only, lazily on first use) and saying why it could not:
 * not Linux, no FFI permission (`--allow-ffi`; `deno run -A` and a binary compiled with `-A` have
 * it; so does the sandboxed runtime, whose boundary is the kernel's), or no glibc/musl library under
 * the usual names. `openLibc(symbols)` is the shared opener (the sandbox launcher and the sandbox
 * proxy's resolver, `src/sandbox/net_resolve.ts`, bind their own symbol sets through it); this
 * module's own calls are `prctl(PR_SET_CHILD_SUBREAPER)`, a non-blocking `waitpid` of one pid,
 * and a sealed memfd holding given bytes (`sealedMemfd`, for `session_stub.ts`). Every caller falls back to what works without it; nothing here throws.
 * Without FFI permission granted already, libc is not opened at all (no permission prompt).
 *
 * Invariant: `waitpidNoHang` is only ever called (by `reaper.ts`) for a pid that Deno did not
 * spawn — reaping one of Deno's own children would steal its exit status.
 */

const PR_SET_CHILD_SUBREAPER = 36;
const WNOHANG = 1;
/** Where libc lives: glibc by soname, then musl's loader (which is its libc). */
const LIBC_NAMES = ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"];

/**
 * libc opened with `symbols`, or why it cannot be (a string). Each call opens it anew: callers
 * keep what they got.
 */
export function openLibc<S extends Deno.ForeignLibraryInterface>(
  symbols: S,
): Deno.DynamicLibrary<S>["symbols"] | string {
  if (Deno.build.os !== "linux") return `not Linux (${Deno.build.os})`;
  try {
    // Asked for without the permission, dlopen would prompt on a terminal: say why not instead.
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return "no FFI permission";
  } catch { /* no permissions API: dlopen decides */ }
  let why = "";
  for (const name of LIBC_NAMES) {
    try {
      return Deno.dlopen(name, symbols).symbols;
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
        return `no FFI permission (${(e as Error).message})`;
      }
      why ||= (e as Error).message;
    }
  }
  return `cannot open libc (${why})`;
}

const SYMBOLS = {
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  waitpid: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  memfd_create: { parameters: ["buffer", "u32"], result: "i32" },
  write: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
} as const;

const MFD_CLOEXEC = 1;
const MFD_ALLOW_SEALING = 2;
const F_ADD_SEALS = 1033;
/** F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE: nothing can change it any more. */
const ALL_SEALS = 1 | 2 | 4 | 8;

type Libc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

let opened: Libc | string | undefined;

/** libc's symbols, or why they are unavailable. */
function libc(): Libc | string {
  return opened ??= openLibc(SYMBOLS);
}

/**
 * Makes this process a child subreaper: orphaned descendants are re-parented to it instead of
 * to init. Returns undefined on success, otherwise why not.
 */
export function setChildSubreaper(): string | undefined {
  const c = libc();
  if (typeof c === "string") return c;
  return c.prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n) === 0
    ? undefined
    : "prctl(PR_SET_CHILD_SUBREAPER) failed";
}

/** Reaps `pid` if it is a child of this process that has exited; true when it was reaped. */
export function waitpidNoHang(pid: number): boolean {
  const c = libc();
  if (typeof c === "string") return false;
  return c.waitpid(pid, new Uint8Array(4), WNOHANG) === pid;
}

/**
 * A close-on-exec memfd of this process holding `bytes`, sealed (no write, resize or new seal can
 * follow); its fd number, or why there is none. It stays open for the life of the process.
 * @param name the name it shows under `/proc/<pid>/fd` (`memfd:<name>`)
 */
export function sealedMemfd(name: string, bytes: Uint8Array): number | string {
  const c = libc();
  if (typeof c === "string") return c;
  const fd = c.memfd_create(new TextEncoder().encode(name + "\0"), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return "memfd_create failed";
  let off = 0;
  while (off < bytes.length) {
    const n = Number(c.write(fd, bytes.subarray(off), BigInt(bytes.length - off)));
    if (n <= 0) {
      c.close(fd);
      return "write to a memfd failed";
    }
    off += n;
  }
  if (c.fcntl(fd, F_ADD_SEALS, ALL_SEALS) !== 0) {
    c.close(fd);
    return "sealing a memfd failed";
  }
  return fd;
}
