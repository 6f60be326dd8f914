/**
 * The MCP job verbs of `agent-block mcp --serve-url URL`: `jobs_list`, `runs_list`, `run_get`,
 * `job_run`, `run_stop`, each one call to the job manager's HTTP API (`src/serve/api.ts` holds
 * the contract; this module speaks it over HTTP and imports nothing of the manager).
 *
 * Owns the tools' schemas and the mapping: `jobs_list` → `GET /jobs`, `runs_list {job?, limit?}`
 * → `GET /runs`, `run_get {run_id}` → `GET /runs/<id>`, `job_run {job}` → `POST
 * /jobs/<name>/runs`, `run_stop {run_id}` → `DELETE /runs/<id>`. The answer's JSON body is the
 * tool result's text; an API error (4xx/5xx) is an `isError` result carrying the status and
 * the body; a manager that cannot be reached is an `isError` result saying so and naming the URL.
 *
 * Invariants: the token is read from the token file at each call (a manager that minted it after
 * this server started is still reached); without `--serve-url` these tools do not exist; when the
 * server keeps a record, every call (refused, unanswered or answered) is a kernel session of its
 * own (`call_record.ts`) holding the arguments, the outcome, the HTTP status and the manager run it
 * concerns.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import type { OpenCall } from "./call_record.ts";

/** Where the job manager is and how to authenticate to it. */
export interface JobApi {
  /** Base URL, e.g. `http://127.0.0.1:7788`. */
  url: string;
  /** The manager's token file (`$AGENT_BLOCK_HOME/serve.token`). */
  tokenFile: string;
}

const runId = { type: "string", description: "A run id, as GET /runs or job_run gave it." };

/** The five job tools. */
export const JOB_TOOLS: Tool[] = [
  {
    name: "jobs_list",
    description:
      "List the job manager's jobs (agent-block serve): each declaration, its last end and live run.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
  },
  {
    name: "runs_list",
    description: "List runs of the job manager, newest first, each with the value it returned.",
    inputSchema: {
      type: "object",
      properties: {
        job: { type: "string", description: "Only this job's runs." },
        limit: { type: "integer", minimum: 1, maximum: 1000, description: "At most this many (default 50)." },
      },
      additionalProperties: false,
    },
  },
  {
    name: "run_get",
    description: "One run of the job manager, with the end of its stderr.",
    inputSchema: {
      type: "object",
      properties: { run_id: runId },
      required: ["run_id"],
      additionalProperties: false,
    },
  },
  {
    name: "job_run",
    description: "Ask the job manager for a run of a job now; the next tick starts it. Returns its run id.",
    inputSchema: {
      type: "object",
      properties: { job: { type: "string", description: "The job's name." } },
      required: ["job"],
      additionalProperties: false,
    },
  },
  {
    name: "run_stop",
    description: "Ask the job manager to stop a live run; the next tick ends its whole process tree.",
    inputSchema: {
      type: "object",
      properties: { run_id: runId },
      required: ["run_id"],
      additionalProperties: false,
    },
  },
];

/** True for the name of a job tool. */
export function isJobTool(name: string): boolean {
  return JOB_TOOLS.some((t) => t.name === name);
}

const fail = (t: string): CallToolResult => ({ content: [{ type: "text", text: t }], isError: true });

/** The manager's answer as a recorded value: its JSON, or the text when it is not JSON. */
function bodyValue(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/**
 * Calls job tool `name` with `args` against `api`. Never throws. With `call` (its kernel record,
 * `call_record.ts`) records how it ended: refused before any request (`invalid`: a missing
 * argument), `unreachable` (no token file, no answer), `refused` (the manager answered 4xx/5xx) or
 * `answered`, with the HTTP status and the manager run it concerns (`run`: `run_id` of the
 * arguments, or of `job_run`'s answer — the sessions that run opens carry the label `run=<id>`).
 */
export async function callJobTool(
  api: JobApi,
  name: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
  call?: OpenCall,
): Promise<CallToolResult> {
  const str = (k: string): string | undefined => typeof args[k] === "string" ? args[k] as string : undefined;
  const refuse = (t: string) => {
    call?.end({ outcome: "invalid", error: t });
    return fail(t);
  };
  const unreachable = (t: string) => {
    call?.end(
      signal?.aborted
        ? { outcome: "cancelled", close: "cancelled", error: t }
        : { outcome: "unreachable", close: "error", error: t },
    );
    return fail(t);
  };
  const enc = encodeURIComponent;
  let method = "GET";
  let path: string;
  switch (name) {
    case "jobs_list":
      path = "/jobs";
      break;
    case "runs_list": {
      const q = new URLSearchParams();
      if (str("job") !== undefined) q.set("job", str("job")!);
      if (args.limit !== undefined) q.set("limit", String(args.limit));
      path = `/runs${q.size ? `?${q}` : ""}`;
      break;
    }
    case "run_get":
    case "run_stop":
      if (str("run_id") === undefined) return refuse(`${name}: 'run_id' (a string) is required`);
      path = `/runs/${enc(str("run_id")!)}`;
      if (name === "run_stop") method = "DELETE";
      break;
    case "job_run":
      if (str("job") === undefined) return refuse("job_run: 'job' (a string) is required");
      path = `/jobs/${enc(str("job")!)}/runs`;
      method = "POST";
      break;
    default:
      return refuse(`unknown job tool ${name}`);
  }
  let token: string;
  try {
    token = Deno.readTextFileSync(api.tokenFile).trim();
  } catch (e) {
    return unreachable(`cannot read the job manager's token file ${api.tokenFile}: ${(e as Error).message}`);
  }
  const url = api.url.replace(/\/+$/, "") + path;
  let res: Response;
  let body: string;
  try {
    res = await fetch(url, { method, headers: { authorization: `Bearer ${token}` }, signal });
    body = await res.text();
  } catch (e) {
    return unreachable(`the job manager at ${api.url} cannot be reached: ${(e as Error).message}`);
  }
  const value = bodyValue(body);
  const answeredRun = (value as { run_id?: unknown } | null)?.run_id;
  const run = str("run_id") ?? (typeof answeredRun === "string" ? answeredRun : undefined);
  const about = { httpStatus: res.status, ...(run !== undefined ? { run } : {}) };
  if (!res.ok) {
    const t = `the job manager answered ${method} ${path} with ${res.status}: ${body}`;
    call?.end({ outcome: "refused", close: "error", error: t, ...about });
    return fail(t);
  }
  call?.end({ outcome: "answered", close: "ok", value, ...about });
  return { content: [{ type: "text", text: body }] };
}
