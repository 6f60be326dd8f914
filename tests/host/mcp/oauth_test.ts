/**
 * `mcp.connect_http` against a server behind OAuth (the MCP authorization spec): a real
 * authorization server and a real MCP server requiring its bearer tokens, both on 127.0.0.1 in
 * this process (`tests/fixtures/mcp/oauth_world.ts`), and real runs. Machine credentials (client
 * credentials with a secret by Basic or in the body, from the script, a variable of the run's
 * environment or a credentials file; a refresh token), step-up on `403 insufficient_scope`, the
 * failures and their messages, and the run's secrets masking the tokens.
 * Stored logins (`mcp login`) are in tests/cli/mcp_login_test.ts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resultOf, runCli, runLua, tempDir, tempProject, testEnv } from "../../helpers.ts";
import { type OAuthWorld, startOAuthWorld } from "../../fixtures/mcp/oauth_world.ts";

async function withWorld(fn: (w: OAuthWorld, home: string) => Promise<void>): Promise<void> {
  const w = await startOAuthWorld();
  try {
    await fn(w, await tempDir("ab_oauth_home_"));
  } finally {
    await w.close();
  }
}

/** Runs `body` with `connect` (a Lua statement connecting server "s") first; the chunk returns JSON. */
function script(connect: string, body: string): string {
  return `
local ok, err = pcall(function() ${connect} end)
if not ok then
  return std.json.encode({ connected = false, message = tostring(err), kind = type(err) == "table" and err.kind or nil })
end
${body}
`;
}

const WHOAMI = `
local r = mcp.call("s", "whoami", {})
return std.json.encode({ connected = true, ok = r.ok, text = r.ok and r.content[1].text or r.error, kind = r.kind })
`;

Deno.test("mcp oauth: client credentials, secret from the run's environment, client_secret_basic by default", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "ci-bot", secret: "s3cret-value-123", scope: "read admin" });
    const r = await runLua(
      script(
        `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "ci-bot", client_secret_env = "BOT_SECRET", scope = "read" } })`,
        WHOAMI,
      ),
      { env: testEnv({ AGENT_BLOCK_HOME: home, BOT_SECRET: "s3cret-value-123" }) },
    );
    const out = resultOf(r);
    assert.equal(out.connected, true, out.message);
    assert.equal(out.text, "ci-bot read");
    assert.equal(w.grants.client_credentials, 1);
    assert.equal(w.lastAuthMethod, "client_secret_basic");
  });
});

Deno.test("mcp oauth: credentials with no 'issuer' get one warning through the run's logger, none from the SDK", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "svc", secret: "svc-secret" });
    const stderrOf = async (extra: string) => {
      const project = await tempProject({
        "main.lua":
          `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "svc", client_secret_env = "S"${extra} } })
local r = mcp.call("s", "whoami", {})
assert(r.ok, r.error)`,
      });
      const r = await runCli(["-s", "main.lua", "-p", project], {
        cwd: project,
        env: testEnv({ AGENT_BLOCK_HOME: home, S: "svc-secret" }),
      });
      assert.equal(r.code, 0, r.stderr);
      return r.stderr;
    };
    const open = await stderrOf("");
    assert.doesNotMatch(open, /mcp-sdk|expectedIssuer/, "the SDK's console line, in its own words");
    assert.equal(open.match(/auth names no 'issuer'/g)?.length, 1, open);
    assert.match(open, /\[warn\].*set issuer = /);
    const pinned = await stderrOf(`, issuer = "${w.issuer}"`);
    assert.doesNotMatch(pinned, /issuer/);
    // and the level is the run's: off says nothing
    const project = await tempProject({
      "main.lua":
        `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "svc", client_secret_env = "S" } })`,
    });
    const quiet = await runCli(["-s", "main.lua", "-p", project], {
      cwd: project,
      env: testEnv({ AGENT_BLOCK_HOME: home, S: "svc-secret", AGENT_BLOCK_LOG: "off" }),
    });
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, "");
  });
});

