/**
 * NATS connections for the run queue (`serve --nats`, `worker`) and the shape of their
 * credentials, with URLs masked for every message.
 *
 * Owns: parsing a `--nats` URL list (`parseNatsUrls`: `nats://`, `tls://` or a bare `host:port`,
 * comma-separated, the credentials a URL carries — `nats://token@host`, `nats://user:pass@host`
 * — taken out of it), masking a URL for logs, records and errors (`maskNatsUrl`: the host and
 * port only), and turning `NatsAuth` (the texts of a creds file, an nkey seed, a token, a TLS CA,
 * read by the edge) into the client's connection options (`natsConnectionOptions`).
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

/** Credentials for a NATS connection, as texts (the edge reads the files). */
export interface NatsAuth {
  /** A `.creds` file's text (user JWT + nkey seed). */
  creds?: string;
  /** An nkey seed (`SU...`). */
  nkeySeed?: string;
  /** A token. */
  token?: string;
  /** User and password (from the URL). */
  user?: string;
  pass?: string;
  /** PEM text of the CA the server's certificate must chain to (TLS is then required). */
  tlsCa?: string;
}

/** A parsed `--nats` list: servers without credentials, what the URLs carried, the masked form. */
export interface NatsTarget {
  /** `host:port` of each server. */
  servers: string[];
  /** The list as shown in logs and errors (`nats://host:port,...`, never a credential). */
  shown: string;
  /** Credentials the URLs carried (token or user/password). */
  auth: NatsAuth;
  /** A URL asked for TLS (`tls://`). */
  tls: boolean;
}

/** A `--nats` value that is not a NATS URL list. */
export class NatsUrlError extends Error {
  /** @param message what is wrong, naming the URL (masked) */
  constructor(message: string) {
    super(message);
    this.name = "NatsUrlError";
  }
}

/** Reconnect pace, ms (plus up to 250 ms jitter). */
export const RECONNECT_WAIT_MS = 500;

/** `nats://host:port` of a URL, without any credential; `nats://?` when it does not parse. */
export function maskNatsUrl(raw: string): string {
  try {
    const u = new URL(raw.includes("://") ? raw : `nats://${raw}`);
    return `${u.protocol}//${u.host}`;
  } catch {
    return "nats://?";
  }
}

/**
 * Parses a comma-separated list of NATS URLs.
 * @throws NatsUrlError naming the (masked) URL that does not parse
 */
export function parseNatsUrls(text: string): NatsTarget {
  const parts = text.split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (parts.length === 0) throw new NatsUrlError("no NATS URL given (write nats://host:4222)");
  const servers: string[] = [];
  const auth: NatsAuth = {};
  let tls = false;
  for (const raw of parts) {
    let u: URL;
    try {
      u = new URL(raw.includes("://") ? raw : `nats://${raw}`);
    } catch {
      throw new NatsUrlError(`'${maskNatsUrl(raw)}' is not a NATS URL (write nats://host:4222)`);
    }
    if (!["nats:", "tls:"].includes(u.protocol)) {
      throw new NatsUrlError(`'${maskNatsUrl(raw)}' is not a NATS URL: the scheme must be nats:// or tls://`);
    }
    if (u.hostname === "" || (u.pathname !== "" && u.pathname !== "/") || u.search !== "" || u.hash !== "") {
      throw new NatsUrlError(
        `'${maskNatsUrl(raw)}' is not a NATS URL (write nats://host:4222, nothing after)`,
      );
    }
    if (u.protocol === "tls:") tls = true;
    if (u.username !== "") {
      if (u.password !== "") {
        auth.user = decodeURIComponent(u.username);
        auth.pass = decodeURIComponent(u.password);
      } else auth.token ??= decodeURIComponent(u.username);
    }
    servers.push(`${u.hostname}:${u.port || "4222"}`);
  }
  return { servers, shown: servers.map((s) => `nats://${s}`).join(","), auth, tls };
}

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
