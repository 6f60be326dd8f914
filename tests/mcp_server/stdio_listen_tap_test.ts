/**
 * `ListenTap` (`src/mcp_server/stdio.ts`) on a wire of its own: which 2026-07-28 listen streams
 * hold resources, and when they let go — the entry's acknowledgement holds what it honoured, the
 * client's cancel or the entry's final result releases it, and a closed connection releases
 * everything. The real stdio path (an `agent-block mcp` process and the SDK client) is
 * `resource_updates_test.ts`; this covers the edges a client cannot easily provoke.
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { SUBSCRIPTION_ID_META_KEY } from "@modelcontextprotocol/server";
import { Logger } from "../../src/obs/log.ts";
import { ListenTap } from "../../src/mcp_server/stdio.ts";
import { SharedSubscriptions } from "../../src/mcp_server/subscriptions.ts";
import { assertEquals } from "./mcp_helpers.ts";

/** A wire that records what is sent and lets the test deliver messages and close it. */
class FakeWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  sent: JSONRPCMessage[] = [];
  start(): Promise<void> {
    return Promise.resolve();
  }
  send(m: JSONRPCMessage): Promise<void> {
    this.sent.push(m);
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
}

function ack(id: number | string, uris?: string[]): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: {
      notifications: uris ? { resourceSubscriptions: uris } : { toolsListChanged: true },
      _meta: { [SUBSCRIPTION_ID_META_KEY]: id },
    },
  };
}

/** A tap whose shared subscriptions count holds per URI (nothing is watched: no URI has paths). */
async function tapped(): Promise<
  { tap: ListenTap; wire: FakeWire; held: Map<string, number>; seen: JSONRPCMessage[] }
> {
  const held = new Map<string, number>();
  const subs = new SharedSubscriptions({
    pathsOf: () => undefined,
    notify: () => Promise.resolve(),
    log: new Logger("t", "off"),
  });
  const hold = subs.hold.bind(subs);
  subs.hold = (uris) => {
    for (const u of uris) held.set(u, (held.get(u) ?? 0) + 1);
    const release = hold(uris);
    return () => {
      for (const u of uris) held.set(u, held.get(u)! - 1);
      release();
    };
  };
  const wire = new FakeWire();
  const tap = new ListenTap(wire, subs);
  const seen: JSONRPCMessage[] = [];
  tap.onmessage = (m) => seen.push(m);
  await tap.start();
  return { tap, wire, held, seen };
}

Deno.test("stdio listen tap: an acknowledged stream holds its resources until the client cancels it", async () => {
  const { tap, wire, held, seen } = await tapped();
  await tap.send(ack(7, ["a://1", "b://2"]));
  await tap.send(ack(8, ["a://1"]));
  // A stream that asked for no resources holds none.
  await tap.send(ack(9));
  assertEquals(tap.streams, 2);
  assertEquals(held.get("a://1"), 2);
  // Every message still goes through unchanged, both ways.
  assertEquals(wire.sent.length, 3);
  const cancel: JSONRPCMessage = {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 7 },
  };
  wire.onmessage?.(cancel);
  assertEquals(seen, [cancel]);
  assertEquals(tap.streams, 1);
  assertEquals([held.get("a://1"), held.get("b://2")], [1, 0]);
  // A cancel of another request (or a string id equal in digits) releases nothing.
  wire.onmessage?.({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "8" } });
  assertEquals(tap.streams, 1);
});

Deno.test("stdio listen tap: the entry's final result ends a stream; a closed connection ends them all", async () => {
  const { tap, wire, held } = await tapped();
  await tap.send(ack("s1", ["a://1"]));
  await tap.send(ack("s2", ["b://2"]));
  await tap.send({ jsonrpc: "2.0", id: "s1", result: { resultType: "complete" } });
  assertEquals(tap.streams, 1);
  assertEquals(held.get("a://1"), 0);
  // The same stream acknowledged again replaces what it held (never counted twice).
  await tap.send(ack("s2", ["b://2"]));
  assertEquals(held.get("b://2"), 1);
  await wire.close();
  assertEquals(tap.streams, 0);
  assertEquals(held.get("b://2"), 0);
});
