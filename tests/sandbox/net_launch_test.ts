/**
 * How `--sandbox-net` starts, and how it refuses to: `allow-list` fails closed where no network
 * namespace can be had (the test seam `AGENT_BLOCK_SANDBOX_TEST_NO_NETNS=1`, exit 1 before any
 * Lua, the proxy it started ended); it works through the unprivileged user-namespace path
 * (`AGENT_BLOCK_SANDBOX_TEST_USERNS=1`) as through the root one; `--sandbox-net` without the
 * sandbox is a usage error; `off` denies TCP; the project's `.env` cannot widen the list; and
 * `agent-block mcp --sandbox`, whose runs would all fail closed, stops at its start.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, tempProject } from "../helpers.ts";
import { userNamespaceHop } from "../../src/sandbox/mount_ns.ts";
import { sandboxEnv, SKIP } from "./support.ts";

const opts = { ignore: SKIP !== undefined, sanitizeResources: false, sanitizeOps: false };

const FETCH = `local p = std.json.decode(_PROMPT)
local f = assert(io.open("ran.txt", "w")); f:write("ran"); f:close()
local function get(url)
  local r = http.request({ url = url, timeout = 20 })
  return r.ok and ("status " .. r.status .. " " .. tostring(r.body)) or ("failed: " .. tostring(r.error))
end
local direct = sh.exec("curl -fsS --noproxy '*' --max-time 10 " .. p.url, { timeout = 30 })
return std.json.encode({ proxied = get(p.url), direct = "exit " .. tostring(direct.code) })`;

/** The proxy directories (`agent-block-net-*`) in `tmp`. */
function proxyDirs(tmp: string): string[] {
  return [...Deno.readDirSync(tmp)].filter((e) => e.name.startsWith("agent-block-net-")).map((e) => e.name);
}

async function withServer<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("hello"),
  );
  try {
    return await fn(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
  }
}

