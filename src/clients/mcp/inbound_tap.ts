/**
 * Taps on a transport's inbound messages, ahead of the SDK.
 *
 * Owns one thing: seeing every message a transport delivers BEFORE the SDK's `Protocol` does,
 * and optionally consuming it. agent-block routes `notifications/progress` here because the SDK
 * dispatches notifications in a microtask but responses synchronously: a progress notification
 * that arrives in the same read as its result reaches the SDK after the request is settled and is
 * dropped ("unknown token"). Seen here, in wire order, none is lost. The HTTP transport taps too,
 * to know which requests have had their answer (`http_transport.ts`).
 *
 * How: `onmessage` becomes an accessor on the transport instance. Whatever the SDK (or its
 * version-negotiation probe window) assigns is kept as the downstream handler; the transport
 * itself always calls the taps first, in the order they were installed. Instance identity is
 * unchanged, so the SDK's structural checks on the transport (stdio vs HTTP, per-request
 * streams) still see the real object.
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport } from "@modelcontextprotocol/client";

type OnMessage = NonNullable<Transport["onmessage"]>;
type Tap = (message: JSONRPCMessage) => boolean;

const installed = new WeakMap<Transport, Tap[]>();

/** Installs `tap`; it returns true to consume a message (later taps and the SDK never see it). */
export function tapInbound(transport: Transport, tap: Tap): void {
  const existing = installed.get(transport);
  if (existing) {
    existing.push(tap);
    return;
  }
  const taps = [tap];
  installed.set(transport, taps);
  let downstream: OnMessage | undefined;
  const wrapped: OnMessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
    for (const t of taps) if (t(message)) return;
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
