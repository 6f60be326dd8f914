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
 * this server started is still reached); without `--serve-url` these tools do not exist.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/server";

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

/** Calls job tool `name` with `args` against `api`. Never throws. */
export async function callJobTool(
  api: JobApi,
  name: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<CallToolResult> {
  const str = (k: string): string | undefined => typeof args[k] === "string" ? args[k] as string : undefined;
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
      if (str("run_id") === undefined) return fail(`${name}: 'run_id' (a string) is required`);
      path = `/runs/${enc(str("run_id")!)}`;
      if (name === "run_stop") method = "DELETE";
      break;
    case "job_run":
      if (str("job") === undefined) return fail("job_run: 'job' (a string) is required");
      path = `/jobs/${enc(str("job")!)}/runs`;
      method = "POST";
      break;
    default:
      return fail(`unknown job tool ${name}`);
  }
  let token: string;
  try {
    token = Deno.readTextFileSync(api.tokenFile).trim();
  } catch (e) {
    return fail(`cannot read the job manager's token file ${api.tokenFile}: ${(e as Error).message}`);
  }
  const url = api.url.replace(/\/+$/, "") + path;
  let res: Response;
  let body: string;
  try {
    res = await fetch(url, { method, headers: { authorization: `Bearer ${token}` }, signal });
    body = await res.text();
  } catch (e) {
    return fail(`the job manager at ${api.url} cannot be reached: ${(e as Error).message}`);
  }
  if (!res.ok) return fail(`the job manager answered ${method} ${path} with ${res.status}: ${body}`);
  return { content: [{ type: "text", text: body }] };
}
