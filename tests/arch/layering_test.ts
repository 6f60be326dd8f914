/**
 * The layering of the sources, held by a test: which of our modules may import which, stated as
 * data (`RULES`) and checked against the real module graph, so a broken layer fails the suite
 * naming the rule and every offending edge (`importer -> imported`).
 *
 * The graph is `deno info --json` of `cli.ts`, of the package entries (`mod.ts`,
 * `unstable_engine.ts`, `unstable_flows.ts`), and of every `src/**\/*.ts` that
 * neither reaches (so lazily imported modules and anything not yet wired in are covered too);
 * static, dynamic (`import("literal")`) and type-only imports all count. Only edges between our
 * own files are checked (npm, `node:` and remote modules are outside the rules). Tests, tools
 * and benchmarks are outside them too: they exercise the layers from above.
 *
 * The layers, bottom up: `src/json` (the shared value shapes and the JSON codec) imports nothing
 * of ours; the Lua host `src/lua` and the kernel store `src/knl` sit on it alone; the Lua-free
 * MCP/LLM clients `src/clients` never reach the Lua layer, the standard library, the runtime
 * entry or the CLI; the standard library `src/host` never reaches the runtime entry, the CLI,
 * the MCP server or the SDK; the Lua API reference `src/docs` imports nothing of ours and only the CLI
 * imports it; the runtime `src/runtime` never reaches the CLI, the MCP server or
 * the SDK; the embedding SDK `src/sdk` (a consumer of the runtime, as the MCP server is) is
 * imported only by the edges above it (`mod.ts`, `src/cli/**`) and never reaches the CLI or the MCP
 * server; the CLI `src/cli` is imported by `cli.ts` and by itself only; the job manager `src/serve`
 * (a consumer of the runner) is imported only by the CLI and never reaches the MCP server or the
 * SDK; the sandbox launcher `src/sandbox` sits on `src/proc` (and the typed settings of
 * `src/run_settings.ts`) and only the CLI imports it; the package entries `mod.ts`, `unstable_engine.ts` and `unstable_flows.ts` import nothing of each
 * other, and only `unstable_flows.ts` of them reaches `src/flows`.
 *
 * Above those rules sits one ordered table, `LAYERS`, naming the layer of every folder and loose
 * file of `src/` (a test fails for one it does not name, so a new folder starts with a stated
 * layer): a file may import only its own folder and the layers below its own — never a folder
 * beside it in the same layer, never a layer above. The run contract has two rules of its own:
 * only `src/runner/**` imports `src/runtime/**` (the runners are the one way to run a block),
 * and the consumers (`src/sdk`, `src/mcp_server`, `src/serve`, `src/a2a_server`, `src/flows`) import from
 * `src/runner/**` the contract only (`runner.ts` and the pure modules beside it), never a runner
 * (`in_process.ts`, `child.ts`) or its parts (`forward.ts`, `wall_clock.ts`, `traced.ts`): the edge picks the implementation. Rules that say
 * "never reaches" are checked over the transitive closure (`reaches`), not just direct edges.
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { denoInfo, REPO_ROOT, tsFiles } from "../helpers.ts";

/** One edge of the graph: `from` imports `to` (both repository-relative, `/`-separated). */
interface Edge {
  from: string;
  to: string;
}

/** A dependency rule over repository-relative paths. */
interface Rule {
  /** The rule as a sentence, printed when it is broken. */
  rule: string;
  /** The importers it governs. */
  from: (path: string) => boolean;
  /** True when `from` may not import `to` (only our own files are ever asked). */
  forbids: (to: string, from: string) => boolean;
}

/** `path` is `dir` or below it. */
const under = (dir: string) => (path: string) => path === dir || path.startsWith(dir + "/");
const any = (...preds: ((p: string) => boolean)[]) => (p: string) => preds.some((f) => f(p));
const not = (pred: (p: string) => boolean) => (p: string) => !pred(p);
const is = (file: string) => (p: string) => p === file;
/** The package's entries (deno.json `exports` other than the CLI). */
const ENTRIES = ["mod.ts", "unstable_engine.ts", "unstable_flows.ts"];
const entry = (p: string) => ENTRIES.includes(p);

