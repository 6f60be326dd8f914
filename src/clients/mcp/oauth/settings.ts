/**
 * How an HTTP MCP connection authorizes itself (OAuth 2.1, the MCP authorization spec), as typed
 * settings, and the one parser that turns a server entry's `auth` fields into them.
 *
 * Owns `McpAuth` and `parseAuthFields`. The fields come from a Lua table (`opts.auth` of
 * `mcp.connect_http`, an `mcp_servers` entry's `transport_opts.auth`) or from the credentials
 * file such a table names; secrets may be given by the name of a variable of the run's
 * environment (`client_secret_env`, `private_key_env`, `refresh_token_env`, `assertion_env`: the project's `.env`
 * included), which the caller looks up through the run (`lookup`), never the process.
 *
 * Kinds, and what picks them:
 * - `client_credentials`: `client_secret` (and no `refresh_token`): the client credentials grant,
 *   authenticated with `client_secret_basic` or `client_secret_post` (`method`; default: what the
 *   authorization server supports, basic first);
 * - `private_key_jwt`: `private_key` (PEM or a JWK as JSON) with `alg`: client credentials,
 *   authenticated by a signed JWT (RFC 7523);
 * - `refresh_token`: `refresh_token` (with `client_id`, and `client_secret` for a confidential
 *   client): the token is refreshed as the first request needs it, the result kept in memory;
 * - `jwt_bearer`: `assertion` (a JWT the authorization server trusts, issued to the workload by
 *   another party: a CI system's OIDC token, a Kubernetes service account token) or
 *   `assertion_file` (read again at each token request, so a token the platform rotates in place
 *   is picked up), with `client_id`: the JWT-bearer grant (RFC 7523 §2.1; workload identity
 *   federation), no client secret;
 * - `cross_app`: `id_token` (the user's ID token from an enterprise IdP) with `idp_client_id` and
 *   `idp_url` or `idp_token_endpoint`, plus the MCP client's `client_id` / `client_secret`:
 *   cross-app access (SEP-990), the ID token exchanged at the IdP for an authorization grant
 *   (RFC 8693), that grant for an access token (RFC 7523);
 * - `stored`: the login `agent-block mcp login URL` stored for this server (also what a
 *   connection without `auth` uses when such a login exists).
 * Every kind may carry `scope` (asked for; a server's `403 insufficient_scope` widens it where the
 * credentials allow) and `issuer` (the authorization server the credentials may be sent to).
 *
 * Invariants: a field of the wrong type, a variable that is unset, or a combination that names
 * no kind is an error naming the field; secrets are never part of an error message.
 */

/** The token endpoint's client authentication for a client secret. */
export type SecretMethod = "client_secret_basic" | "client_secret_post";

/** Settings common to every kind. */
interface AuthCommon {
  /** Scope to ask for (space-separated). */
  scope?: string;
  /** The only authorization server (issuer) the credentials may be sent to. */
  issuer?: string;
}

/** How one HTTP connection authorizes itself. */
export type McpAuth =
  | AuthCommon & {
    kind: "client_credentials";
    clientId: string;
    clientSecret: string;
    method?: SecretMethod;
  }
  | AuthCommon & { kind: "private_key_jwt"; clientId: string; privateKey: string; algorithm: string }
  | AuthCommon & {
    kind: "refresh_token";
    clientId: string;
    clientSecret?: string;
    method?: SecretMethod;
    refreshToken: string;
    /** Where the refresh token came from, for the message when it is refused. */
    source: string;
  }
  | AuthCommon & {
    kind: "jwt_bearer";
    clientId: string;
    /** The workload's JWT, given as a value; or `assertionFile`, the file it is read from. */
    assertion?: string;
    /** A file holding the JWT (absolute, or relative to the caller's directory), read per token request. */
    assertionFile?: string;
  }
  | AuthCommon & {
    kind: "cross_app";
    clientId: string;
    clientSecret: string;
    /** The user's ID token from the enterprise IdP. */
    idToken: string;
    idpClientId: string;
    idpClientSecret?: string;
    /** The IdP's token endpoint, or its issuer URL to discover it from (`idpUrl`). */
    idpTokenEndpoint?: string;
    idpUrl?: string;
  }
  | AuthCommon & {
    kind: "stored";
    /** The store directory (`<AGENT_BLOCK_HOME>/mcp-auth`). */
    storeDir: string;
  };

/** The fields an `auth` table or a credentials file may have. */
export const AUTH_FIELDS = [
  "client_id",
  "client_id_env",
  "client_secret",
  "client_secret_env",
  "method",
  "private_key",
  "private_key_env",
  "alg",
  "refresh_token",
  "refresh_token_env",
  "scope",
  "issuer",
  "id_token",
  "id_token_env",
  "idp_url",
  "idp_token_endpoint",
  "idp_client_id",
  "idp_client_secret",
  "idp_client_secret_env",
  "assertion",
  "assertion_env",
  "assertion_file",
  "credentials_file",
] as const;

/** An error in the `auth` fields (the caller words where: its argument, or the file). */
export class AuthSettingsError extends Error {
  /** @param message what is wrong, naming the field */
  constructor(message: string) {
    super(message);
    this.name = "AuthSettingsError";
  }
}