Deno.test("mcp oauth: client credentials with method client_secret_post, from a credentials file", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "poster", secret: "post-secret-456", method: "client_secret_post" });
    const project = await tempDir();
    const file = join(project, "creds.json");
    Deno.writeTextFileSync(
      file,
      JSON.stringify({ client_id: "poster", client_secret: "post-secret-456", method: "client_secret_post" }),
      { mode: 0o600 },
    );
    Deno.chmodSync(file, 0o600);
    const r = await runLua(
      script(`mcp.connect_http("s", "${w.mcpUrl}", { auth = { credentials_file = "creds.json" } })`, WHOAMI),
      { projectRoot: project, env: testEnv({ AGENT_BLOCK_HOME: home }) },
    );
    const out = resultOf(r);
    assert.equal(out.connected, true, out.message);
    // No scope configured and none in the 401: every scope the resource's metadata lists.
    assert.equal(out.text, "poster read,admin");
    assert.equal(w.lastAuthMethod, "client_secret_post");
  });
});

Deno.test("attack: mcp oauth credentials file others can read is refused, naming the file and the fix", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "poster", secret: "post-secret-456" });
    const project = await tempDir();
    const file = join(project, "creds.json");
    Deno.writeTextFileSync(file, JSON.stringify({ client_id: "poster", client_secret: "post-secret-456" }));
    Deno.chmodSync(file, 0o644);
    const r = await runLua(
      script(`mcp.connect_http("s", "${w.mcpUrl}", { auth = { credentials_file = "creds.json" } })`, WHOAMI),
      { projectRoot: project, env: testEnv({ AGENT_BLOCK_HOME: home }) },
    );
    const out = resultOf(r);
    assert.equal(out.connected, false);
    assert.equal(out.kind, "auth");
    assert.match(out.message, /credentials file .*creds\.json has mode 0644.*chmod 600/);
    assert.equal(w.grants.client_credentials, undefined, "nothing was sent to the authorization server");
  });
});

Deno.test("mcp oauth: a refresh token as machine credential is refreshed on the first 401", async () => {
  await withWorld(async (w, home) => {
    // A login made elsewhere: its refresh token handed to CI through the environment.
    w.addClient({ id: "cli-app", secret: "cli-app-secret", redirect: "http://127.0.0.1:1/callback" });
    const rt = await seedRefreshToken(w, "cli-app", "cli-app-secret");
    const r = await runLua(
      script(
        `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "cli-app", client_secret_env = "APP_SECRET", refresh_token_env = "APP_RT" } })`,
        WHOAMI,
      ),
      { env: testEnv({ AGENT_BLOCK_HOME: home, APP_SECRET: "cli-app-secret", APP_RT: rt }) },
    );
    const out = resultOf(r);
    assert.equal(out.connected, true, out.message);
    assert.equal(out.text, "cli-app read");
    assert.equal(w.grants.refresh_token, 1);
  });
});

Deno.test("mcp oauth: a revoked refresh token fails the connect clearly (kind auth)", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "cli-app", secret: "cli-app-secret", redirect: "http://127.0.0.1:1/callback" });
    const rt = await seedRefreshToken(w, "cli-app", "cli-app-secret");
    w.revokeAll();
    const r = await runLua(
      script(
        `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "cli-app", client_secret_env = "APP_SECRET", refresh_token_env = "APP_RT" } })`,
        WHOAMI,
      ),
      { env: testEnv({ AGENT_BLOCK_HOME: home, APP_SECRET: "cli-app-secret", APP_RT: rt }) },
    );
    const out = resultOf(r);
    assert.equal(out.connected, false);
    assert.equal(out.kind, "auth");
    assert.match(out.message, /refused the refresh token .*give a new refresh token \(the variable APP_RT\)/);
    assert.ok(!out.message.includes(rt), "the refresh token is not in the message");
  });
});