Deno.test({
  name: "sandbox net: allow-list where no network namespace can be had exits 1 before the script runs",
  ...opts,
  fn: async () => {
    const root = await tempProject({ "s.lua": FETCH });
    const tmp = join(root, "tmp"); // the launch's own temp dir: no other test's proxy is there
    Deno.mkdirSync(tmp);
    const env = sandboxEnv(root, { AGENT_BLOCK_SANDBOX_TEST_NO_NETNS: "1", TMPDIR: tmp });
    const r = await runCli(["--sandbox", "--sandbox-net", "allow-list", "-s", "s.lua", "--prompt", "{}"], {
      cwd: root,
      env,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /error: --sandbox-net allow-list: no network namespace can be had here \(AGENT_BLOCK_SANDBOX_TEST_NO_NETNS/,
    );
    assert.doesNotMatch(r.stderr, /sandbox on/, "no start-up line: nothing ran");
    assert.throws(() => Deno.statSync(join(root, "ran.txt")), Deno.errors.NotFound);
    // the proxy started for the launch ended with it, its directory removed (waited for: the
    // launcher kills it as the launch fails, and the kernel may take a moment to end it)
    const deadline = Date.now() + 30_000;
    while (proxyDirs(tmp).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(proxyDirs(tmp), [], "the proxy of the failed launch is gone");
    await Deno.remove(root, { recursive: true });
  },
});

const hop = userNamespaceHop(true);
Deno.test({
  name: "attack: sandbox net: through the user-namespace path, only the proxy reaches out",
  ...opts,
  ignore: opts.ignore || !("prefix" in hop),
  fn: async () => {
    await withServer(async (url) => {
      const root = await tempProject({ "s.lua": FETCH });
      const env = sandboxEnv(root, {
        AGENT_BLOCK_SANDBOX_TEST_USERNS: "1",
        AGENT_BLOCK_SANDBOX_NET_ALLOW: new URL(url).host,
      });
      const r = await runCli(
        [
          "--sandbox",
          "--sandbox-net",
          "allow-list",
          "-s",
          "s.lua",
          "--prompt",
          JSON.stringify({ url }),
          "--result",
          "-",
        ],
        { cwd: root, env },
      );
      assert.equal(r.code, 0, r.stderr);
      const v = JSON.parse(r.stdout);
      assert.equal(v.proxied, "status 200 hello");
      assert.match(v.direct, /^exit [1-9]/, "a direct connection has no route");
      assert.match(r.stderr, /network: allow-list through the proxy/);
      await Deno.remove(root, { recursive: true });
    });
  },
});

Deno.test({
  name: "sandbox net: --sandbox-net without the sandbox is a usage error; a bad mode fails closed",
  ...opts,
  fn: async () => {
    const root = await tempProject({ "s.lua": FETCH });
    const env = sandboxEnv(root);
    const r = await runCli(["--sandbox-net", "allow-list", "-s", "s.lua"], { cwd: root, env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--sandbox-net allow-list needs --sandbox/);
    const bad = await runCli(["--sandbox", "--sandbox-net", "closed", "-s", "s.lua"], { cwd: root, env });
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /--sandbox-net must be open, off or allow-list; got 'closed'/);
    assert.throws(() => Deno.statSync(join(root, "ran.txt")), Deno.errors.NotFound);
    await Deno.remove(root, { recursive: true });
  },
});

Deno.test({
  name: "attack: sandbox net: the project's .env cannot add hosts to the allow-list",
  ...opts,
  fn: async () => {
    await withServer(async (url) => {
      const root = await tempProject({
        "s.lua": FETCH,
        ".env": `AGENT_BLOCK_SANDBOX_NET=allow-list\nAGENT_BLOCK_SANDBOX_NET_ALLOW=${new URL(url).host}\n`,
      });
      const r = await runCli([
        "--sandbox",
        "-s",
        "s.lua",
        "--prompt",
        JSON.stringify({ url }),
        "--result",
        "-",
      ], {
        cwd: root,
        env: sandboxEnv(root),
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /AGENT_BLOCK_SANDBOX_NET_ALLOW in the project's \.env is ignored/);
      assert.match(r.stderr, /network: allow-list/, ".env may make the network stricter");
      assert.match(JSON.parse(r.stdout).proxied, /^status 403/);
      await Deno.remove(root, { recursive: true });
    });
  },
});

Deno.test({
  name: "sandbox net: --sandbox-net off denies TCP",
  ...opts,
  fn: async () => {
    const root = await tempProject({ "s.lua": `return "ran"` });
    const r = await runCli(["--sandbox", "--sandbox-net", "off", "-s", "s.lua"], {
      cwd: root,
      env: sandboxEnv(root),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /TCP denied/);
    await Deno.remove(root, { recursive: true });
  },
});

Deno.test({
  name: "sandbox net: agent-block mcp --sandbox with the allow-list and no network namespace stops at start",
  ...opts,
  fn: async () => {
    const root = await tempProject({});
    const env = sandboxEnv(root, {
      AGENT_BLOCK_SANDBOX_NET: "allow-list",
      AGENT_BLOCK_SANDBOX_TEST_NO_NETNS: "1",
    });
    const r = await runCli(["mcp", "--sandbox", "-p", root], { cwd: root, env, stdin: "" });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^error: mcp: --sandbox-net allow-list: no network namespace can be had here/);
    const bad = await runCli(["mcp", "--sandbox", "-p", root], {
      cwd: root,
      env: sandboxEnv(root, {
        AGENT_BLOCK_SANDBOX_NET: "allow-list",
        AGENT_BLOCK_SANDBOX_NET_ALLOW: "a b:0",
      }),
      stdin: "",
    });
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /AGENT_BLOCK_SANDBOX_NET_ALLOW: 'b:0' is not a host\[:port\]/);
    await Deno.remove(root, { recursive: true });
  },
});

Deno.test({
  name: "sandbox net: a proxy that cannot start stops the run at once: exit 1, saying why, nothing ran",
  ...opts,
  fn: async () => {
    const root = await tempProject({ "s.lua": FETCH });
    // a temporary directory so deep that the proxy's socket path is past a Unix socket's 108 bytes
    const tmp = join(root, "t".repeat(120));
    Deno.mkdirSync(tmp);
    const env = sandboxEnv(root, { TMPDIR: tmp });
    const started = performance.now();
    const r = await runCli(["--sandbox", "--sandbox-net", "allow-list", "-s", "s.lua", "--prompt", "{}"], {
      cwd: root,
      env,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /error: --sandbox-net allow-list: the proxy cannot listen on /);
    assert.match(
      r.stderr,
      /error: --sandbox-net allow-list: the proxy ended \(exit 1\) while the run needed it/,
    );
    assert.throws(() => Deno.statSync(join(root, "ran.txt")), Deno.errors.NotFound);
    // not the bridge's own bound (30 s): the launcher saw the proxy end
    assert.ok(performance.now() - started < 25_000, `took ${Math.round(performance.now() - started)} ms`);
    await Deno.remove(root, { recursive: true });
  },
});
