/**
 * The SDK's OAuth client, wired to agent-block's settings: one `OAuthClientProvider` per HTTP
 * connection that has `auth` (or a stored login), handed to the SDK's transport, which does the
 * protocol — protected-resource and authorization-server discovery, dynamic client registration,
 * PKCE, `iss` checks, the token requests, refresh on a 401 and re-authorization on a
 * `403 insufficient_scope` (step-up). Nothing of that is rewritten here.
 *
 * Owns:
 * - the providers: the SDK's `ClientCredentialsProvider` (with the configured `method` when one
 *   is given), `PrivateKeyJwtProvider` and `CrossAppAccessProvider` (its ID-JAG from the IdP through
 *   the SDK's token exchange) for machine credentials, and ours for a workload's JWT-bearer grant
 *   (`WorkloadJwtProvider`: the SDK has none); `HeadlessProvider` for a
 *   refresh token or a stored login — it refreshes, and where only a person could go on (a
 *   refused refresh token, a scope the login lacks) it fails with an `McpAuthError` saying what
 *   to do (`agent-block mcp login URL [--scope ...]`), naming the scope a step-up asked for;
 * - for a stored login, what is kept: refreshed tokens are written back to the store under the
 *   entry's lock, and a 401 is answered by re-reading the entry under that lock first, so a run
 *   that lost the race to refresh uses the winner's tokens (`store.ts`); a token known to have
 *   expired is not sent (the server's 401 starts the refresh at once);
 * - DPoP (`dpop.ts`): every provider answers `dpop()` from its connection's `DpopSwitch`, turned
 *   on by a `401` offering the `DPoP` scheme (or, for a login made with it, from the start, with
 *   the key of its entry; a login without one gets a key that is stored with the tokens it binds);
 * - secrets: every client secret, private key, workload JWT, DPoP key, access and refresh token
 *   goes to `secret` as it is known, so the run's secrets mask them wherever text is kept or
 *   printed.
 *
 * The transport reads the provider's token per request through its `_authProvider` (the SDK
 * adapts an `OAuthClientProvider` to it at construction, and keeps the provider itself for the
 * step-up); that adapter is replaced by ours (`replaceAdapter`), which asks for the configured
 * scope when a 401 names none (the SDK's would ask for every scope the resource lists) and, for a
 * stored login, takes the entry's lock around the refresh. The SDK is pinned exactly (deno.json),
 * and `tests/host/mcp/oauth_test.ts` and `tests/cli/mcp_login_test.ts` cover the seam.
 */
