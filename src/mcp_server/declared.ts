/**
 * `agent-block mcp --expose blocks`: every block whose header declares it (`---@tool`,
 * `---@resource`, `---@prompt`; `src/blocks/declaration.ts`) served natively, beside `run_block`.
 *
 * Owns:
 * - the listings (`tools/list` entries, `resources/list`, `resources/templates/list`,
 *   `prompts/list`), rebuilt from the registry on every request, like `run_block`'s enum; a block
 *   with a malformed declaration is left out (and logged, with its file and line, once per edit);
 *   a name or URI declared by two blocks goes to the nearer one (the registry's order);
 * - a call: a tool's arguments checked against its input schema first (`schema_check.ts`; a bad
 *   call is a JSON-RPC invalid-params error naming the field, and the block does not run), then
 *   one run of the block (`_ARGS`: the arguments, or a resource template's variables, or a
 *   prompt's arguments; `_URI`: the resource's URI) through an in-process runner (made by the
 *   edge, `DeclaredContext.inProcess`) with the call's `mcp.client` (`call_session.ts`), or,
 *   under `--sandbox`, the server's child runner
 *   (then `mcp.client` does not exist: a confined run is a process of its own);
 * - the block's answer as an MCP result (`result_shape.ts`).
 *
 * Why a driver chunk: a block's return value reaches a runner as text (`tostring`), so a block
 * returning a table (a rich result) is run through a small driver that loads it by path (its
 * errors keep the block's own file and lines) and JSON-encodes a table behind a marker no text
 * result can start with.
 *
 * Every call, refused or run, is a kernel session of its own (`call_record.ts`, through
 * `DeclaredContext.record`), written by the server around the run — so a sandboxed run, a
 * timeout and a cancellation are recorded like any other — and linked to the sessions the run
 * opens; a tool result names it in `_meta["agent-block/session"]`.
 */
import { dirname } from "node:path";
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  type InputRequiredResult,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { CallToolResult, GetPromptResult, ReadResourceResult } from "@modelcontextprotocol/server";
import type { BlockEntry } from "../blocks/registry.ts";
import {
  matchTemplate,
  type PromptDeclaration,
  type ResourceDeclaration,
  type ToolDeclaration,
} from "../blocks/declaration.ts";
import type { BlockRunner, RunReport } from "../runner/runner.ts";
import type { JsonValue } from "../json/codec.ts";
import type { HostModule } from "../host/context.ts";
import type { Logger } from "../obs/log.ts";
import { CallSession, type CallStop, type CallTable, type ClientAbilities } from "./call_session.ts";
import { callerOf, type CallRecorder, type CallStart, type OpenCall, relativeScript } from "./call_record.ts";
import { schemaProblem } from "./schema_check.ts";
import { promptResultOf, resourceResultOf, RESULT_MARK, toolResultOf } from "./result_shape.ts";

/** What serving declared blocks needs from the server. */
export interface DeclaredContext {
  projectRoot: string;
  env: Readonly<Record<string, string>>;
  runTimeoutSecs: number;
  log: Logger;
  /** The server's runner (a process per run): used for declared blocks only when `sandboxed`. */
  runner: BlockRunner<RunReport>;
  /**
   * Makes the in-process runner of one call, with the call's host modules (`mcp.client`); the
   * edge picks the implementation (the in-process runner, its output going to stderr).
   */
  inProcess: (modules: readonly HostModule[]) => BlockRunner<RunReport>;
  /** Runs are confined: each goes through `runner` (a process), without `mcp.client`. */
  sandboxed: boolean;
  /** Calls waiting for their client between rounds (shared by every server instance). */
  calls: CallTable;
  /** How long a call waits for its client between rounds, ms (default 10 minutes). */
  suspendTimeoutMs?: number;
  /** Calls in flight (the server waits for them when it stops). */
  runs?: Set<Promise<unknown>>;
  /** The server is stopping: every call still going (or waiting for its client) is ended. */
  stopping?: AbortSignal;
  /** The kernel record of every call (`call_record.ts`); absent, none is written. */
  record?: CallRecorder;
}

