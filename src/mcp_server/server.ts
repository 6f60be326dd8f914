/**
 * The MCP surface of `agent-block mcp`: one `run_block` tool and three kinds of resource, served
 * from a factory so both protocol eras (2025-era `initialize` and 2026-07-28 per-request
 * envelopes) get the same definitions.
 *
 * Owns:
 * - the tool's schema and description, rebuilt from the block registry on every `tools/list`
 *   (`block` is an enum of the names registered at that moment, the description lists each
 *   block with its leading comment);
 * - `tools/call` → one run through the `BlockRunner` it is given (`agent-block mcp` gives it the
 *   child runner: one process per run, its events relayed live) → the run's `Outcome` → a tool
 *   result (`toolResultOf`): the returned value is the text; a Lua error, a timeout, a cancel, a
 *   shutdown, an `os.exit` are `isError` results carrying the text; a deferred run says so, and
 *   is not an error (nothing broke). Artifacts the block staged (`bus.emit("artifact", ...)`)
 *   follow the text as embedded resources (`agent-block://artifacts/<name>`, the content as text:
 *   a string as it is, anything else as JSON). A call that carries a `progressToken` gets a
 *   progress notification at each step the run's events tell (a model turn, a tool call: "turn 2;
 *   2 turns, 290 tokens in / 38 out, 1 tool call", counted by `src/runner/tally.ts`) and every
 *   `progressIntervalMs` besides (seconds elapsed and the same counts), `progress` counting up;
 * - with `jobs` (`--serve-url`), the five job tools of `job_tools.ts` beside `run_block`, each a
 *   call to the job manager's HTTP API;
 * - with `flowRunner`, the `run_flow` tool of `flow_tool.ts` (flows of the project's `flows/`);
 * - resources `agent-block://guide` (the authoring contract, `guide.md`), `agent-block://blocks`
 *   (the registry as JSON: name, tier, path, description) and `agent-block://blocks/<name>` (one
 *   block's source), plus the template for the last;
 * - with `declared` (`--expose blocks`), the blocks whose headers declare a tool, resource or
 *   prompt, listed and served as such (`declared.ts`), and the capabilities that go with them
 *   (prompts, resource subscriptions — `subscriptions.ts`, one set per connection,
 *   ended when it closes; `resourcePaths` says which files a URI's content comes from —,
 *   logging, completions: a prompt argument declared as `"a"|"b"` completes to those values, a
 *   prompt argument or a template variable with `---@examples` to those); a declared tool named like a fixed tool (`run_block`,
 *   `run_flow`, the job tools) is not served; a tool whose input schema is an lshape shape
 *   (`---@input lshape MODULE[:FIELD]`) is served with its JSON Schema form (`lshape_input.ts`),
 *   or left out when that cannot be had;
 * - with `record` (`call_record.ts`), the kernel record of every call of `run_block`, `run_flow`
 *   and the job tools (a session per call, refused or run, linked to what its run recorded: the
 *   sessions a block run opens, a flow run's session, a job manager run's id; the result names it
 *   in `_meta["agent-block/session"]`).
 *
 * Invariants:
 * - The registry is re-scanned per request (`scanBlocks(blockRoots(...))`): a file dropped into
 *   a root is served on the next request, a removed one is gone from the enum and refused.
 * - Every call is one independent run; with the child runner each has its own process and
 *   process group, and calls run concurrently.
 * - Each run gets the server's environment (`env`, resolved at the command's edge) and its
 *   telemetry settings (`telemetry`); with them each `run_block` call is a SERVER span
 *   `tools/call run_block` (`src/obs/otel/server_span.ts`, loaded only then), a child of the W3C
 *   `traceparent` in the call's `_meta` when there is one, and the run's span is its child. Nothing here reads the process
 *   environment. Nothing here writes to stdout.
 */