/**
 * The settings `fields` describe. `where` prefixes field names in errors (`opts.auth`,
 * `the credentials file F`); `lookup` reads a variable of the run's environment.
 */
export function parseAuthFields(
  fields: Readonly<Record<string, unknown>>,
  where: string,
  lookup: (name: string) => string | undefined,
): Exclude<McpAuth, { kind: "stored" }> {
  for (const k of Object.keys(fields)) {
    if (!(AUTH_FIELDS as readonly string[]).includes(k) || k === "credentials_file") {
      throw new AuthSettingsError(
        `${where}: unknown field '${k}' (known: ${
          AUTH_FIELDS.filter((f) => f !== "credentials_file").join(", ")
        })`,
      );
    }
  }
  const str = (k: string): string | undefined => {
    const v = fields[k];
    if (v === undefined) return undefined;
    if (typeof v !== "string" || v === "") {
      throw new AuthSettingsError(`${where}: field '${k}' must be a non-empty string`);
    }
    return v;
  };
  /** `k` itself, or the variable `k_env` names. */
  const value = (k: string): string | undefined => {
    const direct = str(k);
    const envName = str(`${k}_env`);
    if (direct !== undefined && envName !== undefined) {
      throw new AuthSettingsError(`${where}: fields '${k}' and '${k}_env' contradict each other: give one`);
    }
    if (envName === undefined) return direct;
    const v = lookup(envName);
    if (v === undefined || v === "") {
      throw new AuthSettingsError(
        `${where}: field '${k}_env' names ${envName}, which is not set in the run's environment (or .env)`,
      );
    }
    return v;
  };
  const clientId = value("client_id");
  const clientSecret = value("client_secret");
  const privateKey = value("private_key");
  const refreshToken = value("refresh_token");
  const rawMethod = str("method");
  if (rawMethod !== undefined && rawMethod !== "client_secret_basic" && rawMethod !== "client_secret_post") {
    throw new AuthSettingsError(
      `${where}: field 'method' must be "client_secret_basic" or "client_secret_post", got "${rawMethod}"`,
    );
  }
  const method = rawMethod as SecretMethod | undefined;
  const common = { scope: str("scope"), issuer: str("issuer") };
  if (clientId === undefined) {
    throw new AuthSettingsError(`${where}: field 'client_id' (or 'client_id_env') is required`);
  }
  const idToken = value("id_token");
  if (idToken !== undefined) {
    const idpClientId = str("idp_client_id");
    const idpUrl = str("idp_url");
    const idpTokenEndpoint = str("idp_token_endpoint");
    if (
      clientSecret === undefined || idpClientId === undefined ||
      (idpUrl === undefined) === (idpTokenEndpoint === undefined)
    ) {
      throw new AuthSettingsError(
        `${where}: cross-app access ('id_token') needs 'client_secret', 'idp_client_id', and one of 'idp_url' ` +
          `or 'idp_token_endpoint'`,
      );
    }
    return {
      kind: "cross_app",
      clientId,
      clientSecret,
      idToken,
      idpClientId,
      idpClientSecret: value("idp_client_secret"),
      idpUrl,
      idpTokenEndpoint,
      ...common,
    };
  }
  const assertion = value("assertion");
  const assertionFile = str("assertion_file");
  if (assertion !== undefined || assertionFile !== undefined) {
    if (assertion !== undefined && assertionFile !== undefined) {
      throw new AuthSettingsError(
        `${where}: fields 'assertion' and 'assertion_file' contradict each other: give one`,
      );
    }
    if (clientSecret !== undefined || privateKey !== undefined || refreshToken !== undefined) {
      throw new AuthSettingsError(
        `${where}: 'assertion' is the JWT-bearer grant's only credential: drop 'client_secret' / 'private_key' / ` +
          `'refresh_token'`,
      );
    }
    return {
      kind: "jwt_bearer",
      clientId,
      ...(assertion !== undefined ? { assertion } : { assertionFile }),
      ...common,
    };
  }
  if (privateKey !== undefined) {
    if (clientSecret !== undefined || refreshToken !== undefined) {
      throw new AuthSettingsError(
        `${where}: 'private_key' authenticates the client by itself: drop 'client_secret' / 'refresh_token'`,
      );
    }
    const algorithm = str("alg");
    if (algorithm === undefined) {
      throw new AuthSettingsError(`${where}: 'private_key' needs field 'alg' (such as "RS256" or "ES256")`);
    }
    return { kind: "private_key_jwt", clientId, privateKey, algorithm, ...common };
  }
  if (refreshToken !== undefined) {
    const source = fields.refresh_token_env !== undefined
      ? `the variable ${fields.refresh_token_env}`
      : `${where} field 'refresh_token'`;
    return { kind: "refresh_token", clientId, clientSecret, method, refreshToken, source, ...common };
  }
  if (clientSecret !== undefined) {
    return { kind: "client_credentials", clientId, clientSecret, method, ...common };
  }
  throw new AuthSettingsError(
    `${where}: a client needs 'client_secret', 'private_key', 'refresh_token' or 'assertion' (or their '_env' ` +
      `forms, or 'assertion_file'); ` +
      `for a login made with 'agent-block mcp login', use auth = "login"`,
  );
}