/** The declared blocks by kind, nearer tier first winning a name or URI; malformed ones left out. */
export function declaredBlocks(blocks: BlockEntry[]): {
  tools: (BlockEntry & { declaration: ToolDeclaration })[];
  resources: (BlockEntry & { declaration: ResourceDeclaration })[];
  prompts: (BlockEntry & { declaration: PromptDeclaration })[];
} {
  const tools = new Map<string, BlockEntry & { declaration: ToolDeclaration }>();
  const resources = new Map<string, BlockEntry & { declaration: ResourceDeclaration }>();
  const prompts = new Map<string, BlockEntry & { declaration: PromptDeclaration }>();
  const tierRank = { "project-local": 0, project: 1, user: 2, extra: 3 } as const;
  const sorted = [...blocks].sort((a, b) => tierRank[a.tier] - tierRank[b.tier]);
  for (const b of sorted) {
    const d = b.declaration;
    if (!d) continue;
    if (d.kind === "tool" && !tools.has(d.name)) {
      tools.set(d.name, b as BlockEntry & { declaration: ToolDeclaration });
    }
    if (d.kind === "resource" && !resources.has(d.uri)) {
      resources.set(d.uri, b as BlockEntry & { declaration: ResourceDeclaration });
    }
    if (d.kind === "prompt" && !prompts.has(d.name)) {
      prompts.set(d.name, b as BlockEntry & { declaration: PromptDeclaration });
    }
  }
  const byKey = <T>(m: Map<string, T>) =>
    [...m.entries()].sort((a, b) => a[0] < b[0] ? -1 : 1).map((e) => e[1]);
  return { tools: byKey(tools), resources: byKey(resources), prompts: byKey(prompts) };
}

/** A Lua string literal of `s`. */
function luaString(s: string): string {
  return '"' +
    [...new TextEncoder().encode(s)].map((b) =>
      b === 0x22 || b === 0x5c || b < 0x20 || b > 0x7e ? `\\${b}` : String.fromCharCode(b)
    ).join("") + '"';
}

/**
 * The driver chunk of one call: runs the block at `path` and marks a table result. `sandboxed`:
 * the run is confined (a child process), and `mcp.client` is a table whose every field raises
 * saying so.
 */
export function driverSource(path: string, sandboxed = false): string {
  // A confined run is a process of its own: it has no mcp.client, and says so when touched.
  const stub = sandboxed
    ? `mcp.client = setmetatable({}, { __index = function(_, k)
  error("mcp.client." .. tostring(k) .. ": the calling client cannot be reached from a sandboxed run (agent-block mcp --sandbox)", 2)
end })
`
    : "";
  return `${stub}local f, err = loadfile(${luaString(path)})
if not f then error(err, 0) end
local v = f()
if type(v) == "table" then v = ${luaString(RESULT_MARK)} .. std.json.encode(v) end
return v
`;
}

/** What the client can answer (its declared capabilities, in either era). */
export function abilitiesOf(server: Server, ctx: ServerContext): ClientAbilities {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const caps = (envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.getClientCapabilities() ?? {}) as Record<
    string,
    unknown
  >;
  return { sampling: !!caps.sampling, elicitation: !!caps.elicitation, roots: !!caps.roots, declared: caps };
}

function progressTokenOf(
  req: { params: { _meta?: { progressToken?: string | number } } },
  ctx: ServerContext,
) {
  return req.params._meta?.progressToken ?? ctx.mcpReq._meta?.progressToken;
}

/** What a finished run hands the result builders: the returned text or table, or an error text. */
export type RunAnswer = ({ ok: true; value: unknown } | { ok: false; message: string }) & {
  session?: string;
};

function answerOf(report: RunReport, name: string, cancelled: boolean, call?: OpenCall): RunAnswer {
  const answer = answerOfOutcome(report, name, cancelled);
  // The call's kernel session: where its record is.
  if (call?.session !== undefined) answer.session = call.session;
  call?.end({
    outcome: report.outcome,
    sessions: report.sessions,
    ...(answer.ok ? { value: answer.value } : { error: answer.message }),
  });
  return answer;
}

