/**
 * Compile-time checks over a flow: step references, verdict contracts, and the known traps.
 *
 * Owns:
 * - references: under `strategy.strict_refs` (the default) a step naming no agent is an error;
 * - verdict contracts (`agent.verdict = {channel, values}`): a condition reading the wrong channel
 *   of that agent's step (`$.gate` for a part contract, `$.gate.parts["verdict"]` for a body one)
 *   is `VerdictChannelMismatch`; comparing against a literal outside `values` (in `eq`, `ne` or an
 *   `in` haystack) is `VerdictValueNotInContract`; a declared value no condition reads is
 *   `VerdictValueUnhandled`, a warning, or an error under `metadata.strict_verdict_handling`;
 * - traps (warnings): a condition reading a path nothing written before it (a step, an assign, a
 *   counter, `default_init_ctx`) provides — it raises `PathNotFound` unless the run's initial
 *   context has it; a `branch` condition that cannot be a boolean; a numeric key in a path (there
 *   is no array indexing).
 *
 * Invariant: read-only over the Blueprint; messages name the file and the JSON pointer.
 */
import type { Blueprint } from "./blueprint.ts";
import type { CompiledAgent } from "./compile.ts";
import { deepEqual, type Expr } from "./expr.ts";
import type { FlowNode } from "./ir.ts";
import { isObject, type Json, type Path } from "./path.ts";

/** What the checks found. */
export interface LintResult {
  /** Errors (the flow does not compile). */
  errors: string[];
  /** Warnings. */
  warnings: string[];
}

const keyOf = (keys: readonly string[]) => JSON.stringify(keys);