import {
  auth,
  AuthorizationServerMismatchError,
  type AuthProvider,
  ClientCredentialsProvider,
  CrossAppAccessProvider,
  discoverAndRequestJwtAuthGrant,
  extractWWWAuthenticateParams,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  OAuthError,
  OAuthErrorCode,
  PrivateKeyJwtProvider,
  requestJwtAuthorizationGrant,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import type { McpAuth } from "./settings.ts";
import { challengesDpop, DpopSwitch, importDpopKey, newStorableDpopKey, type StoredDpopKey } from "./dpop.ts";
import {
  entryPath,
  expired,
  McpAuthError,
  readEntry,
  stamped,
  type StoredClient,
  type StoredTokens,
  type TokenEntry,
  withEntryLock,
  writeEntry,
} from "./store.ts";

/** What building a connection's authorization needs besides the settings. */
export interface AuthDeps {
  /** Adds a value to the run's secrets. */
  secret: (value: string | undefined) => void;
  /** Logs a debug line. */
  debug: (line: string) => void;
  /** Logs a warning (the run's logger: its level and its secrets apply). */
  warn?: (line: string) => void;
}

/** A connection's authorization: the provider, and what to do to the transport once it exists. */
export interface ConnectionAuth {
  provider: OAuthClientProvider;
  /** Called with the transport built with `provider` (replaces its token adapter). */
  install(transport: object): void;
  /** More words for an authorization failure: the scope a refused token request asked for. */
  explain?(e: unknown): string | undefined;
}

/** The client credentials provider with a fixed token endpoint authentication method. */
class SecretClient extends ClientCredentialsProvider {
  constructor(
    opts: ConstructorParameters<typeof ClientCredentialsProvider>[0],
    private readonly method?: string,
  ) {
    super(opts);
  }
  override clientInformation(): StoredOAuthClientInformation {
    const info = super.clientInformation();
    return this.method ? { ...info, token_endpoint_auth_method: this.method } : info;
  }
}

/** The JWT-bearer grant's `grant_type` (RFC 7523 §2.1). */
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/**
 * The JWT-bearer grant (RFC 7523 §2.1) for a workload: the token request carries a JWT another
 * party issued to it (a CI system's OIDC token, a Kubernetes service account token) as its
 * `assertion`, and the client is public (`client_id` in the body, no secret). The JWT is read at
 * each token request — from the settings, or again from `assertionFile`, where platforms rotate
 * it in place — and joins the run's secrets. A refused grant is not sent again (SEP-1933): the
 * SDK's `auth()` retries once after `invalid_grant`, `invalid_client` or `unauthorized_client`,
 * invalidating credentials first (`invalidateCredentials`), and that retry's token request fails
 * here with what was refused; `invalid_scope` is the SDK's error as it is. No refresh token is
 * kept: a workload presents its JWT again instead.
 */
class WorkloadJwtProvider implements OAuthClientProvider {
  #tokens: StoredOAuthTokens | undefined;
  /** What the authorization server refused (the SDK invalidated it to retry), once it has. */
  #refused: string | undefined;
  readonly #info: StoredOAuthClientInformation;
  readonly #metadata: OAuthClientMetadata;

  constructor(
    private readonly settings: Extract<McpAuth, { kind: "jwt_bearer" }>,
    private readonly deps: AuthDeps,
    private readonly server: string,
  ) {
    this.#info = {
      client_id: settings.clientId,
      ...(settings.issuer ? { issuer: settings.issuer } : {}),
    };
    this.#metadata = {
      client_name: "agent-block",
      redirect_uris: [],
      grant_types: [JWT_BEARER],
      token_endpoint_auth_method: "none",
      ...(settings.scope ? { scope: settings.scope } : {}),
    };
  }

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return this.#metadata;
  }

  clientInformation(): StoredOAuthClientInformation {
    return this.#info;
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    const { refresh_token: _, ...rest } = tokens;
    this.#tokens = rest;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "client" || scope === "all") {
      this.#refused = "this client (invalid_client or unauthorized_client)";
    } else if (scope === "tokens") this.#refused ??= "the workload's token (invalid_grant)";
    this.#tokens = undefined;
  }

  redirectToAuthorization(): never {
    throw new McpAuthError(
      `server ${this.server}: the authorization server asks for a person's authorization, which the ` +
        `JWT-bearer grant of a workload cannot give: give a token it accepts for this resource`,
    );
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    throw new McpAuthError(`server ${this.server}: no authorization is in progress`);
  }

  prepareTokenRequest(scope?: string): URLSearchParams {
    if (this.#refused !== undefined) {
      throw new McpAuthError(
        `server ${this.server}: the authorization server refused ${this.#refused} in the JWT-bearer grant, ` +
          `which is not sent again: give a token (and a client) it trusts`,
      );
    }
    const params = new URLSearchParams({ grant_type: JWT_BEARER, assertion: this.#assertion() });
    if (scope) params.set("scope", scope);
    return params;
  }

  /** The JWT, read now (a file is read again each time: the platform may have rotated it). */
  #assertion(): string {
    if (this.settings.assertion !== undefined) return this.settings.assertion;
    const file = this.settings.assertionFile!;
    let jwt: string;
    try {
      jwt = Deno.readTextFileSync(file).trim();
    } catch (e) {
      throw new McpAuthError(
        `server ${this.server}: cannot read the workload token file ${file} ('assertion_file'): ${
          (e as Error).message
        }`,
      );
    }
    if (jwt === "") throw new McpAuthError(`server ${this.server}: the workload token file ${file} is empty`);
    this.deps.secret(jwt);
    return jwt;
  }
}

/** Where a headless provider's client and tokens live. */
interface TokenSlot {
  client: StoredClient;
  tokens: StoredTokens | undefined;
  save(tokens: StoredTokens): void;
}

