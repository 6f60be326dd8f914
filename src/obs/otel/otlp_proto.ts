/**
 * The OTLP protobuf encoding of an `ExportTraceServiceRequest` (opentelemetry-proto
 * `collector/trace/v1`), written for the spans `lean_tracer.ts` records: the bytes the official
 * `ProtobufTraceSerializer` (`@opentelemetry/otlp-transformer`) writes for the same spans, field
 * for field (a test compares the two byte for byte), at a fraction of its cost.
 *
 * Layer: obs. Loaded with `export.ts` only.
 *
 * Why not the official serializer: it makes two passes over every span (a size estimate, then the
 * write), decodes every hex id into a fresh array each time and encodes every attribute key anew;
 * for the many small spans of a fast run that was the largest part of exporting it
 * (`deno task bench otel`). Here the message is written back to front in one pass — a nested
 * message's length is known when its start is reached — so nothing is measured twice; attribute
 * keys and span names, which repeat, are encoded once per process (a bounded cache).
 *
 * Invariants: the output is exactly the official encoding of the same spans (same field order,
 * same defaults written: dropped counts, status code, flags with the remote bits); events and
 * links are written as the official serializer writes them (the lean tracer records neither
 * events nor, from our callers, links, but the encoding does not depend on that).
 */
import type { Attributes, AttributeValue, HrTime, Link, SpanContext, SpanStatus } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";

const utf8 = new TextEncoder();

/** UTF-8 bytes of strings that repeat (keys, names), bounded. */
const known = new Map<string, Uint8Array>();
const KNOWN_MAX = 4096;

const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;
  HEX_VALUE["0123456789ABCDEF".charCodeAt(i)] = i;
}

/** Writes a protobuf message from its end to its start. */
class BackWriter {
  buf: Uint8Array;
  view: DataView;
  pos: number;

  constructor(size = 64 * 1024) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
    this.pos = size;
  }

  /** Room for `n` more bytes before `pos`. */
  room(n: number): void {
    if (this.pos >= n) return;
    const used = this.buf.length - this.pos;
    let size = this.buf.length * 2;
    while (size - used < n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(this.pos), size - used);
    this.buf = next;
    this.view = new DataView(next.buffer);
    this.pos = size - used;
  }

  /** The bytes written (a view: valid until the next write). */
  get bytes(): Uint8Array {
    return this.buf.subarray(this.pos);
  }

  varint(v: number): void {
    if (v >= 0 && v <= 0xffffffff) {
      let n = 1;
      for (let x = v >>> 7; x !== 0; x >>>= 7) n++;
      this.room(n);
      let p = (this.pos -= n);
      let x = v >>> 0;
      while (x > 127) {
        this.buf[p++] = (x & 127) | 128;
        x >>>= 7;
      }
      this.buf[p] = x;
      return;
    }
    // 64 bits, two's complement for a negative value (ten bytes then)
    let big = BigInt.asUintN(64, BigInt(v));
    const out: number[] = [];
    while (big > 127n) {
      out.push(Number(big & 127n) | 128);
      big >>= 7n;
    }
    out.push(Number(big));
    this.room(out.length);
    this.pos -= out.length;
    this.buf.set(out, this.pos);
  }

  tag(field: number, wire: number): void {
    const t = (field << 3) | wire;
    if (t < 128) {
      this.room(1);
      this.buf[--this.pos] = t;
    } else this.varint(t);
  }

  /** A length-delimited field whose content was written since `end` (the `pos` before it). */
  close(field: number, end: number): void {
    this.varint(end - this.pos);
    this.tag(field, 2);
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.pos -= bytes.length;
    this.buf.set(bytes, this.pos);
  }

  string(s: string): void {
    const before = this.pos;
    const n = s.length;
    let ascii = true;
    for (let i = 0; i < n; i++) {
      if (s.charCodeAt(i) > 127) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      this.room(n);
      const p = (this.pos -= n);
      for (let i = 0; i < n; i++) this.buf[p + i] = s.charCodeAt(i);
    } else this.raw(utf8.encode(s));
    this.varint(before - this.pos);
  }

  /** A string that repeats: its bytes from the cache. */
  knownString(s: string): void {
    let b = known.get(s);
    if (!b) {
      b = utf8.encode(s);
      if (known.size >= KNOWN_MAX) known.clear();
      known.set(s, b);
    }
    this.raw(b);
    this.varint(b.length);
  }

  /** An id given as hex, as bytes (`bytes` field content with its length). */
  hexBytes(hex: string): void {
    const n = hex.length >> 1;
    this.room(n);
    const p = (this.pos -= n);
    for (let i = 0; i < n; i++) {
      const hi = HEX_VALUE[hex.charCodeAt(2 * i)], lo = HEX_VALUE[hex.charCodeAt(2 * i + 1)];
      this.buf[p + i] = ((hi < 0 ? 0 : hi) << 4) | (lo < 0 ? 0 : lo);
    }
    this.varint(n);
  }

  fixed32(v: number): void {
    this.room(4);
    this.pos -= 4;
    this.view.setUint32(this.pos, v >>> 0, true);
  }

  double(v: number): void {
    this.room(8);
    this.pos -= 8;
    this.view.setFloat64(this.pos, v, true);
  }

  /** An HrTime as fixed64 nanoseconds. */
  time(t: HrTime): void {
    this.room(8);
    this.pos -= 8;
    this.view.setBigUint64(
      this.pos,
      BigInt(Math.round(t[0])) * 1_000_000_000n + BigInt(Math.round(t[1])),
      true,
    );
  }
}