Deno.test("mcp oauth: no credentials for a protected server: kind auth, saying how to log in", async () => {
  await withWorld(async (w, home) => {
    const r = await runLua(script(`mcp.connect_http("s", "${w.mcpUrl}")`, WHOAMI), {
      env: testEnv({ AGENT_BLOCK_HOME: home }),
    });
    const out = resultOf(r);
    assert.equal(out.connected, false);
    assert.equal(out.kind, "auth");
    assert.match(
      out.message,
      /requires authorization: give opts\.auth .* agent-block mcp login http:\/\/127\.0\.0\.1:\d+\/mcp/,
    );
  });
});

/** A JWT-shaped workload token (opaque to the client: the fixture trusts it by value). */
function workloadJwt(sub: string): string {
  const part = (o: unknown) => btoa(JSON.stringify(o)).replaceAll("=", "");
  return `${part({ alg: "ES256" })}.${part({ sub, n: crypto.randomUUID() })}.c2lnbmF0dXJl`;
}

Deno.test("mcp oauth: a workload's JWT (the JWT-bearer grant) from a variable, as a public client", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "ci-workload" });
    const jwt = workloadJwt("repo:acme/app");
    w.assertions.add(jwt);
    const r = await runLua(
      script(
        `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "ci-workload", assertion_env = "CI_OIDC", scope = "read" } })
local leak = mcp.call("s", "echo_token", {})`,
        WHOAMI,
      ),
      { env: testEnv({ AGENT_BLOCK_HOME: home, CI_OIDC: jwt }) },
    );
    const out = resultOf(r);
    assert.equal(out.connected, true, out.message);
    assert.equal(out.text, "ci-workload read");
    assert.equal(w.grants["urn:ietf:params:oauth:grant-type:jwt-bearer"], 1);
    assert.equal(w.lastAssertion, jwt);
    assert.equal(w.lastAuthMethod, "none", "no client secret, no Basic header");
    assert.ok(!r.stderr.includes(jwt), "the workload token is masked");
  });
});

Deno.test("mcp oauth: a workload token file is read when a token is requested (rotated in place between runs)", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "ci-workload" });
    const dir = await tempDir("ab_oauth_wif_");
    const file = join(dir, "token");
    const [first, second] = [workloadJwt("one"), workloadJwt("two")];
    const connect =
      `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "ci-workload", assertion_file = "token" } })`;
    const opts = { cwd: dir, env: testEnv({ AGENT_BLOCK_HOME: home }) };
    Deno.writeTextFileSync(file, first + "\n");
    w.assertions.add(first);
    assert.match(resultOf(await runLua(script(connect, WHOAMI), opts)).text, /^ci-workload /);
    assert.equal(w.lastAssertion, first, "trimmed, relative to the run's working directory");
    // the platform rotates the file; the old token stops working
    Deno.writeTextFileSync(file, second);
    w.assertions.clear();
    w.assertions.add(second);
    const again = resultOf(await runLua(script(connect, WHOAMI), opts));
    assert.equal(again.connected, true, again.message);
    assert.equal(w.lastAssertion, second);
    Deno.removeSync(file);
    const gone = resultOf(await runLua(script(connect, WHOAMI), opts));
    assert.equal(gone.kind, "auth");
    assert.match(gone.message, /cannot read the workload token file .*token \('assertion_file'\)/);
    await Deno.remove(dir, { recursive: true });
  });
});

Deno.test("mcp oauth: a workload token the server does not trust fails the connect once, kind auth, unretried", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "ci-workload" });
    const jwt = workloadJwt("stranger");
    const r = await runLua(
      script(
        `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "ci-workload", assertion_env = "CI_OIDC" } })`,
        WHOAMI,
      ),
      { env: testEnv({ AGENT_BLOCK_HOME: home, CI_OIDC: jwt }) },
    );
    const out = resultOf(r);
    assert.equal(out.connected, false);
    assert.equal(out.kind, "auth");
    assert.match(
      out.message,
      /refused the workload's token \(invalid_grant\) in the JWT-bearer grant, which is not sent again/,
    );
    assert.ok(!out.message.includes(jwt) && !r.stderr.includes(jwt), "the token is not in the message");
    assert.deepEqual(
      w.refusals,
      ["invalid_grant"],
      `one token request, no retry, no other grant: ${w.refusals}`,
    );
  });
});

