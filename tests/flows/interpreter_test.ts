/**
 * The flow interpreter's golden suite (acceptance checks 1–10 of the flow reference, §5.2): each
 * case is a node, an initial context and stub agents, giving a final context or an error class.
 * Fanout concurrency is proved by conditions (lanes that wait for each other), not by timing; the
 * speed itself is `deno task bench flow`'s.
 */
import assert from "node:assert/strict";
import { FlowError } from "../../src/flows/errors.ts";
import { type DispatchResult, evalFlow } from "../../src/flows/eval.ts";
import { evalExpr, type Externs, IrError, parseExpr } from "../../src/flows/expr.ts";
import { nodeToJson, parseNode } from "../../src/flows/ir.ts";
import type { Json } from "../../src/flows/path.ts";

const P = (at: string) => ({ op: "path", at });
const L = (value: unknown) => ({ op: "lit", value });
const step = (ref: string, inp: unknown, out: string) => ({ kind: "step", ref, in: inp, out: P(out) });
const assign = (at: string, value: unknown) => ({ kind: "assign", at: P(at), value });
const seq = (...children: unknown[]) => ({ kind: "seq", children });

/** Stub agents: each takes the input and returns a value (or throws). */
const STUBS: Record<string, (input: Json) => DispatchResult | Promise<DispatchResult>> = {
  up: (i) => ({ value: String(i).toUpperCase() }),
  echo: (i) => ({ value: i }),
  fail: (i) => {
    throw new FlowError(
      "DispatcherError",
      `dispatcher error for ref 'fail': blocked: ${JSON.stringify(i)}`,
      "fail",
    );
  },
  failOnB: (i) => {
    if ((i as { item: string }).item === "b") {
      throw new FlowError("DispatcherError", "lane b failed", "failOnB");
    }
    return { value: i };
  },
  skip: () => ({ skipped: "nothing to do" }),
  inc: (i) => ({ value: (i as number) + 1 }),
};

async function runCase(node: unknown, ctx: Json, externs?: Externs, maxParallel?: number): Promise<Json> {
  return await evalFlow(parseNode(node), ctx, {
    dispatch: async (ref, input) => await STUBS[ref](input),
    externs,
    maxParallel,
  });
}

interface Golden {
  name: string;
  node: unknown;
  ctx: Json;
  want?: Json;
  error?: string;
  contains?: string;
}

