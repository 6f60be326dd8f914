/**
 * The job manager's HTTP API, behind the shared guard (`src/net/guard.ts`).
 *
 * Every request passes the guard first: `Host` and `Origin` must name a loopback host or the
 * bound address (else 403 `{"error":"forbidden"}`), then `Authorization: Bearer <token>` must
 * hold the token of `~/.agent-block/serve.token` (else 401 `{"error":"unauthorized"}` — no
 * detail), and a body is at most 64 KiB (413). Only then is a route looked at.
 *
 * The one exception to the token is `GET /` (and `HEAD /`), the dashboard (`dashboard.ts`): a
 * static page with no data and no secret, which a browser must be able to load without a
 * header. It still passes the Host/Origin checks (403 otherwise); any other method on `/` is
 * 405. What the page shows it fetches from the routes below, with the token.
 *
 * The contract (JSON; times are ms since the epoch; the dashboard and the MCP job verbs use it):
 *
 * - `GET /jobs` → 200 `{"jobs": [Job]}`, by name, where `Job` is
 *   `{name, file, every: string|null, every_ms: number|null, timeout, timeout_ms,
 *   prompt: string|null, context: string|null, sandbox: boolean, error: {file, line: number|null, message}|null,
 *   last_end: {run_id, state, ended_ms}|null, live_run: {run_id, started_ms}|null,
 *   requested_run: string|null, next_run_ms: number|null}` — a job whose file is bad has `error`
 *   set and the declaration fields null; `next_run_ms` is when `every` makes the job due next
 *   (null for a job run on request only, a bad file, or a run going now: it counts from its end).
 * - `GET /runs?job=<name>&limit=<n>` → 200 `{"runs": [Run]}`, newest first; `limit` 1..1000,
 *   default 50; `Run` is `{run_id, job, state, requested, sandboxed, started_ms, ended_ms, duration_ms,
 *   exit_code, result, result_bytes, result_file, message, pid, counts}` (null where not known
 *   yet; `counts` is `{turns, tool_calls, tokens_in, tokens_out, cost_usd, sessions}`, what the
 *   run has done so far, counted from its events while it runs);
 *   `state` is one of `running ok deferred failed timed_out stopped lost`; `result` is the
 *   returned value when it is text of at most 64 KiB, else null with `result_file` pointing at
 *   it (`result_bytes` says how big).
 * - `GET /runs/<id>` → 200 `Run` plus `stderr_tail` (string).
 * - `POST /jobs/<name>/runs` → 202 `{"job", "run_id"}`: the next tick starts a run with that
 *   id (after the job's live run has ended, if one is going); asking twice before it starts
 *   gives the same id.
 * - `DELETE /runs/<id>` → 202 `{"run_id", "stop_requested": true}`: the next tick ends the
 *   run's whole process tree; the run ends `stopped`.
 * - `GET /metrics` → 200 Prometheus text (`metrics.ts`).
 * - `GET /` → 200 the dashboard page (HTML, no token; see above).
 *
 * Errors are `{"error": <stable code>, "message": <words>}` (401 carries no message):
 * `not_found` (404, no such route), `unknown_job` (404), `unknown_run` (404, including an id
 * that is not of the run id form), `bad_limit` (400), `job_invalid` (409, its file is bad),
 * `run_not_live` (409, DELETE of an ended run), `method_not_allowed` (405), `forbidden` (403),
 * `unauthorized` (401), `payload_too_large` (413), `bad_request` (400).
 *
 * Invariant: a handler never throws to the server; a bug is a 500 `{"error":"internal"}`,
 * logged.
 */
import { admit, type GuardPolicy, headerRefusal, type Refusal } from "../net/guard.ts";
import { dashboardResponse } from "./dashboard.ts";
import { renderMetrics } from "./metrics.ts";
import type { RunRecord } from "./record.ts";
import type { JobState, Scheduler } from "./scheduler.ts";

/** Largest request body the API takes: 64 KiB (no route needs more). */
export const MAX_API_BODY_BYTES = 64 * 1024;

/** A run as `GET /runs` shows it. */
export function runView(r: RunRecord, detail = false): Record<string, unknown> {
  const v: Record<string, unknown> = {
    run_id: r.run_id,
    job: r.job,
    state: r.state,
    requested: r.requested,
    sandboxed: r.sandboxed,
    started_ms: r.started_ms,
    ended_ms: r.ended_ms ?? null,
    duration_ms: r.ended_ms !== undefined ? r.ended_ms - r.started_ms : null,
    exit_code: r.exit_code ?? null,
    result: r.result ?? null,
    result_bytes: r.result_bytes ?? null,
    result_file: r.result_file ?? null,
    message: r.message ?? null,
    pid: r.pid,
  };
  v.counts = r.counts ?? null;
  if (detail) v.stderr_tail = r.stderr_tail ?? "";
  return v;
}

