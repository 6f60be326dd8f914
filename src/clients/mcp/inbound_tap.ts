/**
 * A tap on a transport's inbound messages, ahead of the SDK.
 *
 * Owns one thing: seeing every message a transport delivers BEFORE the SDK's `Protocol` does,
 * and optionally consuming it. agent-block routes `notifications/progress` here because the SDK
 * dispatches notifications in a microtask but responses synchronously: a progress notification
 * that arrives in the same read as its result reaches the SDK after the request is settled and is
 * dropped ("unknown token"). Seen here, in wire order, none is lost.
 *
 * How: `onmessage` becomes an accessor on the transport instance. Whatever the SDK (or its
 * version-negotiation probe window) assigns is kept as the downstream handler; the transport
 * itself always calls the tap first. Instance identity is unchanged, so the SDK's structural
 * checks on the transport (stdio vs HTTP, per-request streams) still see the real object.
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport } from "@modelcontextprotocol/client";

type OnMessage = NonNullable<Transport["onmessage"]>;

/** Installs `tap`; it returns true to consume a message (the SDK then never sees it). */
export function tapInbound(transport: Transport, tap: (message: JSONRPCMessage) => boolean): void {
  let downstream: OnMessage | undefined;
  const wrapped: OnMessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
    if (tap(message)) return;
    downstream?.(message, extra);
  };
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => (downstream ? wrapped : undefined),
    set: (fn: OnMessage | undefined) => {
      // A handler saved from this getter and restored later is the wrapper itself: keep the
      // downstream it stands for instead of looping through it.
      if (fn !== wrapped) downstream = fn;
    },
  });
}