function anyValue(w: BackWriter, v: AttributeValue | unknown): void {
  if (typeof v === "string") {
    w.string(v);
    w.tag(1, 2);
  } else if (typeof v === "boolean") {
    w.varint(v ? 1 : 0);
    w.tag(2, 0);
  } else if (typeof v === "number") {
    if (Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63) {
      w.varint(v);
      w.tag(3, 0);
    } else {
      w.double(v);
      w.tag(4, 1);
    }
  } else if (v instanceof Uint8Array) {
    w.raw(v);
    w.varint(v.length);
    w.tag(7, 2);
  } else if (Array.isArray(v)) {
    const end = w.pos;
    for (let i = v.length - 1; i >= 0; i--) {
      const e = w.pos;
      anyValue(w, v[i]);
      w.close(1, e);
    }
    w.close(5, end);
  } else if (typeof v === "object" && v !== null) {
    const end = w.pos;
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const kv = w.pos;
      const val = w.pos;
      anyValue(w, (v as Record<string, unknown>)[keys[i]]);
      w.close(2, val);
      w.knownString(keys[i]);
      w.tag(1, 2);
      w.close(1, kv);
    }
    w.close(6, end);
  }
}

/** Repeated KeyValue `field` of `attrs`, in the object's key order. */
function attributes(w: BackWriter, attrs: Attributes, field: number): void {
  const keys: string[] = [];
  for (const k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) keys.push(k);
  for (let i = keys.length - 1; i >= 0; i--) {
    const kv = w.pos;
    const val = w.pos;
    anyValue(w, attrs[keys[i]]);
    w.close(2, val);
    w.knownString(keys[i]);
    w.tag(1, 2);
    w.close(field, kv);
  }
}

function flags(traceFlags: number, remote: boolean | undefined): number {
  return (traceFlags & 255) | 256 | (remote ? 512 : 0);
}

function status(w: BackWriter, s: SpanStatus): void {
  const end = w.pos;
  w.varint(s.code);
  w.tag(3, 0);
  if (s.message) {
    w.string(s.message);
    w.tag(2, 2);
  }
  w.close(15, end);
}

/**
 * Fields 1-3 of a `Span` and of a `Span.Link` alike (written last, as this writer goes
 * backwards): trace id, span id and, when there is one, the trace state.
 */
function identity(w: BackWriter, c: SpanContext): void {
  const ts = c.traceState?.serialize();
  if (ts) {
    w.string(ts);
    w.tag(3, 2);
  }
  w.hexBytes(c.spanId);
  w.tag(2, 2);
  w.hexBytes(c.traceId);
  w.tag(1, 2);
}

