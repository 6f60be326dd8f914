/**
 * The proxy's name resolution (`src/sandbox/net_resolve.ts`): the system resolver's answers
 * through libc, matched against `node:dns`'s `lookup` (the same `getaddrinfo` underneath), and
 * IPv6 addresses written as RFC 5952 says.
 */
import assert from "node:assert/strict";
import { lookup } from "node:dns/promises";
import { ipv6Text, resolveHost } from "../../src/sandbox/net_resolve.ts";

const linux = Deno.build.os === "linux";

Deno.test("proxy resolver: IPv6 text is lower-case with the first longest run of zeros as ::", () => {
  assert.equal(ipv6Text([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1]), "2001:db8::1:0:0:1");
  assert.equal(ipv6Text([0, 0, 0, 0, 0, 0, 0, 1]), "::1");
  assert.equal(ipv6Text([0, 0, 0, 0, 0, 0, 0, 0]), "::");
  assert.equal(ipv6Text([0xfe80, 0, 0, 0, 0xabcd, 0, 0, 0]), "fe80::abcd:0:0:0");
  assert.equal(ipv6Text([1, 0, 2, 0, 3, 0, 4, 0]), "1:0:2:0:3:0:4:0", "a single zero group stays");
  assert.equal(ipv6Text([0xABCD, 1, 0, 0, 0, 0, 0, 0]), "abcd:1::");
});

Deno.test({
  name: "proxy resolver: names and literals resolve as node:dns resolves them; an unknown name throws",
  ignore: !linux,
  fn: async () => {
    // /etc/hosts is read (localhost is there on every Linux)
    const ours = await resolveHost("localhost");
    const theirs = [
      ...new Set((await lookup("localhost", { all: true, verbatim: true })).map((a) => a.address)),
    ];
    assert.deepEqual(ours, theirs);
    assert.ok(ours.includes("127.0.0.1") || ours.includes("::1"), ours.join(", "));
    // literals come back as addresses, IPv6 in its RFC 5952 form (node:dns echoes the text given)
    assert.deepEqual(await resolveHost("127.0.0.1"), ["127.0.0.1"]);
    assert.deepEqual(await resolveHost("2001:DB8::0:1"), ["2001:db8::1"]);
    await assert.rejects(
      () => resolveHost("no-such-host.invalid"),
      /^Error: getaddrinfo no-such-host\.invalid: /,
    );
  },
});
