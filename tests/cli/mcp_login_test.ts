/**
 * `agent-block mcp login | logout | auth status` and runs using the stored login, end to end: the
 * CLI as a real subprocess, a real authorization server and a real bearer-protected MCP server on
 * 127.0.0.1 (`tests/fixtures/mcp/oauth_world.ts`; the test plays the browser). Covers discovery
 * from the server's 401, dynamic registration and a pre-registered client, PKCE and `iss`, the
 * token file (mode 0600, atomic, refused with other permissions), refresh on expiry (server side
 * and client side) with the call retried, a revoked refresh token, a step-up the login lacks,
 * two runs refreshing at once, DPoP-bound tokens (the login's key kept in its entry), and the exit
 * codes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, runCli, tempDir, tempProject, testEnv } from "../helpers.ts";
import { approveInBrowser, type OAuthWorld, startOAuthWorld } from "../fixtures/mcp/oauth_world.ts";

/**
 * Runs `mcp login` with `args`, approving in the "browser" as soon as it prints the URL
 * (`beforeApprove` sees that URL first).
 */
async function login(
  w: OAuthWorld,
  home: string,
  args: string[] = [],
  env: Record<string, string> = {},
  beforeApprove: (authorizeUrl: string) => void = () => {},
): Promise<{ code: number; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      CLI,
      "mcp",
      "login",
      w.mcpUrl,
      "--no-browser",
      "--timeout",
      "120",
      ...args,
    ],
    env: testEnv({ AGENT_BLOCK_HOME: home, ...env }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  let approved = false;
  const dec = new TextDecoder();
  const out = child.stdout.text();
  for await (const chunk of child.stderr) {
    stderr += dec.decode(chunk, { stream: true });
    const m = /^\s+(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(stderr);
    if (m && !approved) {
      approved = true;
      beforeApprove(m[1]);
      assert.equal(await approveInBrowser(m[1]), 200);
    }
  }
  await out;
  const { code } = await child.status;
  return { code, stderr };
}

/** A run (subprocess) connecting to the world's server with the stored login, calling `tool`. */
async function runCalling(w: OAuthWorld, home: string, tool = "whoami", opts = "") {
  const project = await tempProject({
    "main.lua": `
local ok, err = pcall(mcp.connect_http, "s", "${w.mcpUrl}"${opts ? `, ${opts}` : ""})
if not ok then return std.json.encode({ connected = false, message = tostring(err), kind = err.kind }) end
local r = mcp.call("s", "${tool}", {})
return std.json.encode({ connected = true, ok = r.ok, text = r.ok and r.content[1].text or r.error, kind = r.kind })
`,
  });
  const r = await runCli(["-s", "main.lua", "-p", project, "--result", join(project, "out.json")], {
    cwd: project,
    env: testEnv({ AGENT_BLOCK_HOME: home }),
  });
  assert.equal(r.code, 0, r.stderr);
  return { ...JSON.parse(Deno.readTextFileSync(join(project, "out.json"))), stderr: r.stderr };
}

function tokenFiles(home: string): string[] {
  return [...Deno.readDirSync(join(home, "mcp-auth"))].map((e) => e.name).filter((n) => n.endsWith(".json"))
    .map((n) => join(home, "mcp-auth", n));
}

function stored(home: string) {
  const [f] = tokenFiles(home);
  return JSON.parse(Deno.readTextFileSync(f));
}

async function withWorld(fn: (w: OAuthWorld, home: string) => Promise<void>): Promise<void> {
  const w = await startOAuthWorld();
  try {
    await fn(w, await tempDir("ab_login_home_"));
  } finally {
    await w.close();
  }
}

Deno.test("mcp login: discovery, registration, PKCE and iss; a 0600 token file; status without tokens; a run uses it; logout", async () => {
  await withWorld(async (w, home) => {
    const l = await login(w, home, ["--scope", "read"]);
    assert.equal(l.code, 0, l.stderr);
    assert.match(
      l.stderr,
      /logged in to http:\/\/127\.0\.0\.1:\d+\/mcp \(scope: read\).*refreshable; stored in /,
    );
    assert.equal(w.registrations, 1, "dynamic client registration");
    assert.equal(w.grants.authorization_code, 1);
    const files = tokenFiles(home);
    assert.equal(files.length, 1);
    assert.equal(Deno.statSync(files[0]).mode! & 0o777, 0o600);
    assert.equal(Deno.statSync(join(home, "mcp-auth")).mode! & 0o777, 0o700);
    const e = stored(home);
    assert.equal(e.issuer, w.issuer);
    assert.equal(e.server, w.mcpUrl);
    assert.ok(!l.stderr.includes(e.tokens.access_token) && !l.stderr.includes(e.tokens.refresh_token));

    const st = await runCli(["mcp", "auth", "status"], { env: testEnv({ AGENT_BLOCK_HOME: home }) });
    assert.equal(st.code, 0, st.stderr);
    assert.match(
      st.stdout,
      new RegExp(`${w.mcpUrl}\\n  issuer ${w.issuer}; client client-\\d+-\\S+; scope read\\n  expires `),
    );
    assert.ok(!st.stdout.includes(e.tokens.access_token) && !st.stdout.includes(e.tokens.refresh_token));
    const js = await runCli(["mcp", "auth", "status", "--json"], {
      env: testEnv({ AGENT_BLOCK_HOME: home }),
    });
    const row = JSON.parse(js.stdout.trim());
    assert.equal(row.refreshable, true);
    assert.equal(row.expired, false);

    const r = await runCalling(w, home);
    assert.equal(r.connected, true, r.message);
    assert.match(r.text, /^client-\d+-\S+ read$/);

    const out = await runCli(["mcp", "logout", w.mcpUrl], { env: testEnv({ AGENT_BLOCK_HOME: home }) });
    assert.equal(out.code, 0);
    assert.match(out.stderr, /forgot the login/);
    assert.equal(tokenFiles(home).length, 0);
    const after = await runCalling(w, home);
    assert.equal(after.connected, false);
    assert.equal(after.kind, "auth");
  });
});

Deno.test("mcp login: a pre-registered client (--client-id, --client-secret-env) registers nothing", async () => {
  await withWorld(async (w, home) => {
    // The client is registered with the loopback callback the login announces (its port is
    // picked at the login's start), as a user registers the client beforehand.
    const l = await loginPreRegistered(w, home);
    assert.equal(l.code, 0, l.stderr);
    assert.equal(w.registrations, 0);
    assert.equal(w.lastAuthMethod, "client_secret_basic");
    assert.equal(stored(home).client.client_id, "pre-app");
    const r = await runCalling(w, home);
    assert.equal(r.text, "pre-app read,admin");
  });
});

Deno.test("mcp login: an expired access token is refreshed once and the call retried; the store keeps the new tokens", async () => {
  await withWorld(async (w, home) => {
    assert.equal((await login(w, home)).code, 0);
    const before = stored(home);
    w.expireAll();
    const r = await runCalling(w, home);
    assert.equal(r.connected, true, r.message);
    assert.equal(r.ok, true);
    assert.equal(w.grants.refresh_token, 1);
    const after = stored(home);
    assert.notEqual(after.tokens.access_token, before.tokens.access_token);
    assert.notEqual(after.tokens.refresh_token, before.tokens.refresh_token, "rotated refresh token kept");
    assert.equal(Deno.statSync(tokenFiles(home)[0]).mode! & 0o777, 0o600);
  });
});

Deno.test("mcp login: a token the file says has expired is not sent; it is refreshed first", async () => {
  await withWorld(async (w, home) => {
    assert.equal((await login(w, home)).code, 0);
    const [f] = tokenFiles(home);
    const e = stored(home);
    e.tokens.expires_at = Date.now() - 1000;
    Deno.writeTextFileSync(f, JSON.stringify(e));
    const r = await runCalling(w, home);
    assert.equal(r.ok, true, r.text);
    assert.equal(w.grants.refresh_token, 1);
    assert.ok(stored(home).tokens.expires_at > Date.now());
  });
});

Deno.test("mcp login: a revoked refresh token fails the run's connect, saying to log in again", async () => {
  await withWorld(async (w, home) => {
    assert.equal((await login(w, home)).code, 0);
    w.expireAll();
    w.revokeAll();
    const r = await runCalling(w, home);
    assert.equal(r.connected, false);
    assert.equal(r.kind, "auth");
    assert.match(
      r.message,
      /refused the refresh token \(revoked or expired\): log in again: agent-block mcp login http/,
    );
    // The same run as a block whose connect is required: exit 1, the reason on stderr.
    const project = await tempProject({ "main.lua": `mcp.connect_http("s", "${w.mcpUrl}")` });
    const run = await runCli(["-s", "main.lua", "-p", project], {
      cwd: project,
      env: testEnv({ AGENT_BLOCK_HOME: home }),
    });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /error: .*log in again: agent-block mcp login/);
  });
});

