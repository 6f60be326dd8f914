/**
 * sha256 for flows: of a canonical JSON value (replay keys, agent digests) and of text.
 *
 * Invariant: the same JSON value hashes the same whatever its key order (the canonical codec
 * sorts keys), so a replay key does not depend on how a context was built.
 */
import { createHash } from "node:crypto";
import { stringifyJson } from "../json/codec.ts";

/** Hex sha256 of `text` (UTF-8). */
export function sha256Hex(text: string | Uint8Array): string {
  // the platform's hash: every dispatch hashes its step's key (about half the JavaScript one's time)
  return createHash("sha256").update(text).digest("hex");
}

/** Hex sha256 of the canonical JSON of `value`. */
export function jsonHash(value: unknown): string {
  return sha256Hex(stringifyJson(value));
}
