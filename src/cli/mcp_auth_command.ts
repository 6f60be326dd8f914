/**
 * `agent-block mcp login URL`, `mcp logout URL` and `mcp auth status`: the stored OAuth logins
 * of remote MCP servers (`src/clients/mcp/oauth/`).
 *
 * Owns the flags, the wording and the exit codes of the three commands (0 done; 1 the login or a
 * store operation failed, with the reason; 2 a command line that does not parse). This is an
 * edge: the environment (the process's with `<project>/.env`) is read here once, for
 * `AGENT_BLOCK_HOME` (where the store is) and the variable `--client-secret-env` names.
 *
 * `login` prints the authorization URL on stderr and opens a browser when there is a display
 * (not with `--no-browser`), then waits for the browser to come back to its loopback listener
 * (`--timeout`, default 300 s). `auth status` lists what is stored — server, issuer, client,
 * scope, expiry, whether it can be refreshed — never a token. `logout` forgets the login
 * (the tokens are not revoked at the server).
 */
import { agentBlockHome } from "../config/env_settings.ts";
import { parseFlags } from "./args.ts";
import { resolve } from "node:path";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { edgeEnvironment } from "./environment.ts";
import { mcpAuthDir } from "../home.ts";
import { writeStderr, writeStdout } from "../obs/log.ts";
import { VERSION } from "../version.ts";
import { listEntries, McpAuthError, removeEntry, serverKey } from "../clients/mcp/oauth/store.ts";

export const MCP_AUTH_HELP = `agent-block ${VERSION} mcp login | logout | auth status — stored MCP logins

Usage:
  agent-block mcp login URL [--scope "a b"] [--client-id ID [--client-secret-env VAR]]
                            [--client-metadata-url URL] [--no-browser] [--timeout SECS] [-p DIR]
  agent-block mcp logout URL [-p DIR]
  agent-block mcp auth status [--json] [-p DIR]

login runs the OAuth authorization code flow with PKCE once (a loopback listener on 127.0.0.1
receives the answer; the URL to open is printed on stderr, and a browser is started when there
is a display) and stores the tokens in $AGENT_BLOCK_HOME/mcp-auth/ (mode 0600, one file per
server). Runs connecting to URL use them and refresh them; when a refresh is refused they fail
saying to log in again. Without --client-id the client registers itself (dynamic client
registration), or uses --client-metadata-url where the server accepts client ID metadata
documents.

Options:
  -p, --project DIR            the project whose .env is read (default .)
      --scope SCOPE            scope to ask for (default: what the server says it needs)
      --client-id ID           a client registered with the authorization server beforehand
      --client-secret-env VAR  its secret, from the variable VAR (environment or .env)
      --client-metadata-url U  an https URL of this client's metadata document
      --no-browser             only print the URL
      --timeout SECS           how long to wait for the browser (default 300)
      --json                   auth status: one JSON object per line
  -h, --help                   print this help
`;

/** The three commands' names, as the first argument of `agent-block mcp`. */
export const MCP_AUTH_COMMANDS = ["login", "logout", "auth"] as const;

/** Runs `agent-block mcp login|logout|auth ...`; returns the exit code. */
export async function mcpAuthCommand(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const parsed = parseFlags(rest, {
    project: { type: "string", short: "p" },
    scope: { type: "string" },
    "client-id": { type: "string" },
    "client-secret-env": { type: "string" },
    "client-metadata-url": { type: "string" },
    "no-browser": { type: "boolean" },
    timeout: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  }, { allowPositionals: true, command: `mcp ${command}` });
  const v = parsed.values as Record<string, string | boolean | undefined>;
  if (v.help) {
    writeStdout(new TextEncoder().encode(MCP_AUTH_HELP));
    return EXIT.OK;
  }
  const edge = await edgeEnvironment(typeof v.project === "string" ? v.project : ".");
  for (const w of edge.warnings) say(`[warn] ${w}`);
  const storeDir = mcpAuthDir(resolve(edge.cwd, agentBlockHome(edge.env, edge.cwd)));
  try {
    if (command === "auth") {
      if (parsed.positionals[0] !== "status" || parsed.positionals.length !== 1) {
        throw new UsageError("mcp auth: the one subcommand is 'status' (agent-block mcp auth status)");
      }
      return status(storeDir, v.json === true);
    }
    const url = oneUrl(command, parsed.positionals);
    if (command === "logout") {
      const had = await removeEntry(storeDir, url);
      say(
        had
          ? `agent-block mcp logout: forgot the login of ${url}`
          : `agent-block mcp logout: no login stored for ${url}`,
      );
      return EXIT.OK;
    }
    return await loginCommand(url, storeDir, v, edge.env);
  } catch (e) {
    if (e instanceof AgentBlockError) throw e;
    // The SDK's OAuth errors (a refused registration, an issuer mismatch, ...) are the login's failure.
    if (e instanceof McpAuthError || e instanceof Error) {
      throw new AgentBlockError(
        `mcp ${command}: ${e instanceof McpAuthError ? "" : `${(e as Error).name}: `}${e.message}`,
      );
    }
    throw e;
  }
}