Deno.test("mcp login: a server that moved to another authorization server fails the run, saying to log in again", async () => {
  await withWorld(async (w, home) => {
    assert.equal((await login(w, home)).code, 0);
    // the login was made with an authorization server the resource no longer names (SEP-2352):
    // its client and tokens are bound to that one, and none is presented to the new one
    const [file] = tokenFiles(home);
    const e = stored(home);
    const old = "http://127.0.0.1:9";
    Deno.writeTextFileSync(
      file,
      JSON.stringify({
        ...e,
        issuer: old,
        client: { ...e.client, issuer: old },
        tokens: { ...e.tokens, issuer: old },
      }),
    );
    w.expireAll();
    const before = { ...w.grants };
    const r = await runCalling(w, home);
    assert.equal(r.connected, false, r.message);
    assert.equal(r.kind, "auth");
    assert.match(
      r.message,
      new RegExp(
        `now names the authorization server "${w.issuer}", and its credentials are bound to "${old}": ` +
          `log in again: agent-block mcp login http`,
      ),
    );
    assert.deepEqual(w.grants, before, "the old login's refresh token went nowhere");
    // as the message says: a new login (a registration with the new server), and the run works
    const again = await login(w, home);
    assert.equal(again.code, 0, again.stderr);
    const after = await runCalling(w, home);
    assert.equal(after.ok, true, after.text);
  });
});

