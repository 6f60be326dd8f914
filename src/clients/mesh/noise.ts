/**
 * Noise_XX_25519_ChaChaPoly_BLAKE2s (Noise revision 34), the end-to-end encryption agent-mesh
 * peers run inside `handshake` envelopes (as the Rust crate `snow` does).
 *
 * Owns the handshake state machine for the XX pattern (`-> e`, `<- e, ee, s, es`,
 * `-> s, se`) in both roles, and the transport `CipherState`s it splits into. Primitives come
 * from noble (X25519, BLAKE2s with HMAC for HKDF, ChaCha20-Poly1305 IETF).
 *
 * Invariants:
 * - Byte-exact with the official Cacophony vector for this protocol name (tests/fixtures/mesh).
 * - agent-mesh's use: empty prologue and handshake payloads, so the three handshake messages
 *   are 32, 96 and 64 bytes; a transport message carries at most `MAX_PLAINTEXT` (65 519)
 *   bytes (the 65 535-byte Noise limit minus the 16-byte tag), beyond that `MeshError`
 *   `too_large` and nothing is encrypted.
 * - Nonces are 4 zero bytes and the 64-bit little-endian counter; no rekeying. A receiver also
 *   accepts the next `RECEIVE_WINDOW` nonces after the expected one and jumps its counter
 *   forward, so a message the relay dropped (rate limit, full buffer) does not wreck every later
 *   one; a nonce is still never accepted twice. Senders behave exactly as snow's.
 * - Any failure to read a message is `MeshError` `protocol`; the state is then unusable.
 */
import { x25519 } from "@noble/curves/ed25519.js";
import { blake2s } from "@noble/hashes/blake2.js";
import { hmac } from "@noble/hashes/hmac.js";
import { chacha20poly1305 } from "@noble/ciphers/chacha.js";
import { MeshError } from "./transport.ts";

/** The protocol name hashed into the initial state. */
export const PROTOCOL_NAME = "Noise_XX_25519_ChaChaPoly_BLAKE2s";
/** The largest Noise message. */
export const MAX_MESSAGE = 65_535;
/** The largest plaintext of one transport message. */
export const MAX_PLAINTEXT = MAX_MESSAGE - 16;
/** How many skipped nonces a receiver tolerates. */
export const RECEIVE_WINDOW = 64;

const DHLEN = 32;
const EMPTY = new Uint8Array(0);

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function nonceBytes(n: number): Uint8Array {
  const out = new Uint8Array(12);
  new DataView(out.buffer).setBigUint64(4, BigInt(n), true);
  return out;
}

/** HKDF with HMAC-BLAKE2s, the two outputs XX needs. */
function hkdf(ck: Uint8Array, ikm: Uint8Array): [Uint8Array, Uint8Array] {
  const temp = hmac(blake2s, ck, ikm);
  const o1 = hmac(blake2s, temp, Uint8Array.of(1));
  return [o1, hmac(blake2s, temp, concat(o1, Uint8Array.of(2)))];
}

/** One direction's key and counter. */
export class CipherState {
  #k: Uint8Array | undefined;
  #n = 0;

  constructor(k?: Uint8Array) {
    this.#k = k;
  }

  /** True once a key is set (after the first DH of the handshake). */
  get hasKey(): boolean {
    return this.#k !== undefined;
  }

