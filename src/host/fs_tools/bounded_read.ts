/**
 * Reading a file for the file tools, within a size: the tools hold a whole file in memory (to
 * number its lines, check an edit, keep an undo copy), so a file may be at most `max_file_bytes`.
 *
 * Owns `readBounded`: a path that names anything but a regular file is refused before it is
 * opened (a FIFO would block the host, a device never end); the size is checked on the file that
 * was opened (`fstat`), and the read stops one byte past the limit, so a file that grows after
 * the check is refused too instead of being read whole. Throws a `ToolError` (`FileTooLarge`
 * for the size: it says what the limit is and how big the file is); other failures (a missing
 * file, no permission) propagate as Deno's errors for the caller to word.
 */
import { ToolError } from "./tool_error.ts";

/** A file past the limit (a `ToolError`: the message is the model's). */
export class FileTooLarge extends ToolError {}

/** Default `max_file_bytes` of a tool set: 16 MiB. */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;

/**
 * The bytes of `path`, at most `max`.
 * @param tool the tool's name, for messages
 * @param shown the path as messages show it
 */
export function readBounded(tool: string, path: string, shown: string, max: number): Uint8Array {
  const tooLarge = (size: string) =>
    new FileTooLarge(
      `${tool}: ${shown} is ${size} bytes, larger than the ${max} bytes the file tools handle (max_file_bytes)`,
    );
  const info = Deno.statSync(path);
  if (info.isDirectory) throw new ToolError(`${tool}: ${shown} is a directory`);
  if (!info.isFile) throw new ToolError(`${tool}: ${shown} is not a regular file`);
  const file = Deno.openSync(path, { read: true });
  try {
    const opened = file.statSync();
    if (!opened.isFile) throw new ToolError(`${tool}: ${shown} is not a regular file`);
    if (opened.size > max) throw tooLarge(String(opened.size));
    const buf = new Uint8Array(Math.min(opened.size, max) + 1);
    let n = 0;
    while (n < buf.length) {
      const got = file.readSync(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    if (n > max) throw tooLarge(`more than ${max}`);
    return buf.subarray(0, n);
  } finally {
    file.close();
  }
}
