/**
 * The agent-mesh `MeshEnvelope` (0.3.2): building, signing, printing, parsing and verifying one.
 *
 * Owns the two byte layouts the relay and every peer agree on:
 * - the wire object, members in this order: `id`, `from`, `to`, `msg_type`, `in_reply_to`
 *   (left out when absent), `payload`, `encrypted` (left out when false), `signature`,
 *   `timestamp`;
 * - the signed text: `{"id","from","to","msg_type","in_reply_to","payload","encrypted",
 *   "timestamp"}` compact, with `in_reply_to` written `null` when absent and `encrypted` always
 *   present. The signature (Ed25519, unpadded base64url) covers exactly its UTF-8 bytes.
 *
 * Invariants: a payload is carried as JSON *text* (`payloadText`), never re-stringified: the
 * builder puts the same serde-canonical text into the signed bytes and the frame, and the
 * verifier checks the raw text of the frame's top-level `payload` member, which the relay
 * printed with that very printer (`JSON.parse` would lose `1.0` vs `1`). The parser refuses
 * what the relay's serde derive refuses (a missing or duplicated field, an unknown `msg_type`,
 * a malformed id or timestamp) and ignores unknown members, which the signature never covers.
 */
import { type MeshIdentity, NativeVerifier } from "./identity.ts";
import { encodeBase64Url } from "./base64url.ts";
import { parseSerde, printSerde, type SerdeNode, serdeStringify, SerdeSyntaxError } from "./serde_json.ts";
import { MeshError } from "./transport.ts";

/** The envelope types agent-mesh defines. */
export const MSG_TYPES = [
  "request",
  "response",
  "error",
  "control",
  "handshake",
  "stream_request",
  "stream_chunk",
  "stream_end",
  "cancel",
] as const;
/** One envelope type. */
export type MsgType = typeof MSG_TYPES[number];

/** One envelope, its payload as JSON text. */
export interface MeshEnvelope {
  /** UUID, lower-case and hyphenated. */
  id: string;
  /** The sender's AgentId. */
  from: string;
  /** The target's AgentId (only a routing key to the relay). */
  to: string;
  msgType: MsgType;
  /** The id of the envelope this one answers. */
  inReplyTo?: string;
  /** The payload's JSON text in serde's canonical form. */
  payloadText: string;
  /** True when the payload is a JSON string of base64url Noise ciphertext. */
  encrypted: boolean;
  /** Unpadded base64url of the 64-byte Ed25519 signature. */
  signature: string;
  /** Unix milliseconds at creation (nobody checks freshness). */
  timestamp: number;
}

