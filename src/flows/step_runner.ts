/**
 * The one door from flows to a run: a flow step as a `RunRequest` to a `BlockRunner`, and what
 * comes back (outcome, returned value, staged artifacts, the last event emitted).
 *
 * This is the only file of `src/flows` that knows the runner's contract. What the contract
 * carries comes from it: the outcome, the sessions the run opened (the step's child sessions)
 * and its spend, counted from its events by `RunTally` (turns, tokens, tool calls, cost). What it
 * does not carry comes from wrapping the block's source, on the chunk's first line so line numbers
 * stay true: the wrapper sets the step's globals (`_STEP_KEY`, `_TASK_METADATA`, `_AGENT_CTX`, …),
 * taps `bus.emit` (every event still reaches the block's own bus; a bus the standard library
 * installs on first use is tapped once it installs, so the tap installs no bus a block never
 * touches), and returns one marked JSON text holding the block's first return value (a table as
 * JSON, so `return { ok = false }` means what it says — the contract's outcome has only its
 * `tostring`), the artifacts and the last non-artifact event — or, for a block that returned a
 * UTF-8 string and staged and emitted nothing, that string after its own mark: the wrapper of
 * such a step (string globals only, a plain string back) never loads `std.json`, the cost of a
 * trivial step, and the tap's and the envelope's code are chunks it `load`s only when needed.
 * The run still goes through the runner: the block's chunk name, directory, `require` path,
 * environment, labels and cancellation are the runner's, unchanged.
 *
 * Invariants:
 * - Every step run gets the labels it is given (the flow's run id and the step key), stamped by
 *   the runtime on every kernel session the block opens: that is how a step's own session is
 *   linked under the flow's.
 * - A block that is Lua bytecode is run unwrapped (no globals, no artifacts).
 * - Never rejects: the runner's outcome comes back as it is.
 */
import { dirname, relative } from "node:path";
import type { Outcome } from "../outcome.ts";
import type { BlockRunner, RunRequest } from "../runner/runner.ts";
import { RunTally } from "../runner/tally.ts";
import type { Json } from "./path.ts";

/** One step's run. */
export interface StepRequest {
  /** The block: a file, or inline source with its name and directory. */
  script: { path: string } | { source: string; name: string; dir: string };
  /** The project root. */
  projectRoot: string;
  /** The run's environment. */
  env: Readonly<Record<string, string>>;
  /** `_PROMPT`. */
  prompt?: string;
  /** `_CONTEXT`. */
  context?: string;
  /** Labels of the run (and of the sessions it opens). */
  labels: Record<string, string>;
  /** Globals set before the block runs (JSON values). */
  globals: Record<string, Json>;
  /** Ends the run. */
  signal?: AbortSignal;
}

/** What a step's run gave back. */
export interface StepRun {
  /** How the run ended. */
  outcome: Outcome;
  /** The block's first return value, when it returned: text, a table's JSON value, or nothing. */
  returned?: { type: "string"; value: string } | { type: "table"; value: Json } | { type: "none" };
  /** Artifacts staged with `bus.emit("artifact", { name, content })`, in order. */
  artifacts: { name: string; content: Json }[];
  /** The last event of another kind the block emitted (`bus.emit(kind, payload)`). */
  emitted?: { kind: string; payload: Json };
  /** What the run spent, counted from its events (`src/runner/tally.ts`); absent when it never ran. */
  usage?: StepUsage;
  /** Ids of the kernel sessions the run opened, in order (the step's child sessions). */
  sessions?: string[];
}

/** A step run's spend, as recorded in its `flow.step_completed` event (a type: it is stored as JSON). */
export type StepUsage = {
  /** Model turns. */
  turns: number;
  /** Input tokens over the turns. */
  input_tokens: number;
  /** Output tokens over the turns. */
  output_tokens: number;
  /** Tool calls (Lua tools and MCP calls). */
  tool_calls: number;
  /** Cost of the priced turns, USD (absent when no turn was priced). */
  cost_usd?: number;
};