/**
 * The layers of `src/`, bottom up: a folder (or loose file) may import its own folder and any
 * layer below its own. Issue #28's table (architecture review 2026-12-05, §3.2); flows of blocks
 * sit between the runner and the other consumers, because `serve` runs flow jobs.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["src/json", "src/util", "src/errors.ts", "src/docs", "src/build_stamp.json"],
  [
    "src/lua",
    "src/knl",
    "src/proc",
    "src/net",
    "src/run_env.ts",
    "src/run_settings.ts",
    "src/home.ts",
    "src/correlation.ts",
    "src/outcome.ts",
    "src/version.ts",
    "src/blocks",
  ],
  ["src/obs", "src/modules", "src/sandbox"],
  ["src/clients"],
  ["src/host", "src/config"],
  ["src/runtime"],
  ["src/runner"],
  ["src/flows"],
  ["src/sdk", "src/mcp_server", "src/serve", "src/a2a_server"],
  ["src/cli"],
];

/** The entry of `LAYERS` that holds `path` (its folder or itself), and its layer; undefined outside src/. */
export function layerOf(path: string): { unit: string; layer: number } | undefined {
  for (let i = 0; i < LAYERS.length; i++) {
    for (const unit of LAYERS[i]) if (path === unit || path.startsWith(unit + "/")) return { unit, layer: i };
  }
  return undefined;
}

/** The concrete runners and their parts: what only the edge may import. */
const RUNNER_IMPLEMENTATION = any(
  is("src/runner/in_process.ts"),
  is("src/runner/child.ts"),
  is("src/runner/forward.ts"),
  is("src/runner/wall_clock.ts"),
  is("src/runner/traced.ts"),
);

