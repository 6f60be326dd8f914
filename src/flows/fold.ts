/**
 * A step's value: how what a block's run gave back becomes the value written at the step's `out`.
 *
 * Owns the fold (as the seed 004 engine folds a worker's output, leniently):
 * - a returned string that starts with `{` or `[` and parses as JSON is data (a leading markdown
 *   code fence is stripped first); prose and scalars stay strings (`"true"` stays a string);
 * - a returned table is its JSON value;
 * - nothing returned: the last event of another kind the block emitted is the value in the seed
 *   002 way (`content`, else `response`, else the whole payload); without one, `null`;
 * - with staged artifacts the value is `{out, parts}`, the last write winning per name;
 * - an object value with `ok = false`, a raise, a non-zero `os.exit`, a timeout: the step fails
 *   with a message naming the step;
 * - `job.defer(reason)`: the step is skipped (or, for an agent with `spec.on_defer = "wait"`,
 *   the flow waits for an answer);
 * - a value that breaks the agent's verdict contract fails the step, naming the contract.
 */
import type { VerdictContract } from "./blueprint.ts";
import { deepEqual } from "./expr.ts";
import { isObject, type Json } from "./path.ts";
import type { StepRun } from "./step_runner.ts";

/** How a step ended. */
export type StepFold =
  | { status: "passed"; value: Json }
  | { status: "skipped"; reason: string }
  | { status: "failed"; message: string }
  | { status: "cancelled"; reason: string };

/** `text` folded leniently: JSON data when it is (fenced) JSON object or array text, else the text. */
export function foldText(text: string): Json {
  let t = text.trim();
  const fence = /^```[\w-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```\s*$/.exec(t);
  if (fence) t = fence[1].trim();
  if (t.startsWith("{") || t.startsWith("[")) {
    try {
      return JSON.parse(t) as Json;
    } catch { /* prose */ }
  }
  return text;
}

function emittedValue(payload: Json): Json {
  if (isObject(payload)) {
    if (payload.content !== undefined) return payload.content;
    if (payload.response !== undefined) return payload.response;
  }
  return payload;
}

/** Folds `run` of step `ref` (whose agent declares `verdict`, if any). */
export function foldStep(ref: string, run: StepRun, verdict?: VerdictContract): StepFold {
  const o = run.outcome;
  switch (o.status) {
    case "deferred":
      return { status: "skipped", reason: o.reason };
    case "raised":
      return { status: "failed", message: `step '${ref}' raised: ${o.message}` };
    case "exited":
      if (o.code !== 0) return { status: "failed", message: `step '${ref}' exited with code ${o.code}` };
      break;
    case "timed_out":
      return { status: "failed", message: `step '${ref}' timed out after ${o.seconds} s` };
    case "cancelled":
      return { status: "cancelled", reason: o.reason };
  }
  let value: Json = null;
  let okFalse = false;
  const r = run.returned;
  if (r?.type === "string") value = foldText(r.value);
  else if (r?.type === "table") value = r.value;
  else if (run.emitted) {
    value = emittedValue(run.emitted.payload);
    if (isObject(run.emitted.payload) && run.emitted.payload.ok === false) okFalse = true;
  }
  if (isObject(value) && value.ok === false) okFalse = true;
  if (okFalse) {
    const detail = isObject(value) && typeof value.error === "string"
      ? value.error
      : isObject(value) && typeof value.message === "string"
      ? value.message
      : JSON.stringify(value);
    return { status: "failed", message: `step '${ref}' completed with ok = false: ${detail}` };
  }
  if (run.artifacts.length > 0) {
    const parts: Record<string, Json> = {};
    for (const a of run.artifacts) parts[a.name] = a.content;
    value = { out: value, parts };
  }
  if (verdict) {
    const problem = verdictProblem(value, verdict, run.artifacts.length > 0);
    if (problem) {
      return { status: "failed", message: `step '${ref}': verdict contract violation: ${problem}` };
    }
  }
  return { status: "passed", value };
}

function verdictProblem(value: Json, c: VerdictContract, hasParts: boolean): string | undefined {
  const allowed = c.values.map((v) => JSON.stringify(v)).join(", ");
  if (c.channel === "body") {
    const body = hasParts && isObject(value) ? value.out : value;
    if (!c.values.some((v) => deepEqual(v, body))) {
      const shown = JSON.stringify(body);
      return `the body channel takes one of ${allowed}; got ${
        shown.length > 80 ? shown.slice(0, 77) + "..." : shown
      }`;
    }
    return undefined;
  }
  const parts = isObject(value) && isObject(value.parts) ? value.parts : undefined;
  if (!parts || !Object.hasOwn(parts, "verdict")) {
    return `the part channel needs a staged part 'verdict' (bus.emit("artifact", { name = "verdict", content = ... })) with one of ${allowed}; none was staged`;
  }
  if (!c.values.some((v) => deepEqual(v, parts.verdict))) {
    return `the part 'verdict' takes one of ${allowed}; got ${JSON.stringify(parts.verdict)}`;
  }
  return undefined;
}
