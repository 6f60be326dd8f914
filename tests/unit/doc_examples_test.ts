/**
 * Every export of the stable surface (`mod.ts`) has an example: a ```ts block in its JSDoc, in the
 * description or under an `@example` tag, at the declaration `deno doc --json mod.ts` reports
 * (a name with two declarations, such as the value and the type `ScriptSource`, needs one at
 * each). `deno task test` runs those blocks (`deno test --doc`), so an example here is one that
 * type-checks and runs; the second test holds the task to `--doc` over every file that declares
 * one. The module doc itself (the embedding guide) must have an example too. The third test pins
 * the stable surface: the exact list of `mod.ts`'s exports, so adding or removing one is a
 * decision made in this file, never a side effect.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { REPO_ROOT } from "../helpers.ts";

interface JsDoc {
  doc?: string;
  tags?: { kind: string; doc?: string }[];
}

interface DocJson {
  nodes: Record<string, {
    module_doc?: JsDoc;
    symbols: {
      name: string;
      declarations: { kind: string; jsDoc?: JsDoc; location: { filename: string } }[];
    }[];
  }>;
}

/** A fenced TypeScript block: ```ts or ```typescript, at the start of a line. */
const TS_BLOCK = /^\s*```(ts|typescript)\b/m;

/** True when `jsDoc` has a TypeScript block in its description or in an `@example` tag. */
function hasExample(jsDoc: JsDoc | undefined): boolean {
  if (!jsDoc) return false;
  if (TS_BLOCK.test(jsDoc.doc ?? "")) return true;
  return (jsDoc.tags ?? []).some((t) => t.kind === "example" && TS_BLOCK.test(t.doc ?? ""));
}

async function docJson(): Promise<DocJson> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", "mod.ts"],
    cwd: REPO_ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  assert.ok(out.success, `deno doc --json mod.ts failed:\n${err}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

async function modNode() {
  const doc = await docJson();
  const mod = Object.entries(doc.nodes).find(([url]) => url.endsWith("/mod.ts"))?.[1];
  assert.ok(
    mod,
    `deno doc --json mod.ts has no node for mod.ts (nodes: ${Object.keys(doc.nodes).join(", ")})`,
  );
  return mod;
}

Deno.test("docs: every export of mod.ts has a ```ts example in its JSDoc", async () => {
  const mod = await modNode();
  assert.ok(mod.symbols.length > 40, `only ${mod.symbols.length} exports found: the JSON was not read right`);
  assert.ok(
    hasExample(mod.module_doc),
    "the module doc of mod.ts (the embedding guide) has no ```ts example",
  );

  const missing: string[] = [];
  for (const symbol of mod.symbols) {
    const several = symbol.declarations.length > 1;
    for (const d of symbol.declarations) {
      if (!hasExample(d.jsDoc)) missing.push(several ? `${symbol.name} (${d.kind})` : symbol.name);
    }
  }
  assert.deepEqual(
    missing,
    [],
    `exports of mod.ts without a \`\`\`ts example in their JSDoc: ${missing.join(", ")}`,
  );
});

Deno.test("docs: `deno task test` runs the examples of every file declaring an export of mod.ts", async () => {
  const mod = await modNode();
  const task: string = JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "deno.json"))).tasks.test;
  const words = task.split(/\s+/);
  const args = words.slice(words.indexOf("test") + 1);
  assert.ok(args.includes("--doc"), `the test task does not run the doc examples (no --doc): ${task}`);
  const paths = args.filter((a) => !a.startsWith("-"));
  const covered = (file: string) =>
    paths.some((p) => p.endsWith("/") ? file.startsWith(p) : file === p || file.startsWith(`${p}/`));
  const files = new Set(["mod.ts"]);
  for (const s of mod.symbols) {
    for (const d of s.declarations) files.add(relative(REPO_ROOT, fileURLToPath(d.location.filename)));
  }
  const outside = [...files].filter((f) => !covered(f)).sort();
  assert.deepEqual(
    outside,
    [],
    `files outside the doc-tested paths (${paths.join(" ")}): ${outside.join(", ")}`,
  );
});

/** The stable surface of `mod.ts`: every export, by name. Change it on purpose only. */
const STABLE_SURFACE = [
  "ARTIFACT_KIND",
  "AgentBlockError",
  "Appended",
  "Artifact",
  "BlockConfig",
  "BlockConfigBuilder",
  "BlockConfigFields",
  "BlockEntry",
  "BlockError",
  "BlockErrorCode",
  "BlockErrorDetails",
  "BlockLimits",
  "BlockReport",
  "BlockRoot",
  "BlockRunner",
  "BlockTier",
  "BusEvent",
  "BusHandler",
  "BusHost",
  "Correlation",
  "Declaration",
  "DeclarationError",
  "DefaultAgentOptions",
  "EXIT",
  "EXIT_TIMED_OUT",
  "EventRow",
  "EventStore",
  "ExportShape",
  "HostTool",
  "HostToolContext",
  "JsonSchema",
  "JsonValue",
  "McpServerConfig",
  "MeshSettings",
  "NewEvent",
  "OtelMeterProvider",
  "OtelTracerProvider",
  "Outcome",
  "OutcomeStatus",
  "PromptArgument",
  "PromptDeclaration",
  "RAISED_CODES",
  "RESERVED_GLOBALS",
  "RaisedCode",
  "ResourceDeclaration",
  "RunEvent",
  "RunHooks",
  "RunObserver",
  "RunReport",
  "RunRequest",
  "RunSettings",
  "RunStores",
  "RunText",
  "ScriptSource",
  "ScriptSourceConstructors",
  "SecretKeySource",
  "SessionSummary",
  "SettingsLogLevel",
  "StartFacts",
  "StorePaths",
  "TelemetrySettings",
  "TelemetrySettingsError",
  "TextSource",
  "ToolDeclaration",
  "ToolInfo",
  "UnknownSession",
  "UsageError",
  "VERSION",
  "blockErrorOf",
  "blockRoots",
  "closeStore",
  "exitCodeOf",
  "exportSession",
  "findBlock",
  "listSessions",
  "openExistingStore",
  "runBlock",
  "scanBlocks",
  "telemetryFromEnv",
]; // deno-fmt-ignore

Deno.test("docs: the stable surface of mod.ts is exactly the pinned list", async () => {
  const mod = await modNode();
  const names = [...new Set(mod.symbols.map((s) => s.name))].sort();
  const added = names.filter((n) => !STABLE_SURFACE.includes(n));
  const removed = STABLE_SURFACE.filter((n) => !names.includes(n));
  assert.deepEqual(
    { added, removed },
    { added: [], removed: [] },
    "mod.ts's exports changed: update STABLE_SURFACE if that was meant (a stable export is semver)",
  );
});
