/**
 * The flow interpreter: evaluates a parsed flow over one JSON context, handing every `step` to a
 * dispatcher.
 *
 * Owns the node semantics of the engine's flow IR 0.2 (`seq` in order; `branch` on a JSON boolean;
 * `loop` on truthiness with a silent `max`; `fanout` lanes on copies of the context with four join
 * modes; `try` rolling the context back; `assign`), the lane concurrency cap and cancellation.
 *
 * Invariants:
 * - The context is only changed by writes at `out`/`at`/`counter`/`err_at`; every written value
 *   is a copy, so no two places of the context share a subtree.
 * - A skipped step (`{ skipped }` from the dispatcher) writes nothing.
 * - Fanout lanes never see each other's writes nor reach the parent's; at most `maxParallel` run
 *   at once; under `any`/`race` the losers and lanes not yet started are stopped once the node is
 *   decided, and under `all` the others are stopped after the first failure; a node returns only
 *   after every lane it started has settled.
 * - `try` catches every `FlowError`; `FlowCancelled` (the signal) and `FlowWaiting` pass through.
 * - Once `signal` is aborted, no node starts and no step is dispatched; the evaluation ends with
 *   `FlowCancelled` as soon as the in-flight dispatches return (they get the signal).
 */
import { FlowCancelled, FlowError, FlowWaiting } from "./errors.ts";
import { evalExpr, type Externs, truthy } from "./expr.ts";
import type { FlowNode } from "./ir.ts";
import { type Json, typeName, writePath } from "./path.ts";

/** What a dispatch gives back: a value to write at `out`, or a skip (nothing written). */
export type DispatchResult = { value: Json } | { skipped: string };

/** Runs the agent `ref` on `input`; throws a `FlowError` (or any error) when the step fails. */
export type Dispatcher = (ref: string, input: Json, signal: AbortSignal) => Promise<DispatchResult>;

/** How a flow is evaluated. */
export interface EvalOptions {
  /** Runs the steps. */
  dispatch: Dispatcher;
  /** Functions for `call_extern`. */
  externs?: Externs;
  /** Stops the evaluation. */
  signal?: AbortSignal;
  /** Fanout lanes running at once (default 4). */
  maxParallel?: number;
}

/** A mutable holder of the context (a write at `$` replaces it). */
interface Box {
  ctx: Json;
}

const copy = <T>(v: T): T => structuredClone(v);

function checkSignal(signal: AbortSignal): void {
  if (signal.aborted) throw new FlowCancelled(reasonOf(signal));
}

/** The abort reason of `signal` as text. */
export function reasonOf(signal: AbortSignal): string {
  const r = signal.reason;
  if (r instanceof Error) return r.message;
  return r === undefined ? "aborted" : String(r);
}

/** Errors a `try`, a lane's rejection or an `any` fallback may absorb. */
const catchable = (e: unknown): e is FlowError => e instanceof FlowError;

/** Evaluates `node` on `ctx` (the caller's value is not changed) and returns the final context. */
export async function evalFlow(node: FlowNode, ctx: Json, options: EvalOptions): Promise<Json> {
  const box: Box = { ctx: copy(ctx) };
  const signal = options.signal ?? new AbortController().signal;
  const max = options.maxParallel ?? 4;
  if (!Number.isInteger(max) || max < 1) {
    throw new RangeError(`maxParallel must be a whole number ≥ 1, got ${max}`);
  }
  await run(node, box, { ...options, maxParallel: max }, signal);
  return box.ctx;
}