/** The dependency rules. */
const RULES: Rule[] = [
  {
    rule: "LAYERS: a file of src/ imports only its own folder and the layers below its own",
    from: under("src"),
    forbids: (to, from) => {
      const a = layerOf(from), b = layerOf(to);
      if (!a || !b || a.unit === b.unit) return false;
      return b.layer >= a.layer;
    },
  },
  {
    rule: "only src/runner/** imports src/runtime/** (the runners are the one door to a run; " +
      "unstable_engine.ts re-exports the engine's entry as unstable API)",
    from: not(any(under("src/runner"), under("src/runtime"), is("unstable_engine.ts"))),
    forbids: under("src/runtime"),
  },
  {
    rule: "the consumers (src/sdk, src/mcp_server, src/serve, src/a2a_server, src/flows) import the runner " +
      "contract only, never a runner (src/runner/in_process.ts, child.ts) or its parts: the edge picks one",
    from: any(
      under("src/sdk"),
      under("src/mcp_server"),
      under("src/serve"),
      under("src/a2a_server"),
      under("src/flows"),
    ),
    forbids: RUNNER_IMPLEMENTATION,
  },
  {
    rule: "src/lua/** (the Lua host) imports nothing of ours except src/json/** (and src/lua/** itself)",
    from: under("src/lua"),
    forbids: not(any(under("src/lua"), under("src/json"))),
  },
  {
    rule: "src/json/** (value shapes, JSON codec) imports nothing of ours outside src/json/**",
    from: under("src/json"),
    forbids: not(under("src/json")),
  },
  {
    rule: "src/knl/** (the kernel store) imports only src/json/** and src/knl/**",
    from: under("src/knl"),
    forbids: not(any(under("src/knl"), under("src/json"))),
  },
  {
    rule: "src/clients/** (the Lua-free MCP/LLM clients) never imports src/lua/**, src/host/**, " +
      "src/runtime/** or src/cli/**",
    from: under("src/clients"),
    forbids: any(under("src/lua"), under("src/host"), under("src/runtime"), under("src/cli")),
  },
  {
    rule: "src/host/** (the standard library) never imports src/runtime/**, src/cli/**, src/mcp_server/** " +
      "or mod.ts",
    from: under("src/host"),
    forbids: any(under("src/runtime"), under("src/cli"), under("src/mcp_server"), is("mod.ts")),
  },
  {
    rule: "src/runtime/** never imports src/cli/**, src/mcp_server/** or src/sdk/**",
    from: under("src/runtime"),
    forbids: any(under("src/cli"), under("src/mcp_server"), under("src/sdk")),
  },
  {
    rule: "src/sdk/** (the embedding SDK) never imports src/cli/**, src/mcp_server/** or a package entry",
    from: under("src/sdk"),
    forbids: any(under("src/cli"), under("src/mcp_server"), entry),
  },
  {
    rule: "nothing imports src/sdk/** except mod.ts, src/cli/** and src/sdk/** itself",
    from: not(any(is("mod.ts"), under("src/cli"), under("src/sdk"))),
    forbids: under("src/sdk"),
  },
  {
    rule: "the package entries mod.ts, unstable_engine.ts and unstable_flows.ts do not import each " +
      "other; src/** imports none of them",
    from: any(entry, under("src")),
    forbids: (to, from) => entry(to) && to !== from,
  },
  {
    rule: "src/docs/** (the Lua API reference and its renderers: data and pure text) imports nothing of " +
      "ours outside src/docs/**",
    from: under("src/docs"),
    forbids: not(under("src/docs")),
  },
  {
    rule: "src/docs/** (the Lua API reference) is imported only by src/cli/** and src/docs/** itself, so " +
      "it stays off the run path",
    from: not(any(under("src/cli"), under("src/docs"))),
    forbids: under("src/docs"),
  },
  {
    rule: "src/serve/** (the job manager, a consumer of the runner like the MCP server) is imported only " +
      "by src/cli/** and src/serve/** itself, and never imports src/cli/**, src/mcp_server/** or src/sdk/**",
    from: not(any(under("src/cli"), under("src/serve"))),
    forbids: under("src/serve"),
  },
  {
    rule: "src/config/env_settings.ts (the parser of the AGENT_BLOCK_* variables) is imported only by the " +
      "edge: src/cli/** and the package entries, so nothing below the edge parses a setting",
    from: not(any(under("src/cli"), entry, is("cli.ts"))),
    forbids: is("src/config/env_settings.ts"),
  },
  {
    rule: "src/serve/** never imports src/mcp_server/** or src/sdk/**",
    from: under("src/serve"),
    forbids: any(under("src/mcp_server"), under("src/sdk")),
  },
  {
    rule: "src/sandbox/** (the sandbox launcher) imports only src/proc/**, src/errors.ts, src/home.ts, " +
      "src/run_settings.ts (the typed SandboxSettings the edge read; types only) and itself: it runs before " +
      "any runtime exists",
    from: under("src/sandbox"),
    forbids: not(
      any(
        under("src/sandbox"),
        under("src/proc"),
        is("src/errors.ts"),
        is("src/home.ts"),
        is("src/run_settings.ts"),
      ),
    ),
  },
  {
    rule: "src/sandbox/** is imported only by src/cli/** and itself, so it stays off the run path",
    from: not(any(under("src/cli"), under("src/sandbox"))),
    forbids: under("src/sandbox"),
  },
  {
    rule:
      "src/flows/** (flows of blocks, a consumer of the runner) never imports src/runtime/**, src/sdk/**, " +
      "src/cli/**, src/mcp_server/** or src/serve/**, and of src/runner/** only the contract (the interface " +
      "runner/runner.ts and the pure modules beside it), never a runner or its parts",
    from: under("src/flows"),
    forbids: (to) =>
      any(
        under("src/runtime"),
        under("src/sdk"),
        under("src/cli"),
        under("src/mcp_server"),
        under("src/serve"),
        RUNNER_IMPLEMENTATION,
      )(to),
  },
  {
    rule: "src/flows/** is imported only by the edges and consumers above it (unstable_flows.ts, " +
      "src/cli/**, src/mcp_server/**, src/serve/**) and itself",
    from: not(
      any(
        is("unstable_flows.ts"),
        under("src/cli"),
        under("src/mcp_server"),
        under("src/serve"),
        under("src/flows"),
      ),
    ),
    forbids: under("src/flows"),
  },
  {
    rule: "nothing imports src/cli/** except cli.ts and src/cli/** itself (mod.ts may not)",
    from: not(any(is("cli.ts"), under("src/cli"))),
    forbids: under("src/cli"),
  },
];

/** The edges of `edges` that break `rule`, as `from -> to` lines, sorted. */
function violations(rule: Rule, edges: Iterable<Edge>): string[] {
  const out = new Set<string>();
  for (const e of edges) {
    if (rule.from(e.from) && rule.forbids(e.to, e.from)) out.add(`${e.from} -> ${e.to}`);
  }
  return [...out].sort();
}

/** The failure message of `rule` broken by `bad`. */
function brokenMessage(rule: Rule, bad: string[]): string {
  return `layering rule broken: ${rule.rule}\n${bad.length} offending import(s):\n` +
    bad.map((b) => `  ${b}`).join("\n");
}

