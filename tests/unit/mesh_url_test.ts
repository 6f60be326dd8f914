// The --relay URL rules (src/clients/mesh/connect.ts): what is taken, and messages that never
// show a credential, whichever URL of a list carries it.
import assert from "node:assert/strict";
import { meshUrlProblem, parseMeshUrl, shownUrl } from "../../src/clients/mesh/connect.ts";

Deno.test("mesh url: nats lists form a cluster, a ws(s) URL is the relay", () => {
  assert.deepEqual(parseMeshUrl("nats://a:4222, nats://b:4222"), {
    kind: "nats",
    target: { servers: ["a:4222", "b:4222"], shown: "nats://a:4222,nats://b:4222", auth: {}, tls: false },
  });
  // tls:// (as hosted NATS services write their URLs) asks for TLS; credentials leave the URL
  assert.deepEqual(parseMeshUrl("tls://tok@connect.example, nats://[::1]"), {
    kind: "nats",
    target: {
      servers: ["connect.example:4222", "[::1]:4222"],
      shown: "tls://connect.example:4222,nats://[::1]:4222",
      auth: { token: "tok" },
      tls: true,
    },
  });
  assert.match(
    meshUrlProblem("nats://a:4222/x") ?? "",
    /^--relay: 'nats:\/\/a:4222' is not a NATS URL \(write/,
  );
  assert.deepEqual(parseMeshUrl("wss://relay.example/ws"), { kind: "relay", url: "wss://relay.example/ws" });
  assert.equal(meshUrlProblem("nats://a:4222"), undefined);
});

Deno.test("attack: mesh url messages show no credential of any URL in a list", () => {
  assert.equal(shownUrl("nats://tok1@a:4222,nats://u:p@b:4222"), "nats://a:4222,nats://b:4222");
  const why = meshUrlProblem("nats://tok1@a:4222,ws://u:secret@b/ws", "--relay");
  assert.ok(why !== undefined);
  assert.match(why, /^--relay: only nats:\/\/ and tls:\/\/ URLs can be listed/);
  assert.doesNotMatch(why, /tok1|secret/);
});