const GOLDEN: Golden[] = [
  // 1. step
  {
    name: "step writes at out",
    node: step("up", P("$.input"), "$.a.b"),
    ctx: { input: "hi" },
    want: { input: "hi", a: { b: "HI" } },
  },
  {
    name: "step writing through a string is a TypeError",
    node: step("up", P("$.input"), "$.s.x"),
    ctx: { input: "hi", s: "str" },
    error: "TypeError",
  },
  {
    name: "step over null intermediate creates it",
    node: step("up", L("x"), "$.s.x"),
    ctx: { s: null },
    want: { s: { x: "X" } },
  },
  { name: "a skipped step writes nothing", node: step("skip", L(1), "$.out"), ctx: {}, want: {} },
  {
    name: "a failing step is a DispatcherError naming the ref",
    node: step("fail", L(1), "$.o"),
    ctx: {},
    error: "DispatcherError",
    contains: "'fail'",
  },
  {
    name: "writing at $ replaces the context",
    node: step("echo", L({ z: 1 }), "$"),
    ctx: { a: 1 },
    want: { z: 1 },
  },
  // 2. seq
  {
    name: "seq threads values",
    node: seq(step("up", P("$.in"), "$.a"), step("echo", P("$.a"), "$.b")),
    ctx: { in: "x" },
    want: { in: "x", a: "X", b: "X" },
  },
  { name: "empty seq is a no-op", node: seq(), ctx: { k: [1] }, want: { k: [1] } },
  // 3. branch
  {
    name: "branch on a non-boolean is NonBoolCond",
    node: { kind: "branch", cond: L("yes"), then: seq(), else: seq() },
    ctx: {},
    error: "NonBoolCond",
  },
  {
    name: "branch eq(1, 1.0) is true",
    node: {
      kind: "branch",
      cond: { op: "eq", lhs: L(1), rhs: L(1.0) },
      then: assign("$.t", L(true)),
      else: assign("$.t", L(false)),
    },
    ctx: {},
    want: { t: true },
  },
  {
    name: "branch else",
    node: { kind: "branch", cond: L(false), then: assign("$.t", L(1)), else: assign("$.t", L(2)) },
    ctx: {},
    want: { t: 2 },
  },
  // 4. loop
  {
    name: "loop stops at max with the counter written",
    node: { kind: "loop", counter: P("$.n"), cond: L(true), body: step("inc", P("$.v"), "$.v"), max: 3 },
    ctx: { v: 0 },
    want: { v: 3, n: 3 },
  },
  {
    name: "loop cond false at start runs nothing",
    node: { kind: "loop", counter: P("$.n"), cond: L(false), body: step("fail", L(1), "$.x"), max: 3 },
    ctx: {},
    want: { n: 0 },
  },
  {
    name: "loop cond on a missing path is PathNotFound",
    node: {
      kind: "loop",
      counter: P("$.n"),
      cond: { op: "eq", lhs: P("$.verdict"), rhs: L("BLOCKED") },
      body: seq(),
      max: 3,
    },
    ctx: {},
    error: "PathNotFound",
  },
  {
    name: "loop cond uses truthiness (0 is truthy) and sees body writes",
    node: {
      kind: "loop",
      counter: P("$.n"),
      cond: P("$.go"),
      body: seq(step("inc", P("$.v"), "$.v"), {
        kind: "branch",
        cond: { op: "gte", lhs: P("$.v"), rhs: L(2) },
        then: assign("$.go", L(null)),
        else: seq(),
      }),
      max: 10,
    },
    ctx: { go: 0, v: 0 },
    want: { go: null, v: 2, n: 2 },
  },
  // 5. try
  {
    name: "try rolls back, writes err_at and runs catch",
    node: {
      kind: "try",
      body: seq(assign("$.x", L(1)), step("fail", L(1), "$.y")),
      catch: assign("$.c", L(true)),
      err_at: P("$.err"),
    },
    ctx: {},
    want: { err: "dispatcher error for ref 'fail': blocked: 1", c: true },
  },
  {
    name: "try skips catch on success",
    node: { kind: "try", body: assign("$.x", L(1)), catch: assign("$.c", L(true)) },
    ctx: {},
    want: { x: 1 },
  },
  {
    name: "a raising catch propagates",
    node: {
      kind: "try",
      body: step("fail", L(1), "$.y"),
      catch: { kind: "branch", cond: L(3), then: seq(), else: seq() },
    },
    ctx: {},
    error: "NonBoolCond",
  },
  {
    name: "try catches eval errors too",
    node: {
      kind: "try",
      body: assign("$.x", { op: "div", lhs: L(1), rhs: L(0) }),
      catch: seq(),
      err_at: P("$.e"),
    },
    ctx: {},
    want: { e: "'div' by zero" },
  },
  // 6. fanout
  {
    name: "fanout all gives lane contexts in order",
    node: {
      kind: "fanout",
      items: P("$.xs"),
      bind: P("$.item"),
      body: step("up", P("$.item"), "$.r"),
      join: "all",
      out: P("$.res"),
    },
    ctx: { xs: ["a", "b", "c"] },
    want: {
      xs: ["a", "b", "c"],
      res: ["a", "b", "c"].map((x) => ({ xs: ["a", "b", "c"], item: x, r: x.toUpperCase() })),
    },
  },
  {
    name: "fanout all with a failing lane raises",
    node: {
      kind: "fanout",
      items: L(["a", "b", "c"]),
      bind: P("$.item"),
      body: step("failOnB", P("$"), "$.r"),
      join: "all",
      out: P("$.res"),
    },
    ctx: {},
    error: "DispatcherError",
    contains: "lane b",
  },
  {
    name: "fanout all_settled never raises",
    node: {
      kind: "fanout",
      items: L(["a", "b"]),
      bind: P("$.item"),
      body: step("failOnB", P("$"), "$.r"),
      join: "all_settled",
      out: P("$.res"),
    },
    ctx: {},
    want: {
      res: [{ status: "fulfilled", value: { item: "a", r: { item: "a" } } }, {
        status: "rejected",
        reason: "lane b failed",
      }],
    },
  },
  {
    name: "fanout any gives a success",
    node: {
      kind: "fanout",
      items: L(["b", "a"]),
      bind: P("$.item"),
      body: step("failOnB", P("$"), "$.r"),
      join: "any",
      out: P("$.res"),
    },
    ctx: {},
    want: { res: { item: "a", r: { item: "a" } } },
  },
  {
    name: "fanout any with every lane failing raises",
    node: {
      kind: "fanout",
      items: L(["b", "b"]),
      bind: P("$.item"),
      body: step("failOnB", P("$"), "$.r"),
      join: "any",
      out: P("$.res"),
    },
    ctx: {},
    error: "DispatcherError",
    contains: "every fanout lane failed",
  },
  {
    name: "fanout empty all is []",
    node: { kind: "fanout", items: L([]), bind: P("$.i"), body: seq(), join: "all", out: P("$.res") },
    ctx: {},
    want: { res: [] },
  },
  {
    name: "fanout empty all_settled is []",
    node: { kind: "fanout", items: L([]), bind: P("$.i"), body: seq(), join: "all_settled", out: P("$.res") },
    ctx: {},
    want: { res: [] },
  },
  {
    name: "fanout empty any raises",
    node: { kind: "fanout", items: L([]), bind: P("$.i"), body: seq(), join: "any", out: P("$.res") },
    ctx: {},
    error: "TypeError",
  },
  {
    name: "fanout empty race raises",
    node: { kind: "fanout", items: L([]), bind: P("$.i"), body: seq(), join: "race", out: P("$.res") },
    ctx: {},
    error: "TypeError",
  },
  {
    name: "fanout items must be an array",
    node: { kind: "fanout", items: L("abc"), bind: P("$.i"), body: seq(), join: "all", out: P("$.res") },
    ctx: {},
    error: "TypeError",
  },
  {
    name: "fanout lanes never reach the parent",
    node: {
      kind: "fanout",
      items: L([1]),
      bind: P("$.i"),
      body: assign("$.leak", L(true)),
      join: "all",
      out: P("$.res"),
    },
    ctx: {},
    want: { res: [{ i: 1, leak: true }] },
  },
  // 8. expressions
  {
    name: "mod follows Lua's sign",
    node: assign("$.v", { op: "mod", lhs: L(-1), rhs: L(3) }),
    ctx: {},
    want: { v: 2 },
  },
  {
    name: "mod with a negative divisor",
    node: assign("$.v", { op: "mod", lhs: L(5), rhs: L(-3) }),
    ctx: {},
    want: { v: -1 },
  },
  {
    name: "div by zero is ArithError",
    node: assign("$.v", { op: "div", lhs: L(1), rhs: L(0) }),
    ctx: {},
    error: "ArithError",
  },
  {
    name: "mod by zero is ArithError",
    node: assign("$.v", { op: "mod", lhs: L(1), rhs: L(0) }),
    ctx: {},
    error: "ArithError",
  },
  {
    name: "arithmetic is f64",
    node: assign("$.v", {
      op: "add",
      lhs: { op: "mul", lhs: L(2), rhs: L(1.5) },
      rhs: { op: "sub", lhs: L(1), rhs: { op: "div", lhs: L(1), rhs: L(4) } },
    }),
    ctx: {},
    want: { v: 3.75 },
  },
  {
    name: "add on a string is TypeError",
    node: assign("$.v", { op: "add", lhs: L("1"), rhs: L(1) }),
    ctx: {},
    error: "TypeError",
  },
  {
    name: "len counts characters",
    node: assign("$.v", { op: "len", arg: L("héllo") }),
    ctx: {},
    want: { v: 5 },
  },
  {
    name: "len of array and object",
    node: assign("$.v", {
      op: "add",
      lhs: { op: "len", arg: L([1, 2]) },
      rhs: { op: "len", arg: L({ a: 1, b: 2, c: 3 }) },
    }),
    ctx: {},
    want: { v: 5 },
  },
  {
    name: "len of a number is TypeError",
    node: assign("$.v", { op: "len", arg: L(3) }),
    ctx: {},
    error: "TypeError",
  },
  {
    name: "exists on a missing path is false",
    node: assign("$.v", { op: "exists", arg: P("$.missing.deep") }),
    ctx: {},
    want: { v: false },
  },
  {
    name: "exists on null is false, on 0 true",
    node: assign("$.v", {
      op: "and",
      args: [{ op: "not", arg: { op: "exists", arg: P("$.n") } }, { op: "exists", arg: P("$.z") }],
    }),
    ctx: { n: null, z: 0 },
    want: { n: null, z: 0, v: true },
  },
  {
    name: "empty and is true, empty or false",
    node: assign("$.v", [{ op: "and", args: [] }, { op: "or", args: [] }]),
    ctx: {},
    error: "ExprList",
  },
  {
    name: "and short-circuits past an error",
    node: assign("$.v", { op: "and", args: [L(false), P("$.missing")] }),
    ctx: {},
    want: { v: false },
  },
  {
    name: "or short-circuits past an error",
    node: assign("$.v", { op: "or", args: [L(0), P("$.missing")] }),
    ctx: {},
    want: { v: true },
  },
  {
    name: "not uses truthiness",
    node: assign("$.v", { op: "not", arg: L("") }),
    ctx: {},
    want: { v: false },
  },
  {
    name: "lt mixed types is TypeError",
    node: assign("$.v", { op: "lt", lhs: L("a"), rhs: L(1) }),
    ctx: {},
    error: "TypeError",
  },
  {
    name: "lt/lte/gt/gte on strings and numbers",
    node: assign("$.v", {
      op: "and",
      args: [{ op: "lt", lhs: L("a"), rhs: L("b") }, { op: "lte", lhs: L(2), rhs: L(2.0) }, {
        op: "gt",
        lhs: L(3),
        rhs: L(2),
      }, { op: "gte", lhs: L("b"), rhs: L("b") }],
    }),
    ctx: {},
    want: { v: true },
  },
  {
    name: "in with numeric coercion",
    node: assign("$.v", { op: "in", needle: L(5), haystack: L([5.0]) }),
    ctx: {},
    want: { v: true },
  },
  {
    name: "in with deep equality",
    node: assign("$.v", { op: "in", needle: L({ a: [1] }), haystack: L([{ a: [1] }]) }),
    ctx: {},
    want: { v: true },
  },
  {
    name: "in on a non-array is TypeError",
    node: assign("$.v", { op: "in", needle: L(1), haystack: L("1") }),
    ctx: {},
    error: "TypeError",
  },
  {
    name: "eq is deep; ne its negation",
    node: assign("$.v", {
      op: "and",
      args: [{ op: "eq", lhs: L({ a: [1, { b: 2 }] }), rhs: L({ a: [1.0, { b: 2 }] }) }, {
        op: "ne",
        lhs: L([1]),
        rhs: L([1, 2]),
      }, { op: "ne", lhs: L("1"), rhs: L(1) }],
    }),
    ctx: {},
    want: { v: true },
  },
  {
    name: "call_extern unregistered is ExternError",
    node: assign("$.v", { op: "call_extern", ref: "nope", args: [] }),
    ctx: {},
    error: "ExternError",
  },
  // 9. paths
  {
    name: "bracket keys read dotted names",
    node: assign("$.v", P('$["plan.md"]')),
    ctx: { "plan.md": "x" },
    want: { "plan.md": "x", v: "x" },
  },
  {
    name: "bracket after a dotted key",
    node: assign('$.s.parts["x.y"]', P('$.s.parts["a.b"]')),
    ctx: { s: { parts: { "a.b": 1 } } },
    want: { s: { parts: { "a.b": 1, "x.y": 1 } } },
  },
  {
    name: "$.r.0 on an array is PathNotFound",
    node: assign("$.v", P("$.r.0")),
    ctx: { r: [1] },
    error: "PathNotFound",
  },
  {
    name: "a missing key is PathNotFound",
    node: assign("$.v", P("$.a.b")),
    ctx: { a: {} },
    error: "PathNotFound",
  },
  {
    name: "$ reads the whole context",
    node: assign("$.copy", P("$")),
    ctx: { a: 1 },
    want: { a: 1, copy: { a: 1 } },
  },
  {
    name: "assigned values are copies",
    node: seq(assign("$.b", P("$.a")), assign("$.b.x", L(2))),
    ctx: { a: { x: 1 } },
    want: { a: { x: 1 }, b: { x: 2 } },
  },
  // 10. let
  {
    name: "let with ctx.x is assign",
    node: { kind: "let", at: "ctx.x", value: L(7) },
    ctx: {},
    want: { x: 7 },
  },
];

