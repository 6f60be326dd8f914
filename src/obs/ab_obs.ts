/**
 * `ab.obs` lines: the structured, greppable observability records the runtime writes to stderr.
 *
 * Owns the line format `prefix=ab.obs event=<e> component=<c> trace_id=.. run_id=.. agent_id=..
 * agent_name=.. k=v ...`, the run's correlation ids (typed, `RunContext.correlation`: the edge
 * read them from `AGENT_BLOCK_TRACE_ID`, `_RUN_ID`, `_AGENT_ID`, `_AGENT_NAME`, the request's
 * win; a per-process random agent id when the agent id is unset), value quoting, redaction of
 * secret-named keys and URL sanitising. It reads no environment: the caller hands in the run's
 * ids (`correlation(run.correlation)`).
 *
 * Invariants: a value under a key that names a secret is never written (`[REDACTED]`); a `url`
 * value never carries userinfo, a query or a fragment; values with whitespace or `=` are
 * JSON-quoted so a line always splits on spaces into `k=v` pairs.
 */
import type { RunCorrelationIds } from "../correlation.ts";

/** Correlation ids stamped on every obs line. */
export interface Correlation {
  trace_id: string;
  run_id: string;
  agent_id: string;
  agent_name: string;
}

let processAgentId: string | undefined;

/** The id this process uses when `AGENT_BLOCK_AGENT_ID` is unset (random, made once). */
export function processAgentIdentity(): string {
  processAgentId ??= crypto.randomUUID();
  return processAgentId;
}

/** The obs lines' ids of a run with correlation ids `ids` (`RunContext.correlation`). */
export function correlation(ids: RunCorrelationIds): Correlation {
  return {
    trace_id: ids.trace_id ?? "",
    run_id: ids.run_id ?? "",
    agent_id: ids.agent_id ?? processAgentIdentity(),
    agent_name: ids.agent_name ?? "",
  };
}

const SECRET_KEY = /authorization|cookie|token|secret|password|passwd|api_key|apikey|access_key|private_key/i;

/**
 * A URL with no userinfo, query or fragment. Unparseable input loses `user:pass@`, everything
 * from the first `?` or `#`, and is cut to 16 characters.
 */
export function sanitizeUrl(raw: string): string {
  if (raw === "") return "";
  const hit = sanitized.get(raw);
  if (hit !== undefined) return hit;
  const out = sanitizeUncached(raw);
  if (sanitized.size > 256) sanitized.clear();
  sanitized.set(raw, out);
  return out;
}

const sanitized = new Map<string, string>();

function sanitizeUncached(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.protocol === "http:" || u.protocol === "https:" || u.protocol === "ws:" || u.protocol === "wss:") {
      u.username = "";
      u.password = "";
      u.search = "";
      u.hash = "";
      return u.toString();
    }
  } catch { /* fall through to the textual form */ }
  let s = raw.replace(/:\/\/[^/@]*@/, "://");
  const cut = s.search(/[?#]/);
  if (cut >= 0) s = s.slice(0, cut);
  return s.length > 16 ? s.slice(0, 16) + "..." : s;
}

function quote(v: string): string {
  return v === "" ? "" : /[\s="]/.test(v) ? JSON.stringify(v) : v;
}

/** Formats one obs line (without a trailing newline). */
export function obsLine(
  event: string,
  component: string,
  fields: Record<string, string | number | boolean | undefined>,
  ids: Correlation,
): string {
  const parts = [`prefix=ab.obs`, `event=${event}`, `component=${component}`];
  for (const [k, v] of Object.entries(ids)) parts.push(`${k}=${quote(v)}`);
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    let s = String(v);
    if (SECRET_KEY.test(k)) s = "[REDACTED]";
    else if (k === "url") s = sanitizeUrl(s);
    parts.push(`${k}=${quote(s)}`);
  }
  return parts.join(" ");
}
