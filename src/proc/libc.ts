/**
 * libc through Deno FFI: the calls Deno has no API for. The one module that opens a native
 * library.
 *
 * Owns opening libc (`Deno.dlopen`, Linux only, lazily on first use) and saying why it could not:
 * not Linux, no FFI permission (`--allow-ffi`; `deno run -A` and a binary compiled with `-A` have
 * it; so does the sandboxed runtime, whose boundary is the kernel's), or no glibc/musl library under
 * the usual names. `openLibc(symbols)` is the shared opener (the sandbox launcher binds its own
 * symbol set through it); this module's own calls are `prctl(PR_SET_CHILD_SUBREAPER)` and a
 * non-blocking `waitpid` of one pid. Every caller falls back to what works without it; nothing
 * here throws.
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
} as const;

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