for (const g of GOLDEN) {
  Deno.test(`flow golden: ${g.name}`, async () => {
    if (g.error === "ExprList") {
      // `and []` / `or []` as separate values (a value list is not an expression).
      assert.equal(evalExpr(parseExpr({ op: "and", args: [] }, ""), {}), true);
      assert.equal(evalExpr(parseExpr({ op: "or", args: [] }, ""), {}), false);
      return;
    }
    if (g.error) {
      await assert.rejects(runCase(g.node, g.ctx), (e) => {
        assert.ok(e instanceof FlowError, `expected a FlowError, got ${e}`);
        assert.equal(e.kind, g.error);
        if (g.contains) assert.ok(e.message.includes(g.contains), e.message);
        return true;
      });
    } else {
      const before = structuredClone(g.ctx);
      assert.deepEqual(await runCase(g.node, g.ctx), g.want);
      assert.deepEqual(g.ctx, before, "the caller's context is not changed");
    }
  });
}

Deno.test("flow golden: call_extern calls a registered function; a throwing one is ExternError", async () => {
  const externs: Externs = {
    double: ([x]) => (x as number) * 2,
    boom: () => {
      throw new Error("no");
    },
  };
  const node = assign("$.v", { op: "call_extern", ref: "double", args: [P("$.n")] });
  assert.deepEqual(await runCase(node, { n: 4 }, externs), { n: 4, v: 8 });
  await assert.rejects(
    runCase(assign("$.v", { op: "call_extern", ref: "boom", args: [] }), {}, externs),
    (e) => e instanceof FlowError && e.kind === "ExternError" && e.message.includes("boom"),
  );
});