import { parseTraceparent, type TelemetrySettings } from "../obs/otel/settings.ts";
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
} from "@modelcontextprotocol/server";
import type { CallToolResult, ReadResourceResult, Tool } from "@modelcontextprotocol/server";
import { type BlockEntry, blockRoots, scanBlocks } from "../blocks/registry.ts";
import { matchTemplate, type ToolDeclaration } from "../blocks/declaration.ts";
import { resolve, sep } from "node:path";
import { ResourceSubscriptions } from "./subscriptions.ts";
import { LshapeInputs } from "./lshape_input.ts";
import type { Logger } from "../obs/log.ts";
import type { Outcome } from "../outcome.ts";
import type { Artifact, BlockRunner, RunReport } from "../runner/runner.ts";
import { RunTally } from "../runner/tally.ts";
import { VERSION } from "../version.ts";
import guide from "./guide.md" with { type: "text" };
import { callJobTool, isJobTool, JOB_TOOLS, type JobApi } from "./job_tools.ts";
import { callRunFlow, type FlowToolOptions, projectFlows, RUN_FLOW, runFlowTool } from "./flow_tool.ts";
import { defaultFlowPaths } from "../flows/api.ts";
import {
  callDeclaredTool,
  declaredBlocks,
  type DeclaredContext,
  getDeclaredPrompt,
  readDeclaredResource,
} from "./declared.ts";
import { type Caller, callerOf, type CallRecorder, relativeScript } from "./call_record.ts";
import { SESSION_META } from "./result_shape.ts";

/** Everything the server needs, fixed for its lifetime. */
export interface BlockServerOptions {
  /** Absolute project root. */
  projectRoot: string;
  /** `$AGENT_BLOCK_HOME`. */
  home: string;
  /** Extra block roots (`--block-dir`), absolute. */
  blockDirs: string[];
  /** Limit of one run, seconds. */
  runTimeoutSecs: number;
  /**
   * Interval of progress notifications while a run goes on, ms, for calls that carry a
   * `progressToken` (a client can then keep waiting past its own request timeout). 0: none.
   */
  progressIntervalMs?: number;
  log: Logger;
  /** Runs the blocks (the child runner, whose shutdown signal ends every run still going). */
  runner: BlockRunner<RunReport & { stderrTail?: string }>;
  /** The environment every run gets (the server's, resolved at its edge). */
  env: Readonly<Record<string, string>>;
  /** OpenTelemetry export of every run (the server's `OTEL_*`, parsed at its edge); absent: none. */
  telemetry?: TelemetrySettings;
  /** `tools/call` handlings in flight (the server waits for them when it stops). */
  runs?: Set<Promise<unknown>>;
  /** The job manager (`--serve-url`): adds the job tools (`job_tools.ts`); absent, they do not exist. */
  jobs?: JobApi;
  /** Runs the steps of flows: adds the `run_flow` tool (`flow_tool.ts`); absent, it does not exist. */
  flowRunner?: BlockRunner;
  /**
   * The edge's reading of the home and kernel paths an environment names (`FlowEdge.paths`);
   * absent: the defaults (`~/.agent-block`, the project's kernel database).
   */
  flowPaths?: FlowToolOptions["flowPaths"];
  /**
   * `--expose blocks`: every block whose header declares a tool, resource or prompt is served as
   * one (`declared.ts`), beside `run_block`; absent, only the generic surface is.
   */
  declared?: DeclaredContext;
  /**
   * The kernel record of every call (`call_record.ts`): each call of `run_block`, `run_flow` and
   * the job tools, and each declared call (`declared.record`, the same recorder), is a kernel
   * session; absent, none is written.
   */
  record?: CallRecorder;
}

/** The authoring guide served as `agent-block://guide`. */
export const GUIDE_TEXT: string = guide;
export const GUIDE_URI = "agent-block://guide";
export const BLOCKS_URI = "agent-block://blocks";
export const BLOCK_URI_PREFIX = "agent-block://blocks/";

/** The registered blocks right now. */
export function currentBlocks(
  opts: Pick<BlockServerOptions, "projectRoot" | "home" | "blockDirs">,
): BlockEntry[] {
  return scanBlocks(blockRoots(opts.projectRoot, opts.home, opts.blockDirs));
}

