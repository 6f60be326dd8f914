/**
 * OpenTelemetry settings of a run: the typed form of the standard `OTEL_*` variables, parsed at
 * the edge (CLI, MCP server, `serve`, SDK) and carried through the run as plain data
 * (`RunRequest.telemetry`), plus the W3C `traceparent` codec.
 *
 * Layer: obs. Pure: nothing here reads the process environment; the edge hands `telemetryFromEnv`
 * the environment it resolved (the process's with the project's `.env` layered in). Nothing here
 * loads the OpenTelemetry packages either: a run without settings never imports them (see
 * `export.ts` for the exporter and why it is the official SDK, not Deno's built-in one).
 *
 * Variables read (the standard ones; the signal-specific `OTEL_EXPORTER_OTLP_TRACES_*` /
 * `_METRICS_*` win over the general ones for their signal):
 * - `OTEL_SDK_DISABLED=true`: no telemetry at all.
 * - `OTEL_EXPORTER_OTLP_ENDPOINT` (base URL: `/v1/traces`, `/v1/metrics` are appended),
 *   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `_METRICS_ENDPOINT` (used as given). No endpoint: off.
 * - `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the default, or `http/json`; `grpc` is refused:
 *   there is no gRPC transport here).
 * - `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`, values percent-decoded).
 * - `OTEL_EXPORTER_OTLP_TIMEOUT` (ms, default 10 000): the bound of one export, and of the flush
 *   at a run's end.
 * - `OTEL_SERVICE_NAME` (default `agent-block`), `OTEL_RESOURCE_ATTRIBUTES` (`k=v,...`).
 * - `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: message and tool contents on spans
 *   (masked by the run's secrets); off by default.
 * Metrics are sent at the end of each run (no export interval: `export.ts`).
 *
 * Invariants: a bad value is a `TelemetrySettingsError` naming the variable and the value, never
 * a silent default; `telemetryFromEnv` returns `undefined` exactly when nothing is to be exported.
 */
import { AgentBlockError } from "../../errors.ts";

/**
 * The run's telemetry settings: where and how its spans and metrics are exported. Plain JSON
 * data (it travels in a `RunRequest` to a child process).
 *
 * ```ts
 * import type { TelemetrySettings } from "@agent-block/agent-block";
 * const settings: TelemetrySettings = {
 *   tracesEndpoint: "http://127.0.0.1:4318/v1/traces",
 *   protocol: "http/json",
 *   timeoutMs: 2_000,
 *   serviceName: "ci-agents",
 * };
 * ```
 */
export interface TelemetrySettings {
  /** URL spans are POSTed to (`.../v1/traces`). */
  tracesEndpoint: string;
  /** URL metrics are POSTed to (`.../v1/metrics`); absent: no metrics are exported. */
  metricsEndpoint?: string;
  /** The OTLP encoding. */
  protocol: "http/protobuf" | "http/json";
  /** Headers of every export request (credentials of the collector: they are secrets of the run). */
  headers?: Record<string, string>;
  /** Bound of one export and of the flush at the run's end, ms. */
  timeoutMs: number;
  /** `service.name` of the resource. */
  serviceName: string;
  /** More resource attributes. */
  resourceAttributes?: Record<string, string>;
  /** Put message and tool contents on spans (opt-in). */
  captureContent?: boolean;
}

/**
 * A bad `OTEL_*` value; the message names the variable. Exit code 1 (the run never starts).
 *
 * ```ts
 * import { telemetryFromEnv, TelemetrySettingsError } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * assert.throws(
 *   () => telemetryFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
 *   (e) => e instanceof TelemetrySettingsError && e.exitCode === 1 && /OTEL_EXPORTER_OTLP_PROTOCOL/.test(e.message),
 * );
 * ```
 */
export class TelemetrySettingsError extends AgentBlockError {
  /**
   * An error naming the variable and what was wrong with it.
   * @param message the whole message
   */
  constructor(message: string) {
    super(message, 1);
    this.name = "TelemetrySettingsError";
  }
}

const truthy = (v: string | undefined) => v !== undefined && /^(true|1)$/i.test(v.trim());

function list(name: string, raw: string | undefined): Record<string, string> | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const out: Record<string, string> = {};
  for (const part of raw.split(",")) {
    if (part.trim() === "") continue;
    const eq = part.indexOf("=");
    if (eq <= 0) throw new TelemetrySettingsError(`${name}: '${part.trim()}' is not key=value`);
    let value: string;
    try {
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw new TelemetrySettingsError(
        `${name}: the value of '${part.slice(0, eq).trim()}' is badly percent-encoded`,
      );
    }
    out[part.slice(0, eq).trim()] = value;
  }
  return out;
}

function millis(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) {
    throw new TelemetrySettingsError(`${name} must be a positive whole number of milliseconds, got '${raw}'`);
  }
  return n;
}

function url(name: string, raw: string): string {
  try {
    const u = new URL(raw);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    return u.href;
  } catch {
    throw new TelemetrySettingsError(`${name} must be an http(s) URL, got '${raw}'`);
  }
}

/** `base` with `path` appended (the OTLP rule for the general endpoint). */
function under(base: string, path: string): string {
  return base.endsWith("/") ? base + path : `${base}/${path}`;
}

