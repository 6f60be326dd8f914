/**
 * The network allow-list's pure rules (`src/sandbox/net_policy.ts`): the mode (read at the edge by
 * `sandboxSettingsFromEnv`: flag, starter, `.env` only stricter), the entries, host and port matching, the configured hosts, and which
 * resolved addresses a name may not lead to.
 */
import assert from "node:assert/strict";
import {
  addressListed,
  addressRefused,
  configuredHosts,
  hostAllowed,
  parseAllowEntry,
  parseAllowList,
  showEntry,
} from "../../src/sandbox/net_policy.ts";
import { AgentBlockError } from "../../src/errors.ts";
import { sandboxSettingsFromEnv } from "../../src/config/env_settings.ts";

/** The mode the edge resolves from the flag, the starter's variables and the project's `.env`. */
function resolveNetMode(
  flag: string | undefined,
  starter: Record<string, string>,
  fromProject: Record<string, string>,
  tcp: boolean,
) {
  const env = tcp ? starter : { ...starter, AGENT_BLOCK_SANDBOX_TCP: "0" };
  return sandboxSettingsFromEnv(env, "/", { fromProject, netFlag: flag }).net;
}

Deno.test("sandbox net policy: the mode comes from the flag, else the starter; .env only makes it stricter", () => {
  assert.equal(resolveNetMode(undefined, {}, {}, true), "open");
  assert.equal(resolveNetMode("allow-list", {}, {}, true), "allow-list");
  assert.equal(resolveNetMode(undefined, { AGENT_BLOCK_SANDBOX_NET: "Allow-List" }, {}, true), "allow-list");
  assert.equal(resolveNetMode("open", { AGENT_BLOCK_SANDBOX_NET: "off" }, {}, true), "open", "the flag wins");
  assert.equal(resolveNetMode(undefined, {}, { AGENT_BLOCK_SANDBOX_NET: "allow-list" }, true), "allow-list");
  assert.equal(resolveNetMode("allow-list", {}, { AGENT_BLOCK_SANDBOX_NET: "open" }, true), "allow-list");
  assert.equal(resolveNetMode("allow-list", {}, { AGENT_BLOCK_SANDBOX_NET: "off" }, true), "off");
  assert.equal(resolveNetMode("allow-list", {}, {}, false), "off", "AGENT_BLOCK_SANDBOX_TCP=0 is off");
  assert.throws(
    () => resolveNetMode("closed", {}, {}, true),
    (e) =>
      e instanceof AgentBlockError &&
      /^--sandbox-net must be open, off or allow-list; got 'closed'$/.test(e.message),
  );
  assert.throws(
    () => resolveNetMode(undefined, { AGENT_BLOCK_SANDBOX_NET: "shut" }, {}, true),
    (e) =>
      e instanceof AgentBlockError &&
      e.message === "AGENT_BLOCK_SANDBOX_NET must be open, off or allow-list; got 'shut'",
  );
  assert.throws(
    () => resolveNetMode(undefined, {}, { AGENT_BLOCK_SANDBOX_NET: "nope" }, true),
    /AGENT_BLOCK_SANDBOX_NET \(in the project's \.env\) must be open, off or allow-list; got 'nope'/,
  );
  assert.equal(
    resolveNetMode(undefined, { AGENT_BLOCK_SANDBOX_NET: " " }, {}, true),
    "open",
    "blank is unset",
  );
});

Deno.test("sandbox net policy: entries are names, *.suffixes and addresses, with an optional port", () => {
  assert.deepEqual(parseAllowEntry("API.Example.com", "configured"), {
    host: "api.example.com",
    kind: "name",
    port: undefined,
    source: "configured",
  });
  assert.equal(parseAllowEntry("*.example.com:8443", "configured").kind, "suffix");
  assert.equal(parseAllowEntry("*.example.com:8443", "configured").port, 8443);
  assert.equal(parseAllowEntry("10.0.0.1:80", "configured").kind, "address");
  assert.equal(parseAllowEntry("[::1]:3000", "configured").host, "::1");
  for (const bad of ["a b", "host:0", "host:99999", "::1", "[::1", "ex ample", "*.", "host:x"]) {
    assert.throws(() => parseAllowEntry(bad, "listed"), AgentBlockError, bad);
  }
  assert.throws(
    () => parseAllowList(["ok.com", "host:0"]),
    /AGENT_BLOCK_SANDBOX_NET_ALLOW: 'host:0' is not a host\[:port\] \(a port is 1-65535\)/,
  );
  const listed =
    sandboxSettingsFromEnv({ AGENT_BLOCK_SANDBOX_NET_ALLOW: " a.com, b.com:81  c.com " }, "/").netAllow;
  assert.deepEqual(listed, ["a.com", "b.com:81", "c.com"]);
  assert.deepEqual(parseAllowList(listed).map(showEntry), ["a.com", "b.com:81", "c.com"]);
  assert.equal(showEntry(parseAllowEntry("[::1]:3000", "configured")), "[::1]:3000");
});

Deno.test("sandbox net policy: a host is allowed at its port only; a name never allows its address", () => {
  const list = parseAllowList(["api.example.com", "*.cdn.example", "127.0.0.1:8080", "[::1]:9000"]);
  assert.ok(hostAllowed(list, "api.example.com", 443));
  assert.ok(hostAllowed(list, "API.example.com.", 80));
  assert.ok(!hostAllowed(list, "api.example.com", 8443), "another port");
  assert.ok(!hostAllowed(list, "example.com", 443));
  assert.ok(!hostAllowed(list, "evil-api.example.com", 443));
  assert.ok(hostAllowed(list, "a.b.cdn.example", 443));
  assert.ok(!hostAllowed(list, "cdn.example", 443), "*.x does not allow x itself");
  assert.ok(!hostAllowed(list, "cdn.example.evil.com", 443));
  assert.ok(hostAllowed(list, "127.0.0.1", 8080));
  assert.ok(!hostAllowed(list, "127.0.0.1", 8081));
  assert.ok(hostAllowed(list, "[::1]", 9000));
  assert.ok(hostAllowed(list, "0:0:0:0:0:0:0:1", 9000), "another spelling of a listed address");
  assert.ok(
    !hostAllowed(parseAllowList(["localhost:8080"]), "127.0.0.1", 8080),
    "the literal of a listed name",
  );
  assert.ok(addressListed(list, "::ffff:127.0.0.1", 8080), "an IPv4-mapped address is the IPv4 one");
});

Deno.test("sandbox net policy: a name may not lead to loopback, private, link-local or unspecified addresses", () => {
  for (const a of ["127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1"]) {
    assert.ok(addressRefused(a), a);
  }
  for (
    const a of ["169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "::1", "::", "fe80::1", "fd00::1"]
  ) {
    assert.ok(addressRefused(a), a);
  }
  assert.ok(addressRefused("::ffff:127.0.0.1"), "IPv4-mapped loopback");
  assert.ok(addressRefused("64:ff9b::a00:1"), "NAT64 of 10.0.0.1");
  for (const a of ["93.184.216.34", "172.32.0.1", "8.8.8.8", "2606:4700::1111"]) {
    assert.equal(addressRefused(a), undefined, a);
  }
});

Deno.test("sandbox net policy: the configured hosts are the model endpoints and the mesh URL", () => {
  const shown = (env: Record<string, string>, relay?: string) =>
    configuredHosts(sandboxSettingsFromEnv({}, "/", { runEnv: env }).providerUrls, relay).map(showEntry);
  assert.deepEqual(shown({}), ["api.anthropic.com:443", "api.openai.com:443"]);
  assert.deepEqual(
    shown(
      { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1", ANTHROPIC_BASE_URL: "https://proxy.corp" },
      "nats://n.corp",
    ),
    ["proxy.corp:443", "127.0.0.1:8080", "n.corp:4222"],
  );
  assert.deepEqual(
    shown({}, "nats://tok@a.corp:4222, nats://b.corp:4223,wss://nowhere").slice(2),
    ["a.corp:4222", "b.corp:4223", "nowhere:443"],
    "each server of a cluster list (credentials are not part of a host)",
  );
  assert.deepEqual(shown({ ANTHROPIC_BASE_URL: "", OPENAI_BASE_URL: "" }), [
    "api.anthropic.com:443",
    "api.openai.com:443",
  ], "an empty base URL is the public endpoint");
});