/** The `run_block` tool definition for `blocks`. */
export function runBlockTool(blocks: BlockEntry[]): Tool {
  const listing = blocks.length
    ? blocks.map((b) => `- ${b.name}: ${b.description || "(no description)"}`).join("\n")
    : "(no blocks are registered right now)";
  const blockProp: { type: "string"; description: string; enum?: string[] } = {
    type: "string",
    description: "Name of the registered block to run.",
  };
  if (blocks.length) blockProp.enum = blocks.map((b) => b.name);
  return {
    name: "run_block",
    title: "Run an agent-block block",
    description: "Run one registered agent-block block (a Lua script) in a process of its own and " +
      "return the one value it returns (by convention a JSON string). The block runs with its own " +
      "model credentials; its LLM turns never enter this conversation. A Lua error is a failed call " +
      "carrying the error text. Read agent-block://guide for the authoring contract.\n\n" +
      `Registered blocks:\n${listing}`,
    inputSchema: {
      type: "object",
      properties: {
        block: blockProp,
        prompt: { type: "string", description: "Sets the block's _PROMPT." },
        context: { type: "string", description: "Sets the block's _CONTEXT." },
      },
      required: ["block"],
      additionalProperties: false,
    },
  };
}

function text(t: string, isError = false): CallToolResult {
  return isError
    ? { content: [{ type: "text", text: t }], isError: true }
    : { content: [{ type: "text", text: t }] };
}

/** How a call ended, beyond the outcome: what the MCP caller is told besides it. */
export interface CallEnding {
  /** The client cancelled the call (its request signal aborted). */
  cancelled?: boolean;
  /** The end of the run's stderr, when the runner kept it. */
  stderrTail?: string;
}

/** The text of a returned value (bytes that are not UTF-8 are decoded lossily: a tool result is text). */
function valueText(v: string | Uint8Array | undefined): string {
  if (v === undefined) return "";
  return typeof v === "string" ? v : new TextDecoder().decode(v);
}

/** The tool result for how a run ended. */
export function toolResultOf(name: string, outcome: Outcome, ending: CallEnding = {}): CallToolResult {
  switch (outcome.status) {
    case "returned":
      return text(valueText(outcome.value));
    case "raised":
      return text(outcome.message, true);
    case "deferred":
      return text(
        `block '${name}' deferred: ${outcome.reason} (exit 75: it did not start its work; nothing broke)`,
      );
    case "timed_out":
      return text(`block '${name}' ran past its timeout of ${outcome.seconds} s and was stopped`, true);
    case "cancelled":
      return ending.cancelled
        ? text(`block '${name}' was cancelled`, true)
        : text(`block '${name}' was stopped: ${outcome.reason}`, true);
    case "exited":
      return text(
        `block '${name}' exited with code ${outcome.code}` +
          (ending.stderrTail ? `:\n${ending.stderrTail}` : ""),
        true,
      );
  }
}

/** The URI prefix of a run's artifacts in a `run_block` result. */
export const ARTIFACT_URI_PREFIX = "agent-block://artifacts/";

/** An artifact as a tool result's content: an embedded resource holding its content as text. */
export function artifactContent(a: Artifact): CallToolResult["content"][number] {
  const isText = typeof a.content === "string";
  return {
    type: "resource",
    resource: {
      uri: ARTIFACT_URI_PREFIX + encodeURIComponent(a.name),
      mimeType: isText ? "text/plain" : "application/json",
      text: isText ? a.content as string : JSON.stringify(a.content ?? null),
    },
  };
}

/** The `_meta` key of a `run_block` result saying whether the run was sandboxed. */
export const SANDBOXED_META = "agent-block/sandboxed";

/** One word for the log line of a finished call. */
export function outcomeWord(outcome: Outcome, ending: CallEnding = {}): string {
  // a run ended from outside but not by the client's cancel: the server stopped it (shutdown)
  return outcome.status === "cancelled" && !ending.cancelled ? "stopped" : outcome.status;
}

