/**
 * The OpenTelemetry context of a span whose parent lives in another process (a `traceparent`
 * carried by a request, a mesh message or a flow step): the root context when there is none.
 * One place, so every span that continues a remote trace marks it remote and keeps its sampling.
 */
import { type Context, ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";
import type { TraceParent } from "./settings.ts";

/** The context to start a span in under `parent` (a remote span), or the root context. */
export function remoteParentContext(parent: TraceParent | undefined): Context {
  return parent
    ? trace.setSpanContext(ROOT_CONTEXT, {
      traceId: parent.traceId,
      spanId: parent.spanId,
      traceFlags: parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
      isRemote: true,
    })
    : ROOT_CONTEXT;
}