/** The fields a sender chooses; id, sender, time and signature are filled in. */
export interface EnvelopeDraft {
  to: string;
  msgType: MsgType;
  inReplyTo?: string;
  payloadText: string;
  encrypted?: boolean;
  /** Fixed for golden tests; a fresh v4 UUID otherwise. */
  id?: string;
  /** Fixed for golden tests; `Date.now()` otherwise. */
  timestamp?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const encoder = new TextEncoder();
const str = (s: string) => serdeStringify(s);

/** The exact text the signature covers. */
export function signedText(e: Omit<MeshEnvelope, "signature">): string {
  return `{"id":${str(e.id)},"from":${str(e.from)},"to":${str(e.to)},"msg_type":"${e.msgType}",` +
    `"in_reply_to":${e.inReplyTo === undefined ? "null" : str(e.inReplyTo)},"payload":${e.payloadText},` +
    `"encrypted":${e.encrypted},"timestamp":${e.timestamp}}`;
}

function unsignedOf(identity: MeshIdentity, draft: EnvelopeDraft): Omit<MeshEnvelope, "signature"> {
  return {
    id: draft.id ?? crypto.randomUUID(),
    from: identity.agentId,
    to: draft.to,
    msgType: draft.msgType,
    inReplyTo: draft.inReplyTo,
    payloadText: draft.payloadText,
    encrypted: draft.encrypted ?? false,
    timestamp: draft.timestamp ?? Date.now(),
  };
}

/** Builds and signs an envelope from `identity` (native Ed25519: the same bytes, a fraction of the CPU). */
export function buildEnvelope(identity: MeshIdentity, draft: EnvelopeDraft): MeshEnvelope {
  const unsigned = unsignedOf(identity, draft);
  return {
    ...unsigned,
    signature: encodeBase64Url(identity.signNative(encoder.encode(signedText(unsigned)))),
  };
}

/** The envelope's wire text, in the relay's member order. */
export function encodeEnvelope(e: MeshEnvelope): string {
  return `{"id":${str(e.id)},"from":${str(e.from)},"to":${str(e.to)},"msg_type":"${e.msgType}",` +
    (e.inReplyTo === undefined ? "" : `"in_reply_to":${str(e.inReplyTo)},`) +
    `"payload":${e.payloadText},` + (e.encrypted ? `"encrypted":true,` : "") +
    `"signature":${str(e.signature)},"timestamp":${e.timestamp}}`;
}

/** Senders' public keys for the native verifier (bounded; the oldest evicted first). */
const verifier = new NativeVerifier(256);

/**
 * True when the envelope's signature is its `from`'s signature of its signed text (native
 * Ed25519, strict about the AgentId and the signature's encoding; a malformed one is not valid).
 */
export function verifyEnvelope(e: MeshEnvelope): boolean {
  return verifier.verify(e.from, encoder.encode(signedText(e)), e.signature);
}

/** How `parseEnvelope` takes the payload's text. */
export type PayloadMode =
  /** The frame's raw text (a client reading frames the relay re-printed). */
  | "raw"
  /** Re-printed as serde would after parsing (the relay itself). */
  | "reprint";

/**
 * Parses one frame into an envelope.
 * @param idForms `"strict"` accepts only the lower-case hyphenated UUID the relay prints;
 *   `"uuid-crate"` also accepts what the `uuid` crate parses (upper case, braces, `urn:uuid:`,
 *   32 bare hex digits) and normalises it, as the relay does before it re-prints
 * @throws MeshError of kind `protocol` naming what is wrong
 */
export function parseEnvelope(
  frame: string,
  mode: PayloadMode = "raw",
  idForms: "strict" | "uuid-crate" = "strict",
): MeshEnvelope {
  let root: SerdeNode;
  try {
    root = parseSerde(frame);
  } catch (e) {
    if (e instanceof SerdeSyntaxError) throw bad(`not JSON: ${e.message}`);
    throw e;
  }
  if (root.kind !== "object") throw bad("not a JSON object");
  const known = [
    "id",
    "from",
    "to",
    "msg_type",
    "in_reply_to",
    "payload",
    "encrypted",
    "signature",
    "timestamp",
  ];
  const dup = root.duplicates.find((k) => known.includes(k));
  if (dup) throw bad(`duplicate field \`${dup}\``);
  const m = root.members;
  const text = (name: string, optional = false): string | undefined => {
    const n = m.get(name);
    if (n === undefined || (optional && n.kind === "null")) {
      if (optional) return undefined;
      throw bad(`missing field \`${name}\``);
    }
    if (n.kind !== "string") throw bad(`field \`${name}\` is not a string`);
    return n.value;
  };
  const uuid = (name: string, v: string | undefined): string | undefined => {
    if (v === undefined) return undefined;
    const id = idForms === "strict" ? v : normaliseUuid(v);
    if (!UUID.test(id)) throw bad(`field \`${name}\` is not a UUID`);
    return id;
  };
  const msgType = text("msg_type") as MsgType;
  if (!MSG_TYPES.includes(msgType)) throw bad(`unknown msg_type ${JSON.stringify(msgType)}`);
  const payload = m.get("payload");
  if (payload === undefined) throw bad("missing field `payload`");
  const enc = m.get("encrypted");
  if (enc !== undefined && enc.kind !== "bool") throw bad("field `encrypted` is not a boolean");
  const ts = m.get("timestamp");
  if (ts === undefined) throw bad("missing field `timestamp`");
  if (ts.kind !== "int" || !Number.isSafeInteger(Number(ts.text))) {
    throw bad("field `timestamp` is not an integer");
  }
  return {
    id: uuid("id", text("id"))!,
    from: text("from")!,
    to: text("to")!,
    msgType,
    inReplyTo: uuid("in_reply_to", text("in_reply_to", true)),
    payloadText: mode === "raw" ? frame.slice(payload.start, payload.end) : printSerde(payload),
    encrypted: enc?.kind === "bool" && enc.value,
    signature: text("signature")!,
    timestamp: Number(ts.text),
  };
}

/** What the `uuid` crate parses, as the lower-case hyphenated form it prints (else unchanged). */
function normaliseUuid(v: string): string {
  let s = v.toLowerCase();
  if (s.startsWith("urn:uuid:")) s = s.slice(9);
  else if (s.startsWith("{") && s.endsWith("}")) s = s.slice(1, -1);
  if (/^[0-9a-f]{32}$/.test(s)) {
    s = `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }
  return s;
}

function bad(what: string): MeshError {
  return new MeshError("protocol", `bad mesh envelope: ${what}`);
}