/**
 * A provider that can refresh but cannot ask a person: a refresh token from the settings, or a
 * stored login. `redirectToAuthorization` is where the SDK would send a browser; here it fails
 * with what to do instead.
 */
class HeadlessProvider implements OAuthClientProvider {
  /** The stored tokens were refused by the authorization server (revoked, expired). */
  #refused = false;

  constructor(
    private readonly slot: TokenSlot,
    private readonly server: string,
    private readonly deps: AuthDeps,
    private readonly again: string,
    private readonly scope?: string,
    /** The connection's DPoP (`dpop.ts`): on for a login made with it, or once the server asks. */
    readonly dpopSwitch: DpopSwitch = new DpopSwitch(),
  ) {}

  dpop(): ReturnType<DpopSwitch["session"]> {
    return this.dpopSwitch.session();
  }

  get redirectUrl(): string {
    return this.slot.client.redirect_uris?.[0] ?? "http://127.0.0.1/callback";
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "agent-block",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: this.slot.client.token_endpoint_auth_method ??
        (this.slot.client.client_secret ? "client_secret_basic" : "none"),
      ...(this.scope ? { scope: this.scope } : {}),
    };
  }

  clientInformation(): StoredOAuthClientInformation {
    return this.slot.client as StoredOAuthClientInformation;
  }

  /**
   * The tokens, bound to an authorization server (SEP-2352): to the one their client is bound to
   * (a login's, or the settings' `issuer`) when they carry no stamp of their own, else to the one
   * this call resolved (`ctx`: the SDK's issuer, as it would take them unbound — and without its
   * console line about the missing stamp; an unpinned connection is warned of by the run's logger).
   */
  tokens(ctx?: { issuer?: string }): StoredOAuthTokens | undefined {
    if (this.#refused) return undefined;
    const t = this.slot.tokens as StoredOAuthTokens | undefined;
    if (!t || t.issuer !== undefined) return t;
    const bound = (this.slot.client as StoredOAuthClientInformation).issuer ?? ctx?.issuer;
    return bound === undefined ? t : { ...t, issuer: bound };
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.#refused = false;
    this.deps.secret(tokens.access_token);
    this.deps.secret(tokens.refresh_token);
    // A refresh that returns no refresh token keeps the one it used (RFC 6749 §6).
    const keep = tokens.refresh_token ?? this.slot.tokens?.refresh_token;
    this.slot.save(stamped({ ...tokens, ...(keep ? { refresh_token: keep } : {}) } as StoredTokens));
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    // The SDK's answer to a refused refresh token (`invalid_grant`): forget the tokens for this
    // run. The store keeps its entry: only a new login replaces it.
    if (scope === "tokens" || scope === "all") this.#refused = true;
  }

  redirectToAuthorization(authorizationUrl: URL): never {
    const asked = (authorizationUrl.searchParams.get("scope") ?? "").split(" ").filter(Boolean);
    const had = new Set((this.slot.tokens?.scope ?? "").split(" ").filter(Boolean));
    const missing = asked.filter((s) => !had.has(s) && s !== "offline_access");
    if (!this.#refused && missing.length && this.slot.tokens?.scope !== undefined) {
      throw new McpAuthError(
        `server ${this.server} needs scope '${missing.join(" ")}' (403 insufficient_scope), which ` +
          `these credentials were not granted: ${this.again} --scope '${asked.join(" ")}'`,
      );
    }
    throw new McpAuthError(
      this.#refused
        ? `server ${this.server}: the authorization server refused the refresh token (revoked or ` +
          `expired): ${this.again}`
        : this.slot.tokens?.refresh_token
        ? `server ${this.server}: the access token was refused and could not be refreshed: ${this.again}`
        : `server ${this.server}: the access token was refused and there is no refresh token: ${this.again}`,
    );
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    throw new McpAuthError(`server ${this.server}: no authorization is in progress`);
  }
}