/** Checks `run_block` arguments; returns an error text or the parsed arguments. */
export function parseRunBlockArgs(
  args: unknown,
): { block: string; prompt?: string; context?: string } | { error: string } {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return { error: "run_block: arguments must be an object with a 'block' field" };
  }
  const a = args as Record<string, unknown>;
  for (const k of Object.keys(a)) {
    if (!["block", "prompt", "context"].includes(k)) {
      return { error: `run_block: unknown argument '${k}' (known: block, prompt, context)` };
    }
  }
  if (typeof a.block !== "string") {
    return {
      error: `run_block: argument 'block' must be a string, got ${
        a.block === undefined ? "nothing" : typeof a.block
      }`,
    };
  }
  for (const k of ["prompt", "context"] as const) {
    if (a[k] !== undefined && a[k] !== null && typeof a[k] !== "string") {
      return { error: `run_block: argument '${k}' must be a string, got ${typeof a[k]}` };
    }
  }
  return {
    block: a.block,
    prompt: typeof a.prompt === "string" ? a.prompt : undefined,
    context: typeof a.context === "string" ? a.context : undefined,
  };
}

/** The registry as the `agent-block://blocks` resource shows it. */
export function registryJson(blocks: BlockEntry[]): string {
  return JSON.stringify(
    blocks.map((b) => ({ name: b.name, tier: b.tier, path: b.path, description: b.description })),
    null,
    2,
  );
}

/** Reads one resource; throws `ResourceNotFoundError` for anything unknown. */
export async function readResource(opts: BlockServerOptions, uri: string): Promise<ReadResourceResult> {
  if (uri === GUIDE_URI) {
    return { contents: [{ uri, mimeType: "text/markdown", text: GUIDE_TEXT }] };
  }
  const blocks = currentBlocks(opts);
  if (uri === BLOCKS_URI) {
    return { contents: [{ uri, mimeType: "application/json", text: registryJson(blocks) }] };
  }
  if (uri.startsWith(BLOCK_URI_PREFIX)) {
    const name = decodeURIComponent(uri.slice(BLOCK_URI_PREFIX.length));
    const b = blocks.find((x) => x.name === name);
    if (b) {
      try {
        return { contents: [{ uri, mimeType: "text/x-lua", text: await Deno.readTextFile(b.path) }] };
      } catch (e) {
        throw new ResourceNotFoundError(uri, `block '${name}' could not be read: ${(e as Error).message}`);
      }
    }
    throw new ResourceNotFoundError(
      uri,
      `no block '${name}'; registered: ${blocks.map((x) => x.name).join(", ") || "(none)"}`,
    );
  }
  throw new ResourceNotFoundError(uri, `unknown resource ${uri}`);
}

let callSeq = 0;

