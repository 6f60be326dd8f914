/**
 * Byte helpers shared by the readers that collect a body chunk by chunk within a size (the LLM
 * transport's answers, `http.request`'s bodies, the HTTP guard's request bodies): one loop that
 * stops a chunk past the limit, and one place for joining the chunks, so a body is copied once,
 * or not at all when it came in one piece.
 */

/** `parts` as one array of `size` bytes (the sum of their lengths); a single part is returned as is. */
export function concatBytes(parts: readonly Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(size);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/**
 * Everything `reader` delivers, or `undefined` as soon as it has delivered more than `max` bytes:
 * the reader is then cancelled and the rest never read. Read errors propagate.
 */
export async function readAtMost(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  max: number,
): Promise<Uint8Array | undefined> {
  const parts: Uint8Array[] = [];
  let size = 0;
  while (true) {
    const { value, done } = await reader.read();
    if (done) return concatBytes(parts, size);
    size += value.length;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    parts.push(value);
  }
}
