/**
 * DPoP (RFC 9449, SEP-1932): access tokens bound to a key the client holds, so a token that leaks
 * (a server echoing it, a log) is useless without the key. The SDK signs the proofs — on the token
 * request, and on every request to the MCP server through the transport's fetch — once a provider
 * answers `dpop()` with a `DpopSession`; this module decides when a connection has one, and keeps
 * a login's key.
 *
 * When: a connection uses DPoP once its MCP server asks for it — a `401` whose `WWW-Authenticate`
 * offers the `DPoP` scheme (`challengesDpop`) — and not before: an authorization server that
 * supports DPoP says nothing of whether the resource accepts it, and a token bound where the
 * resource expects `Bearer` would break a working connection. A stored login made with DPoP
 * (`mcp login` saw the challenge) keeps its key in its entry (`dpop_key`, a private JWK, in the
 * owner-only token file), and every run using that login signs with it: its tokens, refresh
 * token included, are bound to that key.
 *
 * Invariants: a session is made once per connection (`DpopSwitch`) and kept, so the nonces the
 * servers hand out (RFC 9449 §8, §9) are remembered; a key read back must be an ES256 (P-256)
 * private JWK, else the entry is refused by name; the private part joins the run's secrets.
 */
import { DpopSession, generateDpopKeyPair } from "@modelcontextprotocol/client";

/** A DPoP key as the token store keeps it: a private JWK of the ES256 curve. */
export type StoredDpopKey = JsonWebKey;

/** True when `res` (a 401) offers the `DPoP` authentication scheme (RFC 9110 §11.6.1 list). */
export function challengesDpop(res: Response | undefined): boolean {
  return /(?:^|,)\s*dpop(?:\s|$|,)/i.test(res?.headers.get("www-authenticate") ?? "");
}

/** The base64url of `bytes`, unpadded. */
function b64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The session of a stored key (the `key` of `newStorableDpopKey`, read back from a token file). */
export async function importDpopKey(jwk: StoredDpopKey): Promise<DpopSession> {
  if (jwk.kty !== "EC" || jwk.crv !== "P-256" || !jwk.x || !jwk.y || !jwk.d) {
    throw new Error("its DPoP key is not an ES256 (P-256) private key");
  }
  const privateKey = await crypto.subtle.importKey(
    "jwk",
    { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y, d: jwk.d },
    { name: "ECDSA", namedCurve: "P-256" },
    false,
    ["sign"],
  );
  const publicJwk = { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y };
  const publicKey = await crypto.subtle.importKey(
    "jwk",
    publicJwk,
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["verify"],
  );
  // RFC 7638: the required members in lexicographic order, no spaces
  const canonical = JSON.stringify({ crv: "P-256", kty: "EC", x: jwk.x, y: jwk.y });
  const thumbprint = b64url(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical))),
  );
  return await DpopSession.create({
    keyPair: { privateKey, publicKey, publicJwk, thumbprint, alg: "ES256" },
  });
}

/** A fresh ES256 session whose private key can be stored, and that key. */
export async function newStorableDpopKey(): Promise<{ session: DpopSession; key: StoredDpopKey }> {
  const pair = await generateDpopKeyPair({ alg: "ES256", extractable: true });
  const key = await crypto.subtle.exportKey("jwk", pair.privateKey as CryptoKey);
  return { session: await DpopSession.create({ keyPair: pair }), key };
}

/**
 * A connection's DPoP: off until `enable` (the server challenged with the scheme, or the login
 * was made with it); then one session, made on first use and kept.
 */
export class DpopSwitch {
  #on: boolean;
  #session: Promise<DpopSession> | undefined;

  /** @param make how the session is made (a fresh key, or a stored login's) */
  constructor(private readonly make: () => Promise<DpopSession> = () => DpopSession.create(), on = false) {
    this.#on = on;
  }

  /** From now on, proofs are signed. */
  enable(): void {
    this.#on = true;
  }

  /** The session when on (what `OAuthClientProvider.dpop` answers), else undefined. */
  session(): Promise<DpopSession> | undefined {
    if (!this.#on) return undefined;
    this.#session ??= this.make();
    return this.#session;
  }
}
