/**
 * Blueprints, agent.md files, the linker and the compiler (acceptance checks 11–13 and 25 of the
 * flow reference, §5.2), on real files in a temporary project.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempProject } from "../helpers.ts";
import { parseAgentMd } from "../../src/flows/agent_md.ts";
import { parseBlueprint, readBlueprint } from "../../src/flows/blueprint.ts";
import { compileFlow } from "../../src/flows/compile.ts";
import { BlueprintError } from "../../src/flows/errors.ts";
import { mergeInitCtx } from "../../src/flows/run.ts";

const P = (at: string) => ({ op: "path", at });
const L = (value: unknown) => ({ op: "lit", value });
const step = (ref: string, out: string) => ({ kind: "step", ref, in: L("x"), out: P(out) });

async function compileDoc(doc: unknown, files: Record<string, string> = {}) {
  const dir = await tempProject(files);
  const bp = parseBlueprint(doc, { file: join(dir, "flow.bp.json"), projectRoot: dir });
  return compileFlow(bp, { projectRoot: dir, home: join(dir, "home") });
}

const errorOf = async (f: () => Promise<unknown>): Promise<BlueprintError> => {
  try {
    await f();
  } catch (e) {
    assert.ok(e instanceof BlueprintError, `expected a BlueprintError, got ${e}`);
    assert.equal(e.exitCode, 2);
    return e;
  }
  assert.fail("expected a BlueprintError");
};

Deno.test("agent.md: tools as CSV, the body verbatim, extras kept, description trimmed", () => {
  const md = parseAgentMd(
    "---\nname: reviewer\ndescription: '  Reviews.  '\ntools: \"Read, mcp__docs__search,\"\nmodel: m1\ncolour: blue\n---\nYou review.\n\n  Keep it short.\n",
    "r.md",
  );
  assert.deepEqual(md, {
    name: "reviewer",
    profile: {
      system_prompt: "You review.\n\n  Keep it short.\n",
      description: "Reviews.",
      tools: ["Read", "mcp__docs__search"],
      model: "m1",
      extras: { colour: "blue" },
    },
  });
  assert.deepEqual(
    parseAgentMd("---\nname: a\ntools: [x, ' y ']\nlints: {v: deny}\n---\n", "a.md").profile.tools,
    ["x", "y"],
  );
});

Deno.test("agent.md: a missing name, no front matter, a bad lint level are errors naming the file", () => {
  assert.throws(
    () => parseAgentMd("---\ndescription: x\n---\nbody", "a.md"),
    /a\.md: front matter: 'name' is required/,
  );
  assert.throws(() => parseAgentMd("no front matter", "b.md"), /b\.md: line 1: expected '---'/);
  assert.throws(() => parseAgentMd("---\nname: a\n", "c.md"), /c\.md: the front matter is not closed/);
  assert.throws(
    () => parseAgentMd("---\nname: a\nlints: {x: loud}\n---\n", "d.md"),
    /lints\.x must be allow, warn or deny/,
  );
  assert.throws(() => parseAgentMd("---\nname: [a\n---\n", "e.md"), /e\.md: line \d+:/);
});

Deno.test("linker: $agent_md with sibling keys merged over the file, $file as text, include order", async () => {
  const dir = await tempProject({
    "flows/agents/rev.md": "---\nname: rev\nmodel: from-file\n---\nSystem text.\n",
    "flows/prompt.txt": "inline text",
    "inc/shared.md": "---\nname: shared\n---\nShared.\n",
    "lib/libonly.md": "---\nname: libonly\n---\nFrom lib.\n",
  });
  const bp = await readBlueprint(join(dir, "flows", "f.json"), {
    includes: [join(dir, "inc")],
    projectRoot: dir,
  }).catch(
    () => undefined,
  );
  assert.equal(bp, undefined); // the file does not exist yet
  await Deno.writeTextFile(
    join(dir, "flows", "f.json"),
    JSON.stringify({
      id: "f",
      agents: [
        {
          $agent_md: "agents/rev.md",
          kind: "lua",
          spec: { source: "return 1" },
          verdict: { channel: "body", values: ["A"] },
        },
        { $agent_md: "shared.md", kind: "lua", spec: { source: { $file: "prompt.txt" } } },
        { $agent_md: "libonly.md", kind: "lua", spec: { source: "return 2" } },
      ],
      flow: { kind: "seq", children: [] },
    }),
  );
  const read = await readBlueprint(join(dir, "flows", "f.json"), {
    includes: [join(dir, "inc")],
    projectRoot: dir,
  });
  assert.deepEqual(read.agents.map((a) => a.name), ["rev", "shared", "libonly"]);
  assert.deepEqual(read.agents[0].profile, { system_prompt: "System text.\n", model: "from-file" });
  assert.deepEqual(read.agents[0].verdict, { channel: "body", values: ["A"] });
  assert.equal(read.agents[1].spec.source, "inline text");
});

Deno.test("linker: absolute paths, '..' and a missing file are refused with the pointer and the places looked", async () => {
  const dir = await tempProject({ "x.md": "---\nname: x\n---\n" });
  const doc = (p: string) => ({ id: "f", agents: [{ $agent_md: p }], flow: { kind: "seq", children: [] } });
  const file = join(dir, "sub", "f.json");
  let e = await errorOf(() => Promise.resolve().then(() => parseBlueprint(doc("../x.md"), { file })));
  assert.match(e.message, /at \/agents\/0\/\$agent_md: '\.\.\/x\.md' holds '\.\.'/);
  e = await errorOf(() => Promise.resolve().then(() => parseBlueprint(doc("/etc/passwd"), { file })));
  assert.match(e.message, /is absolute/);
  e = await errorOf(() =>
    Promise.resolve().then(() => parseBlueprint(doc("nope.md"), { file, projectRoot: dir }))
  );
  assert.match(e.message, /'nope\.md' not found; looked in .*sub\/nope\.md, .*lib\/nope\.md/);
});

Deno.test("compile: a step ref with no agent fails under strict_refs, passes without it", async () => {
  const doc = { id: "f", agents: [], flow: step("ghost", "$.a") };
  const e = await errorOf(() => compileDoc(doc));
  assert.match(e.message, /at \/flow\/ref: step ref 'ghost' names no agent \(strict_refs\)/);
  await compileDoc({ ...doc, strategy: { strict_refs: false } });
});

Deno.test("compile: duplicate agent names and operator/subprocess kinds are errors", async () => {
  const lua = { kind: "lua", spec: { source: "return 1" } };
  let e = await errorOf(() =>
    compileDoc({
      id: "f",
      agents: [{ name: "a", ...lua }, { name: "a", ...lua }],
      flow: { kind: "seq", children: [] },
    })
  );
  assert.match(e.message, /at \/agents\/1\/name: duplicate agent name 'a'/);
  e = await errorOf(() =>
    compileDoc({ id: "f", agents: [{ name: "op", kind: "operator" }], flow: { kind: "seq", children: [] } })
  );
  assert.match(e.message, /agent kind 'operator' is not supported by agent-block/);
  e = await errorOf(() =>
    compileDoc({ id: "f", agents: [{ name: "s", kind: "subprocess" }], flow: { kind: "seq", children: [] } })
  );
  assert.match(e.message, /agent kind 'subprocess' is not supported/);
  e = await errorOf(() =>
    compileDoc({
      id: "f",
      agents: [{ name: "b", kind: "block", spec: { block: "nope" } }],
      flow: { kind: "seq", children: [] },
    })
  );
  assert.match(e.message, /no block named 'nope' is registered/);
});

Deno.test("compile: engine-only fields are accepted with a warning; unknown ones are errors", async () => {
  const c = await compileDoc({
    id: "f",
    operators: [{ name: "main" }],
    audits: [],
    agents: [{ name: "a", kind: "lua", spec: { source: "return 1" }, runner: { backend: "x" } }],
    flow: step("a", "$.a"),
  });
  assert.ok(c.warnings.some((w) => w.includes("/operators is a field of the seed 004 engine")));
  assert.ok(c.warnings.some((w) => w.includes("/agents/0/runner is a field of the seed 004 engine")));
  const e = await errorOf(() => compileDoc({ id: "f", flwo: {}, flow: { kind: "seq", children: [] } }));
  assert.match(e.message, /at \/flwo: unknown field 'flwo'/);
});

const gate = (verdict: unknown, cond: unknown, metadata: unknown = {}) => ({
  id: "f",
  metadata,
  agents: [{ name: "gate", kind: "lua", spec: { source: "return 'PASS'" }, verdict }],
  flow: {
    kind: "seq",
    children: [step("gate", "$.gate"), {
      kind: "branch",
      cond,
      then: { kind: "seq", children: [] },
      else: { kind: "seq", children: [] },
    }],
  },
});

Deno.test("verdict lint: a body contract read through parts is a channel mismatch, and the reverse", async () => {
  let e = await errorOf(() =>
    compileDoc(
      gate({ channel: "body", values: ["PASS"] }, {
        op: "eq",
        lhs: P('$.gate.parts["verdict"]'),
        rhs: L("PASS"),
      }),
    )
  );
  assert.match(
    e.message,
    /at \/flow\/children\/1\/cond\/lhs: VerdictChannelMismatch: .* agent 'gate', whose verdict is on the body channel; read \$\.gate/,
  );
  e = await errorOf(() =>
    compileDoc(gate({ channel: "part", values: ["PASS"] }, { op: "eq", lhs: P("$.gate"), rhs: L("PASS") }))
  );
  assert.match(e.message, /VerdictChannelMismatch: .* read \$\.gate\.parts\["verdict"\]/);
});

Deno.test("verdict lint: a literal outside the contract is rejected, also inside an in haystack", async () => {
  const body = { channel: "body", values: ["PASS", "BLOCKED"] };
  let e = await errorOf(() => compileDoc(gate(body, { op: "eq", lhs: P("$.gate"), rhs: L("PASSED") })));
  assert.match(
    e.message,
    /at \/flow\/children\/1\/cond\/rhs: VerdictValueNotInContract: "PASSED" is not a verdict of agent 'gate'/,
  );
  e = await errorOf(() =>
    compileDoc(gate(body, { op: "in", needle: P("$.gate"), haystack: L(["PASS", "NOPE"]) }))
  );
  assert.match(e.message, /haystack\/value\/1: VerdictValueNotInContract: "NOPE"/);
});

Deno.test("verdict lint: an unread value is a warning, an error under strict_verdict_handling", async () => {
  const body = { channel: "body", values: ["PASS", "BLOCKED"] };
  const cond = { op: "eq", lhs: P("$.gate"), rhs: L("PASS") };
  const c = await compileDoc(gate(body, cond));
  assert.ok(
    c.warnings.some((w) => w.includes(`VerdictValueUnhandled: agent 'gate' declares the verdict "BLOCKED"`)),
  );
  const e = await errorOf(() => compileDoc(gate(body, cond, { strict_verdict_handling: true })));
  assert.match(e.message, /VerdictValueUnhandled/);
  // both read: no warning
  const both = await compileDoc(
    gate(body, { op: "in", needle: P("$.gate"), haystack: L(["PASS", "BLOCKED"]) }),
  );
  assert.ok(!both.warnings.some((w) => w.includes("VerdictValueUnhandled")));
});

Deno.test("lints: a loop condition reading what only its body writes, a non-boolean branch, a numeric key", async () => {
  const lua = { kind: "lua", spec: { source: "return 1" } };
  const c = await compileDoc({
    id: "f",
    agents: [{ name: "a", ...lua }],
    flow: {
      kind: "seq",
      children: [
        {
          kind: "loop",
          counter: P("$.n"),
          cond: { op: "ne", lhs: P("$.verdict"), rhs: L("PASS") },
          body: step("a", "$.verdict"),
          max: 3,
        },
        {
          kind: "branch",
          cond: { op: "len", arg: P("$.verdict") },
          then: { kind: "seq", children: [] },
          else: { kind: "seq", children: [] },
        },
        { kind: "assign", at: P("$.x"), value: P("$.r.0") },
        {
          kind: "branch",
          cond: { op: "exists", arg: P("$.never") },
          then: { kind: "seq", children: [] },
          else: { kind: "seq", children: [] },
        },
      ],
    },
  });
  const w = c.warnings.join("\n");
  assert.match(
    w,
    /at \/flow\/children\/0\/cond\/lhs: the condition reads \$\.verdict, which nothing before it writes/,
  );
  assert.match(w, /children\/1\/cond: a branch condition must be a boolean; 'len' gives a number/);
  assert.match(w, /\$\.r\.0 has a numeric key/);
  assert.ok(!w.includes("$.never"), "exists is how a missing path is tested: no warning");
  // seeded by default_init_ctx: no warning
  const seeded = await compileDoc({
    id: "f",
    default_init_ctx: { verdict: "BLOCKED" },
    agents: [{ name: "a", ...lua }],
    flow: {
      kind: "loop",
      counter: P("$.n"),
      cond: { op: "ne", lhs: P("$.verdict"), rhs: L("PASS") },
      body: step("a", "$.verdict"),
      max: 3,
    },
  });
  assert.ok(!seeded.warnings.some((x) => x.includes("nothing before it writes")));
});

Deno.test("init ctx: default_init_ctx {a:1,b:1} with init {b:2} is {a:1,b:2}; a non-object init replaces it", () => {
  assert.deepEqual(mergeInitCtx({ a: 1, b: 1 }, { b: 2 }), { a: 1, b: 2 });
  assert.deepEqual(mergeInitCtx({ a: 1 }, [1, 2]), [1, 2]);
  assert.deepEqual(mergeInitCtx({ a: 1 }, undefined), { a: 1 });
  assert.deepEqual(mergeInitCtx(undefined, undefined), {});
});

Deno.test("digest: editing an agent.md body or a block's source changes the agent's digest", async () => {
  const dir = await tempProject({
    "a.md": "---\nname: a\n---\nVersion one.\n",
    "blocks/b.lua": "return 1\n",
  });
  const doc = {
    id: "f",
    agents: [{ $agent_md: "a.md", kind: "lua", spec: { source: "return _CONTEXT" } }, {
      name: "b",
      kind: "block",
      spec: { block: "b" },
    }],
    flow: { kind: "seq", children: [step("a", "$.a"), step("b", "$.b")] },
  };
  const digests = () => {
    const bp = parseBlueprint(doc, { file: join(dir, "f.json") });
    const c = compileFlow(bp, { projectRoot: dir, home: join(dir, "home") });
    return [c.agents.get("a")!.digest, c.agents.get("b")!.digest];
  };
  const [a1, b1] = digests();
  assert.deepEqual(digests(), [a1, b1], "stable when nothing changes");
  await Deno.writeTextFile(join(dir, "a.md"), "---\nname: a\n---\nVersion two.\n");
  const [a2, b2] = digests();
  assert.notEqual(a2, a1);
  assert.equal(b2, b1);
  await Deno.writeTextFile(join(dir, "blocks/b.lua"), "return 2\n");
  assert.notEqual(digests()[1], b1);
});