/** Runs one `tools/call` of `run_block` (recorded as a kernel session when `opts.record` is set). */
export async function callRunBlock(
  opts: BlockServerOptions,
  args: unknown,
  signal: AbortSignal,
  onProgress?: (progress: number, message: string) => void,
  traceparent?: string,
  caller: Caller = {},
): Promise<CallToolResult> {
  const parsed = parseRunBlockArgs(args);
  const blocks = "error" in parsed ? [] : currentBlocks(opts);
  const block = "error" in parsed ? undefined : blocks.find((b) => b.name === parsed.block);
  const call = opts.record?.begin({
    kind: "tool",
    name: "run_block",
    ...("error" in parsed ? {} : { block: parsed.block }),
    ...(block ? { script: relativeScript(opts.projectRoot, block.path) } : {}),
    arguments: args,
    ...caller,
  });
  const refuse = (message: string) => {
    call?.end({ outcome: "invalid", error: message });
    return withSession(text(message, true), call?.session);
  };
  if ("error" in parsed) return refuse(parsed.error);
  if (!block) {
    return refuse(
      `run_block: unknown block '${parsed.block}'; registered: ${
        blocks.map((b) => b.name).join(", ") || "(none)"
      }`,
    );
  }
  const n = ++callSeq;
  const started = performance.now();
  // The caller's span (`_meta.traceparent`, the MCP convention) is the parent of this request's
  // SERVER span (exported by this process), which is the parent of the run's span.
  let parent = parseTraceparent(traceparent);
  const span = opts.telemetry
    ? (await import("../obs/otel/server_span.ts")).serverSpan(
      opts.telemetry,
      { method: "tools/call", tool: "run_block", parent, attributes: { "gen_ai.agent.name": block.name } },
      (m) => opts.log.warn(m),
    )
    : undefined;
  if (span) parent = { traceId: span.traceId, spanId: span.spanId, sampled: parent?.sampled ?? true };
  let notes = 0;
  const tally = new RunTally(
    onProgress && ((t) => onProgress(++notes, `block '${block.name}': ${t.summary()}`)),
  );
  const running = opts.runner.run({
    script: { path: block.path },
    name: block.name,
    projectRoot: opts.projectRoot,
    prompt: parsed.prompt,
    context: parsed.context,
    env: opts.env,
    timeoutMs: opts.runTimeoutSecs * 1000,
    ...(call?.session !== undefined ? { labels: call.runLabels() } : {}),
    ...(opts.telemetry ? { telemetry: opts.telemetry } : {}),
    ...(parent ? { correlation: { traceId: parent.traceId, parentSpan: parent.spanId } } : {}),
  }, {
    signal,
    observe: onProgress && tally.observe,
    onStart: ({ pid }) =>
      opts.log.debug(`run_block #${n} '${block.name}' started${pid !== undefined ? ` (pid ${pid})` : ""}`),
  });
  let ticker: ReturnType<typeof setInterval> | undefined;
  if (onProgress && (opts.progressIntervalMs ?? 0) > 0) {
    ticker = setInterval(() => {
      const secs = Math.round((performance.now() - started) / 1000);
      onProgress(++notes, `block '${block.name}' has been running for ${secs} s: ${tally.summary()}`);
    }, opts.progressIntervalMs);
  }
  let report: RunReport & { stderrTail?: string; sandboxed?: boolean };
  try {
    report = await running;
  } catch (e) {
    span?.end("_OTHER"); // a runner never rejects; if one did, its span still ends
    call?.end({ outcome: "invalid", error: `internal failure: ${(e as Error)?.message ?? e}` });
    throw e;
  } finally {
    clearInterval(ticker);
  }
  const ending: CallEnding = { cancelled: signal.aborted, stderrTail: report.stderrTail };
  span?.end(
    report.outcome.status === "returned" || report.outcome.status === "deferred"
      ? undefined
      : report.outcome.status,
  );
  opts.log.info(
    `run_block #${n} '${block.name}': ${outcomeWord(report.outcome, ending)} in ${
      Math.round(performance.now() - started)
    } ms${report.sandboxed ? " (sandboxed)" : ""}`,
  );
  const result = toolResultOf(block.name, report.outcome, ending);
  call?.end({
    outcome: report.outcome,
    sessions: report.sessions,
    ...(report.outcome.status === "returned" ? { value: resultText(result) } : { error: resultText(result) }),
  });
  result.content.push(...report.artifacts.map(artifactContent));
  // The call's record of its run: whether it ran under the sandbox (a runner that knows says).
  if (report.sandboxed !== undefined) result._meta = { ...result._meta, [SANDBOXED_META]: report.sandboxed };
  return withSession(result, call?.session);
}

/** The text of a result's first content block. */
function resultText(r: CallToolResult): string {
  const first = r.content[0];
  return first?.type === "text" ? first.text : "";
}

/** `r` naming its call's kernel session in `_meta` (when there is one). */
function withSession(r: CallToolResult, session: string | undefined): CallToolResult {
  if (session !== undefined) r._meta = { ...r._meta, [SESSION_META]: session };
  return r;
}

