/**
 * `opts.auth` of `mcp.connect_http` (and of an `mcp_servers` entry's `transport_opts`): the Lua
 * value turned into the client's typed OAuth settings (`clients/mcp/oauth/settings.ts`).
 *
 * Owns the Lua-side shapes:
 * - `"login"`: the login `agent-block mcp login URL` stored (an error when there is none; without
 *   `auth` such a login is used when it exists, and nothing when it does not);
 * - a table of fields (`client_id`, `client_secret`, `private_key` + `alg`, `refresh_token`,
 *   `assertion`, each also as `*_env` naming a variable of the run's environment, `.env`
 *   included; `assertion_file`, relative to the run's working directory; `method`, `scope`,
 *   `issuer`), or `credentials_file`: a JSON file of the same fields, relative to the run's
 *   working directory, readable by its owner only (mode 0600) — fields of the table override the
 *   file's.
 * Variables are read from the run's environment (`run.env`), never the process's; the store is
 * `<the run's AGENT_BLOCK_HOME>/mcp-auth`.
 *
 * Errors: `McpAuthError` (a connect failure of kind `auth`, so `required = false` applies) naming
 * the field, the variable or the file; never a secret.
 */
import { mcpAuthDir } from "../../home.ts";
import type { RunContext } from "../context.ts";
import { AuthSettingsError, type McpAuth, parseAuthFields } from "../../clients/mcp/oauth/settings.ts";
import { checkPrivateFile, McpAuthError } from "../../clients/mcp/oauth/store.ts";
import { luaTypeName } from "../../json/values.ts";

/** The OAuth settings `value` (the `auth` field) asks for, or undefined for none. */
export function authOption(
  value: unknown,
  run: Pick<RunContext, "env" | "resolve" | "home">,
  fn: string,
): McpAuth | undefined {
  if (value === undefined) return undefined;
  const where = `${fn}: opts.auth`;
  if (value === "login") return { kind: "stored", storeDir: mcpAuthDir(run.home) };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new McpAuthError(
      `${where} must be "login" or a table of client credentials, got ${luaTypeName(value)}`,
    );
  }
  let fields = { ...(value as Record<string, unknown>) };
  const file = fields.credentials_file;
  delete fields.credentials_file;
  let fromWhere = where;
  if (file !== undefined) {
    if (typeof file !== "string" || file === "") {
      throw new McpAuthError(`${where} field 'credentials_file' must be a non-empty path`);
    }
    const path = run.resolve(file);
    fromWhere = `the credentials file ${path}`;
    fields = { ...readCredentialsFile(path), ...fields };
  }
  try {
    const auth = parseAuthFields(fields, fromWhere, (name) => run.env.get(name));
    // the workload's token file, from the run's working directory as the credentials file is
    if (auth.kind === "jwt_bearer" && auth.assertionFile !== undefined) {
      return { ...auth, assertionFile: run.resolve(auth.assertionFile) };
    }
    return auth;
  } catch (e) {
    if (e instanceof AuthSettingsError) throw new McpAuthError(e.message);
    throw e;
  }
}

/** The fields of a credentials file (a JSON object), refused when others may read or write it. */
function readCredentialsFile(path: string): Record<string, unknown> {
  try {
    checkPrivateFile(path, "the credentials file");
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new McpAuthError(`the credentials file ${path} does not exist`);
    }
    throw e;
  }
  let data: unknown;
  try {
    data = JSON.parse(Deno.readTextFileSync(path));
  } catch {
    // The parser's message quotes the text, which holds secrets: not repeated.
    throw new McpAuthError(`the credentials file ${path} is not valid JSON`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new McpAuthError(`the credentials file ${path} must hold a JSON object`);
  }
  return data as Record<string, unknown>;
}