Deno.test("mcp login: a server that takes only DPoP-bound tokens: the login's key is kept, runs and refreshes sign with it", async () => {
  await withWorld(async (w, home) => {
    w.requireDpop = true;
    const l = await login(w, home);
    assert.equal(l.code, 0, l.stderr);
    const e = stored(home);
    assert.equal(e.tokens.token_type, "DPoP");
    assert.equal(e.dpop_key.kty, "EC");
    assert.equal(typeof e.dpop_key.d, "string", "the private key, in the owner-only file");
    const r = await runCalling(w, home);
    assert.equal(r.ok, true, r.text);
    assert.ok(w.dpopRequests > 0);
    assert.ok(!r.stderr.includes(e.dpop_key.d), "the key is not printed");
    // the token alone, as a thief would present it, is refused
    const stolen = await fetch(w.mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${e.tokens.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    await stolen.body?.cancel();
    assert.equal(stolen.status, 401);
    // a refresh is signed with the same key (the refresh token is bound to it), which stays
    w.expireAll();
    const after = await runCalling(w, home);
    assert.equal(after.ok, true, after.text);
    assert.equal(w.grants.refresh_token, 1);
    assert.deepEqual(stored(home).dpop_key, e.dpop_key);
  });
});

Deno.test("attack: mcp login token file with wrong permissions is refused, never used", async () => {
  await withWorld(async (w, home) => {
    assert.equal((await login(w, home)).code, 0);
    const [f] = tokenFiles(home);
    Deno.chmodSync(f, 0o644);
    const r = await runCalling(w, home);
    assert.equal(r.connected, false);
    assert.equal(r.kind, "auth");
    assert.match(
      r.message,
      /token file .* has mode 0644: it must be readable and writable by its owner only \(chmod 600 /,
    );
    const st = await runCli(["mcp", "auth", "status"], { env: testEnv({ AGENT_BLOCK_HOME: home }) });
    assert.match(st.stdout, /has mode 0644/);
  });
});

Deno.test("mcp login: two runs refreshing the same login at once do one refresh and leave a whole file", async () => {
  await withWorld(async (w, home) => {
    assert.equal((await login(w, home)).code, 0);
    w.expireAll();
    const [a, b] = await Promise.all([runCalling(w, home), runCalling(w, home)]);
    assert.equal(a.ok, true, a.text);
    assert.equal(b.ok, true, b.text);
    // The second run waited for the lock and used the first one's tokens: the rotated refresh
    // token was never spent twice.
    assert.equal(w.grants.refresh_token, 1);
    assert.deepEqual(w.refusals, []);
    const e = stored(home);
    assert.equal(typeof e.tokens.access_token, "string");
    const left = [...Deno.readDirSync(join(home, "mcp-auth"))].map((d) => d.name).filter((n) =>
      n.includes("tmp")
    );
    assert.deepEqual(left, [], "no temporary file left behind");
  });
});

Deno.test("mcp login: a scope the login lacks (403 insufficient_scope) fails naming it and the login to make", async () => {
  await withWorld(async (w, home) => {
    assert.equal((await login(w, home, ["--scope", "read"])).code, 0);
    const r = await runCalling(w, home, "admin_op");
    assert.equal(r.connected, true, r.message);
    assert.equal(r.ok, false);
    assert.equal(r.kind, "auth");
    assert.match(
      r.text,
      /needs scope 'admin' \(403 insufficient_scope\).*agent-block mcp login http\S+ --scope 'read admin'/,
    );
  });
});

Deno.test("attack: mcp login refuses an authorization response whose iss names another issuer (mix-up)", async () => {
  await withWorld(async (w, home) => {
    w.issInResponse = "http://127.0.0.1:9/evil";
    const l = await login(w, home);
    assert.equal(l.code, 1);
    assert.match(l.stderr, /error: mcp login: IssuerMismatchError: .*evil/);
    assert.equal(w.grants.authorization_code, undefined, "the code was never redeemed");
    assert.throws(() => Deno.readDirSync(join(home, "mcp-auth")).next(), Deno.errors.NotFound);
  });
});

Deno.test("mcp oauth: machine credentials from the project's .env (the edge reads it; the run passes it on)", async () => {
  await withWorld(async (w, home) => {
    w.addClient({ id: "ci-bot", secret: "dotenv-secret-789" });
    const project = await tempProject({
      ".env": "BOT_SECRET=dotenv-secret-789\n",
      "main.lua":
        `mcp.connect_http("s", "${w.mcpUrl}", { auth = { client_id = "ci-bot", client_secret_env = "BOT_SECRET" } })
return mcp.call("s", "whoami", {}).content[1].text`,
    });
    const r = await runCli(["-s", "main.lua", "-p", project, "--result", join(project, "out.txt")], {
      cwd: project,
      env: testEnv({ AGENT_BLOCK_HOME: home }),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(Deno.readTextFileSync(join(project, "out.txt")), "ci-bot read,admin");
    assert.equal(w.grants.client_credentials, 1);
  });
});

Deno.test("mcp login: failures exit 1 with the reason, a bad command line exits 2", async () => {
  const home = await tempDir();
  const env = testEnv({ AGENT_BLOCK_HOME: home });
  const closed = await runCli(["mcp", "login", "http://127.0.0.1:1/mcp", "--no-browser"], { env });
  assert.equal(closed.code, 1);
  assert.match(closed.stderr, /error: mcp login: cannot reach http:\/\/127\.0\.0\.1:1\/mcp/);
  const none = await runCli(["mcp", "login"], { env });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /give the server's URL/);
  const bad = await runCli(["mcp", "login", "ftp://x"], { env });
  assert.equal(bad.code, 2);
  const status = await runCli(["mcp", "auth", "list"], { env });
  assert.equal(status.code, 2);
  const empty = await runCli(["mcp", "auth", "status"], { env });
  assert.equal(empty.code, 0);
  assert.match(empty.stdout, /no MCP logins stored/);
  const out = await runCli(["mcp", "logout", "http://127.0.0.1:1/mcp"], { env });
  assert.equal(out.code, 0);
  assert.match(out.stderr, /no login stored/);
});

/** Logs in with the pre-registered client `pre-app`, registering its redirect URI as the login announces it. */
function loginPreRegistered(w: OAuthWorld, home: string) {
  return login(
    w,
    home,
    ["--client-id", "pre-app", "--client-secret-env", "PRE_SECRET"],
    { PRE_SECRET: "pre-app-secret-1" },
    (url) => {
      const redirect = new URL(url).searchParams.get("redirect_uri")!;
      w.addClient({ id: "pre-app", secret: "pre-app-secret-1", redirect });
    },
  );
}
