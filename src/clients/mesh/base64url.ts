/**
 * Base64url without padding (RFC 4648 §5), and hex: the text forms of mesh keys and signatures.
 *
 * Owns the strict decoder the mesh needs: an AgentId or signature that a peer could also have
 * written differently (with `=` padding, with non-zero trailing bits, with `+`/`/`) is refused,
 * so one key has exactly one AgentId and one signature one text. This matches the relay's
 * decoder (`URL_SAFE_NO_PAD`), which rejects the same inputs. Also the one statement of the
 * secret key's text rule (`secretKeyProblem`), which needs the hex codec and no cryptography.
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const LOOKUP = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) LOOKUP[ALPHABET.charCodeAt(i)] = i;

/** Encodes bytes as base64url without padding. */
export function encodeBase64Url(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63] + ALPHABET[(n >> 6) & 63] + ALPHABET[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] << 16;
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63];
  } else if (rest === 2) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63] + ALPHABET[(n >> 6) & 63];
  }
  return out;
}

/**
 * Decodes unpadded base64url strictly.
 * @throws RangeError naming the rule broken: a character outside the alphabet (padding
 *   included), an impossible length, or non-zero trailing bits
 */
export function decodeBase64Url(text: string): Uint8Array {
  if (text.length % 4 === 1) throw new RangeError(`base64url: length ${text.length} is impossible`);
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let acc = 0;
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? LOOKUP[c] : -1;
    if (v < 0) throw new RangeError(`base64url: invalid character ${JSON.stringify(text[i])} at ${i}`);
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) throw new RangeError("base64url: non-zero trailing bits");
  return out;
}

/** Lower-case hex of bytes. */
export function encodeHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

/**
 * Decodes hex (either case).
 * @throws RangeError for an odd length or a non-hex character
 */
export function decodeHex(text: string): Uint8Array {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) {
    throw new RangeError("hex: expected an even number of hex characters");
  }
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * Why `hex` is not a secret key (64 hex characters, surrounding whitespace ignored), or
 * `undefined` when it is one. `MeshIdentity.fromSeedHex` applies it; here, beside the hex codec
 * and apart from the signature code, so the edge checks flags before anything is loaded. Never
 * quotes the key.
 */
export function secretKeyProblem(hex: string): string | undefined {
  const text = hex.trim();
  if (text.length !== 64) return `expected 64 hex characters (an Ed25519 seed), got ${text.length}`;
  if (!/^[0-9a-fA-F]{64}$/.test(text)) {
    return "expected 64 hex characters (an Ed25519 seed), found a non-hex character";
  }
  return undefined;
}