/** The provider of a connection to `server` with `settings`. */
export async function connectionAuth(
  server: string,
  settings: McpAuth,
  deps: AuthDeps,
): Promise<ConnectionAuth> {
  const pinned = settings.issuer;
  if (pinned === undefined && UNPINNED_KINDS.has(settings.kind)) {
    deps.warn?.(
      `mcp: server ${server}: its auth names no 'issuer', so the server decides which authorization server ` +
        `receives these credentials; set issuer = "<the authorization server's URL>" to send them only there`,
    );
  }
  // The SDK's machine providers say the same on the console when given none (its own words, past
  // the run's logger and level): they get a stand-in, taken off again (`unpinned`).
  const expectedIssuer = pinned ?? UNPINNED;
  switch (settings.kind) {
    case "client_credentials": {
      deps.secret(settings.clientSecret);
      const p = unpinned(
        new SecretClient({
          clientId: settings.clientId,
          clientSecret: settings.clientSecret,
          clientName: "agent-block",
          scope: settings.scope,
          expectedIssuer,
        }, settings.method),
      );
      return machine(masking(p, deps), settings.scope, server, MACHINE_AGAIN);
    }
    case "private_key_jwt": {
      deps.secret(settings.privateKey);
      let key: string | Record<string, unknown> = settings.privateKey;
      if (key.trim().startsWith("{")) {
        try {
          key = JSON.parse(key) as Record<string, unknown>;
        } catch {
          throw new McpAuthError(`server ${server}: 'private_key' starts like a JWK but is not valid JSON`);
        }
      }
      const p = unpinned(
        new PrivateKeyJwtProvider({
          clientId: settings.clientId,
          privateKey: key,
          algorithm: settings.algorithm,
          clientName: "agent-block",
          scope: settings.scope,
          expectedIssuer,
        }),
      );
      return machine(masking(p, deps), settings.scope, server, MACHINE_AGAIN);
    }
    case "jwt_bearer": {
      deps.secret(settings.assertion);
      const p = new WorkloadJwtProvider(settings, deps, server);
      return machine(masking(p, deps), settings.scope, server, MACHINE_AGAIN);
    }
    case "cross_app": {
      deps.secret(settings.clientSecret);
      deps.secret(settings.idToken);
      deps.secret(settings.idpClientSecret);
      const s = settings;
      const p = unpinned(
        new CrossAppAccessProvider({
          clientId: s.clientId,
          clientSecret: s.clientSecret,
          clientName: "agent-block",
          expectedIssuer,
          assertion: async (ctx) => {
            const asked = {
              audience: ctx.authorizationServerUrl,
              resource: ctx.resourceUrl,
              idToken: s.idToken,
              clientId: s.idpClientId,
              clientSecret: s.idpClientSecret,
              scope: ctx.scope,
              fetchFn: ctx.fetchFn,
            };
            const grant = s.idpTokenEndpoint
              ? await requestJwtAuthorizationGrant({ tokenEndpoint: s.idpTokenEndpoint, ...asked })
              : await discoverAndRequestJwtAuthGrant({ idpUrl: s.idpUrl!, ...asked });
            deps.secret(grant.jwtAuthGrant);
            return grant.jwtAuthGrant;
          },
        }),
      );
      return machine(masking(p, deps), settings.scope, server, MACHINE_AGAIN);
    }
    case "refresh_token": {
      deps.secret(settings.clientSecret);
      deps.secret(settings.refreshToken);
      const slot: TokenSlot = {
        client: {
          client_id: settings.clientId,
          ...(settings.clientSecret ? { client_secret: settings.clientSecret } : {}),
          ...(settings.method ? { token_endpoint_auth_method: settings.method } : {}),
          ...(pinned ? { issuer: pinned } : {}),
        },
        // No access token yet: the first request is answered 401, which starts the refresh.
        tokens: { access_token: "", token_type: "Bearer", refresh_token: settings.refreshToken },
        save(t) {
          slot.tokens = t;
        },
      };
      const again = `give a new refresh token (${settings.source})`;
      return machine(
        new HeadlessProvider(slot, server, deps, again, settings.scope),
        settings.scope,
        server,
        again,
      );
    }
    case "stored":
      return await storedAuth(server, settings.storeDir, deps, settings.scope);
  }
}

/**
 * The authorization of credentials held in memory: the SDK's flow, with the configured `scope`
 * asked for when the server's challenge names none (the SDK would ask for every scope the
 * resource's metadata lists).
 */