/** A job as `GET /jobs` shows it. */
export function jobView(j: JobState): Record<string, unknown> {
  const d = j.decl;
  return {
    name: j.name,
    file: d?.file ?? j.error?.file ?? null,
    every: d?.every ?? null,
    every_ms: d?.everyMs ?? null,
    timeout: d?.timeout ?? null,
    timeout_ms: d?.timeoutMs ?? null,
    prompt: d?.prompt ?? null,
    context: d?.context ?? null,
    sandbox: d?.sandbox === true,
    error: j.error ? { file: j.error.file, line: j.error.line ?? null, message: j.error.message } : null,
    last_end: j.lastEnd
      ? { run_id: j.lastEnd.run_id, state: j.lastEnd.state, ended_ms: j.lastEnd.ended_ms ?? null }
      : null,
    live_run: j.live ? { run_id: j.live.run_id, started_ms: j.live.started_ms } : null,
    requested_run: j.requested ?? null,
    next_run_ms: j.nextRunMs ?? null,
  };
}

const json = (status: number, body: unknown) => Response.json(body, { status });
const err = (status: number, error: string, message: string) => json(status, { error, message });

/** The handler of the API over `scheduler`, admitting what `policy` admits. */
export function apiHandler(
  scheduler: Scheduler,
  policy: GuardPolicy,
  log: (line: string) => void,
): (req: Request) => Promise<Response> {
  const refuse = (r: Refusal): Response => {
    if (r.status === 401) {
      return Response.json({ error: "unauthorized" }, { status: 401, headers: r.headers });
    }
    const code = r.status === 403 ? "forbidden" : r.status === 413 ? "payload_too_large" : "bad_request";
    return err(r.status, code, r.message);
  };
  return async (req) => {
    if (new URL(req.url).pathname === "/") {
      const refused = headerRefusal(req, { ...policy, token: undefined, maxBodyBytes: 0 });
      if (refused) return refuse(refused);
      if (req.method !== "GET" && req.method !== "HEAD") {
        return err(405, "method_not_allowed", "/ takes GET");
      }
      return dashboardResponse(req.method);
    }
    // no route reads the request's signal: following it would only make Deno print a deprecation
    const admitted = await admit(req, { maxBodyBytes: MAX_API_BODY_BYTES, ...policy, followSignal: false });
    if ("refusal" in admitted) return refuse(admitted.refusal);
    try {
      return route(admitted.request, scheduler);
    } catch (e) {
      log(`api: internal failure on ${req.method} ${new URL(req.url).pathname}: ${(e as Error)?.stack ?? e}`);
      return err(500, "internal", "internal failure; see the manager's log");
    }
  };
}

function route(req: Request, s: Scheduler): Response {
  const url = new URL(req.url);
  const parts = url.pathname.split("/").filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return "\0";
    }
  });
  const method = req.method;
  const allow = (want: string) =>
    method === want ? undefined : err(405, "method_not_allowed", `${url.pathname} takes ${want}`);

  if (parts.length === 1 && parts[0] === "jobs") {
    return allow("GET") ?? json(200, { jobs: s.jobs().map(jobView) });
  }
  if (parts.length === 1 && parts[0] === "metrics") {
    return allow("GET") ?? new Response(renderMetrics(s.metrics), {
      headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
    });
  }
  if (parts.length === 1 && parts[0] === "runs") {
    const bad = allow("GET");
    if (bad) return bad;
    const rawLimit = url.searchParams.get("limit");
    let limit = 50;
    if (rawLimit !== null) {
      if (!/^\d{1,4}$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > 1000) {
        return err(400, "bad_limit", `limit must be a whole number from 1 to 1000, got '${rawLimit}'`);
      }
      limit = Number(rawLimit);
    }
    const job = url.searchParams.get("job") ?? undefined;
    if (job !== undefined && !s.knowsJob(job)) return err(404, "unknown_job", `no job '${job}'`);
    return json(200, { runs: s.runs(job, limit).map((r) => runView(r)) });
  }
  if (parts.length === 2 && parts[0] === "runs") {
    const run = s.run(parts[1]);
    if (method === "GET") {
      return run ? json(200, runView(run, true)) : err(404, "unknown_run", `no run '${parts[1]}'`);
    }
    if (method === "DELETE") {
      const r = s.requestStop(parts[1]);
      if (r === "unknown") return err(404, "unknown_run", `no run '${parts[1]}'`);
      if (r === "not_live") return err(409, "run_not_live", `run '${parts[1]}' has ended (${run!.state})`);
      return json(202, { run_id: parts[1], stop_requested: true });
    }
    return err(405, "method_not_allowed", `${url.pathname} takes GET or DELETE`);
  }
  if (parts.length === 3 && parts[0] === "jobs" && parts[2] === "runs") {
    const bad = allow("POST");
    if (bad) return bad;
    const r = s.requestRun(parts[1]);
    if (r === "unknown") return err(404, "unknown_job", `no job '${parts[1]}'`);
    if (r === "invalid") {
      return err(409, "job_invalid", `job '${parts[1]}' has a bad job file; see GET /jobs`);
    }
    return json(202, { job: parts[1], run_id: r.run_id });
  }
  return err(404, "not_found", `no route ${method} ${url.pathname}`);
}
