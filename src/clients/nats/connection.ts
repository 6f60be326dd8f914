/**
 * NATS connections for the run queue (`serve --nats`, `worker`) and the shape of their
 * credentials, with URLs masked for every message.
 *
 * Owns turning a parsed URL list (`urls.ts`) and `NatsAuth` (the texts of a creds file, an nkey
 * seed, a token, a TLS CA, read by the edge) into the client's connection options
 * (`natsConnectionOptions`, also what the mesh's NATS transport starts from), and connecting.
 *
 * Invariants: nothing here reads a file or the environment (the edge reads the files named by
 * `--nats-creds` and friends, so their errors name the flag and the file); no credential ever
 * appears in a message this module builds; the connection reconnects without limit (a NATS
 * server restarted mid-run is waited for, `RECONNECT_WAIT_MS` apart).
 */
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
  nkeyAuthenticator,
  type NodeConnectionOptions,
} from "@nats-io/transport-node";
import type { NatsAuth, NatsTarget } from "./urls.ts";

/** Reconnect pace, ms (plus up to 250 ms jitter). */
export const RECONNECT_WAIT_MS = 500;

/** The client options for `target` with `auth` (explicit credentials win over the URL's). */
export function natsConnectionOptions(
  target: NatsTarget,
  auth: NatsAuth,
  name: string,
): NodeConnectionOptions {
  const a: NatsAuth = { ...target.auth, ...auth };
  const opts: NodeConnectionOptions = {
    servers: target.servers,
    name,
    timeout: 20_000, // the client's own default: a saturated machine's first handshake may be slow
    maxReconnectAttempts: -1,
    reconnectTimeWait: RECONNECT_WAIT_MS,
    reconnectJitter: 250,
    waitOnFirstConnect: false,
  };
  const enc = new TextEncoder();
  if (a.creds !== undefined) opts.authenticator = credsAuthenticator(enc.encode(a.creds));
  else if (a.nkeySeed !== undefined) opts.authenticator = nkeyAuthenticator(enc.encode(a.nkeySeed.trim()));
  else if (a.user !== undefined) {
    opts.user = a.user;
    opts.pass = a.pass;
  } else if (a.token !== undefined) opts.token = a.token;
  if (a.tlsCa !== undefined) opts.tls = { ca: a.tlsCa };
  else if (target.tls) opts.tls = {};
  return opts;
}

/** Why a connection failed: `auth` (refused credentials) or `connect` (anything else). */
export class NatsConnectError extends Error {
  /**
   * @param kind `auth` when the server refused the credentials
   * @param message what failed, the URL masked
   */
  constructor(readonly kind: "auth" | "connect", message: string) {
    super(message);
    this.name = "NatsConnectError";
  }
}

/**
 * Connects to `target`.
 * @throws NatsConnectError (the message names the masked URL, never a credential)
 */
export async function connectNatsTarget(
  target: NatsTarget,
  auth: NatsAuth,
  name: string,
): Promise<NatsConnection> {
  try {
    return await connect(natsConnectionOptions(target, auth, name));
  } catch (e) {
    const err = e as Error;
    let text = `${err?.message ?? e}`;
    for (const secret of [auth.token, auth.pass, target.auth.token, target.auth.pass]) {
      if (secret) text = text.split(secret).join("***");
    }
    const isAuth = err?.name === "AuthorizationError" ||
      /authoriz|authenticat|credential|nkey|seed/i.test(text);
    return Promise.reject(
      new NatsConnectError(isAuth ? "auth" : "connect", `cannot connect to ${target.shown}: ${text}`),
    );
  }
}