function oneUrl(command: string, positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError(`mcp ${command}: give the server's URL (one)`);
  try {
    const u = new URL(positionals[0]);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    return serverKey(u.href);
  } catch {
    throw new UsageError(`mcp ${command}: '${positionals[0]}' is not an http(s) URL`);
  }
}

async function loginCommand(
  url: string,
  storeDir: string,
  v: Record<string, string | boolean | undefined>,
  env: Record<string, string>,
): Promise<number> {
  let timeoutMs = 300_000;
  if (typeof v.timeout === "string") {
    const n = Number(v.timeout);
    if (!(n > 0)) {
      throw new UsageError(`mcp login: --timeout must be a positive number of seconds, got '${v.timeout}'`);
    }
    timeoutMs = n * 1000;
  }
  const clientId = typeof v["client-id"] === "string" ? v["client-id"] : undefined;
  const secretVar = typeof v["client-secret-env"] === "string" ? v["client-secret-env"] : undefined;
  if (secretVar !== undefined && clientId === undefined) {
    throw new UsageError("mcp login: --client-secret-env needs --client-id (the secret of which client?)");
  }
  let clientSecret: string | undefined;
  if (secretVar !== undefined) {
    clientSecret = Object.hasOwn(env, secretVar) ? env[secretVar] : undefined;
    if (!clientSecret) {
      throw new AgentBlockError(`mcp login: --client-secret-env names ${secretVar}, which is not set`);
    }
  }
  const browser = v["no-browser"] !== true;
  const { login } = await import("../clients/mcp/oauth/login.ts");
  const { entry, file } = await login({
    url,
    storeDir,
    scope: typeof v.scope === "string" ? v.scope : undefined,
    clientId,
    clientSecret,
    clientMetadataUrl: typeof v["client-metadata-url"] === "string" ? v["client-metadata-url"] : undefined,
    timeoutMs,
    open: (u) => {
      say(`agent-block mcp login: open this URL in a browser to log in to ${url}:\n  ${u}`);
      if (browser) openBrowser(u, env);
    },
  });
  const t = entry.tokens;
  say(
    `agent-block mcp login: logged in to ${url}` + (t.scope ? ` (scope: ${t.scope})` : "") +
      (t.expires_at ? `; the access token expires ${new Date(t.expires_at).toISOString()}` : "") +
      (t.refresh_token ? ", refreshable" : ", not refreshable") + `; stored in ${file}`,
  );
  return EXIT.OK;
}

function status(storeDir: string, json: boolean): number {
  const rows = listEntries(storeDir);
  const out: string[] = [];
  const now = Date.now();
  for (const r of rows) {
    if ("problem" in r) {
      out.push(json ? JSON.stringify({ file: r.file, problem: r.problem }) : `${r.file}: ${r.problem}`);
      continue;
    }
    if (json) {
      out.push(JSON.stringify({
        server: r.server,
        issuer: r.issuer ?? null,
        client_id: r.client_id,
        scope: r.scope ?? null,
        expires_at: r.expires_at === undefined ? null : new Date(r.expires_at).toISOString(),
        expired: r.expires_at !== undefined && r.expires_at <= now,
        refreshable: r.refreshable,
        file: r.file,
      }));
      continue;
    }
    const exp = r.expires_at === undefined
      ? "no expiry given"
      : `${r.expires_at <= now ? "expired" : "expires"} ${new Date(r.expires_at).toISOString()}`;
    out.push(
      `${r.server}\n  issuer ${r.issuer ?? "(unknown)"}; client ${r.client_id}; scope ${
        r.scope ?? "(none)"
      }\n` +
        `  ${exp}; ${r.refreshable ? "refreshable" : "not refreshable"}; ${r.file}`,
    );
  }
  if (!json && out.length === 0) out.push(`no MCP logins stored in ${storeDir}`);
  writeStdout(new TextEncoder().encode(out.join("\n") + (out.length ? "\n" : "")));
  return EXIT.OK;
}

function say(line: string): void {
  writeStderr(new TextEncoder().encode(line + "\n"));
}

/** Starts the platform's browser on `url` where there is a display; failures are ignored (the URL is printed). */
function openBrowser(url: string, env: Record<string, string>): void {
  const os = Deno.build.os;
  const cmd = os === "darwin"
    ? ["open", url]
    : os === "windows"
    ? ["cmd", "/c", "start", "", url]
    : env.DISPLAY || env.WAYLAND_DISPLAY
    ? ["xdg-open", url]
    : undefined;
  if (!cmd) return;
  try {
    const child = new Deno.Command(cmd[0], {
      args: cmd.slice(1),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    })
      .spawn();
    child.status.catch(() => {});
  } catch {
    // no such program: the printed URL is the way
  }
}