function machine(
  provider: OAuthClientProvider,
  scope: string | undefined,
  server: string,
  again: string,
): ConnectionAuth {
  // The scope of the last token request, to name it when the authorization server refuses it
  // (a step-up these credentials cannot get: `invalid_scope`).
  let asked: string | undefined;
  const prepare = provider.prepareTokenRequest?.bind(provider);
  if (prepare) {
    provider.prepareTokenRequest = (s) => {
      asked = s;
      return prepare(s);
    };
  }
  // DPoP once the server asks for it (`dpop.ts`); a headless provider brings its own switch
  const dpop = provider instanceof HeadlessProvider ? provider.dpopSwitch : new DpopSwitch();
  if (!(provider instanceof HeadlessProvider)) provider.dpop = () => dpop.session();
  const adapter: AuthProvider = {
    token: async () => (await provider.tokens())?.access_token || undefined,
    onUnauthorized: async (ctx) => {
      if (challengesDpop(ctx.response)) dpop.enable();
      const challenge = extractWWWAuthenticateParams(ctx.response);
      await authorize(
        provider,
        {
          serverUrl: ctx.serverUrl,
          resourceMetadataUrl: challenge.resourceMetadataUrl,
          scope: challenge.scope ?? scope,
          fetchFn: ctx.fetchFn,
        },
        server,
        again,
      );
    },
  };
  return {
    provider,
    install: (transport) => replaceAdapter(transport, adapter),
    explain: (e) =>
      e instanceof OAuthError && e.code === OAuthErrorCode.InvalidScope && asked
        ? `the authorization server did not grant scope '${asked}' to these credentials`
        : undefined,
  };
}

/** The SDK machine providers' stand-in issuer when the settings pin none (see `unpinned`). */
const UNPINNED = "https://unpinned.agent-block.invalid";

/** The kinds whose credentials go to whichever authorization server the MCP server names, unless pinned. */
const UNPINNED_KINDS: ReadonlySet<McpAuth["kind"]> = new Set([
  "client_credentials",
  "refresh_token",
  "private_key_jwt",
  "cross_app",
  "jwt_bearer",
]);

/**
 * `p` (an SDK machine provider built with `UNPINNED` when the settings name no issuer) bound to
 * no issuer again, as the SDK binds it when given none: its client information's `issuer` is
 * where the SDK keeps it (`_clientInfo`, pinned SDK version; `tests/host/mcp/oauth_test.ts`
 * checks both ways). The stand-in keeps the SDK's console warning out of the run's stderr; the
 * run's own logger says it instead (`connectionAuth`).
 */
function unpinned<P extends OAuthClientProvider>(p: P): P {
  const info = (p as unknown as { _clientInfo?: { issuer?: string } })._clientInfo;
  if (info?.issuer === UNPINNED) delete info.issuer;
  return p;
}

/** What to do when configured machine credentials are for another authorization server. */
const MACHINE_AGAIN = "configure credentials the new authorization server issued";

/**
 * The SDK's `auth()` for a 401, failing with what to do when it cannot authorize: the server now
 * names another authorization server than the one these credentials are bound to (SEP-2352: a
 * client is registered, and tokens issued, per authorization server, and none is presented to
 * another), which a headless run cannot answer — registering anew is pointless without a person
 * to approve the authorization that follows.
 */
async function authorize(
  provider: OAuthClientProvider,
  opts: Parameters<typeof auth>[1],
  server: string,
  again: string,
): Promise<void> {
  let r: Awaited<ReturnType<typeof auth>>;
  try {
    r = await auth(provider, opts);
  } catch (e) {
    if (e instanceof AuthorizationServerMismatchError) {
      throw new McpAuthError(
        `server ${server} now names the authorization server ${JSON.stringify(e.currentIssuer)}, and its ` +
          `credentials are bound to ${JSON.stringify(e.recordedIssuer)}: ${again}`,
      );
    }
    throw e;
  }
  if (r !== "AUTHORIZED") throw new UnauthorizedError();
}

/** Puts `adapter` where the SDK transport keeps its per-request token read and 401 handling. */
function replaceAdapter(transport: object, adapter: AuthProvider): void {
  (transport as { _authProvider?: AuthProvider })._authProvider = adapter;
}

