/**
 * Reading a file for the file tools, within a size: the tools hold a whole file in memory (to
 * number its lines, check an edit, keep an undo copy), so a file may be at most `max_file_bytes`.
 *
 * Owns the limit's refusal (`FileTooLarge`: it says how big the file is and what the limit is)
 * and `readBounded`, the read of an opened file within it: the size the opened descriptor's
 * `fstat` reported is checked before anything is read, and the read stops one byte past the
 * limit, so a file that grows after the check is refused too instead of being read whole. Which
 * file is opened, and that it is a regular one (a FIFO would block the host, a device never
 * end), is `confined_io.ts`'s business: it calls this with the descriptor it checked.
 */
import { ToolError } from "./tool_error.ts";

/** A file past the limit (a `ToolError`: the message is the model's). */
export class FileTooLarge extends ToolError {}

/** Default `max_file_bytes` of a tool set: 16 MiB. */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;

/**
 * The refusal of a file of `size` bytes (a number, or "more than N") past `max`.
 * @param tool the tool's name, for messages
 * @param shown the path as messages show it
 */
export function fileTooLarge(tool: string, shown: string, size: string, max: number): FileTooLarge {
  return new FileTooLarge(
    `${tool}: ${shown} is ${size} bytes, larger than the ${max} bytes the file tools handle (max_file_bytes)`,
  );
}

/**
 * Everything an opened regular file reads from its start, at most `max` bytes.
 * @param readAt reads into the whole of `buf` from file offset `position`, answers the bytes
 *   read (0 at the end)
 * @param size the size the descriptor's `fstat` reported (refused at once when past `max`)
 * @param refuse the error for a file past the limit, given its size as the message shows it
 */
export function readBounded(
  readAt: (buf: Uint8Array, position: number) => number,
  size: number,
  max: number,
  refuse: (size: string) => FileTooLarge,
): Uint8Array {
  if (size > max) throw refuse(String(size));
  const parts: Uint8Array[] = [];
  let total = 0;
  // What fstat said in one piece (one byte more, to see the end), then on while the file grew.
  let want = Math.min(size, max) + 1;
  while (true) {
    const buf = new Uint8Array(want);
    let n = 0;
    while (n < buf.length) {
      const got = readAt(buf.subarray(n), total + n);
      if (got === 0) break;
      n += got;
    }
    if (n > 0) parts.push(n === buf.length ? buf : buf.subarray(0, n));
    total += n;
    if (total > max) throw refuse(`more than ${max}`);
    if (n < buf.length) break;
    want = Math.min(65536, max + 1 - total);
  }
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