const REJECTED: [string, unknown, string][] = [
  ["$foo", assign("$foo", L(1)), "/at/at"],
  ["$.a..b", assign("$.a..b", L(1)), "/at/at"],
  ["$.r[0]", assign("$.v", P("$.r[0]")), "/value/at"],
  ["$.", assign("$.", L(1)), "/at/at"],
  ['unterminated $["a', assign('$["a', L(1)), "/at/at"],
  ["an unknown node field", { kind: "seq", children: [], extra: 1 }, "/extra"],
  ["an unknown node kind", { kind: "parallel" }, "/kind"],
  ["an unknown op", assign("$.v", { op: "xor", lhs: L(1), rhs: L(1) }), "/value/op"],
  ["an unknown expr field", assign("$.v", { op: "lit", value: 1, x: 2 }), "/value/x"],
  ["a step out that is not a path", { kind: "step", ref: "a", in: L(1), out: L("$.x") }, "/out"],
  ["a negative loop max", { kind: "loop", counter: P("$.n"), cond: L(true), body: seq(), max: -1 }, "/max"],
  [
    "a bad join",
    { kind: "fanout", items: L([]), bind: P("$.i"), body: seq(), join: "some", out: P("$.o") },
    "/join",
  ],
  ["a missing field", { kind: "branch", cond: L(true), then: seq() }, "/"],
];
for (const [name, node, pointer] of REJECTED) {
  Deno.test(`flow golden: parsing rejects ${name} at its JSON pointer`, () => {
    assert.throws(() => parseNode(node), (e) => e instanceof IrError && e.pointer === pointer);
  });
}

