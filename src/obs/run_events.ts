/**
 * The run's event seam: what one run tells whoever watches it, as it happens.
 *
 * Owns the vocabulary (`RunEvent`), the observer type (`RunObserver`) and the guarded fan-out
 * (`fanOut`) every source calls. The sources, each reached through the run (`RunContext.observe`):
 * - `events`: the kernel's rows, handed over by the run's writers (`src/knl/writer.ts`) right
 *   after each commit, in commit order, decoded as a reader of the store gets them — each one is
 *   a record of `agent-block knl export --as events` (the same JSON once encoded);
 * - `mcp_connect` / `mcp_call`: an MCP connection opened (or refused), a `tools/call` answered
 *   (or failed), from `src/host/mcp.ts` — the kernel does not record them;
 * - `a2a_call`: an A2A call answered (or failed), from `src/host/a2a.ts`, likewise;
 * - `session_open`: a kernel session the run opened (`src/host/knl.ts`, through the runner);
 * - `artifact`: a part the block staged with `bus.emit("artifact", ...)` (the runner's bus tap);
 * - `end`: the run's outcome, from the runner (`src/runner/in_process.ts`), after the run's
 *   cleanup, so every kernel row of the run came before it; exactly one, always last.
 * Model turns and tool calls are kernel rows (`llm_request`, `llm_response`, `tool_call`,
 * `tool_result`, `budget_charge`) inside `events`: the record is the one source of them.
 * Consumers: the CLI's `--progress` (`src/cli/progress.ts`) and `--events` (the JSON Lines form,
 * `src/runner/event_json.ts`), the child runner relaying a child's stream, the MCP server's
 * progress notifications, `serve`'s record, and an embedder's `BlockConfig.builder(...).observe(fn)`.
 *
 * Invariants:
 * - With no observer a run has no `observe` at all (`fanOut` returns `undefined`), and the
 *   sources do nothing extra: no row is decoded, no time taken.
 * - Observers are called synchronously, in registration order, inside the run; an event's
 *   objects are shared between them and must not be changed. They must be quick and must not
 *   call into the run.
 * - An observer that throws is detached: it gets nothing more, and the run goes on with one
 *   warning naming the error (`warn`). Watching a run never changes how it ends.
 */
import type { EventRow } from "../knl/store.ts";
import type { Outcome } from "../outcome.ts";

/**
 * One thing that happened in a run: kernel rows just committed, an MCP connect or tool call
 * finished, or the run's end.
 *
 * ```ts
 * import { BlockConfig, runBlock, type RunEvent, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const seen: string[] = [];
 * const script = `require("knl").session({ owner = "docs", store = "mem" }, function(s)
 *   s:append({ kind = "note", data = { text = "step one" } })
 * end)`;
 * await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "note.lua"), ".")
 *     .observe((e: RunEvent) => {
 *       if (e.type === "events") for (const row of e.rows) seen.push(row.kind);
 *       else if (e.type === "end") seen.push(`end:${e.outcome.status}`);
 *     })
 *     .env({})
 *     .build(),
 * );
 * assert.deepEqual(seen, ["session_open", "note", "session_close", "end:returned"]);
 * ```
 */
export type RunEvent =
  | {
    /** Kernel rows just committed (one transaction), as `knl export --as events` prints them. */
    type: "events";
    /** The rows, in commit order. */
    rows: readonly EventRow[];
  }
  | {
    /** An MCP server connect finished (`mcp.connect`, `mcp.connect_http`, `agent.run`'s servers). */
    type: "mcp_connect";
    /** The server's name. */
    server: string;
    /** How it was reached. */
    transport: "stdio" | "http" | "sse";
    /** How long the connect took, ms. */
    ms: number;
    /** Whether it connected. */
    ok: boolean;
    /** Why not, when it did not. */
    error?: string;
  }
  | {
    /** An MCP `tools/call` finished (`mcp.call`, a model's call of a server's tool). */
    type: "mcp_call";
    /** The server's name. */
    server: string;
    /** The tool called. */
    tool: string;
    /** How long the call took, ms. */
    ms: number;
    /** False when the request failed or the tool answered `isError`. */
    ok: boolean;
    /** The failure, when it failed. */
    error?: string;
  }
  | {
    /** An A2A call finished (`a2a.card`, `a2a.send`, `a2a.get`, `a2a.cancel`, an agent's delegation). */
    type: "a2a_call";
    /** The agent's URL (credentials scrubbed). */
    agent: string;
    /** `card`, `send`, `get` or `cancel`. */
    method: string;
    /** How long the call took, ms. */
    ms: number;
    /** False when the call failed (the task's own state is the answer's, not this). */
    ok: boolean;
    /** The failure, when it failed. */
    error?: string;
  }
  | {
    /** A kernel session the run opened (`knl.session`, `agent.run`). */
    type: "session_open";
    /** The session's id (`knl show ID`). */
    session: string;
  }
  | {
    /** A part the block staged with `bus.emit("artifact", { name = ..., content = ... })`. */
    type: "artifact";
    /** The artifact's name. */
    name: string;
    /** Its content (any JSON value; `undefined` when the payload had none). */
    content: unknown;
    /** The bus event's id. */
    id: string;
  }
  | {
    /** The run ended (after its cleanup). */
    type: "end";
    /** How. */
    outcome: Outcome;
    /** How long the run took, ms. */
    ms: number;
  };

/**
 * Watches one run: called with each `RunEvent` as it happens, synchronously, inside the run.
 * Keep it quick and do not change the event; one that throws is detached with a warning on the
 * run's stderr.
 *
 * ```ts
 * import { BlockConfig, runBlock, type RunObserver, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const warnings: string[] = [];
 * const broken: RunObserver = () => {
 *   throw new Error("disk full");
 * };
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline("return 'done'", "ok.lua"), ".")
 *     .observe(broken)
 *     .stderr((b) => void warnings.push(new TextDecoder().decode(b)))
 *     .env({})
 *     .build(),
 * );
 * assert.equal(report.value, "done"); // watching never changes how a run ends
 * assert.match(warnings.join(""), /an observer of the run failed and was detached: disk full/);
 * ```
 */
export type RunObserver = (event: RunEvent) => void;

/**
 * One observer calling each of `observers` in order, or `undefined` when there are none (the
 * run then has nothing to tell). An observer that throws is dropped and `warn` is told once.
 */
export function fanOut(
  observers: readonly RunObserver[],
  warn: (message: string) => void,
): RunObserver | undefined {
  if (observers.length === 0) return undefined;
  const live = [...observers];
  return (event) => {
    for (let i = 0; i < live.length; i++) {
      try {
        live[i](event);
      } catch (e) {
        live.splice(i--, 1);
        warn(`an observer of the run failed and was detached: ${(e as Error)?.message ?? e}`);
      }
    }
  };
}
