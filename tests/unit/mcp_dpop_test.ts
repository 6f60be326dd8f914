/**
 * The DPoP key of a stored login (`src/clients/mcp/oauth/dpop.ts`): what is kept in the token
 * file is the key the session signs with (same thumbprint; a proof it signs verifies with the
 * public key it carries), a key of another kind is refused by name, and the `DPoP` scheme is
 * found in a challenge list.
 */
import assert from "node:assert/strict";
import {
  challengesDpop,
  DpopSwitch,
  importDpopKey,
  newStorableDpopKey,
} from "../../src/clients/mcp/oauth/dpop.ts";

function unb64url(s: string): Uint8Array<ArrayBuffer> {
  const b = atob(s.replaceAll("-", "+").replaceAll("_", "/") + "===".slice((s.length + 3) % 4));
  return Uint8Array.from(b, (c) => c.charCodeAt(0));
}

Deno.test("dpop: a stored key signs as the session it was made with", async () => {
  const made = await newStorableDpopKey();
  const back = await importDpopKey(JSON.parse(JSON.stringify(made.key)));
  assert.equal(back.thumbprint, made.session.thumbprint);
  assert.deepEqual(back.publicJwk, { kty: "EC", crv: "P-256", x: made.key.x, y: made.key.y });
  const proof = await back.buildProof({ htm: "post", htu: "https://mcp.example.com/mcp?x=1" });
  const [h, p, sig] = proof.split(".");
  const header = JSON.parse(new TextDecoder().decode(unb64url(h)));
  assert.equal(header.typ, "dpop+jwt");
  assert.equal(header.jwk.d, undefined, "no private part in the proof");
  const claims = JSON.parse(new TextDecoder().decode(unb64url(p)));
  assert.equal(claims.htm, "POST");
  assert.equal(claims.htu, "https://mcp.example.com/mcp");
  const key = await crypto.subtle.importKey(
    "jwk",
    header.jwk,
    { name: "ECDSA", namedCurve: "P-256" },
    false,
    [
      "verify",
    ],
  );
  assert.ok(
    await crypto.subtle.verify(
      { name: "ECDSA", hash: "SHA-256" },
      key,
      unb64url(sig),
      new TextEncoder().encode(`${h}.${p}`),
    ),
  );
});

Deno.test("dpop: a stored key that is not a P-256 private key is refused", async () => {
  const made = await newStorableDpopKey();
  await assert.rejects(importDpopKey({ ...made.key, d: undefined }), /not an ES256 \(P-256\) private key/);
  await assert.rejects(importDpopKey({ kty: "RSA", n: "x", e: "AQAB" }), /not an ES256/);
});

Deno.test("dpop: the scheme is found in a challenge list, and a switch signs only once on", async () => {
  const res = (v: string) => new Response(null, { status: 401, headers: { "www-authenticate": v } });
  assert.equal(challengesDpop(res(`DPoP algs="ES256"`)), true);
  assert.equal(challengesDpop(res(`Bearer realm="x", DPoP algs="ES256"`)), true);
  assert.equal(challengesDpop(res(`Bearer resource_metadata="https://x/dpop"`)), false);
  assert.equal(challengesDpop(undefined), false);
  const sw = new DpopSwitch();
  assert.equal(sw.session(), undefined);
  sw.enable();
  const a = await sw.session();
  assert.equal(await sw.session(), a, "one session per connection: its nonces are kept");
});
