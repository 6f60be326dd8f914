// MeshEnvelope golden vectors (RFC 8032 test-1 and test-2 seeds, fixed ids and timestamps) and the
// parser's strictness. The signed texts and frames are written out by hand from the protocol
// reference (§1.4), so neither the layout nor the signatures can drift unnoticed.
import assert from "node:assert/strict";
import { MeshIdentity, verifySignature } from "../../../src/clients/mesh/identity.ts";
import {
  buildEnvelope,
  encodeEnvelope,
  parseEnvelope,
  signedText,
  verifyEnvelope,
} from "../../../src/clients/mesh/envelope.ts";
import { serdeStringify } from "../../../src/clients/mesh/serde_json.ts";
import { MeshError } from "../../../src/clients/mesh/transport.ts";
import { LuaFloat } from "../../../src/json/values.ts";

const A = MeshIdentity.fromSeedHex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
const B = MeshIdentity.fromSeedHex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb");
const AID = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
const BID = "PUAXw-hDiVqStwqnTRt-vJyYLM8uxJaMwM1V8Sr0Zgw";

const REQUEST_SIGNED = `{"id":"2f0c122f-8913-43b8-9d9c-37a0d9d903c2","from":"${AID}","to":"${BID}",` +
  `"msg_type":"request","in_reply_to":null,"payload":{"capability":"echo","n":2.0,"small":1e-6,"text":"hi"},` +
  `"encrypted":false,"timestamp":1796053647844}`;
const REQUEST_SIG = "MjWnd9CFjC-uv_8spvy36PxYulIV7W6sBQfa6pwlc-9K2iHtX61Z1rMgl5y_6WYatZqai5HCZtI3so9kDTYYAQ";
const REQUEST_FRAME = `{"id":"2f0c122f-8913-43b8-9d9c-37a0d9d903c2","from":"${AID}","to":"${BID}",` +
  `"msg_type":"request","payload":{"capability":"echo","n":2.0,"small":1e-6,"text":"hi"},` +
  `"signature":"${REQUEST_SIG}","timestamp":1796053647844}`;

const REPLY_SIGNED = `{"id":"6c67a1d0-5b7e-4c1a-9f3e-2d4b8a6c0fb1","from":"${BID}","to":"${AID}",` +
  `"msg_type":"response","in_reply_to":"2f0c122f-8913-43b8-9d9c-37a0d9d903c2","payload":"c2VhbGVk",` +
  `"encrypted":true,"timestamp":1796053647900}`;
const REPLY_SIG = "PEFRQn1Rh_Fzv8eFXD64A5ax9LZUEcG0b29gCfFUJh1jX3q5EIf78m_LavJWiw0lj3A-g5sP_-NaMhX0rkkbAg";
const REPLY_FRAME = `{"id":"6c67a1d0-5b7e-4c1a-9f3e-2d4b8a6c0fb1","from":"${BID}","to":"${AID}",` +
  `"msg_type":"response","in_reply_to":"2f0c122f-8913-43b8-9d9c-37a0d9d903c2","payload":"c2VhbGVk",` +
  `"encrypted":true,"signature":"${REPLY_SIG}","timestamp":1796053647900}`;

Deno.test("mesh envelope: golden signed text, signature and frame of a plaintext request", () => {
  assert.equal(A.agentId, AID);
  assert.equal(B.agentId, BID);
  const payload = { text: "hi", capability: "echo", n: new LuaFloat(2), small: 0.000001 };
  const e = buildEnvelope(A, {
    to: BID,
    msgType: "request",
    payloadText: serdeStringify(payload),
    id: "2f0c122f-8913-43b8-9d9c-37a0d9d903c2",
    timestamp: 1796053647844,
  });
  assert.equal(signedText(e), REQUEST_SIGNED);
  assert.equal(e.signature, REQUEST_SIG);
  assert.equal(encodeEnvelope(e), REQUEST_FRAME);
  assert.ok(verifyEnvelope(parseEnvelope(REQUEST_FRAME)));
  assert.equal(A.signText(new TextEncoder().encode(REQUEST_SIGNED)), REQUEST_SIG, "the JS signer agrees");
  assert.ok(
    verifySignature(AID, new TextEncoder().encode(REQUEST_SIGNED), REQUEST_SIG),
    "and the JS verifier",
  );
});

