/**
 * The `run_flow` tool of `agent-block mcp`: runs a flow of the project's `flows/` directory (or
 * resumes one of its runs) and answers with how it ended.
 *
 * Owns the tool's schema (the flows present at `tools/list` time: `flows/*.json`, `*.yaml`,
 * `*.yml`, `*.bp.lua`), its argument checks, and the result: one JSON text `{run_id, status,
 * ctx | error | waiting}`; a failed or cancelled flow is an `isError` result, a waiting one is
 * not (nothing broke: `run_id` plus `answer` continues it).
 *
 * Invariants: a flow's steps go through the runner the server is given for flows (`flowRunner`,
 * chosen at the command's edge); every run is recorded in the project's kernel database like a
 * `flow run` from the command line; a name outside `flows/` (a path, `..`) is refused. Every call,
 * refused or run, is a kernel session of its own when the server keeps a record (`call_record.ts`):
 * its `mcp_result` has the flow's status as `outcome` and names the run (`run`, and its session in
 * `sessions`), and a run the call started carries the call's label `mcp_call` on its session.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import { join } from "node:path";
import { BlueprintError } from "../flows/errors.ts";
import { type FlowEdge, resumeFlowWith, runFlowWith } from "../flows/api.ts";
import type { FlowResult } from "../flows/run.ts";
import type { Json } from "../flows/path.ts";
import type { BlockRunner } from "../runner/runner.ts";
import { AgentBlockError } from "../errors.ts";
import type { OpenCall, ServedEnd } from "./call_record.ts";

/** The name of the tool. */
export const RUN_FLOW = "run_flow";

const FLOW_FILE = /\.(json|ya?ml|bp\.lua)$/;

/** The flow files of `<projectRoot>/flows/`, sorted. */
export function projectFlows(projectRoot: string): string[] {
  try {
    return [...Deno.readDirSync(join(projectRoot, "flows"))]
      .filter((e) => e.isFile && FLOW_FILE.test(e.name) && !e.name.startsWith("."))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/** The tool definition for the flows present now. */
export function runFlowTool(flows: string[]): Tool {
  const flowProp: { type: "string"; description: string; enum?: string[] } = {
    type: "string",
    description: "A flow file of the project's flows/ directory.",
  };
  if (flows.length) flowProp.enum = flows;
  return {
    name: RUN_FLOW,
    title: "Run an agent-block flow",
    description:
      "Run a flow of blocks (a Blueprint of the project's flows/ directory) to its end, recorded " +
      "durably, and return {run_id, status, ctx | error | waiting} as JSON. With run_id instead of a " +
      "new run, continue that run (answer: the value of the step it waits at).\n\n" +
      `Flows: ${flows.length ? flows.join(", ") : "(none in flows/)"}`,
    inputSchema: {
      type: "object",
      properties: {
        flow: flowProp,
        init: { description: "The initial context (JSON)." },
        run_id: { type: "string", description: "Resume this run instead of starting one." },
        answer: { description: "For a run waiting at a step: that step's value (JSON)." },
      },
      additionalProperties: false,
    },
  };
}

const text = (t: string, isError = false): CallToolResult =>
  isError
    ? { content: [{ type: "text", text: t }], isError: true }
    : { content: [{ type: "text", text: t }] };

/** The tool result for how a flow run ended. */
export function flowResultOf(r: FlowResult): CallToolResult {
  const body: Record<string, unknown> = { run_id: r.runId, status: r.status };
  if (r.ctx !== undefined) body.ctx = r.ctx;
  if (r.error) body.error = r.error;
  if (r.waiting) body.waiting = r.waiting;
  return text(JSON.stringify(body), r.status === "failed" || r.status === "cancelled");
}

/** What the tool needs from the server. */
export interface FlowToolOptions {
  /** Absolute project root. */
  projectRoot: string;
  /** The runs' environment. */
  env: Readonly<Record<string, string>>;
  /** Runs the flows' block steps. */
  flowRunner: BlockRunner;
  /** The edge's reading of the home and kernel paths an environment names (`FlowEdge.paths`). */
  flowPaths: FlowEdge["paths"];
}

/** How a flow run ended, as its call's kernel record says it (`call_record.ts`). */
export function flowCallEnd(r: FlowResult, result: CallToolResult): ServedEnd {
  const close = r.status === "failed" ? "error" : r.status === "cancelled" ? "cancelled" : "ok";
  const first = result.content[0];
  return {
    outcome: r.status,
    close,
    sessions: [r.runId],
    run: r.runId,
    ...(close === "ok"
      ? { value: first?.type === "text" ? JSON.parse(first.text) : undefined }
      : { error: r.error?.message ?? r.status }),
  };
}

/**
 * Runs one `tools/call` of `run_flow`; with `call` (its kernel record, `call_record.ts`) records how
 * it ended: refused (`invalid`), or the flow run's status, naming the run's session — a new run's
 * session is labelled with the call's (`mcp_call`).
 */
export async function callRunFlow(
  opts: FlowToolOptions,
  args: unknown,
  signal: AbortSignal,
  call?: OpenCall,
): Promise<CallToolResult> {
  const refuse = (message: string) => {
    call?.end({ outcome: "invalid", error: message });
    return text(message, true);
  };
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return refuse("run_flow: arguments must be an object");
  }
  const a = args as Record<string, unknown>;
  for (const k of Object.keys(a)) {
    if (!["flow", "init", "run_id", "answer"].includes(k)) {
      return refuse(`run_flow: unknown argument '${k}' (known: flow, init, run_id, answer)`);
    }
  }
  const ended = (r: FlowResult) => {
    const result = flowResultOf(r);
    call?.end(flowCallEnd(r, result));
    return result;
  };
  const edge: FlowEdge = {
    runner: () => opts.flowRunner,
    env: () => ({ ...opts.env }),
    cwd: () => opts.projectRoot,
    paths: opts.flowPaths,
  };
  const base = { projectRoot: opts.projectRoot, signal };
  try {
    if (a.run_id !== undefined) {
      if (typeof a.run_id !== "string") return refuse("run_flow: run_id must be a string");
      return ended(
        await resumeFlowWith(edge, a.run_id, {
          ...base,
          ...(a.answer !== undefined ? { answer: a.answer as Json } : {}),
        }),
      );
    }
    if (typeof a.flow !== "string") return refuse("run_flow: give 'flow' (a file of flows/) or 'run_id'");
    const flows = projectFlows(opts.projectRoot);
    if (!flows.includes(a.flow)) {
      return refuse(`run_flow: unknown flow '${a.flow}'; flows/ has: ${flows.join(", ") || "(none)"}`);
    }
    const file = join(opts.projectRoot, "flows", a.flow);
    return ended(
      await runFlowWith(edge, file, {
        ...base,
        ...(a.init !== undefined ? { initCtx: a.init as Json } : {}),
        ...(call?.session !== undefined ? { labels: call.runLabels() } : {}),
      }),
    );
  } catch (e) {
    if (e instanceof BlueprintError || e instanceof AgentBlockError) return refuse(`run_flow: ${e.message}`);
    call?.end({ outcome: "invalid", error: `internal failure: ${(e as Error)?.message ?? e}` });
    throw e;
  }
}