/** A fresh server instance with the agent-block surface (the factory both serving entries use). */
export function createBlockServer(opts: BlockServerOptions): Server {
  const dc = opts.declared;
  const server = new Server(
    { name: "agent-block", version: VERSION },
    {
      // listChanged: the registry watcher (watch.ts) says when blocks come and go.
      capabilities: dc
        ? {
          tools: { listChanged: true },
          resources: { listChanged: true, subscribe: true },
          prompts: { listChanged: true },
          logging: {},
          completions: {},
        }
        : { tools: { listChanged: true }, resources: { listChanged: true } },
      instructions: "Runs agent-block blocks (Lua scripts) as the run_block tool" +
        (dc ? ", and serves the blocks that declare themselves tools, resources or prompts as such" : "") +
        ". Read agent-block://guide for how to write one and agent-block://blocks for what is registered.",
      // A block may ask its client many times in one call (mcp.client.elicit, sample, roots).
      inputRequired: { maxRounds: 1000 },
    },
  );
  /** The fixed tools' names: a declared tool of the same name is not served. */
  const fixed = () => [
    "run_block",
    ...(opts.flowRunner ? [RUN_FLOW] : []),
    ...(opts.jobs ? JOB_TOOLS.map((t) => t.name) : []),
  ];
  /** The declared tools served: not named like a fixed tool; an lshape input schema resolved. */
  const declaredTools = async (blocks: BlockEntry[]) => {
    const taken = new Set(fixed());
    const out: (BlockEntry & { declaration: ToolDeclaration })[] = [];
    for (const b of declaredBlocks(blocks).tools) {
      if (taken.has(b.declaration.name)) continue;
      if (!b.declaration.inputLshape) {
        out.push(b);
        continue;
      }
      // An lshape input schema that cannot be resolved leaves its tool out (logged with its line).
      const a = await lshapeInputsOf(opts, dc!).resolve(b);
      if ("schema" in a) out.push({ ...b, declaration: { ...b.declaration, inputSchema: a.schema } });
    }
    return out;
  };
  server.setRequestHandler("tools/list", async () => {
    const blocks = currentBlocks(opts);
    return {
      tools: [
        runBlockTool(blocks),
        ...(opts.flowRunner ? [runFlowTool(projectFlows(opts.projectRoot))] : []),
        ...(opts.jobs ? JOB_TOOLS : []),
        ...(dc ? (await declaredTools(blocks)).map((b) => declaredToolEntry(b.declaration)) : []),
      ],
    };
  });
  server.setRequestHandler("tools/call", async (req, ctx) => {
    if (opts.jobs && isJobTool(req.params.name)) {
      const args = req.params.arguments ?? {};
      const call = opts.record?.begin({
        kind: "tool",
        name: req.params.name,
        arguments: args,
        ...callerOf(server, ctx),
      });
      return withSession(
        await callJobTool(opts.jobs, req.params.name, args, ctx.mcpReq.signal, call),
        call?.session,
      );
    }
    if (opts.flowRunner && req.params.name === RUN_FLOW) {
      const args = req.params.arguments ?? {};
      const flow = typeof args.flow === "string" && projectFlows(opts.projectRoot).includes(args.flow)
        ? args.flow
        : undefined;
      const call = opts.record?.begin({
        kind: "tool",
        name: RUN_FLOW,
        ...(flow !== undefined ? { script: `flows/${flow}` } : {}),
        arguments: args,
        ...callerOf(server, ctx),
      });
      const handling = callRunFlow(
        {
          projectRoot: opts.projectRoot,
          env: opts.env,
          flowRunner: opts.flowRunner,
          flowPaths: opts.flowPaths ?? defaultFlowPaths,
        },
        args,
        ctx.mcpReq.signal,
        call,
      );
      opts.runs?.add(handling);
      try {
        return withSession(await handling, call?.session);
      } finally {
        opts.runs?.delete(handling);
      }
    }
    if (req.params.name !== "run_block") {
      const served = dc ? await declaredTools(currentBlocks(opts)) : [];
      const block = served.find((b) => b.declaration.name === req.params.name);
      if (dc && block) return await callDeclaredTool(dc, server, block, req, ctx);
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool: ${req.params.name} (this server's tools: ${
          [...fixed(), ...served.map((b) => b.declaration.name)].join(", ")
        })`,
      );
    }
    const token = req.params._meta?.progressToken ?? ctx.mcpReq._meta?.progressToken;
    const progress = token === undefined ? undefined : (n: number, message: string) => {
      ctx.mcpReq.notify({
        method: "notifications/progress",
        params: { progressToken: token, progress: n, message },
      })
        .catch(() => undefined);
    };
    const meta = (req.params._meta ?? ctx.mcpReq._meta) as Record<string, unknown> | undefined;
    const traceparent = typeof meta?.traceparent === "string" ? meta.traceparent : undefined;
    const handling = callRunBlock(
      opts,
      req.params.arguments ?? {},
      ctx.mcpReq.signal,
      progress,
      traceparent,
      callerOf(server, ctx),
    );
    opts.runs?.add(handling);
    try {
      return await handling;
    } finally {
      opts.runs?.delete(handling);
    }
  });
  server.setRequestHandler("resources/list", () => {
    const blocks = currentBlocks(opts);
    return {
      resources: [
        {
          uri: GUIDE_URI,
          name: "guide",
          title: "How to write an agent-block block",
          mimeType: "text/markdown",
        },
        {
          uri: BLOCKS_URI,
          name: "blocks",
          title: "Registered blocks",
          description: "The block registry as JSON: name, tier, path, description.",
          mimeType: "application/json",
        },
        ...blocks.map((b) => ({
          uri: BLOCK_URI_PREFIX + encodeURIComponent(b.name),
          name: `block ${b.name}`,
          description: b.description || undefined,
          mimeType: "text/x-lua",
        })),
        ...(dc
          ? declaredBlocks(blocks).resources.filter((b) => !b.declaration.template).map((b) => ({
            uri: b.declaration.uri,
            name: b.declaration.name,
            ...(b.declaration.title ? { title: b.declaration.title } : {}),
            description: b.declaration.description || `block ${b.name}`,
            mimeType: b.declaration.mimeType,
          }))
          : []),
      ],
    };
  });
  server.setRequestHandler("resources/templates/list", () => ({
    resourceTemplates: [
      {
        uriTemplate: `${BLOCK_URI_PREFIX}{name}`,
        name: "block source",
        description: "The Lua source of one registered block.",
        mimeType: "text/x-lua",
      },
      ...(dc
        ? declaredBlocks(currentBlocks(opts)).resources.filter((b) => b.declaration.template).map((b) => ({
          uriTemplate: b.declaration.uri,
          name: b.declaration.name,
          ...(b.declaration.title ? { title: b.declaration.title } : {}),
          description: b.declaration.description || `block ${b.name}`,
          mimeType: b.declaration.mimeType,
        }))
        : []),
    ],
  }));
  server.setRequestHandler("resources/read", async (req, ctx) => {
    if (dc && !req.params.uri.startsWith("agent-block://")) {
      const r = await readDeclaredResource(dc, server, currentBlocks(opts), req.params.uri, ctx);
      if (r) return r;
    }
    return await readResource(opts, req.params.uri);
  });
  if (dc) {
    // A subscribed resource's client hears when its block's file or a path it watches changes.
    const subscriptions = new ResourceSubscriptions({
      pathsOf: (uri) => resourcePaths(opts, currentBlocks(opts), uri),
      notify: (uri) => server.sendResourceUpdated({ uri }),
      log: opts.log,
    });
    const closed = server.onclose;
    server.onclose = () => {
      subscriptions.close();
      closed?.();
    };
    server.setRequestHandler("resources/subscribe", (req) => {
      subscriptions.subscribe(req.params.uri);
      return {};
    });
    server.setRequestHandler("resources/unsubscribe", (req) => {
      subscriptions.unsubscribe(req.params.uri);
      return {};
    });
    server.setRequestHandler("prompts/list", () => ({
      prompts: declaredBlocks(currentBlocks(opts)).prompts.map((b) => ({
        name: b.declaration.name,
        ...(b.declaration.title ? { title: b.declaration.title } : {}),
        description: b.declaration.description || `block ${b.name}`,
        arguments: b.declaration.arguments.map(({ values: _, examples: __, ...a }) => a),
      })),
    }));
    server.setRequestHandler("prompts/get", async (req, ctx) => {
      const block = declaredBlocks(currentBlocks(opts)).prompts.find((b) =>
        b.declaration.name === req.params.name
      );
      if (!block) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`);
      }
      return await getDeclaredPrompt(dc, server, block, req.params.arguments ?? {}, ctx);
    });
    // A prompt argument declared as "a"|"b" completes to those values, and a prompt argument or a
    // template variable with ---@examples to those (by prefix); anything else to none.
    server.setRequestHandler("completion/complete", (req) => ({
      completion: completionOf(declaredBlocks(currentBlocks(opts)), req.params),
    }));
  }
  return server;
}