Deno.test("mesh envelope: golden encrypted reply (in_reply_to and encrypted on the wire)", () => {
  const e = buildEnvelope(B, {
    to: AID,
    msgType: "response",
    inReplyTo: "2f0c122f-8913-43b8-9d9c-37a0d9d903c2",
    payloadText: '"c2VhbGVk"',
    encrypted: true,
    id: "6c67a1d0-5b7e-4c1a-9f3e-2d4b8a6c0fb1",
    timestamp: 1796053647900,
  });
  assert.equal(signedText(e), REPLY_SIGNED);
  assert.equal(e.signature, REPLY_SIG);
  assert.equal(encodeEnvelope(e), REPLY_FRAME);
  const back = parseEnvelope(REPLY_FRAME);
  assert.deepEqual(back, e);
  assert.ok(verifyEnvelope(back));
});

Deno.test("attack: mesh envelope signatures bind every signed field and the exact payload text", () => {
  const e = parseEnvelope(REQUEST_FRAME);
  assert.ok(verifyEnvelope(e));
  const variants = [
    { ...e, from: BID }, // spoofed sender
    { ...e, to: AID },
    { ...e, msgType: "response" as const },
    { ...e, inReplyTo: "2f0c122f-8913-43b8-9d9c-37a0d9d903c2" },
    { ...e, encrypted: true },
    { ...e, timestamp: e.timestamp + 1 },
    { ...e, payloadText: '{"capability":"echo","n":2,"small":1e-6,"text":"hi"}' }, // 2.0 → 2
    { ...e, payloadText: '{"text":"hi","capability":"echo","n":2.0,"small":1e-6}' }, // unsorted
    { ...e, signature: e.signature.slice(0, -1) + "B" },
  ];
  variants.push({ ...e, from: "not-an-agent-id" }, { ...e, signature: "AAAA" }, { ...e, signature: "!" });
  for (const v of variants) {
    assert.equal(verifyEnvelope(v), false, JSON.stringify(v).slice(0, 120));
    assert.equal(verifySignature(v.from, new TextEncoder().encode(signedText(v)), v.signature), false);
  }
  assert.ok(verifyEnvelope(e), "a failure does not poison the key cache");
  // The raw mode keeps the frame's text; re-print mode is what the relay checks.
  const unsorted = REQUEST_FRAME.replace(
    '{"capability":"echo","n":2.0,"small":1e-6,"text":"hi"}',
    '{"text":"hi","capability":"echo","n":2.0,"small":1e-6}',
  );
  assert.equal(verifyEnvelope(parseEnvelope(unsorted, "raw")), false);
  assert.equal(
    verifyEnvelope(parseEnvelope(unsorted, "reprint")),
    true,
    "the relay re-sorts before verifying",
  );
  // Unknown members are ignored (and never signed).
  assert.ok(verifyEnvelope(parseEnvelope(REQUEST_FRAME.replace('{"id"', '{"extra":[1,{"x":2}],"id"'))));
});

Deno.test("mesh envelope: the parser refuses what the relay's serde derive refuses", () => {
  const cases: [string, RegExp][] = [
    ["[]", /not a JSON object/],
    ["{", /not JSON/],
    [REQUEST_FRAME.replace('"msg_type":"request"', '"msg_type":"shout"'), /unknown msg_type/],
    [REQUEST_FRAME.replace('"id":"2f0c122f-8913', '"id":"2F0C122F-8913'), /`id` is not a UUID/],
    [REQUEST_FRAME.replace(',"timestamp":1796053647844', ""), /missing field `timestamp`/],
    [REQUEST_FRAME.replace("1796053647844", "1796053647844.0"), /`timestamp` is not an integer/],
    [REQUEST_FRAME.replace('"payload":', '"pay":'), /missing field `payload`/],
    [REQUEST_FRAME.replace('"to":', '"from":"x","to":'), /duplicate field `from`/],
    [REPLY_FRAME.replace('"encrypted":true', '"encrypted":1'), /`encrypted` is not a boolean/],
    [
      REPLY_FRAME.replace('"in_reply_to":"2f0c122f-8913-43b8-9d9c-37a0d9d903c2"', '"in_reply_to":7'),
      /not a string/,
    ],
  ];
  for (const [frame, re] of cases) {
    assert.throws(
      () => parseEnvelope(frame),
      (e) => e instanceof MeshError && e.kind === "protocol" && re.test(e.message),
      frame,
    );
  }
  // `in_reply_to: null` is absent; the relay accepts what the uuid crate parses and normalises it.
  assert.equal(
    parseEnvelope(REQUEST_FRAME.replace('"payload"', '"in_reply_to":null,"payload"')).inReplyTo,
    undefined,
  );
  const upper = REQUEST_FRAME.replace(
    '"id":"2f0c122f-8913-43b8-9d9c-37a0d9d903c2"',
    '"id":"{2F0C122F891343B89D9C37A0D9D903C2}"',
  );
  assert.equal(parseEnvelope(upper, "reprint", "uuid-crate").id, "2f0c122f-8913-43b8-9d9c-37a0d9d903c2");
});
