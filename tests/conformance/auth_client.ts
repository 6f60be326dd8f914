/**
 * The MCP conformance suite's client harness for the `auth/*` scenarios: the suite starts its
 * authorization and MCP servers, then runs this program with the server URL as the last argument,
 * the scenario in `MCP_CONFORMANCE_SCENARIO` and its credentials (if any) in
 * `MCP_CONFORMANCE_CONTEXT`. Everything below drives agent-block itself, as a user would, through
 * the real CLI in subprocesses with a home of their own:
 * - machine credentials (the context has a client secret, a private key, a workload's JWT, or an
 *   enterprise IdP's ID token for cross-app access, and no login is possible): a run whose
 *   `mcp.connect_http` gets them as `opts.auth` (secrets through variables, as CI would pass them);
 * - otherwise `agent-block mcp login URL --no-browser` (pre-registered client from the context,
 *   else dynamic registration or the client ID metadata document URL the suite expects), this
 *   program playing the browser (it fetches the printed URL, following the authorization server's
 *   redirect to the login's loopback listener), then a run using the stored login;
 * - a run that fails saying to log in again — naming a scope the login lacks (`403
 *   insufficient_scope`), or because the server now names another authorization server — is
 *   answered as the message says (`mcp login`, with that `--scope` when it names one) and run
 *   again, at most twice.
 * The run lists the tools and calls each. Exit 0 when the run succeeded; the suite judges the rest.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../cli.ts", import.meta.url));
const CIMD_URL = "https://conformance-test.local/client-metadata.json";

const url = Deno.args.at(-1);
if (!url) {
  console.error("usage: auth_client.ts SERVER_URL");
  Deno.exit(2);
}
const scenario = Deno.env.get("MCP_CONFORMANCE_SCENARIO") ?? "";
const context = JSON.parse(Deno.env.get("MCP_CONFORMANCE_CONTEXT") ?? "{}") as Record<string, string>;
const home = Deno.makeTempDirSync({ prefix: "ab_conformance_" });
const env: Record<string, string> = {
  ...Deno.env.toObject(),
  AGENT_BLOCK_HOME: home,
  NO_COLOR: "1",
  CONF_SECRET: context.client_secret ?? "",
};

function say(line: string): void {
  console.error(`[auth_client ${scenario}] ${line}`);
}

/** `agent-block mcp login` with `args`, approving in the "browser". */
async function login(args: string[]): Promise<boolean> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, "mcp", "login", url!, "--no-browser", "--timeout", "20", ...args],
    env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let err = "";
  let opened = false;
  const dec = new TextDecoder();
  for await (const chunk of child.stderr) {
    err += dec.decode(chunk, { stream: true });
    const m = /^\s+(https?:\/\/\S+)$/m.exec(err);
    if (m && !opened) {
      opened = true;
      // The browser: the authorization server approves at once and redirects to the callback.
      const r = await fetch(m[1]).catch((e) => new Response(String(e), { status: 599 }));
      await r.body?.cancel();
    }
  }
  const { code } = await child.status;
  say(`mcp login ${args.join(" ")} → exit ${code}\n${err.trim()}`);
  return code === 0;
}

/** A run connecting with `auth` (a Lua expression), listing and calling the tools. */
async function run(auth: string): Promise<{ ok: boolean; message: string }> {
  const dir = Deno.makeTempDirSync({ dir: home, prefix: "run_" });
  Deno.writeTextFileSync(
    join(dir, "main.lua"),
    `
local ok, err = pcall(mcp.connect_http, "s", ${JSON.stringify(url)}, { auth = ${auth} })
if not ok then return std.json.encode({ ok = false, message = tostring(err) }) end
local tools = mcp.list_tools("s")
if not tools.ok then return std.json.encode({ ok = false, message = tools.error }) end
for _, t in ipairs(tools.tools) do
  local r = mcp.call("s", t.name, {})
  if not r.ok then return std.json.encode({ ok = false, message = r.error }) end
end
return std.json.encode({ ok = true, message = #tools.tools .. " tool(s) called" })
`,
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, "-s", "main.lua", "-p", dir, "--result", join(dir, "out.json")],
    cwd: dir,
    env,
    stdin: "null",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr).trim();
  try {
    const r = JSON.parse(Deno.readTextFileSync(join(dir, "out.json"))) as { ok: boolean; message: string };
    say(`run → ${r.ok ? "ok" : "failed"}: ${r.message}${stderr ? `\n${stderr}` : ""}`);
    return r;
  } catch {
    say(`run → exit ${out.code}: ${stderr}`);
    return { ok: false, message: stderr };
  }
}

async function main(): Promise<number> {
  if (context.private_key_pem) {
    env.CONF_KEY = context.private_key_pem;
    return (await run(
        `{ client_id = ${JSON.stringify(context.client_id)}, private_key_env = "CONF_KEY", alg = ${
          JSON.stringify(context.signing_algorithm ?? "ES256")
        } }`,
      )).ok
      ? 0
      : 1;
  }
  if (scenario === "auth/client-credentials-basic") {
    return (await run(
        `{ client_id = ${JSON.stringify(context.client_id)}, client_secret_env = "CONF_SECRET" }`,
      )).ok
      ? 0
      : 1;
  }
  if (context.valid_jwt) {
    // workload identity: the platform's JWT, as CI hands it over (a variable)
    env.CONF_JWT = context.valid_jwt;
    return (await run(`{ client_id = ${JSON.stringify(context.client_id)}, assertion_env = "CONF_JWT" }`)).ok
      ? 0
      : 1;
  }
  if (context.idp_id_token) {
    env.CONF_ID_TOKEN = context.idp_id_token;
    return (await run(`{ client_id = ${JSON.stringify(context.client_id)}, client_secret_env = "CONF_SECRET",
      id_token_env = "CONF_ID_TOKEN", idp_client_id = ${JSON.stringify(context.idp_client_id)},
      idp_token_endpoint = ${JSON.stringify(context.idp_token_endpoint)} }`)).ok
      ? 0
      : 1;
  }
  const loginArgs = context.client_id
    ? [
      "--client-id",
      context.client_id,
      ...(context.client_secret ? ["--client-secret-env", "CONF_SECRET"] : []),
    ]
    : ["--client-metadata-url", CIMD_URL];
  if (!await login(loginArgs)) return 1;
  for (let attempt = 0;; attempt++) {
    const r = await run(`"login"`);
    if (r.ok) return 0;
    // the run says what a person would do: log in again (with a wider scope, when it names one)
    if (!/log in again: agent-block mcp login/.test(r.message) || attempt >= 2) return 1;
    const wider = /--scope '([^']+)'/.exec(r.message);
    if (!await login(wider ? [...loginArgs, "--scope", wider[1]] : loginArgs)) return 1;
  }
}

const code = await main();
Deno.removeSync(home, { recursive: true });
Deno.exit(code);
