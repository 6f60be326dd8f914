/**
 * NATS URL lists and the credentials they carry: what `serve --nats`, `worker` and a mesh
 * `--relay` of NATS servers all read.
 *
 * Owns: parsing a comma-separated list (`parseNatsUrls`: `nats://`, `tls://` — TLS required, as
 * hosted NATS services write their URLs — or a bare `host:port`; the credentials a URL carries,
 * `nats://token@host` or `nats://user:pass@host`, taken out of it) and masking a URL for logs,
 * records and errors (`maskNatsUrl`: scheme, host and port only).
 *
 * Invariants: nothing here imports the NATS client (a run that only checks its flags does not
 * load it; `connection.ts` turns a target into the client's options); no credential ever appears
 * in a message this module builds.
 */

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
  /** `host:port` of each server (an IPv6 address in brackets). */
  servers: string[];
  /** The list as shown in logs and errors (`nats://host:port,tls://…`, never a credential). */
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
  const shown: string[] = [];
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
    shown.push(`${u.protocol}//${servers.at(-1)}`);
  }
  return { servers, shown: shown.join(","), auth, tls };
}