Deno.test("flow golden: assign and let parse to the same node; every kind round-trips", () => {
  assert.deepEqual(parseNode({ kind: "let", at: "ctx.x", value: L(1) }), parseNode(assign("$.x", L(1))));
  const all = seq(
    step("a", { op: "in", needle: L(1), haystack: L([1]) }, "$.a"),
    { kind: "branch", cond: { op: "exists", arg: P("$.a") }, then: seq(), else: seq() },
    { kind: "loop", counter: P("$.n"), cond: { op: "and", args: [] }, body: seq(), max: 2 },
    { kind: "fanout", items: L([]), bind: P("$.i"), body: seq(), join: "all_settled", out: P("$.o") },
    { kind: "try", body: seq(), catch: seq(), err_at: P('$["e.x"]') },
    { kind: "try", body: seq(), catch: seq() },
    assign("$.z", { op: "call_extern", ref: "f", args: [{ op: "len", arg: L("x") }] }),
  );
  assert.deepEqual(nodeToJson(parseNode(all)), all);
  // err_at null is the same as absent
  assert.deepEqual(
    parseNode({ kind: "try", body: seq(), catch: seq(), err_at: null }),
    parseNode({ kind: "try", body: seq(), catch: seq() }),
  );
});

/** A dispatcher whose steps wait until `need` of them are in flight at once (a barrier). */
function barrier(need: number) {
  let inFlight = 0;
  let peak = 0;
  const waiters: (() => void)[] = [];
  return {
    get peak() {
      return peak;
    },
    dispatch: async (_ref: string, input: Json): Promise<DispatchResult> => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      if (inFlight >= need) waiters.splice(0).forEach((w) => w());
      else await new Promise<void>((r) => waiters.push(r));
      inFlight--;
      return { value: input };
    },
  };
}

