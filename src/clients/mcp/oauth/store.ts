/**
 * The MCP token store: what `agent-block mcp login` obtained for one server, kept on disk for
 * later runs, which use it and write back what they refresh.
 *
 * Owns the files under `<AGENT_BLOCK_HOME>/mcp-auth/` (`mcpAuthDir`): one JSON file per server
 * URL (its name a hash of the URL, so a URL never becomes a path), holding the server URL, the
 * resource and issuer the login was bound to, the client (as registered or pre-registered), the
 * tokens and when the access token expires, and the DPoP key the tokens are bound to when the
 * login used DPoP (`dpop.ts`). Also owns `McpAuthError`, the error of every
 * authorization failure of the client, and the permission rule of credential files.
 *
 * Invariants, and why:
 * - a file holding credentials (a token file, or a credentials file a server entry names) is
 *   used only when it is a regular file of this user that no one else may read or write (mode
 *   0600 or stricter): a file others can read has leaked already, and one others can write may
 *   have been planted. Such a file is refused with an error naming it and the fix, never used;
 * - writes are atomic (`writeAtomic`: a temporary file renamed over the old one) with mode 0600
 *   from the moment the file exists, so a reader sees the old entry or the new one, never half;
 * - a refresh holds the entry's lock (`withEntryLock`: `flock` on `<file>.lock`) from reading the
 *   refresh token to writing what it got, so two runs refreshing the same login at once do one
 *   refresh each in turn, and the second reads the first one's tokens instead of spending a
 *   refresh token the authorization server may already have rotated;
 * - nothing here prints or returns a token to a caller that lists (`listEntries` answers
 *   summaries without them).
 *
 * A sandboxed run finds this directory read-only (the sandbox launcher mounts it so): it may use
 * stored tokens, and a refresh it makes lives in its memory only.
 *
 * Imports nothing of the SDK: the CLI lists and removes entries without loading it.
 */
import { join } from "node:path";
import { writeAtomic } from "../../../util/fs.ts";

/** An authorization failure of the MCP client: what failed and what to do about it. */
export class McpAuthError extends Error {
  /** @param message what failed and what to do (never a token) */
  constructor(message: string) {
    super(message);
    this.name = "McpAuthError";
  }
}

/** The client an entry's tokens were issued to. */
export interface StoredClient {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method?: string;
  /** The redirect URI the client was registered with (a login's loopback callback). */
  redirect_uris?: string[];
  issuer?: string;
  [k: string]: unknown;
}

/** Tokens as stored (`expires_at`: epoch ms, computed from `expires_in` when saved). */
export interface StoredTokens {
  access_token: string;
  token_type: string;
  refresh_token?: string;
  scope?: string;
  expires_in?: number;
  expires_at?: number;
  issuer?: string;
  [k: string]: unknown;
}

/** One server's entry. */
export interface TokenEntry {
  version: 1;
  /** The server URL the login was made for (the key). */
  server: string;
  /** The resource the tokens are bound to (RFC 8707), when discovery named one. */
  resource?: string;
  /** The authorization server's issuer. */
  issuer?: string;
  client: StoredClient;
  tokens: StoredTokens;
  /** The DPoP key the tokens are bound to (`dpop.ts`: a private JWK), when the login used DPoP. */
  dpop_key?: JsonWebKey;
  /** When this entry was written, epoch ms. */
  saved_at: number;
}

/** What `mcp auth status` shows of an entry: never a token. */
export interface EntrySummary {
  file: string;
  server: string;
  issuer?: string;
  client_id: string;
  scope?: string;
  /** Epoch ms, when known. */
  expires_at?: number;
  refreshable: boolean;
  saved_at: number;
}

/** The store key of a server URL: the URL without its fragment (a query is part of the endpoint). */
export function serverKey(url: string): string {
  const u = new URL(url);
  u.hash = "";
  return u.href;
}

/** The entry file of `url` in the store `dir`. */
export async function entryPath(dir: string, url: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(serverKey(url))),
  );
  const hex = [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return join(dir, `${hex}.json`);
}

/**
 * Refuses a credential file others may read or write, or that is not this user's regular file
 * (see the module header). `what` names the file's kind in the message.
 */
export function checkPrivateFile(path: string, what: string): void {
  const st = Deno.lstatSync(path);
  if (!st.isFile) throw new McpAuthError(`${what} ${path} is not a regular file; refused`);
  if (Deno.build.os === "windows") return; // no POSIX modes to check there
  const mode = (st.mode ?? 0) & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new McpAuthError(
      `${what} ${path} has mode ${mode.toString(8).padStart(4, "0")}: it must be readable and ` +
        `writable by its owner only (chmod 600 ${path}); refused`,
    );
  }
  const uid = Deno.uid();
  if (uid !== null && st.uid !== uid) {
    throw new McpAuthError(`${what} ${path} belongs to user ${st.uid}, not to this user (${uid}); refused`);
  }
}

