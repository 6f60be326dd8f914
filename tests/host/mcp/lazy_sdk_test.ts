/**
 * The MCP SDK stays off the run path until a script connects a server.
 *
 * - Static graph: `deno info --json cli.ts` lists every module with its dependencies, dynamic
 *   imports flagged `isDynamic` and type-only imports under `type` instead of `code`. The modules
 *   reachable from cli.ts through static code imports (plus cli.ts's dynamic import of
 *   `src/cli/main.ts`, which is the run path itself) are what every `agent-block -s` run loads;
 *   none may belong to an SDK package (MCP, zod, the LLM SDKs, A2A). As a control, the same
 *   walk including dynamic imports must reach the MCP client (so a change of format or a
 *   broken walk fails here instead of passing vacuously).
 * - `deno.json` keeps `"unstable": ["lazy-dynamic-imports"]`: without it `deno run` prepares the
 *   module graph of every literal dynamic import at start-up (reading, hashing and resolving the
 *   whole MCP SDK, the subcommands and their SDKs) even though none of it is evaluated, which
 *   costs the run path about as much as half the lazy loading saves. (Its counterpart,
 *   `compile.include`, is checked in tests/compile_test.ts.)
 * - Before any connect, `mcp.*` answers from the SDK-free side: RPCs and peeks report
 *   "no server named", argument errors still raise, handlers can be set and cleared.
 */
import assert from "node:assert/strict";
import { CLI, denoInfo, REPO_ROOT, runLua } from "../../helpers.ts";

interface InfoDep {
  specifier: string;
  code?: { specifier: string };
  isDynamic?: boolean;
}
interface InfoModule {
  specifier: string;
  kind: string;
  npmPackage?: string;
  dependencies?: InfoDep[];
}
interface Info {
  roots: string[];
  modules: InfoModule[];
  redirects: Record<string, string>;
}

/** Packages a run that does not use them must not load. */
const SDK_PACKAGE = /^(@modelcontextprotocol\/|zod@|@anthropic-ai\/|openai@|ai@|@ai-sdk\/|@a2a-js\/)/;

/** cli.ts loads `src/cli/main.ts` dynamically on purpose (after starting the wasm compile). */
const CLI_SPEC = new URL(`file://${CLI}`).href;
const MAIN_SPEC = new URL(`file://${REPO_ROOT}/src/cli/main.ts`).href;

/**
 * Module → the module that first imported it, walking code imports: static ones, the dynamic
 * edge cli.ts → src/cli/main.ts (the run path), and every other dynamic one if asked.
 */
function reach(info: Info, withDynamic: boolean): Map<string, string | undefined> {
  const bySpec = new Map(info.modules.map((m) => [m.specifier, m]));
  const resolve = (s: string) => {
    for (let i = 0; i < 10 && info.redirects[s]; i++) s = info.redirects[s];
    return s;
  };
  const root = resolve(info.roots[0]);
  const seen = new Map<string, string | undefined>([[root, undefined]]);
  const todo = [root];
  while (todo.length) {
    const s = todo.pop()!;
    for (const d of bySpec.get(s)?.dependencies ?? []) {
      if (!d.code) continue;
      const t = resolve(d.code.specifier);
      const runPath = s === CLI_SPEC && t === MAIN_SPEC;
      if (d.isDynamic && !withDynamic && !runPath) continue;
      if (!seen.has(t)) {
        seen.set(t, s);
        todo.push(t);
      }
    }
  }
  return seen;
}

function sdkModules(info: Info, seen: Map<string, string | undefined>): string[] {
  const bySpec = new Map(info.modules.map((m) => [m.specifier, m]));
  const chain = (s: string) => {
    const out = [s];
    for (let p = seen.get(s); p !== undefined; p = seen.get(p)) out.push(p);
    return out.map((x) => x.replace(`file://${REPO_ROOT}/`, "")).join(" <- ");
  };
  return [...seen.keys()]
    .filter((s) => SDK_PACKAGE.test(bySpec.get(s)?.npmPackage ?? s.replace(/^npm:\/?/, "")))
    .map(chain);
}

Deno.test("the run path's static module graph loads no SDK (MCP, zod, LLM SDKs)", async () => {
  const info = await denoInfo<Info>(CLI);
  const statics = reach(info, false);
  assert(
    [...statics.keys()].some((s) => s.endsWith("/src/host/mcp.ts")),
    "the walk did not reach src/host/mcp.ts: deno info's format changed?",
  );
  assert.deepEqual(sdkModules(info, statics), [], "statically imported on every run");
  const all = reach(info, true);
  assert(
    sdkModules(info, all).some((c) => c.startsWith("npm:/@modelcontextprotocol/client@")),
    "control: with dynamic imports the MCP client must be reachable (lazy load lost from the graph?)",
  );
});

Deno.test("deno.json keeps literal dynamic imports lazy for deno run", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}/deno.json`));
  assert(
    Array.isArray(config.unstable) && config.unstable.includes("lazy-dynamic-imports"),
    `deno.json "unstable" must include "lazy-dynamic-imports", got ${JSON.stringify(config.unstable)}`,
  );
});

Deno.test("mcp.* before any connect: no server, argument errors raise, handlers settable", async () => {
  const r = await runLua(`
    local R = {}
    local info = mcp.server_info("x")
    R.info_ok, R.info_err = info.ok, info.error
    R.epoch = mcp.tools_epoch("x")
    local c = mcp.call("x", "t", {})
    R.call_ok, R.call_err = c.ok, c.error
    R.list_err = mcp.list_tools("x").error
    R.ping_err = mcp.ping("x").error
    mcp.cancel("x", 1)
    mcp.notify_roots_list_changed("x")
    mcp.disconnect("x")
    mcp.on_log("x", function() end)
    mcp.on_log("x", nil)
    mcp.set_sampling_handler("x", function() end)
    R.bad_arg = select(2, pcall(mcp.server_info, {}))
    R.bad_disconnect = select(2, pcall(mcp.disconnect, {}))
    R.bad_connect = select(2, pcall(mcp.connect, "x", "cmd", {}, { era = "bogus" }))
    return std.json.encode(R)
  `);
  assert.deepEqual(r.outcome.status, "returned", r.stderr);
  const R = JSON.parse((r.outcome as { value: string }).value);
  assert.deepEqual(R.info_ok, false);
  assert.deepEqual(R.info_err, "mcp.server_info: no server named 'x'");
  assert.deepEqual(R.epoch, 0);
  assert.deepEqual(R.call_ok, false);
  assert.deepEqual(R.call_err, "mcp.call: no server named 'x'");
  assert.deepEqual(R.list_err, "mcp.list_tools: no server named 'x'");
  assert.deepEqual(R.ping_err, "mcp.ping: no server named 'x'");
  assert.match(R.bad_arg, /mcp\.server_info: argument 1 \(name\) must be a string/);
  assert.match(R.bad_disconnect, /mcp\.disconnect: argument 1 \(name\) must be a string/);
  assert.match(R.bad_connect, /field 'era' must be/);
  assert.match(r.stderr, /mcp\.cancel: no server named 'x'/);
  assert.match(r.stderr, /mcp\.notify_roots_list_changed: no server named 'x'/);
});
