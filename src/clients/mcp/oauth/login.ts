/**
 * The interactive login to an MCP server (`agent-block mcp login URL`): the authorization code
 * flow with PKCE, once, on a workstation; the tokens go to the store for later runs.
 *
 * Owns the loopback side of it: a one-shot HTTP listener on `127.0.0.1` (a free port) whose
 * `/callback` receives the authorization response, the provider the SDK drives (client metadata
 * with that redirect URI, the PKCE verifier, `state`, the discovery state between the two legs,
 * a pre-registered client or the one dynamic registration returns, or a client ID metadata
 * document URL), and the entry written at the end. The SDK does discovery (from the server's
 * `401` `WWW-Authenticate` and the well-known documents), registration, PKCE, the `iss` check
 * and the token request (`auth`); when the server's challenge offers the `DPoP` scheme, the
 * tokens are bound to a key made for the login and kept in its entry (`dpop.ts`).
 *
 * Invariants: the listener binds 127.0.0.1 only and stops when the login ends, either way; a
 * callback whose `state` is not the one sent is refused (and the login goes on waiting until its
 * deadline); the authorization URL is handed to `open` (print it, start a browser), nothing else
 * sees it; no token is ever handed to `say`.
 */
import {
  auth,
  extractWWWAuthenticateParams,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import {
  entryPath,
  McpAuthError,
  serverKey,
  stamped,
  type StoredTokens,
  type TokenEntry,
  writeEntry,
} from "./store.ts";
import { challengesDpop, newStorableDpopKey } from "./dpop.ts";

/** What a login needs. */
export interface LoginOptions {
  /** The MCP server URL. */
  url: string;
  /** The token store directory. */
  storeDir: string;
  /** Scope to ask for (default: what the server's metadata says). */
  scope?: string;
  /** A pre-registered client (else the client registers itself, or uses `clientMetadataUrl`). */
  clientId?: string;
  clientSecret?: string;
  /** An https URL of a client ID metadata document, for servers that accept one. */
  clientMetadataUrl?: string;
  /** Shows the authorization URL to the user (prints it, opens a browser). */
  open: (authorizationUrl: string) => void | Promise<void>;
  /** How long to wait for the browser to come back, ms. */
  timeoutMs: number;
}

/** The loopback listener that receives the authorization response. */
function callbackListener(state: string, deadlineMs: number) {
  let settle!: (params: URLSearchParams) => void;
  let fail!: (e: Error) => void;
  const got = new Promise<URLSearchParams>((res, rej) => {
    settle = res;
    fail = rej;
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const u = new URL(req.url);
    if (u.pathname !== "/callback") return new Response("not found", { status: 404 });
    if (u.searchParams.get("state") !== state) {
      return new Response("This response does not belong to the login in progress.", { status: 400 });
    }
    settle(u.searchParams);
    const ok = !u.searchParams.has("error");
    return new Response(
      ok
        ? "agent-block: logged in. You can close this window."
        : "agent-block: the login failed; see the terminal.",
      { headers: { "content-type": "text/plain; charset=utf-8" } },
    );
  });
  const timer = setTimeout(
    () => fail(new McpAuthError(`no answer from the browser within ${Math.round(deadlineMs / 1000)} s`)),
    deadlineMs,
  );
  return {
    redirectUrl: `http://127.0.0.1:${server.addr.port}/callback`,
    got,
    async close() {
      clearTimeout(timer);
      await server.shutdown();
    },
  };
}

/** Logs in to `opts.url` and stores the tokens; answers the entry written. */
export async function login(opts: LoginOptions): Promise<{ entry: TokenEntry; file: string }> {
  const state = crypto.randomUUID();
  const listener = callbackListener(state, opts.timeoutMs);
  try {
    return await loginWith(opts, state, listener.redirectUrl, listener.got);
  } finally {
    await listener.close();
  }
}

async function loginWith(
  opts: LoginOptions,
  state: string,
  redirectUrl: string,
  callback: Promise<URLSearchParams>,
): Promise<{ entry: TokenEntry; file: string }> {
  const server = serverKey(opts.url);
  let client: StoredOAuthClientInformation | undefined = opts.clientId
    ? {
      client_id: opts.clientId,
      ...(opts.clientSecret ? { client_secret: opts.clientSecret } : {}),
      redirect_uris: [redirectUrl],
    } as StoredOAuthClientInformation
    : undefined;
  let tokens: StoredOAuthTokens | undefined;
  let verifier: string | undefined;
  let discovery: OAuthDiscoveryState | undefined;
  let resource: string | undefined;
  let issuer: string | undefined;
  const metadata: OAuthClientMetadata = {
    client_name: "agent-block",
    redirect_uris: [redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: opts.clientSecret ? "client_secret_basic" : "none",
    ...(opts.scope ? { scope: opts.scope } : {}),
  };
  const provider: OAuthClientProvider = {
    redirectUrl,
    clientMetadata: metadata,
    ...(opts.clientMetadataUrl ? { clientMetadataUrl: opts.clientMetadataUrl } : {}),
    state: () => state,
    clientInformation: () => client,
    saveClientInformation: (info) => {
      client = info;
    },
    tokens: () => tokens,
    saveTokens: (t) => {
      tokens = t;
    },
    redirectToAuthorization: (u) => opts.open(u.href),
    saveCodeVerifier: (v) => {
      verifier = v;
    },
    codeVerifier: () => {
      if (verifier === undefined) throw new McpAuthError("no PKCE verifier: the login did not start");
      return verifier;
    },
    saveDiscoveryState: (d) => {
      discovery = d;
    },
    discoveryState: () => discovery,
    saveResourceUrl: (r) => {
      resource = r;
    },
    saveAuthorizationServerUrl: (i) => {
      issuer = i;
    },
  };
  // The server's own challenge first: its 401 names the resource metadata and the scope, and
  // whether it takes DPoP-bound tokens (then the tokens are bound to a key kept in the entry).
  const challenge = await probe(server);
  const scope = opts.scope ?? challenge.scope;
  const dpop = challenge.dpop ? await newStorableDpopKey() : undefined;
  if (dpop) provider.dpop = () => dpop.session;
  const first = await auth(provider, {
    serverUrl: server,
    resourceMetadataUrl: challenge.resourceMetadataUrl,
    scope,
  });
  if (first !== "AUTHORIZED") {
    const params = await callback;
    const error = params.get("error");
    if (error) {
      const why = params.get("error_description");
      throw new McpAuthError(`the authorization server refused the login: ${error}${why ? ` (${why})` : ""}`);
    }
    const code = params.get("code");
    if (!code) throw new McpAuthError("the authorization response has no code");
    const second = await auth(provider, {
      serverUrl: server,
      resourceMetadataUrl: challenge.resourceMetadataUrl,
      scope,
      authorizationCode: code,
      iss: params.get("iss") ?? undefined,
    });
    if (second !== "AUTHORIZED") throw new McpAuthError("the authorization server did not issue tokens");
  }
  if (!tokens || !client) throw new McpAuthError("the authorization server did not issue tokens");
  const entry: TokenEntry = {
    version: 1,
    server,
    ...(resource ? { resource } : {}),
    ...(issuer ? { issuer } : {}),
    client: { redirect_uris: [redirectUrl], ...client } as TokenEntry["client"],
    tokens: stamped(tokens as StoredTokens),
    ...(dpop ? { dpop_key: dpop.key } : {}),
    saved_at: Date.now(),
  };
  const file = await entryPath(opts.storeDir, server);
  writeEntry(file, entry);
  return { entry, file };
}

/** An unauthenticated first request in each era, the newest first (as a run's `auto` era tries them). */
const PROBES: readonly { headers: Record<string, string>; body: unknown }[] = [
  {
    // the 2026-07-28 wire: `server/discover`, the version in a header and in `_meta`
    headers: { "mcp-protocol-version": "2026-07-28" },
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "agent-block", version: "login" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    },
  },
  {
    headers: {},
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "agent-block", version: "login" },
      },
    },
  },
];

/**
 * The `WWW-Authenticate` challenge of the server's 401 to an unauthenticated first request: the
 * 2026-07-28 era's `server/discover`, then (when that is not answered 401: an older server, or one
 * that lets discovery through) the 2025 era's `initialize`; none when the server answers both
 * without one. The challenge's scope is what the runs' requests will be asked for, so the login
 * asks for it.
 */
async function probe(server: string): Promise<{ resourceMetadataUrl?: URL; scope?: string; dpop?: boolean }> {
  for (const p of PROBES) {
    let res: Response;
    try {
      res = await fetch(server, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...p.headers,
        },
        body: JSON.stringify(p.body),
      });
    } catch (e) {
      throw new McpAuthError(`cannot reach ${server}: ${(e as Error).message}`);
    }
    await res.body?.cancel();
    if (res.status !== 401) continue;
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res);
    return { resourceMetadataUrl, scope, dpop: challengesDpop(res) };
  }
  return {};
}