function link(w: BackWriter, l: Link): void {
  const end = w.pos;
  const c = l.context;
  w.fixed32(flags(c.traceFlags, c.isRemote));
  w.tag(6, 5);
  w.varint(l.droppedAttributesCount ?? 0);
  w.tag(5, 0);
  if (l.attributes) attributes(w, l.attributes, 4);
  identity(w, c);
  w.close(13, end);
}

function span(w: BackWriter, s: ReadableSpan): void {
  const end = w.pos;
  const ctx = s.spanContext();
  w.fixed32(flags(ctx.traceFlags, s.parentSpanContext?.isRemote));
  w.tag(16, 5);
  status(w, s.status);
  w.varint(s.droppedLinksCount);
  w.tag(14, 0);
  for (let i = s.links.length - 1; i >= 0; i--) link(w, s.links[i]);
  w.varint(s.droppedEventsCount);
  w.tag(12, 0);
  for (let i = s.events.length - 1; i >= 0; i--) {
    const ev = s.events[i];
    const e = w.pos;
    w.varint(ev.droppedAttributesCount || 0);
    w.tag(4, 0);
    if (ev.attributes) attributes(w, ev.attributes, 3);
    w.string(ev.name);
    w.tag(2, 2);
    w.time(ev.time);
    w.tag(1, 1);
    w.close(11, e);
  }
  w.varint(s.droppedAttributesCount);
  w.tag(10, 0);
  if (s.attributes) attributes(w, s.attributes, 9);
  w.time(s.endTime);
  w.tag(8, 1);
  w.time(s.startTime);
  w.tag(7, 1);
  const kind = s.kind == null ? 0 : s.kind + 1;
  if (kind !== 0) {
    w.varint(kind);
    w.tag(6, 0);
  }
  w.knownString(s.name);
  w.tag(5, 2);
  if (s.parentSpanContext?.spanId) {
    w.hexBytes(s.parentSpanContext.spanId);
    w.tag(4, 2);
  }
  identity(w, ctx);
  w.close(2, end);
}

/** The OTLP protobuf `ExportTraceServiceRequest` of `spans` (grouped by resource, then scope). */
export function encodeTraces(spans: readonly ReadableSpan[]): Uint8Array {
  const groups = new Map<unknown, Map<unknown, ReadableSpan[]>>();
  for (const s of spans) {
    let scopes = groups.get(s.resource);
    if (!scopes) groups.set(s.resource, scopes = new Map());
    let list = scopes.get(s.instrumentationScope);
    if (!list) scopes.set(s.instrumentationScope, list = []);
    list.push(s);
  }
  const w = new BackWriter(Math.max(1024, spans.length * 512));
  const resources = [...groups.values()];
  for (let r = resources.length - 1; r >= 0; r--) {
    const scopes = [...resources[r].values()];
    const resource = scopes[0][0].resource;
    const rs = w.pos;
    if (resource.schemaUrl) {
      w.string(resource.schemaUrl);
      w.tag(3, 2);
    }
    for (let i = scopes.length - 1; i >= 0; i--) {
      const list = scopes[i];
      // the scope's attributes are newer than the API's type of it; written when present
      const scope = list[0].instrumentationScope as ReadableSpan["instrumentationScope"] & {
        attributes?: Attributes;
        droppedAttributesCount?: number;
      };
      const ss = w.pos;
      if (scope.schemaUrl) {
        w.string(scope.schemaUrl);
        w.tag(3, 2);
      }
      for (let j = list.length - 1; j >= 0; j--) span(w, list[j]);
      const sc = w.pos;
      if (scope.droppedAttributesCount) {
        w.varint(scope.droppedAttributesCount);
        w.tag(4, 0);
      }
      if (scope.attributes) attributes(w, scope.attributes, 3);
      if (scope.version) {
        w.knownString(scope.version);
        w.tag(2, 2);
      }
      w.knownString(scope.name);
      w.tag(1, 2);
      w.close(1, sc);
      w.close(2, ss);
    }
    const res = w.pos;
    w.varint(0);
    w.tag(2, 0);
    if (resource.attributes) attributes(w, resource.attributes, 1);
    w.close(1, res);
    w.close(1, rs);
  }
  return w.bytes.slice();
}
