/**
 * An OTLP/HTTP receiver for tests: one `Deno.serve` on 127.0.0.1 (ephemeral port) that records
 * every export request (path, headers, raw bytes) and, for `http/json`, the spans and metrics in
 * them, flattened; `hang` makes it accept requests and never answer (a dead collector).
 * No collector is installed here: the JSON form is the official OTLP JSON encoding, and a
 * protobuf request is kept as bytes (its strings are readable in them).
 */

/** One attribute value as OTLP JSON carries it, made plain. */
export type AttrValue = string | number | boolean | AttrValue[] | undefined;

/** A span as received, flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  start: number;
  end: number;
  attributes: Record<string, AttrValue>;
  status: { code?: number; message?: string };
  service: string;
}

/** A metric data point as received. */
export interface ReceivedPoint {
  metric: string;
  attributes: Record<string, AttrValue>;
  sum?: number;
  count?: number;
  value?: number;
}

/** One request the receiver got. */
export interface ReceivedRequest {
  path: string;
  contentType: string;
  headers: Record<string, string>;
  bytes: Uint8Array;
}

function plain(v: Record<string, unknown> | undefined): AttrValue {
  if (!v) return undefined;
  if ("stringValue" in v) return v.stringValue as string;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("boolValue" in v) return v.boolValue as boolean;
  if ("arrayValue" in v) {
    return ((v.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(plain);
  }
  return undefined;
}

function attrs(
  list: { key: string; value: Record<string, unknown> }[] | undefined,
): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const a of list ?? []) out[a.key] = plain(a.value);
  return out;
}

const nanosToMs = (n: unknown) => Number(BigInt(String(n ?? 0)) / 1000n) / 1000;

/** The receiver. */
export class OtlpReceiver {
  readonly requests: ReceivedRequest[] = [];
  readonly spans: ReceivedSpan[] = [];
  readonly points: ReceivedPoint[] = [];
  readonly url: string;
  #server: Deno.HttpServer<Deno.NetAddr>;
  #hang = false;
  #hanging: (() => void)[] = [];

  constructor(opts: { hang?: boolean } = {}) {
    this.#hang = opts.hang === true;
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (req) => this.#handle(req),
    );
    this.url = `http://127.0.0.1:${this.#server.addr.port}`;
  }

  async #handle(req: Request): Promise<Response> {
    const bytes = new Uint8Array(await req.arrayBuffer());
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => (headers[k] = v));
    const path = new URL(req.url).pathname;
    const contentType = req.headers.get("content-type") ?? "";
    this.requests.push({ path, contentType, headers, bytes });
    if (this.#hang) {
      await new Promise<void>((r) => this.#hanging.push(r));
      return new Response("late", { status: 503 });
    }
    if (contentType.startsWith("application/json")) {
      const body = JSON.parse(new TextDecoder().decode(bytes));
      if (path === "/v1/traces") this.#takeSpans(body);
      if (path === "/v1/metrics") this.#takeMetrics(body);
    }
    return new Response("{}", { headers: { "content-type": contentType || "application/json" } });
  }

  // deno-lint-ignore no-explicit-any
  #takeSpans(body: any) {
    for (const rs of body.resourceSpans ?? []) {
      const service = String(attrs(rs.resource?.attributes)["service.name"] ?? "");
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? "",
            name: s.name,
            kind: s.kind,
            start: nanosToMs(s.startTimeUnixNano),
            end: nanosToMs(s.endTimeUnixNano),
            attributes: attrs(s.attributes),
            status: s.status ?? {},
            service,
          });
        }
      }
    }
  }

  // deno-lint-ignore no-explicit-any
  #takeMetrics(body: any) {
    for (const rm of body.resourceMetrics ?? []) {
      for (const sm of rm.scopeMetrics ?? []) {
        for (const m of sm.metrics ?? []) {
          const points = m.histogram?.dataPoints ?? m.sum?.dataPoints ?? m.gauge?.dataPoints ?? [];
          // deno-lint-ignore no-explicit-any
          for (const p of points as any[]) {
            this.points.push({
              metric: m.name,
              attributes: attrs(p.attributes),
              sum: p.sum !== undefined ? Number(p.sum) : undefined,
              count: p.count !== undefined ? Number(p.count) : undefined,
              value: p.asInt !== undefined
                ? Number(p.asInt)
                : p.asDouble !== undefined
                ? Number(p.asDouble)
                : undefined,
            });
          }
        }
      }
    }
  }

  /** The spans named `name`. */
  named(name: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.name === name);
  }

  /** The one span named `name` (throws when there are none or several). */
  one(name: string): ReceivedSpan {
    const found = this.named(name);
    if (found.length !== 1) {
      throw new Error(
        `expected one span '${name}', got ${found.length}: ${this.spans.map((s) => s.name).join(", ")}`,
      );
    }
    return found[0];
  }

  /** Every byte received, as text (for "this never appears" checks). */
  allText(): string {
    const d = new TextDecoder("utf-8", { fatal: false });
    return this.requests.map((r) => d.decode(r.bytes) + JSON.stringify(r.headers)).join("\n");
  }

  /** Stops (answers whatever hangs). */
  async close(): Promise<void> {
    for (const r of this.#hanging.splice(0)) r();
    await this.#server.shutdown();
  }
}
