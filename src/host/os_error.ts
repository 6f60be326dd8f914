/**
 * Turning Deno filesystem errors into the `nil, message, errno` triple Lua's io/os functions return.
 *
 * Owns the errno numbers and the C-library wording (`No such file or directory`), so scripts that
 * match on them behave as they would under native Lua. Deno's errors are known by class,
 * `node:fs`'s by their `code` (`ENOENT`), whose own message would name the call and the path.
 */

const BY_CLASS: Record<string, [string, number]> = {
  NotFound: ["No such file or directory", 2],
  PermissionDenied: ["Permission denied", 13],
  NotCapable: ["Permission denied", 13],
  AlreadyExists: ["File exists", 17],
  IsADirectory: ["Is a directory", 21],
  NotADirectory: ["Not a directory", 20],
  DirectoryNotEmpty: ["Directory not empty", 39],
  InvalidData: ["Invalid argument", 22],
  BrokenPipe: ["Broken pipe", 32],
};

/** `node:fs` errors carry the C name of the errno (`code`) and a message naming the call. */
const BY_CODE: Record<string, [string, number]> = {
  EPERM: ["Operation not permitted", 1],
  ENOENT: ["No such file or directory", 2],
  EIO: ["Input/output error", 5],
  EACCES: ["Permission denied", 13],
  EBUSY: ["Device or resource busy", 16],
  EEXIST: ["File exists", 17],
  EXDEV: ["Invalid cross-device link", 18],
  ENOTDIR: ["Not a directory", 20],
  EISDIR: ["Is a directory", 21],
  EINVAL: ["Invalid argument", 22],
  ETXTBSY: ["Text file busy", 26],
  EFBIG: ["File too large", 27],
  ENOSPC: ["No space left on device", 28],
  EROFS: ["Read-only file system", 30],
  EMLINK: ["Too many links", 31],
  ENAMETOOLONG: ["File name too long", 36],
  ENOTEMPTY: ["Directory not empty", 39],
  ELOOP: ["Too many levels of symbolic links", 40],
  EDQUOT: ["Disk quota exceeded", 122],
};

/** The strerror text and errno of a thrown filesystem error (Deno's or `node:fs`'s). */
export function osError(e: unknown): { message: string; errno: number } {
  if (e instanceof Error) {
    const m = /\(os error (\d+)\)/.exec(e.message);
    const known = BY_CLASS[e.name];
    if (known) return { message: known[0], errno: m ? Number(m[1]) : known[1] };
    const code = (e as { code?: unknown }).code;
    const byCode = typeof code === "string" ? BY_CODE[code] : undefined;
    if (byCode) return { message: byCode[0], errno: byCode[1] };
    if (m) return { message: e.message.replace(/\s*\(os error \d+\).*$/, ""), errno: Number(m[1]) };
    return { message: e.message, errno: 5 };
  }
  return { message: String(e), errno: 5 };
}