/**
 * The files `uri`'s content comes from (`subscriptions.ts`): a declared resource's block file and
 * its `---@watch` paths (a template's variables filled in; a path that would leave the project
 * root is left out), or a block's file for `agent-block://blocks/<name>`; undefined for any other
 * URI.
 */
export function resourcePaths(
  opts: Pick<BlockServerOptions, "projectRoot">,
  blocks: BlockEntry[],
  uri: string,
): string[] | undefined {
  if (uri.startsWith(BLOCK_URI_PREFIX)) {
    let name: string;
    try {
      name = decodeURIComponent(uri.slice(BLOCK_URI_PREFIX.length));
    } catch {
      return undefined;
    }
    const b = blocks.find((x) => x.name === name);
    return b ? [b.path] : undefined;
  }
  const { resources } = declaredBlocks(blocks);
  let vars: Record<string, string> | undefined;
  let block = resources.find((b) => !b.declaration.template && b.declaration.uri === uri);
  if (block) vars = {};
  else {
    for (const b of resources) {
      vars = b.declaration.template ? matchTemplate(b.declaration.uri, uri) : undefined;
      if (vars) {
        block = b;
        break;
      }
    }
  }
  if (!block || !vars) return undefined;
  const root = resolve(opts.projectRoot);
  const paths = [block.path];
  for (const w of block.declaration.watch ?? []) {
    const filled = w.replace(/\{(\w+)\}/g, (_, v: string) => vars![v] ?? "");
    const p = resolve(root, filled);
    if (p === root || p.startsWith(root + sep)) paths.push(p);
  }
  return paths;
}