/** Runs the checks of the module doc over `bp`. */
export function lintFlow(bp: Blueprint, agents: Map<string, CompiledAgent>): LintResult {
  const errors: string[] = [];
  const warnings: string[] = [];
  const at = (ptr: string) => `${bp.name}: at ${ptr}`;
  // Steps whose agent has a verdict contract, by their out path.
  const contracts = new Map<
    string,
    { agent: string; channel: "body" | "part"; values: Json[]; read: boolean[]; out: Path }
  >();
  const partKey = (p: Path) => keyOf([...p.keys, "parts", "verdict"]);

  const walkSteps = (n: FlowNode, ptr: string) => {
    switch (n.kind) {
      case "step": {
        const a = agents.get(n.ref);
        const declared = bp.agents.some((d) => d.name === n.ref);
        if (!declared && bp.strategy.strict_refs) {
          errors.push(`${at(ptr + "/ref")}: step ref '${n.ref}' names no agent (strict_refs)`);
        }
        if (a?.def.verdict) {
          contracts.set(keyOf(n.out.keys), {
            agent: n.ref,
            ...a.def.verdict,
            read: a.def.verdict.values.map(() => false),
            out: n.out,
          });
        }
        return;
      }
      case "seq":
        n.children.forEach((c, i) => walkSteps(c, `${ptr}/children/${i}`));
        return;
      case "branch":
        walkSteps(n.then, `${ptr}/then`);
        walkSteps(n.else, `${ptr}/else`);
        return;
      case "loop":
      case "fanout":
        walkSteps(n.body, `${ptr}/body`);
        return;
      case "try":
        walkSteps(n.body, `${ptr}/body`);
        walkSteps(n.catch, `${ptr}/catch`);
        return;
    }
  };
  walkSteps(bp.flow, "/flow");

  const contractOf = (p: Path): [ReturnType<typeof contracts.get>, "body" | "part"] | undefined => {
    const body = contracts.get(keyOf(p.keys));
    if (body) return [body, "body"];
    for (const c of contracts.values()) if (partKey(c.out) === keyOf(p.keys)) return [c, "part"];
    return undefined;
  };
  const checkLit = (c: NonNullable<ReturnType<typeof contracts.get>>, lit: Json, ptr: string) => {
    const i = c.values.findIndex((v) => deepEqual(v, lit));
    if (i < 0) {
      errors.push(
        `${at(ptr)}: VerdictValueNotInContract: ${
          JSON.stringify(lit)
        } is not a verdict of agent '${c.agent}' ` +
          `(its values: ${c.values.map((v) => JSON.stringify(v)).join(", ")})`,
      );
    } else c.read[i] = true;
  };
  const checkVerdicts = (e: Expr, ptr: string) => {
    switch (e.op) {
      case "path": {
        const hit = contractOf(e.at);
        if (hit && hit[0]!.channel !== hit[1]) {
          const c = hit[0]!;
          const want = c.channel === "part" ? `${c.out.text}.parts["verdict"]` : c.out.text;
          errors.push(
            `${at(ptr)}: VerdictChannelMismatch: '${e.at.text}' reads the ${
              hit[1]
            } of agent '${c.agent}', whose verdict ` +
              `is on the ${c.channel} channel; read ${want}`,
          );
        }
        return;
      }
      case "eq":
      case "ne": {
        for (
          const [side, other, sp, op] of [[e.lhs, e.rhs, "lhs", "rhs"], [e.rhs, e.lhs, "rhs", "lhs"]] as const
        ) {
          if (side.op === "path" && other.op === "lit") {
            const hit = contractOf(side.at);
            if (hit && hit[0]!.channel === hit[1]) checkLit(hit[0]!, other.value, `${ptr}/${op}`);
          }
          void sp;
        }
        checkVerdicts(e.lhs, `${ptr}/lhs`);
        checkVerdicts(e.rhs, `${ptr}/rhs`);
        return;
      }
      case "in": {
        if (e.needle.op === "path" && e.haystack.op === "lit" && Array.isArray(e.haystack.value)) {
          const hit = contractOf(e.needle.at);
          if (hit && hit[0]!.channel === hit[1]) {
            e.haystack.value.forEach((v, i) => checkLit(hit[0]!, v, `${ptr}/haystack/value/${i}`));
          }
        }
        checkVerdicts(e.needle, `${ptr}/needle`);
        checkVerdicts(e.haystack, `${ptr}/haystack`);
        return;
      }
      case "lit":
        return;
      case "not":
      case "exists":
      case "len":
        return checkVerdicts(e.arg, `${ptr}/arg`);
      case "and":
      case "or":
      case "call_extern":
        return e.args.forEach((a, i) => checkVerdicts(a, `${ptr}/args/${i}`));
      default:
        checkVerdicts(e.lhs, `${ptr}/lhs`);
        checkVerdicts(e.rhs, `${ptr}/rhs`);
    }
  };

  // Paths maybe written before a point, walked in flow order.
  const initial = new Set<string>();
  const seed = (v: Json, keys: string[]) => {
    initial.add(keyOf(keys));
    if (isObject(v)) { for (const [k, x] of Object.entries(v)) seed(x, [...keys, k]); }
  };
  if (bp.default_init_ctx !== undefined) seed(bp.default_init_ctx, []);
  const provided = (written: Set<string>, p: Path) => {
    for (let i = 0; i <= p.keys.length; i++) if (written.has(keyOf(p.keys.slice(0, i)))) return true;
    const full = keyOf(p.keys).slice(0, -1);
    for (const w of written) if (w.startsWith(full)) return true; // a deeper write creates it
    return false;
  };
  const readsBefore = (e: Expr, written: Set<string>, ptr: string) => {
    if (e.op === "exists") return;
    if (e.op === "path") {
      if (!provided(written, e.at)) {
        warnings.push(
          `${
            at(ptr)
          }: the condition reads ${e.at.text}, which nothing before it writes: it raises PathNotFound ` +
            `unless the run's initial context has it (seed it with --init or default_init_ctx, or test it with exists)`,
        );
      }
      return;
    }
    for (const [k, sub] of children(e)) readsBefore(sub, written, `${ptr}/${k}`);
  };
  const checkPaths = (e: Expr, ptr: string) => {
    if (e.op === "path") {
      if (e.at.keys.some((k) => /^\d+$/.test(k))) {
        warnings.push(
          `${
            at(ptr)
          }: ${e.at.text} has a numeric key: there is no array indexing (it only reads an object key)`,
        );
      }
      return;
    }
    for (const [k, sub] of children(e)) checkPaths(sub, `${ptr}/${k}`);
  };
  const cond = (e: Expr, written: Set<string>, ptr: string) => {
    readsBefore(e, written, ptr);
    checkVerdicts(e, ptr);
  };
  const walk = (n: FlowNode, w: Set<string>, ptr: string): Set<string> => {
    const add = (s: Set<string>, p: Path) => new Set([...s, keyOf(p.keys)]);
    switch (n.kind) {
      case "step":
        checkPaths(n.in, `${ptr}/in`);
        return add(w, n.out);
      case "assign":
        checkPaths(n.value, `${ptr}/value`);
        return add(w, n.at);
      case "seq":
        return n.children.reduce((acc, c, i) => walk(c, acc, `${ptr}/children/${i}`), w);
      case "branch": {
        const c = n.cond;
        checkPaths(c, `${ptr}/cond`);
        if (c.op === "lit" && typeof c.value !== "boolean") {
          warnings.push(
            `${at(ptr + "/cond")}: a branch condition must be a boolean; this literal is ${
              JSON.stringify(c.value)
            } (NonBoolCond)`,
          );
        } else if (["add", "sub", "mul", "div", "mod", "len"].includes(c.op)) {
          warnings.push(
            `${
              at(ptr + "/cond")
            }: a branch condition must be a boolean; '${c.op}' gives a number (NonBoolCond)`,
          );
        }
        cond(c, w, `${ptr}/cond`);
        return new Set([...walk(n.then, w, `${ptr}/then`), ...walk(n.else, w, `${ptr}/else`)]);
      }
      case "loop": {
        const w0 = add(w, n.counter);
        checkPaths(n.cond, `${ptr}/cond`);
        cond(n.cond, w0, `${ptr}/cond`);
        return walk(n.body, w0, `${ptr}/body`);
      }
      case "fanout":
        checkPaths(n.items, `${ptr}/items`);
        walk(n.body, add(w, n.bind), `${ptr}/body`);
        return add(w, n.out);
      case "try": {
        const b = walk(n.body, w, `${ptr}/body`);
        const c = walk(n.catch, n.err_at ? add(w, n.err_at) : w, `${ptr}/catch`);
        return new Set([...b, ...c]);
      }
    }
  };
  walk(bp.flow, initial, "/flow");

  const strict = bp.metadata.strict_verdict_handling === true;
  for (const c of contracts.values()) {
    c.values.forEach((v, i) => {
      if (c.read[i]) return;
      const msg =
        `${bp.name}: VerdictValueUnhandled: agent '${c.agent}' declares the verdict ${JSON.stringify(v)}, ` +
        `which no condition reads`;
      (strict ? errors : warnings).push(msg);
    });
  }
  return { errors, warnings };
}

function children(e: Expr): [string, Expr][] {
  switch (e.op) {
    case "path":
    case "lit":
      return [];
    case "not":
    case "exists":
    case "len":
      return [["arg", e.arg]];
    case "and":
    case "or":
    case "call_extern":
      return e.args.map((a, i) => [`args/${i}`, a]);
    case "in":
      return [["needle", e.needle], ["haystack", e.haystack]];
    default:
      return [["lhs", e.lhs], ["rhs", e.rhs]];
  }
}