function answerOfOutcome(report: RunReport, name: string, cancelled: boolean): RunAnswer {
  const o = report.outcome;
  switch (o.status) {
    case "returned": {
      const v = o.value === undefined
        ? ""
        : typeof o.value === "string"
        ? o.value
        : new TextDecoder().decode(o.value);
      if (v.startsWith(RESULT_MARK)) {
        try {
          return { ok: true, value: JSON.parse(v.slice(RESULT_MARK.length)) };
        } catch (e) {
          return {
            ok: false,
            message: `block '${name}' returned a table that is not JSON: ${(e as Error).message}`,
          };
        }
      }
      return { ok: true, value: v };
    }
    case "raised":
      return { ok: false, message: o.message };
    case "timed_out":
      return { ok: false, message: `block '${name}' ran past its timeout of ${o.seconds} s and was stopped` };
    case "cancelled":
      return {
        ok: false,
        message: cancelled ? `block '${name}' was cancelled` : `block '${name}' was stopped: ${o.reason}`,
      };
    case "deferred":
      return { ok: false, message: `block '${name}' deferred: ${o.reason}` };
    case "exited":
      return { ok: false, message: `block '${name}' exited with code ${o.code}` };
  }
}

let callSeq = 0;

/** Starts one run of `block` for `session` (recorded as `call`); the session is told its end. */
function startRun(
  dc: DeclaredContext,
  block: BlockEntry,
  globals: Record<string, unknown>,
  session: CallSession,
  call: OpenCall | undefined,
): void {
  const n = ++callSeq;
  const started = performance.now();
  const stop = () => session.abort.abort("the server is shutting down");
  if (dc.stopping?.aborted) stop();
  dc.stopping?.addEventListener("abort", stop, { once: true });
  const runner: BlockRunner<RunReport> = dc.sandboxed ? dc.runner : dc.inProcess([session.module()]);
  const running = runner.run({
    script: {
      source: driverSource(block.path, dc.sandboxed),
      name: `${block.name}.lua`,
      dir: dirname(block.path),
      chunkname: "=ab:mcp",
    },
    name: block.name,
    projectRoot: dc.projectRoot,
    env: dc.env,
    timeoutMs: dc.runTimeoutSecs * 1000,
    globals: globals as Record<string, JsonValue>,
    ...(call?.session !== undefined ? { labels: call.runLabels() } : {}),
  }, { signal: session.abort.signal }).then((report) => {
    const answer = answerOf(report, block.name, session.abort.signal.aborted, call);
    dc.log.info(
      `${block.declaration!.kind} #${n} '${block.name}': ${report.outcome.status} in ${
        Math.round(performance.now() - started)
      } ms${dc.sandboxed ? " (sandboxed)" : ""}`,
    );
    session.finish(answer);
  }, (e) => {
    const message = `internal failure: ${(e as Error)?.message ?? e}`;
    call?.end({ outcome: "invalid", error: message });
    session.finish({ ok: false, message });
  });
  dc.runs?.add(running);
  void running.finally(() => {
    dc.runs?.delete(running);
    dc.stopping?.removeEventListener("abort", stop);
  });
}

/** Records a call's arrival (nothing when the server keeps no record). */
function begin(
  dc: DeclaredContext,
  server: Server,
  ctx: ServerContext,
  block: BlockEntry,
  call: Omit<CallStart, "client" | "era" | "sandboxed" | "block" | "script">,
): OpenCall | undefined {
  return dc.record?.begin({
    ...call,
    block: block.name,
    script: relativeScript(dc.projectRoot, block.path),
    ...callerOf(server, ctx),
    ...(dc.sandboxed ? { sandboxed: true } : {}),
  });
}

/** Runs a call to its next stop: the answer, or an input request (the call then waits in the table). */
async function step(dc: DeclaredContext, session: CallSession): Promise<RunAnswer | InputRequiredResult> {
  // A resumed call whose client left some requests unanswered is asked for those again.
  let requests = session.unanswered();
  if (!requests) {
    const stop: CallStop = await session.next();
    if (stop.kind === "done") {
      const answer = stop.value as RunAnswer;
      if (!answer.ok && session.missingCapability && session.era !== "2025") {
        throw new MissingRequiredClientCapabilityError(
          { requiredCapabilities: { [session.missingCapability]: {} } },
          answer.message,
        );
      }
      return answer;
    }
    requests = stop.requests;
  }
  const state = session.suspend(dc.suspendTimeoutMs ?? 600_000, () => dc.calls.delete(state));
  dc.calls.add(session);
  return inputRequired({
    inputRequests: requests as Parameters<typeof inputRequired>[0]["inputRequests"],
    requestState: state,
  });
}