interface InfoModule {
  specifier: string;
  dependencies?: { code?: { specifier?: string }; type?: { specifier?: string } }[];
}

/** `file:///repo/x.ts` → `x.ts`, or undefined for anything not a file of this repository. */
function ours(specifier: string | undefined): string | undefined {
  if (!specifier?.startsWith("file:")) return undefined;
  const rel = relative(REPO_ROOT, fileURLToPath(specifier)).split("\\").join("/");
  return rel.startsWith("..") ? undefined : rel;
}

/** The module graph of `root` (repository-relative) by `deno info --json`. */
async function info(root: string): Promise<InfoModule[]> {
  return (await denoInfo<{ modules: InfoModule[] }>(root)).modules;
}

/** The modules seen and the edges between our files, over cli.ts, mod.ts and every src/**\/*.ts. */
async function graph(): Promise<{ modules: Set<string>; edges: Edge[] }> {
  const modules = new Set<string>();
  const edges: Edge[] = [];
  for (const root of ["cli.ts", ...ENTRIES, ...tsFiles("src")]) {
    if (modules.has(root)) continue;
    for (const m of await info(root)) {
      const from = ours(m.specifier);
      if (from === undefined || modules.has(from)) continue;
      modules.add(from);
      for (const d of m.dependencies ?? []) {
        for (const target of [d.code?.specifier, d.type?.specifier]) {
          const to = ours(target);
          if (to !== undefined && to !== from) edges.push({ from, to });
        }
      }
    }
  }
  return { modules, edges };
}

let built: Promise<{ modules: Set<string>; edges: Edge[] }> | undefined;
/** The graph, built once per test file. */
const theGraph = () => built ??= graph();

Deno.test("layering: the graph covers cli.ts, the package entries and every src/**/*.ts, and has edges", async () => {
  const { modules, edges } = await theGraph();
  const missing = ["cli.ts", ...ENTRIES, ...tsFiles("src")].filter((f) => !modules.has(f));
  assert.deepEqual(missing, [], `modules deno info did not report: ${missing.join(", ")}`);
  assert.ok(
    edges.some((e) => e.from === "cli.ts"),
    "no import of cli.ts was seen: the graph reader is broken",
  );
});

for (const rule of RULES) {
  Deno.test(`layering: ${rule.rule}`, async () => {
    const bad = violations(rule, (await theGraph()).edges);
    if (bad.length > 0) assert.fail(brokenMessage(rule, bad));
  });
}

/** Rules over reachability: `from` files must never reach (through any chain of imports) `target`. */
const NEVER_REACHES: { rule: string; from: (p: string) => boolean; target: (p: string) => boolean }[] = [
  {
    rule: "src/clients/** never reaches src/lua/**, src/host/**, src/runtime/** or src/cli/**",
    from: under("src/clients"),
    target: any(under("src/lua"), under("src/host"), under("src/runtime"), under("src/cli")),
  },
  {
    rule:
      "src/host/** never reaches src/runtime/**, src/runner/**, src/cli/**, src/mcp_server/** or src/sdk/**",
    from: under("src/host"),
    target: any(
      under("src/runtime"),
      under("src/runner"),
      under("src/cli"),
      under("src/mcp_server"),
      under("src/sdk"),
    ),
  },
  {
    rule:
      "src/runtime/** never reaches src/runner/**, src/cli/**, src/mcp_server/**, src/serve/** or src/sdk/**",
    from: under("src/runtime"),
    target: any(
      under("src/runner"),
      under("src/cli"),
      under("src/mcp_server"),
      under("src/serve"),
      under("src/sdk"),
    ),
  },
  {
    rule: "the consumers never reach a concrete runner (src/runner/in_process.ts, child.ts)",
    from: any(
      under("src/sdk"),
      under("src/mcp_server"),
      under("src/serve"),
      under("src/a2a_server"),
      under("src/flows"),
    ),
    target: any(is("src/runner/in_process.ts"), is("src/runner/child.ts")),
  },
];

/** Every file `start` reaches through imports (itself excluded unless on a cycle). */
export function reaches(start: string, edges: readonly Edge[]): Set<string> {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const seen = new Set<string>();
  const todo = [...(next.get(start) ?? [])];
  while (todo.length) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    todo.push(...(next.get(f) ?? []));
  }
  return seen;
}

