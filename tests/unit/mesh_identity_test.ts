// The mesh identity against RFC 8032 §7.1 test 1 and the strict AgentId/base64url rules.
import assert from "node:assert/strict";
import {
  agentIdKey,
  MeshIdentity,
  MeshKeyError,
  NativeVerifier,
  verifySignature,
} from "../../src/clients/mesh/identity.ts";
import { decodeBase64Url, encodeBase64Url, encodeHex } from "../../src/clients/mesh/base64url.ts";

const RFC8032_TEST1_SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const RFC8032_TEST1_PUBLIC = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const RFC8032_TEST1_SIG = "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155" +
  "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";

Deno.test("mesh identity: RFC 8032 test 1 key, AgentId and signature of the empty message", () => {
  const id = MeshIdentity.fromSeedHex(`  ${RFC8032_TEST1_SEED.toUpperCase()}\n`);
  assert.equal(encodeHex(id.publicKey), RFC8032_TEST1_PUBLIC);
  assert.equal(id.agentId, "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo");
  assert.equal(id.agentId.length, 43);
  assert.equal(encodeHex(id.sign(new Uint8Array())), RFC8032_TEST1_SIG);
  assert.equal(id.ephemeral, false);
  assert.ok(verifySignature(id.agentId, new Uint8Array(), id.signText(new Uint8Array())));
  assert.equal(JSON.stringify(id), JSON.stringify({ agentId: id.agentId }), "the seed is never serialised");
});

Deno.test("mesh identity: a wrong key, message or signature does not verify", () => {
  const a = MeshIdentity.fromSeedHex(RFC8032_TEST1_SEED);
  const b = MeshIdentity.random();
  assert.ok(b.ephemeral);
  const msg = new TextEncoder().encode("hello");
  const sig = a.sign(msg);
  assert.ok(verifySignature(a.agentId, msg, sig));
  assert.equal(verifySignature(b.agentId, msg, sig), false);
  assert.equal(verifySignature(a.agentId, new TextEncoder().encode("hellO"), sig), false);
  assert.equal(verifySignature(a.agentId, msg, sig.slice(0, 63)), false);
  assert.equal(verifySignature("not-an-agent-id", msg, sig), false);
  assert.equal(verifySignature(a.agentId, msg, "==="), false);
});

Deno.test("mesh identity: secret keys of the wrong length or alphabet are refused, naming the source", () => {
  assert.throws(
    () => MeshIdentity.fromSeedHex("abcd", "--secret-key"),
    (e) => e instanceof MeshKeyError && /^--secret-key: expected 64 hex characters .*got 4$/.test(e.message),
  );
  assert.throws(
    () => MeshIdentity.fromSeedHex("z".repeat(64), "AGENT_BLOCK_MESH_SECRET_KEY"),
    (e) => e instanceof MeshKeyError && /^AGENT_BLOCK_MESH_SECRET_KEY: .*non-hex/.test(e.message),
  );
});

Deno.test("mesh identity: base64url is strict (no padding, no trailing bits, url alphabet only)", () => {
  for (let n = 0; n < 40; n++) {
    const bytes = crypto.getRandomValues(new Uint8Array(n));
    assert.deepEqual(decodeBase64Url(encodeBase64Url(bytes)), bytes);
  }
  assert.throws(() => decodeBase64Url("AA=="), /invalid character "="/);
  assert.throws(() => decodeBase64Url("AB"), /non-zero trailing bits/);
  assert.throws(() => decodeBase64Url("a+b/"), /invalid character "\+"/);
  assert.throws(() => decodeBase64Url("A"), /impossible/);
  assert.throws(
    () => agentIdKey("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo="),
    /expected 43 characters, got 44/,
  );
  assert.throws(() => agentIdKey("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURp"), /trailing bits/);
});

Deno.test("mesh identity: the native signer and verifier give the same answers as the pure-JS ones", () => {
  const id = MeshIdentity.fromSeedHex(RFC8032_TEST1_SEED);
  assert.equal(encodeHex(id.signNative(new Uint8Array())), RFC8032_TEST1_SIG);
  const v = new NativeVerifier();
  for (const text of ["", "hello", "x".repeat(5000)]) {
    const msg = new TextEncoder().encode(text);
    const sig = id.signNative(msg);
    assert.deepEqual(sig, id.sign(msg));
    assert.equal(v.verify(id.agentId, msg, sig), true);
    assert.equal(v.verify(id.agentId, msg, encodeBase64Url(sig)), true);
    const bad = sig.slice();
    bad[0] ^= 1;
    assert.equal(v.verify(id.agentId, msg, bad), false);
    assert.equal(v.verify(MeshIdentity.random().agentId, msg, sig), false);
  }
  assert.equal(v.verify("not an id", new Uint8Array(), new Uint8Array(64)), false);
  assert.equal(v.verify(id.agentId, new Uint8Array(), "AA="), false);
});
