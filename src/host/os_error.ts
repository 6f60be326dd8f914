/**
 * Turning Deno filesystem errors into the `nil, message, errno` triple Lua's io/os functions return.
 *
 * Owns the errno numbers and the C-library wording (`No such file or directory`), so scripts that
 * match on them behave as they would under native Lua.
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

/** The strerror text and errno of a thrown filesystem error. */
export function osError(e: unknown): { message: string; errno: number } {
  if (e instanceof Error) {
    const m = /\(os error (\d+)\)/.exec(e.message);
    const known = BY_CLASS[e.name];
    if (known) return { message: known[0], errno: m ? Number(m[1]) : known[1] };
    if (m) return { message: e.message.replace(/\s*\(os error \d+\).*$/, ""), errno: Number(m[1]) };
    return { message: e.message, errno: 5 };
  }
  return { message: String(e), errno: 5 };
}
