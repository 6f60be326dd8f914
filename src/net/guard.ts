/**
 * The HTTP guard: the checks every request to an agent-block HTTP endpoint passes before any
 * handler sees it. Used by `agent-block mcp --http` (`src/mcp_server/http.ts`) and the `serve`
 * API (`src/serve/api.ts`), so both endpoints refuse the same requests for the same reasons.
 *
 * Owns, and nothing else in the project re-implements:
 * - the bind rule: a server listens on a loopback address (`127.0.0.0/8`, `::1`, `localhost`)
 *   unless its caller explicitly opts out (`bindRefusal(host, { allowNonLoopback: true })`) —
 *   these endpoints run code with the project's credentials;
 * - `Host` must name a loopback host or the bound address (port ignored), and `Origin`, when
 *   present and not empty, likewise (`null` and unparsable origins are refused): the defence
 *   against DNS rebinding, where a web page reaches a loopback server under a name it controls.
 *   403;
 * - with a token, `Authorization: Bearer <token>`, compared in constant time (the time depends
 *   on the expected token's length only). 401 with `WWW-Authenticate`;
 * - the request body size: a `Content-Length` past the limit is refused unread, a body without
 *   one (chunked) is read up to the limit and refused as soon as it goes past it. 413 (400 for
 *   a `Content-Length` that is not a number).
 *
 * Invariants: the checks are pure functions of the request and the policy — no I/O besides
 * reading a chunked body, no logging, no response format imposed (a `Refusal` is plain data;
 * the caller words it as its protocol wants, `refusalResponse` is a JSON default). Host and
 * Origin are checked before the token, so a forged Host learns nothing about the token. A
 * request that is admitted keeps its signal, method, URL and headers.
 */
import { readAtMost } from "../util/bytes.ts";

/** Body limit when a policy names none: 4 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** What a guarded endpoint admits. */
export interface GuardPolicy {
  /** Hostnames `Host` and `Origin` may name, lower case, IPv6 in brackets (`allowedHostnames`). */
  allowedHosts: readonly string[];
  /** Required bearer token; absent: no token is required. */
  token?: string;
  /** Largest request body in bytes (default `DEFAULT_MAX_BODY_BYTES`). */
  maxBodyBytes?: number;
  /**
   * Whether a request whose body the guard read keeps following the served request's `signal`
   * (default true: a server that cancels work on a client's disconnect needs it). False for a
   * server that never reads it (`serve`'s API): reading a served request's `signal` makes
   * Deno.serve print its legacy-abort deprecation warning.
   */
  followSignal?: boolean;
}

/** A refused request: the status and the reason, for the caller to word. */
export interface Refusal {
  status: 400 | 401 | 403 | 413;
  message: string;
  headers?: Record<string, string>;
}

/** True for loopback names and addresses (`localhost`, `127.0.0.0/8`, `::1`; brackets allowed). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m !== null && m.slice(1).every((x) => Number(x) <= 255);
}

/**
 * Why a server must not listen on `hostname`, or `undefined` when it may: anything but loopback
 * is refused unless `allowNonLoopback` is set.
 */
export function bindRefusal(hostname: string, opts: { allowNonLoopback?: boolean } = {}): string | undefined {
  if (isLoopback(hostname) || opts.allowNonLoopback) return undefined;
  return `refusing to listen on '${hostname}': only loopback addresses (127.0.0.1, ::1, localhost) are served`;
}

/** Hostnames a `Host` or `Origin` header may name for a server bound to `hostname`. */
export function allowedHostnames(hostname: string): string[] {
  const h = hostname.toLowerCase();
  const bound = h.includes(":") && !h.startsWith("[") ? `[${h}]` : h;
  return [...new Set(["localhost", "127.0.0.1", "[::1]", bound])];
}

/** The hostname of a `Host` header value (lower case, IPv6 in brackets, port dropped); undefined if malformed. */
export function hostOfHeader(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[^:\[\]\s/@]+)(?::(\d{1,5}))?$/.exec(v);
  return m ? m[1] : undefined;
}