const fan3 = parseNode({
  kind: "fanout",
  items: L(["a", "b", "c"]),
  bind: P("$.i"),
  body: step("x", P("$.i"), "$.r"),
  join: "all",
  out: P("$.o"),
});

Deno.test("flow golden: fanout lanes run concurrently (three lanes meet at a barrier)", async () => {
  const b = barrier(3);
  const out = await evalFlow(fan3, {}, { dispatch: b.dispatch });
  assert.equal(b.peak, 3);
  assert.deepEqual((out as { o: { r: string }[] }).o.map((l) => l.r), ["a", "b", "c"]);
});

Deno.test("flow golden: max_parallel = 1 runs the lanes one at a time, in order", async () => {
  const b = barrier(1);
  const order: string[] = [];
  await evalFlow(fan3, {}, {
    dispatch: async (ref, input) => {
      order.push(input as string);
      return await b.dispatch(ref, input);
    },
    maxParallel: 1,
  });
  assert.equal(b.peak, 1);
  assert.deepEqual(order, ["a", "b", "c"]);
});

Deno.test("flow golden: an abort reaches every in-flight step and ends with FlowCancelled", async () => {
  const ac = new AbortController();
  const seen: AbortSignal[] = [];
  const run = evalFlow(fan3, {}, {
    dispatch: (_ref, _input, signal) => {
      seen.push(signal);
      if (seen.length === 3) queueMicrotask(() => ac.abort("stop"));
      return new Promise((_res, rej) =>
        signal.addEventListener("abort", () => rej(new Error("aborted")), { once: true })
      );
    },
    signal: ac.signal,
  });
  await assert.rejects(run, (e) => (e as Error).name === "FlowCancelled");
  assert.equal(seen.length, 3);
  assert.ok(seen.every((s) => s.aborted));
});

Deno.test("flow golden: race takes the first lane to settle and stops the others", async () => {
  let release!: () => void;
  const stopped: boolean[] = [];
  const node = parseNode({
    kind: "fanout",
    items: L(["slow", "fast"]),
    bind: P("$.i"),
    body: step("x", P("$.i"), "$.r"),
    join: "race",
    out: P("$.o"),
  });
  const out = await evalFlow(node, {}, {
    dispatch: (_ref, input, signal) => {
      if (input === "fast") return Promise.resolve({ value: "won" });
      return new Promise((_res, rej) => {
        release = () => rej(new Error("never"));
        signal.addEventListener("abort", () => {
          stopped.push(true);
          rej(new Error("stopped"));
        }, { once: true });
      });
    },
  });
  assert.deepEqual(out, { o: { i: "fast", r: "won" } });
  assert.deepEqual(stopped, [true]);
  void release;
});