/** The lshape input schemas of a server's declared tools (one cache for all its instances). */
const lshapeInputs = new WeakMap<DeclaredContext, LshapeInputs>();

function lshapeInputsOf(opts: BlockServerOptions, dc: DeclaredContext): LshapeInputs {
  let l = lshapeInputs.get(dc);
  if (!l) {
    l = new LshapeInputs({
      projectRoot: dc.projectRoot,
      home: opts.home,
      env: dc.env,
      runner: () => dc.sandboxed ? dc.runner : dc.inProcess([]),
      log: dc.log,
    });
    lshapeInputs.set(dc, l);
  }
  return l;
}

/** The `tools/list` entry of a declared tool. */
export function declaredToolEntry(d: ToolDeclaration): Tool {
  const t: Tool = {
    name: d.name,
    description: d.description || `block tool ${d.name}`,
    inputSchema: d.inputSchema as Tool["inputSchema"],
  };
  if (d.title) t.title = d.title;
  if (d.outputSchema) t.outputSchema = d.outputSchema as Tool["outputSchema"];
  if (d.annotations) t.annotations = d.annotations as Tool["annotations"];
  return t;
}

/**
 * The completion of a prompt argument or a resource template's variable: what its header declares
 * — a `"a"|"b"` type's values, then its `---@examples` — starting with what was typed (exactly
 * first; then, when that finds none, ignoring case), at most 100. A free-text argument with no
 * examples completes to nothing.
 */
export function completionOf(
  declared: {
    prompts: {
      declaration: { name: string; arguments: { name: string; values?: string[]; examples?: string[] }[] };
    }[];
    resources?: { declaration: { uri: string; template: boolean; examples?: Record<string, string[]> } }[];
  },
  params: { ref: { type: string; name?: string; uri?: string }; argument: { name: string; value: string } },
): { values: string[]; total: number; hasMore: boolean } {
  let all: string[] = [];
  if (params.ref.type === "ref/prompt") {
    const p = declared.prompts.find((x) => x.declaration.name === params.ref.name);
    const a = p?.declaration.arguments.find((x) => x.name === params.argument.name);
    all = [...(a?.values ?? []), ...(a?.examples ?? [])];
  } else if (params.ref.type === "ref/resource") {
    const r = declared.resources?.find((x) => x.declaration.template && x.declaration.uri === params.ref.uri);
    all = r?.declaration.examples?.[params.argument.name] ?? [];
  }
  const typed = params.argument.value;
  let hits = [...new Set(all)].filter((v) => v.startsWith(typed));
  if (hits.length === 0) {
    hits = [...new Set(all)].filter((v) => v.toLowerCase().startsWith(typed.toLowerCase()));
  }
  return { values: hits.slice(0, 100), total: hits.length, hasMore: hits.length > 100 };
}
