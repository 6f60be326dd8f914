// Noise_XX_25519_ChaChaPoly_BLAKE2s against the official Cacophony vector, and agent-mesh's sizes.
import assert from "node:assert/strict";
import { decodeHex, encodeHex } from "../../../src/clients/mesh/base64url.ts";
import { MAX_PLAINTEXT, NoiseHandshake, type NoiseSession } from "../../../src/clients/mesh/noise.ts";
import { MeshError } from "../../../src/clients/mesh/transport.ts";

const fixture = JSON.parse(
  Deno.readTextFileSync(
    new URL("../../fixtures/mesh/noise_xx_25519_chachapoly_blake2s.json", import.meta.url),
  ),
);
const v = fixture.vector;

Deno.test("noise: the Cacophony vector for Noise_XX_25519_ChaChaPoly_BLAKE2s, byte for byte", () => {
  assert.equal(v.protocol_name, "Noise_XX_25519_ChaChaPoly_BLAKE2s");
  const init = new NoiseHandshake(true, {
    prologue: decodeHex(v.init_prologue),
    staticKey: decodeHex(v.init_static),
    ephemeralKey: decodeHex(v.init_ephemeral),
  });
  const resp = new NoiseHandshake(false, {
    prologue: decodeHex(v.resp_prologue),
    staticKey: decodeHex(v.resp_static),
    ephemeralKey: decodeHex(v.resp_ephemeral),
  });
  let sessions: [NoiseSession, NoiseSession] | undefined;
  v.messages.forEach((m: { payload: string; ciphertext: string }, i: number) => {
    const fromInit = i % 2 === 0;
    const payload = decodeHex(m.payload);
    if (i < 3) {
      const [w, r] = fromInit ? [init, resp] : [resp, init];
      const ct = w.writeMessage(payload);
      assert.equal(encodeHex(ct), m.ciphertext, `handshake message ${i}`);
      assert.equal(encodeHex(r.readMessage(ct)), m.payload);
      if (i === 2) sessions = [init.split(), resp.split()];
    } else {
      const [w, r] = fromInit ? sessions! : [sessions![1], sessions![0]];
      const ct = w.seal(payload);
      assert.equal(encodeHex(ct), m.ciphertext, `transport message ${i}`);
      assert.equal(encodeHex(r.open(ct)), m.payload);
    }
  });
  assert.equal(encodeHex(sessions![0].handshakeHash), v.handshake_hash);
  assert.equal(encodeHex(sessions![1].handshakeHash), v.handshake_hash);
});

function handshake(): [NoiseSession, NoiseSession, number[]] {
  const a = new NoiseHandshake(true);
  const b = new NoiseHandshake(false);
  const m1 = a.writeMessage();
  b.readMessage(m1);
  const m2 = b.writeMessage();
  a.readMessage(m2);
  const m3 = a.writeMessage();
  b.readMessage(m3);
  return [a.split(), b.split(), [m1.length, m2.length, m3.length]];
}

Deno.test("noise: agent-mesh's handshake sizes (32/96/64) and the 65 519-byte plaintext limit", () => {
  const [a, b, sizes] = handshake();
  assert.deepEqual(sizes, [32, 96, 64]);
  const max = new Uint8Array(MAX_PLAINTEXT).fill(7);
  const ct = a.seal(max);
  assert.equal(ct.length, 65_535);
  assert.deepEqual(b.open(ct), max);
  assert.throws(
    () => a.seal(new Uint8Array(MAX_PLAINTEXT + 1)),
    (e) =>
      e instanceof MeshError && e.kind === "too_large" &&
      /65520 bytes exceeds the 65519-byte limit/.test(e.message),
  );
  // The refused message consumed no nonce: the next one still opens.
  assert.deepEqual(b.open(a.seal(Uint8Array.of(1))), Uint8Array.of(1));
});

Deno.test("attack: mesh noise refuses forged, replayed and tampered messages", () => {
  const [a, b] = handshake();
  const first = a.seal(Uint8Array.of(1, 2, 3));
  assert.deepEqual(b.open(first), Uint8Array.of(1, 2, 3));
  assert.throws(() => b.open(first), (e) => e instanceof MeshError && e.kind === "protocol", "replay");
  const tampered = a.seal(Uint8Array.of(4));
  tampered[0] ^= 1;
  assert.throws(() => b.open(tampered), (e) => e instanceof MeshError && e.kind === "protocol");
  // A third party's session cannot write into this one.
  const [x] = handshake();
  assert.throws(
    () => b.open(x.seal(Uint8Array.of(5))),
    (e) => e instanceof MeshError && e.kind === "protocol",
  );
  // A tampered handshake message is refused, and the state is dead afterwards.
  const i = new NoiseHandshake(true);
  const r = new NoiseHandshake(false);
  r.readMessage(i.writeMessage());
  const m2 = r.writeMessage();
  m2[40] ^= 1;
  assert.throws(() => i.readMessage(m2), (e) => e instanceof MeshError && e.kind === "protocol");
  assert.throws(() => i.writeMessage(), (e) => e instanceof MeshError && e.kind === "protocol");
});

Deno.test("noise: messages the relay lost are skipped within the window, never re-accepted", () => {
  const [a, b] = handshake();
  for (let i = 0; i < 10; i++) a.seal(Uint8Array.of(i)); // lost on the way
  const next = a.seal(Uint8Array.of(99));
  assert.deepEqual(b.open(next), Uint8Array.of(99));
  assert.deepEqual(b.open(a.seal(Uint8Array.of(100))), Uint8Array.of(100));
  for (let i = 0; i < 70; i++) a.seal(Uint8Array.of(i)); // beyond the window
  assert.throws(
    () => b.open(a.seal(Uint8Array.of(1))),
    (e) => e instanceof MeshError && e.kind === "protocol",
  );
});