/** The usage of a tally's counts. */
function usageOf(t: RunTally): StepUsage {
  const c = t.counts;
  const u: StepUsage = {
    turns: c.turns,
    input_tokens: c.tokensIn,
    output_tokens: c.tokensOut,
    tool_calls: c.toolCalls,
  };
  if (c.costUsd !== undefined) u.cost_usd = c.costUsd;
  return u;
}

/** Runs flow steps through a `BlockRunner`. */
export type StepRunner = (request: StepRequest) => Promise<StepRun>;

const MARK = "\u0000agent-block flow step\u0000";

/** `s` as a one-line Lua string literal (every byte outside printable ASCII escaped). */
function luaString(s: string): string {
  let out = '"';
  for (const b of new TextEncoder().encode(s)) {
    if (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c) out += String.fromCharCode(b);
    else out += "\\" + String(b).padStart(3, "0");
  }
  return out + '"';
}

/**
 * The globals set by the wrapper: a string as a Lua literal, the others decoded from one JSON
 * text. A step whose globals are all strings (`_STEP_KEY` alone, the usual case) never touches
 * `std.json`, whose first use in a run costs more than a trivial block.
 */
function setGlobals(globals: Record<string, Json>): string {
  const set: string[] = [];
  const rest: Record<string, Json> = {};
  let more = false;
  for (const [k, v] of Object.entries(globals)) {
    if (typeof v === "string") set.push(`_G[${luaString(k)}] = ${luaString(v)}`);
    else [rest[k], more] = [v, true];
  }
  if (more) {
    set.push(
      `do local g = std.json.decode(${
        luaString(JSON.stringify(rest))
      }) for k, v in pairs(g) do _G[k] = v end end`,
    );
  }
  return set.join(" ");
}

/**
 * The tap, a chunk `load`ed by the wrapper with the bus table and the step's state: every event
 * still reaches the block's own `bus.emit`; artifacts are staged, anything else is the last
 * event. Loaded only once the bus is installed (a block that never touches `bus` does not
 * install it, and a chunk in a string literal is only scanned, not compiled, until loaded).
 */
const TAP_CHUNK = [
  `local B, st = ...`,
  `local emit = B.emit`,
  `B.emit = function(kind, payload, ...)`,
  `if kind == "artifact" and type(payload) == "table" and payload.name ~= nil then`,
  `st.arts[#st.arts + 1] = { name = tostring(payload.name), content = payload.content }`,
  `else st.last = { kind = tostring(kind), payload = payload } end`,
  `return emit(kind, payload, ...) end`,
].join(" ");

/** The envelope of a block's value, a chunk `load`ed only when the value is not a plain string. */
const ENVELOPE_CHUNK = [
  `local v, st = ...`,
  `local out = { artifacts = st.arts, emitted = st.last }`,
  `if v == nil then out.type = "none" elseif type(v) == "table" then out.type = "table" out.value = v`,
  `else out.type = "string" out.value = type(v) == "string" and v or tostring(v) end`,
  `local ok, text = pcall(std.json.encode, out)`,
  `if ok then return ${luaString(MARK)} .. text end`,
  `return v`,
].join(" ");

/**
 * The wrapper's code after the globals and before the block's source (one line, made once). A
 * bus not installed yet (the standard library installs it on first use, `src/host/lazy.ts`) is
 * tapped right after it installs, through its trigger's `__installed`; an installed one (an
 * embedder's, installed before the script) at once.
 */
const TAP = [
  `return (function(main, ...)`,
  `local st, ulen, load, B = { arts = {} }, utf8.len, load, bus`,
  `local function tap() load(${luaString(TAP_CHUNK)})(B, st) end`,
  `local mt = getmetatable(B)`,
  `if type(mt) == "table" and mt.__installed then mt.__installed(tap) else tap() end`,
  `local v = main(...)`,
  // A string (valid UTF-8) with nothing staged or emitted comes back as it is, after the
  // mark and '=' (a JSON text starts with '{'): no std.json.
  `if type(v) == "string" and #st.arts == 0 and st.last == nil and ulen(v) then return ${
    luaString(MARK + "=")
  } .. v end`,
  `return load(${luaString(ENVELOPE_CHUNK)})(v, st) end)(function(...) `,
].join(" ");