/** `p` with every token it saves added to the run's secrets. */
function masking<P extends OAuthClientProvider>(p: P, deps: AuthDeps): P {
  const save = p.saveTokens.bind(p);
  p.saveTokens = (t, ctx) => {
    deps.secret(t.access_token);
    deps.secret(t.refresh_token);
    return save(t, ctx);
  };
  return p;
}

/** True when `server` has a stored login in `storeDir` (a file that cannot be used counts: it is reported). */
export async function hasStoredLogin(storeDir: string, server: string): Promise<boolean> {
  try {
    Deno.lstatSync(await entryPath(storeDir, server));
    return true;
  } catch {
    return false;
  }
}

/** The authorization of a stored login (see the module header). */
async function storedAuth(
  server: string,
  storeDir: string,
  deps: AuthDeps,
  scope?: string,
): Promise<ConnectionAuth> {
  const path = await entryPath(storeDir, server);
  const again = `log in again: agent-block mcp login ${server}`;
  const first = readEntry(path);
  if (!first) {
    throw new McpAuthError(
      `server ${server} has no stored login in ${storeDir}: agent-block mcp login ${server}`,
    );
  }
  let entry: TokenEntry = first;
  const learn = (e: TokenEntry) => {
    deps.secret(e.client.client_secret);
    deps.secret(e.tokens.access_token);
    deps.secret(e.tokens.refresh_token);
  };
  learn(entry);
  let readOnly = false;
  // A login made with DPoP signs with its key; one made without gets a key of its own once the
  // server asks, kept in the entry with the tokens it binds (`save`).
  let dpopKey: StoredDpopKey | undefined = entry.dpop_key;
  if (dpopKey?.d) deps.secret(dpopKey.d);
  const dpop = new DpopSwitch(async () => {
    if (dpopKey) {
      try {
        return await importDpopKey(dpopKey);
      } catch (e) {
        throw new McpAuthError(`the token file ${path}: ${(e as Error).message}: ${again}`);
      }
    }
    const made = await newStorableDpopKey();
    dpopKey = made.key;
    if (dpopKey.d) deps.secret(dpopKey.d);
    return made.session;
  }, dpopKey !== undefined);
  const slot: TokenSlot = {
    get client() {
      return entry.client;
    },
    get tokens() {
      return entry.tokens;
    },
    save(tokens) {
      entry = { ...entry, tokens, ...(dpopKey ? { dpop_key: dpopKey } : {}), saved_at: Date.now() };
      if (readOnly) return;
      try {
        writeEntry(path, entry);
      } catch (e) {
        // A read-only store (a sandboxed run): the refreshed tokens serve this run only.
        readOnly = true;
        deps.debug(`mcp: ${(e as Error).message}; the refreshed tokens are kept for this run only`);
      }
    },
  };
  const provider = new HeadlessProvider(slot, server, deps, again, scope, dpop);
  /** The access token last handed to the transport (what a 401 refused). */
  let sent: string | undefined;
  const adapter: AuthProvider = {
    token: () => {
      const t = provider.tokens();
      sent = t && !expired(t as StoredTokens) && t.access_token ? t.access_token : undefined;
      return Promise.resolve(sent);
    },
    onUnauthorized: async (ctx) => {
      if (challengesDpop(ctx.response)) dpop.enable();
      const refused = sent;
      await withEntryLock(path, async () => {
        // A read-only store holds nothing newer than this run's memory.
        const now = readOnly ? undefined : readEntry(path);
        if (now) {
          learn(now);
          const theirs = now.tokens.access_token !== refused &&
            now.tokens.access_token !== entry.tokens.access_token;
          entry = now;
          // Another run refreshed meanwhile: use its tokens (its refresh token may have rotated ours away).
          if (theirs && !expired(now.tokens)) return;
        }
        const challenge = extractWWWAuthenticateParams(ctx.response);
        await authorize(
          provider,
          {
            serverUrl: ctx.serverUrl,
            resourceMetadataUrl: challenge.resourceMetadataUrl,
            scope: challenge.scope ?? scope ?? entry.tokens.scope,
            fetchFn: ctx.fetchFn,
          },
          server,
          again,
        );
      });
    },
  };
  return {
    provider,
    install: (transport) => replaceAdapter(transport, adapter),
  };
}
