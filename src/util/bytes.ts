/**
 * Byte helpers shared by the readers that collect a body chunk by chunk (the LLM transport,
 * `http.request`): one place for joining the chunks, so a body is copied once, or not at all when
 * it came in one piece.
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