/** A call's session: a resumed one (the request carries our state) or a fresh one. */
function resumed(
  dc: DeclaredContext,
  ctx: ServerContext,
  token: string | number | undefined,
  owner: string,
): CallSession | undefined {
  const state = ctx.mcpReq.requestState();
  if (typeof state !== "string") return undefined;
  const s = dc.calls.take(state, owner);
  if (!s) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid or expired requestState", {
      reason: "invalid_request_state",
    });
  }
  s.resume(ctx, token);
  return s;
}

/** `tools/call` of a declared tool. */
export async function callDeclaredTool(
  dc: DeclaredContext,
  server: Server,
  block: BlockEntry & { declaration: ToolDeclaration },
  req: { params: { arguments?: Record<string, unknown>; _meta?: { progressToken?: string | number } } },
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  const token = progressTokenOf(req, ctx);
  const owner = `tool ${block.declaration.name}`;
  let session = resumed(dc, ctx, token, owner);
  if (!session) {
    const args = req.params.arguments ?? {};
    const call = begin(dc, server, ctx, block, {
      kind: "tool",
      name: block.declaration.name,
      arguments: args,
    });
    const problem = schemaProblem(block.declaration.inputSchema, args);
    if (problem) {
      const message = `Invalid arguments for tool ${block.declaration.name}: ${problem}`;
      call?.end({ outcome: "invalid", error: message });
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, message);
    }
    session = new CallSession(ctx, abilitiesOf(server, ctx), token, owner);
    startRun(dc, block, { _ARGS: args }, session, call);
  }
  const r = await step(dc, session);
  if ("resultType" in r) return r;
  return toolResultOf(block.declaration, r);
}

/** `resources/read` of a declared resource (or template); undefined when none matches `uri`. */
export async function readDeclaredResource(
  dc: DeclaredContext,
  server: Server,
  blocks: BlockEntry[],
  uri: string,
  ctx: ServerContext,
): Promise<ReadResourceResult | InputRequiredResult | undefined> {
  let session = resumed(dc, ctx, undefined, `resource ${uri}`);
  const { resources } = declaredBlocks(blocks);
  let block: (BlockEntry & { declaration: ResourceDeclaration }) | undefined;
  let vars: Record<string, string> = {};
  block = resources.find((b) => !b.declaration.template && b.declaration.uri === uri);
  if (!block) {
    for (const b of resources) {
      const m = b.declaration.template ? matchTemplate(b.declaration.uri, uri) : undefined;
      if (m) {
        block = b;
        vars = m;
        break;
      }
    }
  }
  if (!block) return undefined;
  if (!session) {
    session = new CallSession(ctx, abilitiesOf(server, ctx), undefined, `resource ${uri}`);
    const call = begin(dc, server, ctx, block, {
      kind: "resource",
      name: block.declaration.uri,
      uri,
      arguments: vars,
    });
    startRun(dc, block, { _ARGS: vars, _URI: uri }, session, call);
  }
  const r = await step(dc, session);
  if ("resultType" in r) return r;
  if (!r.ok) throw new ProtocolError(ProtocolErrorCode.InternalError, `resource ${uri}: ${r.message}`);
  return resourceResultOf(block.declaration, uri, r.value);
}

/** `prompts/get` of a declared prompt. */
export async function getDeclaredPrompt(
  dc: DeclaredContext,
  server: Server,
  block: BlockEntry & { declaration: PromptDeclaration },
  args: Record<string, string>,
  ctx: ServerContext,
): Promise<GetPromptResult | InputRequiredResult> {
  const owner = `prompt ${block.declaration.name}`;
  let session = resumed(dc, ctx, undefined, owner);
  if (!session) {
    const call = begin(dc, server, ctx, block, {
      kind: "prompt",
      name: block.declaration.name,
      arguments: args,
    });
    for (const a of block.declaration.arguments) {
      if (a.required && typeof args[a.name] !== "string") {
        const message = `Invalid arguments for prompt ${block.declaration.name}: ${a.name}: is required`;
        call?.end({ outcome: "invalid", error: message });
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, message);
      }
    }
    session = new CallSession(ctx, abilitiesOf(server, ctx), undefined, owner);
    startRun(dc, block, { _ARGS: args }, session, call);
  }
  const r = await step(dc, session);
  if ("resultType" in r) return r;
  if (!r.ok) {
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `prompt ${block.declaration.name}: ${r.message}`,
    );
  }
  return promptResultOf(block.declaration, r.value);
}
