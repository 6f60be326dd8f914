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
 * SDK; the sandbox launcher `src/sandbox` sits on `src/proc` alone and only the CLI imports it;
 * the package entries `mod.ts`, `unstable_engine.ts` and `unstable_flows.ts` import nothing of each
 * other, and only `unstable_flows.ts` of them reaches `src/flows`.
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

/** The dependency rules: the target layout of issue #12. */
const RULES: Rule[] = [
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
    rule: "src/serve/** never imports src/mcp_server/** or src/sdk/**",
    from: under("src/serve"),
    forbids: any(under("src/mcp_server"), under("src/sdk")),
  },
  {
    rule: "src/sandbox/** (the sandbox launcher) imports only src/proc/**, src/errors.ts, src/home.ts and " +
      "itself: it runs before any runtime exists",
    from: under("src/sandbox"),
    forbids: not(any(under("src/sandbox"), under("src/proc"), is("src/errors.ts"), is("src/home.ts"))),
  },
  {
    rule: "src/sandbox/** is imported only by src/cli/** and itself, so it stays off the run path",
    from: not(any(under("src/cli"), under("src/sandbox"))),
    forbids: under("src/sandbox"),
  },
  {
    rule:
      "src/flows/** (flows of blocks, a consumer of the runner) never imports src/runtime/**, src/sdk/**, " +
      "src/cli/**, src/mcp_server/** or src/serve/**, and of src/runner/** only the interface runner/runner.ts",
    from: under("src/flows"),
    forbids: (to) =>
      any(
        under("src/runtime"),
        under("src/sdk"),
        under("src/cli"),
        under("src/mcp_server"),
        under("src/serve"),
      )(to) ||
      (under("src/runner")(to) && to !== "src/runner/runner.ts"),
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

Deno.test("layering: a broken rule is reported with the rule and each offending edge", () => {
  const edges: Edge[] = [
    { from: "src/lua/engine.ts", to: "src/json/codec.ts" },
    { from: "src/lua/engine.ts", to: "src/host/core.ts" },
    { from: "src/lua/engine.ts", to: "src/host/core.ts" },
    { from: "mod.ts", to: "src/cli/args.ts" },
    { from: "cli.ts", to: "src/cli/main.ts" },
    { from: "src/cli/main.ts", to: "src/cli/args.ts" },
  ];
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
