/**
 * The seam between a run and its tracing: what host modules call when the run is traced.
 *
 * Layer: obs. Types only (nothing to load): the implementation (`tracer.ts`, over
 * `@opentelemetry/api`) is imported by the runner only when the run has telemetry settings or an
 * embedder's tracer provider. An untraced run has no `RunTrace` at all (`RunContext.trace` is
 * `undefined`) and every call site is one `undefined` check: no span objects, no header
 * formatting, no decoding of kernel rows.
 *
 * Where the spans come from (see `tracer.ts` for the tree):
 * - kernel rows as the Lua kernel hands them to the host (`rows`): sessions, turns (beats),
 *   model calls (`chat <model>`, usage taken from the very `llm_response` row the kernel stores,
 *   so exported numbers equal the kernel's) and tool calls (`execute_tool <name>`);
 * - host calls that act on the world (`start`): MCP requests, `sh.exec`, `http.request`, mesh
 *   requests and sends, and (with the sender's `traceparent` as a remote parent) the mesh
 *   messages the run's handler answers;
 * - model HTTP requests (`modelFetch`): the `traceparent` header, `server.address`, time to the
 *   first chunk, and with content capture the system instructions and input messages as sent.
 * Parents: a span's parent is the innermost span still open when it starts (an MCP call inside a
 * tool is that tool's child; a tool's sub-agent session hangs under the tool). Lua's tasks are
 * cooperative, so with several tasks working at once a span may be filed under a sibling's open
 * span; the trace id is right either way.
 */

/** Attribute values a span takes. */
export type TraceAttrs = Record<string, string | number | boolean | string[] | undefined>;

/** The OpenTelemetry span kinds, by name. */
export type SpanKindName = "internal" | "client" | "server" | "producer" | "consumer";

/** One span a host call opened. */
export interface TraceSpan {
  /** Adds attributes. */
  set(attrs: TraceAttrs): void;
  /** Marks it failed (`error.type`, status ERROR with `message`). */
  fail(errorType: string, message?: string): void;
  /** Ends it (once; later calls do nothing). */
  end(): void;
  /** Its W3C `traceparent` header (for the request it stands for). */
  traceparent(): string;
}

/** A kernel row as handed to the host: its session, kind and JSON texts. */
export interface TracedRow {
  /** Session (stream) id. */
  stream: string;
  /** Event kind. */
  kind: string;
  /** JSON object text of the payload (already masked by the run's secrets). */
  data: string;
  /** JSON object text of the labels (`beat`). */
  meta: string;
}

/** What a traced run offers its host modules. */
export interface RunTrace {
  /** Kernel rows just handed to the host, in order (before they commit). */
  rows(rows: readonly TracedRow[]): void;
  /**
   * Opens a span under the innermost open one (`kind`: client for calls out, producer for a
   * one-way message out, server / consumer for a request or message in, internal else); with
   * `remoteParent` (a W3C traceparent another process sent with the request) under that span
   * instead, so the work it does joins the caller's trace. Until it ends it is the innermost
   * open span: what the run does meanwhile goes under it.
   */
  start(name: string, kind: SpanKindName, attrs?: TraceAttrs, remoteParent?: string): TraceSpan;
  /**
   * The `fetch` of model requests, wrapped: traceparent out, server address, first chunk; with
   * content capture, the request's messages (`mask`: the run's secrets over a JSON text).
   */
  modelFetch(inner: typeof fetch, mask: (json: string) => string): typeof fetch;
  /** Records one MCP client request's duration (`mcp.client.operation.duration`). */
  mcpDuration(seconds: number, attrs: TraceAttrs): void;
  /** Whether message and tool contents go on spans (opt-in). */
  readonly captureContent: boolean;
}