Deno.test("mcp oauth: client credentials against a server that asks for DPoP: the tokens are bound to the connection's key", async () => {
  await withWorld(async (w, home) => {
    w.requireDpop = true;
    w.addClient({ id: "svc", secret: "svc-secret" });
    const r = await runLua(
      script(
        `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "svc", client_secret_env = "S", issuer = "${w.issuer}" } })`,
        WHOAMI,
      ),
      { env: testEnv({ AGENT_BLOCK_HOME: home, S: "svc-secret" }) },
    );
    const out = resultOf(r);
    assert.equal(out.connected, true, out.message);
    assert.match(out.text, /^svc /);
    assert.ok(w.dpopRequests > 0, "requests signed with the key the token is bound to");
    // a server that does not ask gets plain bearer tokens (a DPoP-capable one is not assumed)
    w.requireDpop = false;
    const before = w.dpopRequests;
    const plain = resultOf(
      await runLua(
        script(
          `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "svc", client_secret_env = "S", issuer = "${w.issuer}" } })`,
          WHOAMI,
        ),
        { env: testEnv({ AGENT_BLOCK_HOME: home, S: "svc-secret" }) },
      ),
    );
    assert.equal(plain.connected, true, plain.message);
    assert.equal(w.dpopRequests, before);
  });
});

Deno.test("mcp oauth: bad auth settings name the field or the variable", async () => {
  await withWorld(async (w, home) => {
    const cases: [string, RegExp][] = [
      [
        `{ client_id = "x", client_secret_env = "NOT_SET_ANYWHERE" }`,
        /'client_secret_env' names NOT_SET_ANYWHERE, which is not set/,
      ],
      [`{ client_id = "x", colour = "red" }`, /unknown field 'colour'/],
      [`{ client_id = "x" }`, /needs 'client_secret', 'private_key', 'refresh_token' or 'assertion'/],
      [
        `{ client_id = "x", assertion = "a.b.c", client_secret = "y" }`,
        /'assertion' is the JWT-bearer grant's only credential/,
      ],
      [
        `{ client_id = "x", assertion = "a.b.c", assertion_file = "t" }`,
        /'assertion' and 'assertion_file' contradict/,
      ],
      [
        `{ client_id = "x", client_secret = "y", method = "tls" }`,
        /field 'method' must be "client_secret_basic" or "client_secret_post"/,
      ],
      [`"login"`, /has no stored login .*agent-block mcp login/],
    ];
    for (const [auth, want] of cases) {
      const r = await runLua(
        script(`mcp.connect_http("s", "${w.mcpUrl}", { auth = ${auth} })`, WHOAMI),
        { env: testEnv({ AGENT_BLOCK_HOME: home }) },
      );
      const out = resultOf(r);
      assert.equal(out.connected, false, auth);
      assert.equal(out.kind, "auth", auth);
      assert.match(out.message, want);
    }
  });
});

Deno.test("mcp oauth: 403 insufficient_scope steps up where the client credentials allow it", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "ci-bot", secret: "s3cret-value-123", scope: "read admin" });
    const r = await runLua(
      script(
        `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "ci-bot", client_secret = "s3cret-value-123", scope = "read" } })`,
        `local a = mcp.call("s", "admin_op", {})
         local b = mcp.call("s", "whoami", {})
         return std.json.encode({ connected = true, admin = a.ok and a.content[1].text or a.error, who = b.content[1].text })`,
      ),
      { env: testEnv({ AGENT_BLOCK_HOME: home }) },
    );
    const out = resultOf(r);
    assert.equal(out.connected, true, out.message);
    assert.equal(out.admin, "admin done");
    assert.equal(out.who, "ci-bot read,admin");
    assert.equal(w.grants.client_credentials, 2, "one token, then one with the wider scope");
  });
});