/**
 * The settings the standard `OTEL_*` variables of `env` describe, or `undefined` when nothing is
 * to be exported (no endpoint, or `OTEL_SDK_DISABLED=true`). Throws `TelemetrySettingsError`.
 *
 * @example Export a run's spans where the standard variables say
 * ```ts
 * import { BlockConfig, runBlock, ScriptSource, telemetryFromEnv } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SERVICE_NAME: "nightly" };
 * const settings = telemetryFromEnv(env);
 * assert.equal(settings?.tracesEndpoint, "http://127.0.0.1:4318/v1/traces");
 * assert.equal(telemetryFromEnv({}), undefined); // no endpoint: nothing exported, nothing loaded
 * const config = BlockConfig.builder(ScriptSource.inline("return 1", "one.lua"), ".")
 *   .env({})
 *   .telemetry(settings)
 *   .build();
 * assert.equal(config.telemetry?.serviceName, "nightly");
 * void runBlock; // runBlock(config) would export to the collector at that address
 * ```
 */
export function telemetryFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): TelemetrySettings | undefined {
  const get = (k: string) => {
    const v = env[k];
    return v === undefined || v.trim() === "" ? undefined : v.trim();
  };
  if (truthy(get("OTEL_SDK_DISABLED"))) return undefined;
  const base = get("OTEL_EXPORTER_OTLP_ENDPOINT");
  const tracesRaw = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const metricsRaw = get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
  if (base === undefined && tracesRaw === undefined) return undefined;
  const tracesEndpoint = tracesRaw !== undefined
    ? url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", tracesRaw)
    : under(url("OTEL_EXPORTER_OTLP_ENDPOINT", base!), "v1/traces");
  const metricsEndpoint = metricsRaw !== undefined
    ? url("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", metricsRaw)
    : base !== undefined
    ? under(url("OTEL_EXPORTER_OTLP_ENDPOINT", base), "v1/metrics")
    : undefined;
  const protoName = get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") !== undefined
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = get(protoName) ?? "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    throw new TelemetrySettingsError(
      `${protoName} must be http/protobuf or http/json, got '${protocol}'` +
        (protocol === "grpc" ? " (agent-block exports over HTTP only)" : ""),
    );
  }
  const headers = {
    ...list("OTEL_EXPORTER_OTLP_HEADERS", get("OTEL_EXPORTER_OTLP_HEADERS")),
    ...list("OTEL_EXPORTER_OTLP_TRACES_HEADERS", get("OTEL_EXPORTER_OTLP_TRACES_HEADERS")),
  };
  const out: TelemetrySettings = {
    tracesEndpoint,
    protocol,
    timeoutMs: millis("OTEL_EXPORTER_OTLP_TIMEOUT", get("OTEL_EXPORTER_OTLP_TIMEOUT"), 10_000),
    serviceName: get("OTEL_SERVICE_NAME") ?? "agent-block",
  };
  if (metricsEndpoint !== undefined) out.metricsEndpoint = metricsEndpoint;
  if (Object.keys(headers).length) out.headers = headers;
  const attrs = list("OTEL_RESOURCE_ATTRIBUTES", get("OTEL_RESOURCE_ATTRIBUTES"));
  if (attrs) out.resourceAttributes = attrs;
  if (truthy(get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"))) out.captureContent = true;
  return out;
}

/**
 * What agent-block needs of an embedder's OpenTelemetry tracer provider: `@opentelemetry/api`'s
 * `TracerProvider` (the SDK's, Deno's built-in one) is one.
 *
 * ```ts
 * import type { OtelTracerProvider } from "@agent-block/agent-block";
 * import { trace } from "@opentelemetry/api";
 * const provider: OtelTracerProvider = trace.getTracerProvider(); // whatever is registered
 * void provider;
 * ```
 */
export interface OtelTracerProvider {
  /** A tracer (an `@opentelemetry/api` `Tracer`). */
  getTracer(name: string, version?: string): unknown;
}

/**
 * What agent-block needs of an embedder's OpenTelemetry meter provider: `@opentelemetry/api`'s
 * `MeterProvider` is one.
 *
 * ```ts
 * import type { OtelMeterProvider } from "@agent-block/agent-block";
 * import { metrics } from "@opentelemetry/api";
 * const provider: OtelMeterProvider = metrics.getMeterProvider();
 * void provider;
 * ```
 */
export interface OtelMeterProvider {
  /** A meter (an `@opentelemetry/api` `Meter`). */
  getMeter(name: string, version?: string): unknown;
}

/** A parsed W3C `traceparent`: the caller's trace and span. */
export interface TraceParent {
  /** 32 lower-case hex digits, not all zero. */
  traceId: string;
  /** 16 lower-case hex digits, not all zero. */
  spanId: string;
  /** Whether the caller sampled it. */
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * `header` as a W3C traceparent, or `undefined` when it is not one (an invalid one is ignored, as
 * the W3C rule says: the run starts a trace of its own). Version `ff` and all-zero ids are
 * invalid; a version-00 header has exactly four fields.
 */
export function parseTraceparent(header: string | undefined): TraceParent | undefined {
  if (header === undefined) return undefined;
  const m = TRACEPARENT.exec(header.trim().toLowerCase());
  if (!m || m[1] === "ff" || (m[1] === "00" && m[5] !== undefined)) return undefined;
  if (/^0+$/.test(m[2]) || /^0+$/.test(m[3])) return undefined;
  return { traceId: m[2], spanId: m[3], sampled: (parseInt(m[4], 16) & 1) === 1 };
}

/** The W3C traceparent header of a span. */
export function formatTraceparent(traceId: string, spanId: string, sampled = true): string {
  return `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`;
}