async function run(
  node: FlowNode,
  box: Box,
  o: EvalOptions & { maxParallel: number },
  signal: AbortSignal,
): Promise<void> {
  checkSignal(signal);
  switch (node.kind) {
    case "assign":
      box.ctx = writePath(box.ctx, node.at, copy(evalExpr(node.value, box.ctx, o.externs)));
      return;
    case "step": {
      const input = copy(evalExpr(node.in, box.ctx, o.externs));
      let result: DispatchResult;
      try {
        result = await o.dispatch(node.ref, input, signal);
      } catch (e) {
        if (e instanceof FlowCancelled || e instanceof FlowWaiting) throw e;
        if (signal.aborted) throw new FlowCancelled(reasonOf(signal));
        if (e instanceof FlowError) throw e;
        throw new FlowError(
          "DispatcherError",
          `dispatcher error for ref '${node.ref}': ${(e as Error)?.message ?? e}`,
          node.ref,
        );
      }
      checkSignal(signal);
      if ("value" in result) box.ctx = writePath(box.ctx, node.out, copy(result.value));
      return;
    }
    case "seq":
      for (const c of node.children) await run(c, box, o, signal);
      return;
    case "branch": {
      const c = evalExpr(node.cond, box.ctx, o.externs);
      if (typeof c !== "boolean") {
        throw new FlowError(
          "NonBoolCond",
          `branch condition must be a boolean, got ${typeName(c)} (${JSON.stringify(c)})`,
        );
      }
      await run(c ? node.then : node.else, box, o, signal);
      return;
    }
    case "loop": {
      let n = 0;
      box.ctx = writePath(box.ctx, node.counter, 0);
      while (n < node.max && truthy(evalExpr(node.cond, box.ctx, o.externs))) {
        await run(node.body, box, o, signal);
        n++;
        box.ctx = writePath(box.ctx, node.counter, n);
      }
      return;
    }
    case "try": {
      const snapshot = copy(box.ctx);
      try {
        await run(node.body, box, o, signal);
      } catch (e) {
        if (!catchable(e)) throw e;
        box.ctx = snapshot;
        if (node.err_at) box.ctx = writePath(box.ctx, node.err_at, e.message);
        await run(node.catch, box, o, signal);
      }
      return;
    }
    case "fanout":
      box.ctx = writePath(box.ctx, node.out, await fanout(node, box.ctx, o, signal));
      return;
  }
}

type Lane = { ok: true; ctx: Json } | { ok: false; error: unknown };

async function fanout(
  node: Extract<FlowNode, { kind: "fanout" }>,
  parent: Json,
  o: EvalOptions & { maxParallel: number },
  signal: AbortSignal,
): Promise<Json> {
  const items = evalExpr(node.items, parent, o.externs);
  if (!Array.isArray(items)) {
    throw new FlowError("TypeError", `fanout items must be an array, got ${typeName(items)}`);
  }
  if (items.length === 0) {
    if (node.join === "any" || node.join === "race") {
      throw new FlowError(
        "TypeError",
        `fanout join '${node.join}' needs at least one item, got an empty array`,
      );
    }
    return [];
  }
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  const lanes: (Lane | undefined)[] = new Array(items.length).fill(undefined);
  let decided: Lane | undefined;
  let next = 0;
  const worker = async () => {
    while (next < items.length && !stop.signal.aborted) {
      const i = next++;
      let lane: Lane;
      try {
        const box: Box = { ctx: writePath(copy(parent), node.bind, copy(items[i])) };
        await run(node.body, box, o, stop.signal);
        lane = { ok: true, ctx: box.ctx };
      } catch (e) {
        lane = { ok: false, error: e };
      }
      lanes[i] = lane;
      if (decided === undefined && !stop.signal.aborted) {
        const uncatchable = !lane.ok && !catchable(lane.error);
        if (
          uncatchable || node.join === "race" || (node.join === "any" && lane.ok) ||
          (node.join === "all" && !lane.ok)
        ) {
          decided = lane;
          stop.abort("fanout decided");
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(o.maxParallel, items.length) }, worker));
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  checkSignal(signal);
  if (decided) {
    if (!decided.ok) throw decided.error;
    if (node.join === "race" || node.join === "any") return decided.ctx;
  }
  const done = lanes as Lane[];
  switch (node.join) {
    case "all":
      return done.map((l) => (l as { ctx: Json }).ctx);
    case "all_settled":
      return done.map((l): Json =>
        l.ok
          ? { status: "fulfilled", value: l.ctx }
          : { status: "rejected", reason: (l.error as Error).message }
      );
    default: {
      // `any` with every lane failed.
      const first = done.find((l) => !l.ok) as { error: FlowError };
      const all = done.map((l, i) => `lane ${i}: ${(l as { error: Error }).error.message}`).join("; ");
      throw new FlowError(first.error.kind, `every fanout lane failed: ${all}`, first.error.ref);
    }
  }
}
