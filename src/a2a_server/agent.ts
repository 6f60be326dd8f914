/**
 * The project as one A2A agent: its card (a skill per registered block) and the executor that
 * runs a message as a block run through the `BlockRunner`.
 *
 * Owns the mapping between a run and an A2A task:
 * - skill: `message.metadata.skill` (or `metadata.block`) names the block; with no name and one
 *   registered block, that block; otherwise the task is `rejected` with a message listing the
 *   skills. The message's text parts, joined by newlines, are the run's `_PROMPT`; a data part's
 *   JSON is `_CONTEXT` (the last one wins).
 * - events: the task is `submitted`, then `working`; while the run goes on, each `RunEvent` is one
 *   `working` status update whose message carries a line of text (the event and the run's tally:
 *   turns, tokens, tool calls, `src/runner/tally.ts`) and the event as a data part (the `--events`
 *   JSON form, `src/runner/event_json.ts`, kernel rows named without their data); an `artifact`
 *   event is an artifact update (its content as text when a string, else as data).
 * - the end: `returned` → an artifact `result` holding the value (text), then `completed`;
 *   `deferred`/`exited`/`raised`/`timed_out` → `failed` with the reason as the status message;
 *   `cancelled` → `canceled`. The final update's metadata says `agent-block/sandboxed` when the
 *   runner tells whether the run was confined.
 * - cancel: ends the run (its process tree, through the runner's signal); the task reaches
 *   `canceled` when the run has ended, so a cancel answered `canceled` means the process is gone.
 *
 * Invariant: one run per task; a task's run is never started twice (a message continuing a
 * finished task is refused by the SDK's request handler before it reaches here).
 */
import { type AgentCard, type Message, type Part, Role, TaskState } from "@a2a-js/sdk";
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from "@a2a-js/sdk/server";
import type { BlockEntry } from "../blocks/registry.ts";
import type { BlockRunner, RunReport } from "../runner/runner.ts";
import type { RunEvent } from "../obs/run_events.ts";
import type { Outcome } from "../outcome.ts";
import { eventLine } from "../runner/event_json.ts";
import { RunTally } from "../runner/tally.ts";
import type { Logger } from "../obs/log.ts";
import { VERSION } from "../version.ts";

/** The final status update's metadata key saying whether the run was confined (`--sandbox`). */
export const SANDBOXED_META = "agent-block/sandboxed";

/** What the agent needs to run blocks. */
export interface AgentOptions {
  /** The registered blocks right now. */
  blocks: () => BlockEntry[];
  /** Runs them (the child runner). */
  runner: BlockRunner<RunReport>;
  projectRoot: string;
  /** Every run's environment (resolved at the edge). */
  env: Readonly<Record<string, string>>;
  /** Limit of one run, seconds. */
  runTimeoutSecs: number;
  log: Logger;
  /** Runs in flight (the server waits for them when it stops). */
  runs: Set<Promise<unknown>>;
}