/** The hostname of an `Origin` header value; undefined when it is not an origin URL (`null` included). */
export function hostOfOrigin(value: string): string | undefined {
  try {
    const u = new URL(value);
    return u.hostname ? u.hostname.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

const enc = new TextEncoder();

/** Compares `given` with `expected` in time that depends on `expected`'s length only. */
export function constantTimeEqual(given: string, expected: string): boolean {
  const a = enc.encode(given);
  const b = enc.encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a.length ? a[i % a.length] : 0) ^ b[i];
  return diff === 0;
}

/**
 * The checks that need only the request line and headers: Host, Origin, token, declared body
 * length. `undefined`: nothing to refuse so far (a chunked body is `admit`'s to measure).
 */
export function headerRefusal(req: Request, policy: GuardPolicy): Refusal | undefined {
  const hostHeader = req.headers.get("host");
  if (hostHeader === null || hostHeader === "") {
    return { status: 403, message: "Forbidden: the request has no Host header" };
  }
  const host = hostOfHeader(hostHeader);
  if (host === undefined || !policy.allowedHosts.includes(host)) {
    return { status: 403, message: `Forbidden: Host '${hostHeader}' is not this server` };
  }
  const origin = req.headers.get("origin");
  if (origin !== null && origin !== "") {
    const oh = hostOfOrigin(origin);
    if (oh === undefined || !policy.allowedHosts.includes(oh)) {
      return { status: 403, message: `Forbidden: Origin '${origin}' may not call this server` };
    }
  }
  if (policy.token !== undefined) {
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.get("authorization") ?? "");
    if (!m || !constantTimeEqual(m[1], policy.token)) {
      return {
        status: 401,
        message: "Unauthorized: a valid bearer token is required",
        headers: { "WWW-Authenticate": 'Bearer realm="agent-block"' },
      };
    }
  }
  const max = policy.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const declared = req.headers.get("content-length");
  if (declared !== null) {
    if (!/^\d+$/.test(declared.trim())) {
      return { status: 400, message: `Bad Request: Content-Length '${declared}' is not a number` };
    }
    if (Number(declared) > max) return tooLarge(max);
  }
  return undefined;
}

function tooLarge(max: number): Refusal {
  return { status: 413, message: `Payload Too Large: the request body exceeds ${max} bytes` };
}

/**
 * Admits `req` or refuses it. An admitted request is `req` itself, or, when its body had no
 * `Content-Length`, an equal request over the body read (at most the limit).
 */
export async function admit(
  req: Request,
  policy: GuardPolicy,
): Promise<{ request: Request } | { refusal: Refusal }> {
  const refused = headerRefusal(req, policy);
  if (refused) return { refusal: refused };
  if (req.body === null || req.headers.has("content-length")) return { request: req };
  if (req.method === "GET" || req.method === "HEAD") {
    return { refusal: { status: 400, message: `Bad Request: a ${req.method} request carries no body` } };
  }
  const max = policy.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  let body: Uint8Array | undefined;
  try {
    body = await readAtMost(req.body.getReader(), max);
  } catch (e) {
    return {
      refusal: { status: 400, message: `Bad Request: the body could not be read: ${(e as Error).message}` },
    };
  }
  if (body === undefined) return { refusal: tooLarge(max) };
  // Stream chunks (and so their join) are backed by a plain ArrayBuffer. Copying the request
  // (`new Request(req, ...)`) follows its `signal`; without `followSignal` it is built from its
  // parts, so the served request's `signal` is never read (see `GuardPolicy.followSignal`).
  const copy = policy.followSignal === false
    ? new Request(req.url, {
      method: req.method,
      headers: req.headers,
      body: body as Uint8Array<ArrayBuffer>,
    })
    : new Request(req, { body: body as Uint8Array<ArrayBuffer> });
  return { request: copy };
}

/** A JSON response for `refusal` (`{"error": message}`); callers with a protocol word their own. */
export function refusalResponse(refusal: Refusal): Response {
  return Response.json({ error: refusal.message }, { status: refusal.status, headers: refusal.headers });
}