  /** Encrypts with associated data `ad` (the plaintext itself while no key is set). */
  encryptWithAd(ad: Uint8Array, plaintext: Uint8Array): Uint8Array {
    if (!this.#k) return plaintext;
    const out = chacha20poly1305(this.#k, nonceBytes(this.#n), ad).encrypt(plaintext);
    this.#n++;
    return out;
  }

  /**
   * Decrypts, trying the expected nonce then up to `window` later ones.
   * @throws MeshError `protocol` when no nonce in reach authenticates the message
   */
  decryptWithAd(ad: Uint8Array, ciphertext: Uint8Array, window = 0): Uint8Array {
    if (!this.#k) return ciphertext;
    if (ciphertext.length < 16) throw new MeshError("protocol", "noise: message shorter than its tag");
    for (let n = this.#n; n <= this.#n + window; n++) {
      try {
        const out = chacha20poly1305(this.#k, nonceBytes(n), ad).decrypt(ciphertext);
        this.#n = n + 1;
        return out;
      } catch {
        // not this nonce
      }
    }
    throw new MeshError("protocol", "noise: decryption failed (wrong key or lost messages)");
  }
}

/** A transport-phase cipher pair: seal what this side sends, open what it receives. */
export class NoiseSession {
  constructor(readonly send: CipherState, readonly recv: CipherState, readonly handshakeHash: Uint8Array) {}

  /**
   * Encrypts one message.
   * @throws MeshError `too_large` beyond `MAX_PLAINTEXT` bytes
   */
  seal(plaintext: Uint8Array): Uint8Array {
    if (plaintext.length > MAX_PLAINTEXT) {
      throw new MeshError(
        "too_large",
        `mesh payload of ${plaintext.length} bytes exceeds the ${MAX_PLAINTEXT}-byte limit of one encrypted message`,
      );
    }
    return this.send.encryptWithAd(EMPTY, plaintext);
  }

  /**
   * Decrypts one message.
   * @throws MeshError `protocol` when it does not authenticate
   */
  open(ciphertext: Uint8Array): Uint8Array {
    if (ciphertext.length > MAX_MESSAGE) throw new MeshError("protocol", "noise: message over 65535 bytes");
    return this.recv.decryptWithAd(EMPTY, ciphertext, RECEIVE_WINDOW);
  }
}

/** Keys a handshake may be given (tests fix them; otherwise they are random). */
export interface HandshakeKeys {
  /** This side's static X25519 private key. */
  staticKey?: Uint8Array;
  /** This side's ephemeral X25519 private key. */
  ephemeralKey?: Uint8Array;
  prologue?: Uint8Array;
}

type Token = "e" | "s" | "ee" | "es" | "se";
const XX: Token[][] = [["e"], ["e", "ee", "s", "es"], ["s", "se"]];

/** One XX handshake in progress, for either role. */
export class NoiseHandshake {
  readonly #initiator: boolean;
  #cs = new CipherState();
  #ck: Uint8Array;
  #h: Uint8Array;
  #s: Uint8Array;
  #e: Uint8Array | undefined;
  readonly #givenE: Uint8Array | undefined;
  #rs: Uint8Array | undefined;
  #re: Uint8Array | undefined;
  #step = 0;
  #broken = false;

  constructor(initiator: boolean, keys: HandshakeKeys = {}) {
    this.#initiator = initiator;
    const name = new TextEncoder().encode(PROTOCOL_NAME);
    this.#h = name.length <= 32 ? concat(name, new Uint8Array(32 - name.length)) : blake2s(name);
    this.#ck = this.#h;
    this.#mixHash(keys.prologue ?? EMPTY);
    this.#s = keys.staticKey ?? x25519.utils.randomSecretKey();
    this.#givenE = keys.ephemeralKey;
  }

  /** True after the third message. */
  get finished(): boolean {
    return this.#step === XX.length;
  }

  /** True when this side writes the next message. */
  get writesNext(): boolean {
    return !this.#broken && !this.finished && (this.#step % 2 === 0) === this.#initiator;
  }

  /** The peer's static public key, once received. */
  get remoteStatic(): Uint8Array | undefined {
    return this.#rs;
  }

  #mixHash(data: Uint8Array): void {
    this.#h = blake2s(concat(this.#h, data));
  }

  #mixKey(ikm: Uint8Array): void {
    const [ck, k] = hkdf(this.#ck, ikm);
    this.#ck = ck;
    this.#cs = new CipherState(k);
  }

  #dh(token: "ee" | "es" | "se"): Uint8Array {
    // es: initiator's e with responder's s; se: initiator's s with responder's e.
    const mine = token === "ee" ? this.#e! : (token === "es") === this.#initiator ? this.#e! : this.#s;
    const theirs = token === "ee" ? this.#re! : (token === "es") === this.#initiator ? this.#rs! : this.#re!;
    return x25519.getSharedSecret(mine, theirs);
  }

  /** Writes the next handshake message carrying `payload`. */
  writeMessage(payload: Uint8Array = EMPTY): Uint8Array {
    if (!this.writesNext) throw new MeshError("protocol", "noise: not this side's turn to write");
    const parts: Uint8Array[] = [];
    for (const token of XX[this.#step]) {
      if (token === "e") {
        this.#e = this.#givenE ?? x25519.utils.randomSecretKey();
        const pub = x25519.getPublicKey(this.#e);
        parts.push(pub);
        this.#mixHash(pub);
      } else if (token === "s") {
        const sealed = this.#cs.encryptWithAd(this.#h, x25519.getPublicKey(this.#s));
        this.#mixHash(sealed);
        parts.push(sealed);
      } else {
        this.#mixKey(this.#dh(token));
      }
    }
    const body = this.#cs.encryptWithAd(this.#h, payload);
    this.#mixHash(body);
    parts.push(body);
    this.#step++;
    return concat(...parts);
  }

  /**
   * Reads the peer's next handshake message and returns its payload.
   * @throws MeshError `protocol` for a short or forged message
   */
  readMessage(message: Uint8Array): Uint8Array {
    if (this.#broken || this.finished || this.writesNext) {
      throw new MeshError("protocol", "noise: not this side's turn to read");
    }
    try {
      let at = 0;
      const take = (n: number) => {
        if (at + n > message.length) throw new MeshError("protocol", "noise: handshake message too short");
        return message.subarray(at, at += n);
      };
      for (const token of XX[this.#step]) {
        if (token === "e") {
          this.#re = take(DHLEN).slice();
          this.#mixHash(this.#re);
        } else if (token === "s") {
          const sealed = take(this.#cs.hasKey ? DHLEN + 16 : DHLEN);
          this.#rs = this.#cs.decryptWithAd(this.#h, sealed);
          this.#mixHash(sealed);
        } else {
          this.#mixKey(this.#dh(token));
        }
      }
      const body = message.subarray(at);
      const payload = this.#cs.decryptWithAd(this.#h, body);
      this.#mixHash(body);
      this.#step++;
      return payload;
    } catch (e) {
      this.#broken = true;
      if (e instanceof MeshError) throw e;
      throw new MeshError("protocol", `noise: bad handshake message (${(e as Error).message})`);
    }
  }

  /** The transport session, once the handshake has finished. */
  split(): NoiseSession {
    if (!this.finished) throw new MeshError("protocol", "noise: handshake not finished");
    const [k1, k2] = hkdf(this.#ck, EMPTY);
    const c1 = new CipherState(k1);
    const c2 = new CipherState(k2);
    return this.#initiator ? new NoiseSession(c1, c2, this.#h) : new NoiseSession(c2, c1, this.#h);
  }
}