/** The card for `blocks`, served at `base` (`http://127.0.0.1:PORT`). */
export function agentCard(blocks: readonly BlockEntry[], base: string): AgentCard {
  return {
    name: "agent-block",
    description: "Runs agent-block blocks (Lua scripts): each skill is one block; a message's text is " +
      "its _PROMPT. Name the skill in message.metadata.skill unless only one is offered.",
    version: VERSION,
    supportedInterfaces: [
      { url: `${base}/a2a/jsonrpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" },
      { url: `${base}/a2a/rest`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0", tenant: "" },
    ],
    provider: undefined,
    documentationUrl: undefined,
    iconUrl: undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: blocks.map((b) => ({
      id: b.name,
      name: b.name,
      description: b.description || `The block '${b.name}'.`,
      tags: ["agent-block", b.tier],
      examples: [],
      inputModes: ["text/plain", "application/json"],
      outputModes: ["text/plain"],
      securityRequirements: [],
    })),
    signatures: [],
  };
}

function textPart(text: string): Part {
  return {
    content: { $case: "text", value: text },
    metadata: undefined,
    filename: "",
    mediaType: "text/plain",
  };
}

function dataPart(value: unknown): Part {
  return {
    content: { $case: "data", value },
    metadata: undefined,
    filename: "",
    mediaType: "application/json",
  };
}

function agentMessage(taskId: string, contextId: string, parts: Part[]): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** One line saying what an event is. */
function eventSummary(e: RunEvent): string {
  switch (e.type) {
    case "events":
      return `kernel: ${e.rows.map((r) => r.kind).join(", ")}`;
    case "mcp_connect":
      return `mcp connect ${e.server}: ${e.ok ? "ok" : e.error}`;
    case "mcp_call":
      return `mcp call ${e.server}/${e.tool}: ${e.ok ? "ok" : e.error}`;
    case "a2a_call":
      return `a2a ${e.method} ${e.agent}: ${e.ok ? "ok" : e.error}`;
    case "session_open":
      return `session ${e.session} opened`;
    case "artifact":
      return `artifact ${e.name}`;
    default:
      return e.type;
  }
}

/**
 * An event as a status update carries it: the `--events` JSON form, except that kernel rows are
 * named (kind, stream, seq) without their data — a row's data is the block's whole conversation
 * (`llm_request` bodies), which the task's caller reads from the result, not from each update.
 */
function compactEvent(e: RunEvent): unknown {
  if (e.type === "events") {
    return { type: "events", rows: e.rows.map((r) => ({ kind: r.kind, stream: r.stream, seq: r.seq })) };
  }
  return JSON.parse(eventLine(e));
}

/** The block a message asks for, or why none. */
function pickBlock(blocks: readonly BlockEntry[], msg: Message): BlockEntry | string {
  const meta = (msg.metadata ?? {}) as Record<string, unknown>;
  const named = typeof meta.skill === "string"
    ? meta.skill
    : typeof meta.block === "string"
    ? meta.block
    : undefined;
  const list = blocks.map((b) => b.name).join(", ") || "(none)";
  if (named !== undefined) {
    return blocks.find((b) => b.name === named) ?? `no skill '${named}'; skills: ${list}`;
  }
  if (blocks.length === 1) return blocks[0];
  return `name the skill in message.metadata.skill; skills: ${list}`;
}

/** The run's `_PROMPT` and `_CONTEXT` from a message's parts. */
function inputsOf(msg: Message): { prompt?: string; context?: string } {
  const texts: string[] = [];
  let context: string | undefined;
  for (const p of msg.parts) {
    if (p.content?.$case === "text") texts.push(p.content.value);
    else if (p.content?.$case === "data") context = JSON.stringify(p.content.value);
  }
  return { prompt: texts.length ? texts.join("\n") : undefined, context };
}

function valueText(v: string | Uint8Array | undefined): string {
  if (v === undefined) return "";
  return typeof v === "string" ? v : new TextDecoder().decode(v);
}

function failureText(o: Outcome): string {
  switch (o.status) {
    case "deferred":
      return `the block deferred: ${o.reason}`;
    case "exited":
      return `the block exited with code ${o.code}`;
    case "raised":
      return `the block raised (${o.code}): ${o.message}`;
    case "timed_out":
      return `the block timed out after ${o.seconds} s`;
    case "cancelled":
      return `cancelled: ${o.reason}`;
    default:
      return o.status;
  }
}

/** The executor: one block run per task. */
export class BlockExecutor implements AgentExecutor {
  readonly #running = new Map<string, AbortController>();

  /** @param opts what runs need */
  constructor(private readonly opts: AgentOptions) {}

  /** Runs the message's block and publishes the task's events. */
  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = ctx;
    const status = (state: TaskState, parts?: Part[], metadata?: Record<string, unknown>) =>
      bus.publish(AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state,
          message: parts ? agentMessage(taskId, contextId, parts) : undefined,
          timestamp: new Date().toISOString(),
        },
        metadata,
      }));
    if (!ctx.task) {
      bus.publish(AgentEvent.task({
        id: taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_SUBMITTED,
          message: undefined,
          timestamp: new Date().toISOString(),
        },
        artifacts: [],
        history: [userMessage],
        metadata: undefined,
      }));
    }
    const block = pickBlock(this.opts.blocks(), userMessage);
    if (typeof block === "string") {
      status(TaskState.TASK_STATE_REJECTED, [textPart(block)]);
      bus.finished();
      return;
    }
    const stop = new AbortController();
    this.#running.set(taskId, stop);
    status(TaskState.TASK_STATE_WORKING, [textPart(`running block '${block.name}'`)]);
    const { prompt, context } = inputsOf(userMessage);
    let artifacts = 0;
    const tally = new RunTally();
    const observe = (e: RunEvent) => {
      if (e.type === "end") return;
      if (e.type === "artifact") {
        const c = e.content;
        bus.publish(AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: e.id || `artifact-${++artifacts}`,
            name: e.name,
            description: "",
            parts: [typeof c === "string" ? textPart(c) : dataPart(c ?? null)],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }));
        return;
      }
      tally.observe(e);
      status(TaskState.TASK_STATE_WORKING, [
        textPart(`block '${block.name}': ${eventSummary(e)}; ${tally.summary()}`),
        dataPart(compactEvent(e)),
      ]);
    };
    const running = this.opts.runner.run({
      script: { path: block.path },
      name: block.name,
      projectRoot: this.opts.projectRoot,
      prompt,
      context,
      env: this.opts.env,
      timeoutMs: this.opts.runTimeoutSecs * 1000,
    }, { signal: stop.signal, observe });
    this.opts.runs.add(running);
    let report: RunReport;
    try {
      report = await running;
    } finally {
      this.opts.runs.delete(running);
      this.#running.delete(taskId);
    }
    const o = report.outcome;
    // Whether the run was confined, when the runner says (the child runner does).
    const sandboxed = (report as RunReport & { sandboxed?: boolean }).sandboxed;
    const endMeta = sandboxed === undefined ? undefined : { [SANDBOXED_META]: sandboxed };
    this.opts.log.info(`task ${taskId} '${block.name}': ${o.status}${sandboxed ? " (sandboxed)" : ""}`);
    if (o.status === "returned") {
      bus.publish(AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: `${taskId}-result`,
          name: "result",
          description: `The value block '${block.name}' returned.`,
          parts: [textPart(valueText(o.value))],
          metadata: endMeta,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }));
      status(TaskState.TASK_STATE_COMPLETED, undefined, endMeta);
    } else if (o.status === "cancelled") {
      status(TaskState.TASK_STATE_CANCELED, [textPart(failureText(o))], endMeta);
    } else {
      status(TaskState.TASK_STATE_FAILED, [textPart(failureText(o))], { ...endMeta, outcome: o.status });
    }
    bus.finished();
  };

  /** Ends the task's run; `execute` publishes `canceled` once it has ended. */
  cancelTask = (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const stop = this.#running.get(taskId);
    if (stop) stop.abort("the A2A client cancelled the task");
    else bus.finished();
    return Promise.resolve();
  };
}