for (const r of NEVER_REACHES) {
  Deno.test(`layering (reachability): ${r.rule}`, async () => {
    const { modules, edges } = await theGraph();
    const bad: string[] = [];
    for (const m of modules) {
      if (!r.from(m)) continue;
      for (const t of reaches(m, edges)) if (r.target(t)) bad.push(`${m} ~> ${t}`);
    }
    if (bad.length > 0) assert.fail(`layering rule broken: ${r.rule}\n${bad.sort().join("\n")}`);
  });
}

Deno.test("layering: LAYERS names every folder and loose file of src/", () => {
  const unnamed = [...Deno.readDirSync(`${REPO_ROOT}/src`)]
    .map((e) => `src/${e.name}`)
    .filter((p) => layerOf(p) === undefined)
    .sort();
  assert.deepEqual(unnamed, [], `src/ entries with no layer in LAYERS: ${unnamed.join(", ")}`);
});

Deno.test("layering: the folder graph of src/ has no cycle", async () => {
  const { edges } = await theGraph();
  const folder = (p: string) => layerOf(p)?.unit;
  const folderEdges: Edge[] = [];
  for (const e of edges) {
    const a = folder(e.from), b = folder(e.to);
    if (a && b && a !== b) folderEdges.push({ from: a, to: b });
  }
  const cyclic = [...new Set(folderEdges.map((e) => e.from))].filter((f) => reaches(f, folderEdges).has(f));
  assert.deepEqual(cyclic.sort(), [], `folders on an import cycle: ${cyclic.join(", ")}`);
});

Deno.test("layering: a broken rule is reported with the rule and each offending edge", () => {
  const edges: Edge[] = [
    { from: "src/lua/engine.ts", to: "src/json/codec.ts" },
    { from: "src/lua/engine.ts", to: "src/host/core.ts" },
    { from: "src/lua/engine.ts", to: "src/host/core.ts" },
    { from: "mod.ts", to: "src/cli/args.ts" },
    { from: "cli.ts", to: "src/cli/main.ts" },
    { from: "src/cli/main.ts", to: "src/cli/args.ts" },
  ];
  const layers = RULES[0];
  assert.deepEqual(
    violations(layers, [
      { from: "src/proc/group.ts", to: "src/obs/log.ts" },
      { from: "src/obs/secrets.ts", to: "src/proc/child_env.ts" },
      { from: "src/lua/engine.ts", to: "src/knl/store.ts" },
      { from: "src/host/mcp.ts", to: "src/host/context.ts" },
    ]),
    ["src/lua/engine.ts -> src/knl/store.ts", "src/proc/group.ts -> src/obs/log.ts"],
  );
  assert.deepEqual([...reaches("a", [{ from: "a", to: "b" }, { from: "b", to: "c" }])].sort(), ["b", "c"]);
  const lua = RULES.find((r) => r.rule.startsWith("src/lua/**"))!;
  assert.deepEqual(violations(lua, edges), ["src/lua/engine.ts -> src/host/core.ts"]);
  const cli = RULES.find((r) => r.rule.startsWith("nothing imports src/cli/**"))!;
  assert.deepEqual(violations(cli, edges), ["mod.ts -> src/cli/args.ts"]);
  assert.equal(
    brokenMessage(cli, ["mod.ts -> src/cli/args.ts"]),
    "layering rule broken: nothing imports src/cli/** except cli.ts and src/cli/** itself (mod.ts may not)\n" +
      "1 offending import(s):\n  mod.ts -> src/cli/args.ts",
  );
});

Deno.test("layering: the flows rule refuses a concrete runner and the runtime, and allows the interface", () => {
  const flows = RULES.find((r) => r.rule.startsWith("src/flows/** (flows of blocks"))!;
  const edges: Edge[] = [
    { from: "src/flows/run.ts", to: "src/runner/runner.ts" },
    { from: "src/flows/run.ts", to: "src/runner/in_process.ts" },
    { from: "src/flows/run.ts", to: "src/runtime/run.ts" },
    { from: "src/flows/run.ts", to: "src/knl/store.ts" },
  ];
  assert.deepEqual(violations(flows, edges), [
    "src/flows/run.ts -> src/runner/in_process.ts",
    "src/flows/run.ts -> src/runtime/run.ts",
  ]);
});