Deno.test("mcp oauth: a step-up the credentials cannot get fails naming the scope", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "reader", secret: "reader-secret-1", scope: "read" });
    const r = await runLua(
      script(
        `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "reader", client_secret = "reader-secret-1", scope = "read" } })`,
        `local a = mcp.call("s", "admin_op", {})
         return std.json.encode({ connected = true, ok = a.ok, error = a.error, kind = a.kind })`,
      ),
      { env: testEnv({ AGENT_BLOCK_HOME: home }) },
    );
    const out = resultOf(r);
    assert.equal(out.connected, true, out.message);
    assert.equal(out.ok, false);
    assert.equal(out.kind, "auth");
    assert.match(
      out.error,
      /OAuth invalid_scope: .*; the authorization server did not grant scope 'read admin' to these credentials/,
    );
  });
});

Deno.test("attack: mcp oauth tokens never reach the run's logs, errors or outcome", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "ci-bot", secret: "s3cret-value-123" });
    const r = await runLua(
      script(
        `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "ci-bot", client_secret = "s3cret-value-123" } })`,
        `local t = mcp.call("s", "echo_token", {}).content[1].text
         log.warn("the server said: " .. t)
         error("leaking " .. t .. " and s3cret-value-123")`,
      ),
      { env: testEnv({ AGENT_BLOCK_HOME: home, AGENT_BLOCK_LOG: "debug" }) },
    );
    assert.equal(r.outcome.status, "raised");
    const everything = r.stderr + JSON.stringify(r.outcome);
    assert.ok(!/at-\d+-/.test(everything), `an access token leaked: ${everything}`);
    assert.ok(!everything.includes("s3cret-value-123"), "the client secret leaked");
    assert.match(r.stderr, /the server said: token \[redacted\]/);
  });
});

Deno.test("mcp oauth: an mcp_servers entry's auth reaches the connection (mcp_tools, as agent.run uses it)", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "ci-bot", secret: "s3cret-value-123" });
    const r = await runLua(
      `local mcp_tools = require("mcp_tools")
       local conn = mcp_tools.connect({ { name = "s", url = "${w.mcpUrl}",
         auth = { client_id = "ci-bot", client_secret_env = "BOT_SECRET" }, required = true } }, {})
       local names = {}
       for _, t in ipairs(conn:tools()) do names[#names + 1] = t.name end
       table.sort(names)
       return std.json.encode(names)`,
      { env: testEnv({ AGENT_BLOCK_HOME: home, BOT_SECRET: "s3cret-value-123" }) },
    );
    assert.deepEqual(resultOf(r), ["s__admin_op", "s__echo_token", "s__whoami"]);
    assert.equal(w.grants.client_credentials, 1);
  });
});

/** A refresh token issued to `client` through the authorization code flow, as a browser login would get it. */
async function seedRefreshToken(w: OAuthWorld, client: string, secret: string): Promise<string> {
  const verifier = "v".repeat(50);
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  const challenge = btoa(String.fromCharCode(...d)).replaceAll("+", "-").replaceAll("/", "_").replace(
    /=+$/,
    "",
  );
  const auth = new URL(`${w.issuer}/authorize`);
  for (
    const [k, v] of Object.entries({
      client_id: client,
      redirect_uri: "http://127.0.0.1:1/callback",
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "x",
      scope: "read",
    })
  ) auth.searchParams.set(k, v);
  const r = await fetch(auth, { redirect: "manual" });
  await r.body?.cancel();
  const code = new URL(r.headers.get("location")!).searchParams.get("code")!;
  const t = await fetch(`${w.issuer}/token`, {
    method: "POST",
    headers: {
      authorization: `Basic ${btoa(`${client}:${secret}`)}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      redirect_uri: "http://127.0.0.1:1/callback",
    }),
  });
  const body = await t.json() as { refresh_token: string };
  w.grants.authorization_code = 0;
  return body.refresh_token;
}
