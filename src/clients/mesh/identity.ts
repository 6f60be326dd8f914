/**
 * A mesh identity: an Ed25519 key pair whose public key, in unpadded base64url, is the AgentId.
 *
 * Owns: reading the secret key (a 32-byte Ed25519 seed written as 64 hex characters, as
 * `--secret-key` / `AGENT_BLOCK_MESH_SECRET_KEY` give it), deriving the 43-character AgentId,
 * signing, and verifying a signature against an AgentId. Every transport (the agent-mesh relay,
 * NATS) signs with this, so a receiver can reject a message whose `from` did not sign it.
 *
 * Invariants: signatures are deterministic (RFC 8032), so the same seed and bytes give the same
 * 64 bytes as any other conforming implementation (the relay's dalek included; fixed by a golden
 * test). Verification is strict (no ZIP-215 leniency), as dalek's `verify` is. The seed never
 * leaves this object: it is not enumerable and not printed.
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import { Buffer } from "node:buffer";
import {
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  sign as nodeSign,
  verify as nodeVerify,
} from "node:crypto";
import { decodeBase64Url, decodeHex, encodeBase64Url, secretKeyProblem } from "./base64url.ts";

/** Why a secret key or AgentId was refused. */
export class MeshKeyError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = "MeshKeyError";
  }
}

/** The DER prefix of a PKCS#8 Ed25519 private key (RFC 8410); the 32-byte seed follows. */
const PKCS8_ED25519_PREFIX = [
  0x30,
  0x2e,
  0x02,
  0x01,
  0x00,
  0x30,
  0x05,
  0x06,
  0x03,
  0x2b,
  0x65,
  0x70,
  0x04,
  0x22,
  0x04,
  0x20,
];

/** The DER prefix of an SPKI Ed25519 public key (RFC 8410); the 32-byte key follows. */
const SPKI_ED25519_PREFIX = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00];

/** The length of an AgentId: 32 bytes in unpadded base64url. */
export const AGENT_ID_LENGTH = 43;

/** One agent's signing identity. */
export class MeshIdentity {
  readonly #seed: Uint8Array;
  /** The 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** The public key in unpadded base64url: how peers address this agent. */
  readonly agentId: string;
  /** True when the key was generated for this run (its AgentId changes every run). */
  readonly ephemeral: boolean;

  private constructor(seed: Uint8Array, ephemeral: boolean) {
    this.#seed = seed;
    this.publicKey = ed25519.getPublicKey(seed);
    this.agentId = encodeBase64Url(this.publicKey);
    this.ephemeral = ephemeral;
  }

  /**
   * The identity of a 64-hex-character seed (surrounding whitespace ignored, either case).
   * @param source names where the key came from, for the error (`--secret-key`, a variable)
   * @throws MeshKeyError stating the rule and the length seen (never the key itself)
   */
  static fromSeedHex(hex: string, source = "secret key"): MeshIdentity {
    const why = secretKeyProblem(hex);
    if (why !== undefined) throw new MeshKeyError(`${source}: ${why}`);
    return new MeshIdentity(decodeHex(hex.trim()), false);
  }

  /** A fresh random identity (for a run without a key). */
  static random(): MeshIdentity {
    return new MeshIdentity(crypto.getRandomValues(new Uint8Array(32)), true);
  }

  /** Signs `message`: 64 bytes. */
  sign(message: Uint8Array): Uint8Array {
    return ed25519.sign(message, this.#seed);
  }

  /** Signs `message` and returns the signature in unpadded base64url (86 characters). */
  signText(message: Uint8Array): string {
    return encodeBase64Url(this.sign(message));
  }

  #native: KeyObject | undefined;

  /**
   * Signs `message` through Deno's native Ed25519 (`node:crypto`): the same 64 bytes as `sign`
   * (RFC 8032 is deterministic; a test holds them equal), synchronous, and about fifteen times
   * faster than the pure-JS signer, which a transport signing every message wants. The key object
   * is made once; the seed still never leaves this object.
   */
  signNative(message: Uint8Array): Uint8Array {
    this.#native ??= createPrivateKey({
      key: Buffer.from([...PKCS8_ED25519_PREFIX, ...this.#seed]),
      format: "der",
      type: "pkcs8",
    });
    return new Uint8Array(nodeSign(null, message, this.#native));
  }

  /** Keeps the seed out of logs and inspection. */
  toJSON(): { agentId: string } {
    return { agentId: this.agentId };
  }
}

/**
 * The public key an AgentId names.
 * @throws MeshKeyError when `agentId` is not 43 characters of strict base64url
 */
export function agentIdKey(agentId: string): Uint8Array {
  if (agentId.length !== AGENT_ID_LENGTH) {
    throw new MeshKeyError(`AgentId: expected ${AGENT_ID_LENGTH} characters, got ${agentId.length}`);
  }
  try {
    return decodeBase64Url(agentId);
  } catch (e) {
    throw new MeshKeyError(`AgentId: ${(e as Error).message}`);
  }
}

/**
 * True when `signature` (64 bytes, or its base64url text) is `agentId`'s signature of `message`.
 * A malformed AgentId or signature is simply not valid (false), never an exception: a hostile
 * peer's bytes decide nothing but this answer.
 */
export function verifySignature(
  agentId: string,
  message: Uint8Array,
  signature: Uint8Array | string,
): boolean {
  try {
    const sig = typeof signature === "string" ? decodeBase64Url(signature) : signature;
    if (sig.length !== 64) return false;
    return ed25519.verify(sig, message, agentIdKey(agentId), { zip215: false });
  } catch {
    return false;
  }
}

/**
 * Verifies signatures of many AgentIds through Deno's native Ed25519 (`node:crypto`, synchronous,
 * about fifteen times faster than `verifySignature`), keeping each peer's key object (at most
 * `max`, the oldest evicted first). The same answers as `verifySignature` for well-formed input;
 * a malformed AgentId or signature is simply not valid (false), never an exception.
 */
export class NativeVerifier {
  #keys = new Map<string, KeyObject>();

  constructor(readonly max = 1024) {}

  /** True when `signature` is `agentId`'s signature of `message`. */
  verify(agentId: string, message: Uint8Array, signature: Uint8Array | string): boolean {
    try {
      const sig = typeof signature === "string" ? decodeBase64Url(signature) : signature;
      if (sig.length !== 64) return false;
      let key = this.#keys.get(agentId);
      if (!key) {
        key = createPublicKey({
          key: Buffer.from([...SPKI_ED25519_PREFIX, ...agentIdKey(agentId)]),
          format: "der",
          type: "spki",
        });
        if (this.#keys.size >= this.max) this.#keys.delete(this.#keys.keys().next().value!);
        this.#keys.set(agentId, key);
      }
      return nodeVerify(null, message, key, sig);
    } catch {
      return false;
    }
  }
}