/** The entry in `path`, or undefined when there is none. Throws `McpAuthError` for a bad file. */
export function readEntry(path: string): TokenEntry | undefined {
  try {
    Deno.lstatSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw new McpAuthError(`cannot read the token file ${path}: ${(e as Error).message}`);
  }
  checkPrivateFile(path, "the token file");
  let data: unknown;
  try {
    data = JSON.parse(Deno.readTextFileSync(path));
  } catch {
    // The parser's message quotes the text, which holds tokens: not repeated.
    throw new McpAuthError(
      `the token file ${path} is not valid JSON; log in again ` +
        `(agent-block mcp login URL), which replaces it`,
    );
  }
  const why = entryProblem(data);
  if (why) throw new McpAuthError(`the token file ${path}: ${why}; log in again (agent-block mcp login URL)`);
  return data as TokenEntry;
}

function entryProblem(data: unknown): string | undefined {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return "not a JSON object";
  const e = data as Record<string, unknown>;
  if (e.version !== 1) return `unknown version ${JSON.stringify(e.version)} (this agent-block reads 1)`;
  if (typeof e.server !== "string") return "field 'server' must be a string";
  const c = e.client as Record<string, unknown> | undefined;
  if (typeof c !== "object" || c === null || typeof c.client_id !== "string") {
    return "field 'client.client_id' must be a string";
  }
  const t = e.tokens as Record<string, unknown> | undefined;
  if (typeof t !== "object" || t === null || typeof t.access_token !== "string") {
    return "field 'tokens.access_token' must be a string";
  }
  if (t.expires_at !== undefined && typeof t.expires_at !== "number") {
    return "field 'tokens.expires_at' must be a number";
  }
  const k = e.dpop_key as Record<string, unknown> | undefined;
  if (k !== undefined && (typeof k !== "object" || k === null || typeof k.d !== "string")) {
    return "field 'dpop_key' must be a private JWK";
  }
  return undefined;
}

/** Writes `entry` to `path` atomically, mode 0600, creating the store directory (0700) first. */
export function writeEntry(path: string, entry: TokenEntry): void {
  const dir = join(path, "..");
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    writeAtomic(path, JSON.stringify(entry, null, 2) + "\n", { mode: 0o600 });
  } catch (e) {
    throw new McpAuthError(`cannot write the token file ${path}: ${(e as Error).message}`);
  }
}

/** Tokens with `expires_at` set from `expires_in` (seconds from `now`), when the server gave one. */
export function stamped(tokens: StoredTokens, now = Date.now()): StoredTokens {
  return typeof tokens.expires_in === "number"
    ? { ...tokens, expires_at: now + tokens.expires_in * 1000 }
    : tokens;
}

/** True when the entry's access token is known to have expired (30 s early, for the clock and the trip). */
export function expired(tokens: StoredTokens, now = Date.now()): boolean {
  return typeof tokens.expires_at === "number" && tokens.expires_at - 30_000 <= now;
}

/**
 * Runs `fn` holding the exclusive lock of the entry `path` (`<path>.lock`, created 0600 beside
 * it). Where the lock file cannot be created (a read-only store: a sandboxed run), `fn` runs
 * without it: nothing is written there either.
 */
export async function withEntryLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  let f: Deno.FsFile | undefined;
  try {
    f = await Deno.open(`${path}.lock`, { read: true, write: true, create: true, mode: 0o600 });
  } catch {
    f = undefined;
  }
  if (!f) return await fn();
  try {
    await f.lock(true);
    return await fn();
  } finally {
    f.close(); // closing releases the lock
  }
}

/** Removes the entry of `url`; true when there was one. */
export async function removeEntry(dir: string, url: string): Promise<boolean> {
  const path = await entryPath(dir, url);
  let had = true;
  try {
    Deno.removeSync(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) {
      throw new McpAuthError(`cannot remove the token file ${path}: ${(e as Error).message}`);
    }
    had = false;
  }
  try {
    Deno.removeSync(`${path}.lock`);
  } catch { /* none, or in use: harmless */ }
  return had;
}

/** Summaries of every entry in `dir` (files that cannot be used are reported, not thrown). */
export function listEntries(dir: string): (EntrySummary | { file: string; problem: string })[] {
  let names: string[];
  try {
    names = [...Deno.readDirSync(dir)].filter((d) => d.name.endsWith(".json")).map((d) => d.name).sort();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw new McpAuthError(`cannot read the token store ${dir}: ${(e as Error).message}`);
  }
  return names.map((name) => {
    const file = join(dir, name);
    try {
      const e = readEntry(file)!;
      return {
        file,
        server: e.server,
        issuer: e.issuer,
        client_id: e.client.client_id,
        scope: e.tokens.scope,
        expires_at: e.tokens.expires_at,
        refreshable: typeof e.tokens.refresh_token === "string",
        saved_at: e.saved_at,
      };
    } catch (err) {
      return { file, problem: (err as Error).message };
    }
  });
}