/** The wrapper's code before the block's source (one line). */
function prefix(globals: Record<string, Json>): string {
  return setGlobals(globals) + " " + TAP;
}
const SUFFIX = "\nend, ...)\n";

/** The source of `script`, wrapped; undefined for bytecode. */
function wrapped(source: string, globals: Record<string, Json>): string | undefined {
  if (source.startsWith("\x1bLua")) return undefined;
  // A first line starting with '#' (a shebang) becomes a comment after the wrapper.
  const body = source.startsWith("#") ? "--" + source : source;
  return prefix(globals) + body + SUFFIX;
}

/** The step runner over `runner`. */
export function stepRunner(runner: BlockRunner): StepRunner {
  return async (req) => {
    let name: string;
    let dir: string;
    let source: string;
    if ("path" in req.script) {
      try {
        // Read synchronously, as the runtime reads a script file (`src/runtime/run.ts`): a block
        // is small, and an asynchronous read waits for a pool thread, which on a loaded machine
        // cost a trivial step more than the rest of its dispatch.
        source = Deno.readTextFileSync(req.script.path);
      } catch (e) {
        const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
        return { outcome: notStarted(`cannot read script ${req.script.path}: ${why}`), artifacts: [] };
      }
      const rel = relative(req.projectRoot, req.script.path);
      name = rel.startsWith("..") ? req.script.path : rel;
      dir = dirname(req.script.path);
    } else {
      ({ source, name, dir } = req.script);
    }
    const w = wrapped(source, req.globals);
    const script: RunRequest["script"] = w === undefined
      ? ("path" in req.script ? req.script : { source, name, dir })
      : { source: w, name, dir };
    const tally = new RunTally();
    const report = await runner.run({
      script,
      name,
      projectRoot: req.projectRoot,
      env: req.env,
      prompt: req.prompt,
      context: req.context,
      labels: req.labels,
    }, { signal: req.signal, observe: tally.observe });
    const { outcome } = report;
    const spent = { usage: usageOf(tally), sessions: [...report.sessions] };
    if (outcome.status !== "returned") return { outcome, artifacts: [], ...spent };
    const v = outcome.value;
    if (typeof v === "string" && v.startsWith(MARK + "=")) {
      const value = v.slice(MARK.length + 1);
      return {
        outcome: { status: "returned", value },
        returned: { type: "string", value },
        artifacts: [],
        ...spent,
      };
    }
    if (typeof v === "string" && v.startsWith(MARK)) {
      const env = JSON.parse(v.slice(MARK.length)) as {
        type: "string" | "table" | "none";
        value?: Json;
        artifacts?: { name: string; content?: Json }[] | Record<string, never>;
        emitted?: { kind: string; payload?: Json };
      };
      const arts = Array.isArray(env.artifacts) ? env.artifacts : [];
      return {
        outcome: { status: "returned", value: env.type === "string" ? env.value as string : undefined },
        returned: env.type === "none"
          ? { type: "none" }
          : env.type === "table"
          ? { type: "table", value: env.value ?? {} }
          : { type: "string", value: env.value as string },
        artifacts: arts.map((a) => ({ name: a.name, content: a.content ?? null })),
        ...(env.emitted ? { emitted: { kind: env.emitted.kind, payload: env.emitted.payload ?? null } } : {}),
        ...spent,
      };
    }
    const text = v === undefined ? undefined : typeof v === "string" ? v : new TextDecoder().decode(v);
    return {
      outcome,
      returned: text === undefined ? { type: "none" } : { type: "string", value: text },
      artifacts: [],
      ...spent,
    };
  };
}

function notStarted(message: string): Outcome {
  return { status: "raised", code: "config", message, traceback: "" };
}
