/**
 * Host tools: TypeScript functions an embedder offers a block as tools, and the tool list a run
 * ends with.
 *
 * Owns the `HostTool` shape, its checks, and the host module that registers each one in the
 * run's Lua tool registry (`tool.register`, the same entries Lua tools have, so `tool.call`,
 * `tool.schema` and `agent.run` see them like any other) with a handler that calls back into
 * TypeScript. And the snapshot of the registry taken when the run ends (`ToolInfo[]`), so an
 * embedder can see what a block registered.
 *
 * Invariants: the handler receives the tool's input as a JSON value and an `AbortSignal` that
 * aborts when the calling task is cancelled or the run ends; what it returns (or resolves to) is
 * the tool's result in Lua; what it throws raises `tool '<name>': <message>` in the calling task.
 */
import type { LuaEngine } from "../lua/engine.ts";
import type { HostModule } from "../host/context.ts";
import type { JsonValue } from "../json/codec.ts";
import { BlockError } from "./errors.ts";
import { show } from "./sources.ts";

/**
 * What a host tool's handler is called with besides its input.
 *
 * ```ts
 * import { BlockConfig, type HostToolContext, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const stoppedBy: string[] = [];
 * const stop = new AbortController();
 * // waits for something that never comes: the embedder gives up once the call is under way
 * const wait = (_input: unknown, { signal, tool }: HostToolContext) =>
 *   new Promise((resolve) => {
 *     signal.addEventListener("abort", () => {
 *       stoppedBy.push(tool);
 *       resolve(null);
 *     });
 *     stop.abort("nobody approved");
 *   });
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline('return tool.call("wait_for_approval", {})', "wait.lua"), ".")
 *     .hostTool({ name: "wait_for_approval", description: "Waits for a human.", handler: wait })
 *     .signal(stop.signal)
 *     .env({})
 *     .build(),
 * );
 * assert.equal(report.outcome.status, "cancelled");
 * assert.deepEqual(stoppedBy, ["wait_for_approval"]);
 * ```
 */
export interface HostToolContext {
  /** Aborts when the calling Lua task is cancelled or the run ends. */
  signal: AbortSignal;
  /** The tool's name. */
  tool: string;
}

/**
 * A TypeScript function offered to the block as a tool.
 *
 * ```ts
 * import { BlockConfig, type HostTool, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const owners: Record<string, string> = { "src/": "infra", "docs/": "writers" };
 * const lookup: HostTool = {
 *   name: "owner_of",
 *   description: "The team that owns a path prefix.",
 *   inputSchema: { type: "object", properties: { prefix: { type: "string" } }, required: ["prefix"] },
 *   handler: (input) => ({ team: owners[(input as { prefix: string }).prefix] ?? null }),
 * };
 * const script = 'return tool.call("owner_of", { prefix = "docs/" }).team';
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "own.lua"), ".").hostTool(lookup).env({}).build(),
 * );
 * assert.equal(report.value, "writers");
 * assert.equal(report.tools.find((t) => t.name === "owner_of")?.source, "host");
 * ```
 */
export interface HostTool {
  /** The tool's name in the registry (`tool.call(name, input)`; what a model calls). */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** JSON Schema of the input (default: an object with no declared properties). */
  inputSchema?: { readonly [key: string]: JsonValue };
  /** The tool group, for `agent.run`'s `tool_groups` (default: the `default` group). */
  group?: string;
  /** Runs the tool: the input as JSON, the result as JSON. */
  handler: (input: unknown, context: HostToolContext) => unknown;
}

/**
 * A tool in the registry when the run ended.
 *
 * ```ts
 * import { BlockConfig, runBlock, ScriptSource, type ToolInfo } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const script = `
 *   tool.register("shout", { description = "Upper-cases a text." }, function(input)
 *     return input.text:upper()
 *   end)
 *   return tool.call("shout", { text = "hi" })`;
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "shout.lua"), ".").env({}).build(),
 * );
 * const own: ToolInfo[] = report.tools.filter((t) => t.source === "block");
 * assert.equal(report.value, "HI");
 * assert.deepEqual(own.map((t) => [t.name, t.description]), [["shout", "Upper-cases a text."]]);
 * ```
 */
export interface ToolInfo {
  /** The tool's name. */
  name: string;
  /** Its description. */
  description: string;
  /** Its input schema. */
  inputSchema: unknown;
  /** Its group, when it has one. */
  group?: string;
  /** `host`: one of the config's host tools; `block`: registered by the block's Lua code. */
  source: "host" | "block";
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Checks the builder's host tools; every refusal names the tool and the field. */
export function checkHostTools(tools: readonly HostTool[]): readonly HostTool[] {
  const names = new Set<string>();
  return Object.freeze(tools.map((t, i) => {
    const at = `hostTools[${i}]`;
    if (typeof t !== "object" || t === null) {
      throw new BlockError("config", `${at} must be an object, got ${show(t)}`);
    }
    if (typeof t.name !== "string" || !TOOL_NAME.test(t.name)) {
      throw new BlockError(
        "config",
        `${at}.name must be 1-128 characters of letters, digits, '_', '-' or '.', got ${show(t.name)}`,
      );
    }
    if (names.has(t.name)) throw new BlockError("config", `${at}.name '${t.name}' is given twice`);
    names.add(t.name);
    if (typeof t.description !== "string") {
      throw new BlockError(
        "config",
        `${at} ('${t.name}').description must be a string, got ${show(t.description)}`,
      );
    }
    const schema = t.inputSchema;
    if (schema !== undefined && (typeof schema !== "object" || schema === null || Array.isArray(schema))) {
      throw new BlockError(
        "config",
        `${at} ('${t.name}').inputSchema must be an object, got ${show(schema)}`,
      );
    }
    if (t.group !== undefined && (typeof t.group !== "string" || t.group === "")) {
      throw new BlockError(
        "config",
        `${at} ('${t.name}').group must be a non-empty string, got ${show(t.group)}`,
      );
    }
    if (typeof t.handler !== "function") {
      throw new BlockError(
        "config",
        `${at} ('${t.name}').handler must be a function, got ${show(t.handler)}`,
      );
    }
    return Object.freeze({ ...t });
  }));
}

const REGISTER = `local _, H = ...
local call = H.sdk_host_tool_call
for _, t in ipairs(H.sdk_host_tools()) do
  local name = t.name
  tool.register(name, { description = t.description, input_schema = t.input_schema },
    function(input) return call(name, input) end, t.group and { group = t.group } or nil)
end`;

const SNAPSHOT = "return tool.schema()";

/**
 * The host module registering `tools` and, when the run ends, handing the registry's tools to
 * `onList` (an empty list, with a warning, when the registry cannot be read any more).
 */
export function hostToolsModule(tools: readonly HostTool[], onList: (tools: ToolInfo[]) => void): HostModule {
  return (engine: LuaEngine, run) => {
    const byName = new Map(tools.map((t) => [t.name, t]));
    if (tools.length > 0) {
      engine.define("@sdk_host_tools", {
        sync: () =>
          tools.map((t) => ({
            name: t.name,
            description: t.description,
            input_schema: t.inputSchema ?? { type: "object", properties: {} },
            group: t.group,
          })),
      });
      engine.define("@sdk_host_tool_call", {
        async: async (a, cx) => {
          const name = a.string(1, "name");
          const t = byName.get(name)!;
          try {
            return await t.handler(a.at(2) ?? null, { signal: cx.signal, tool: name });
          } catch (e) {
            throw new Error(`tool '${name}': ${e instanceof Error ? e.message : String(e)}`);
          }
        },
      });
      engine.exec(REGISTER, "=ab:host_tools");
    }
    run.onCleanup(() => {
      let list: unknown;
      try {
        list = engine.evaluate(SNAPSHOT, "=ab:tool_list");
      } catch (e) {
        run.log.warn(`could not list the run's tools: ${(e as Error).message}`);
        onList([]);
        return;
      }
      onList(
        (Array.isArray(list) ? list : []).map((e: Record<string, unknown>) => {
          const info: ToolInfo = {
            name: String(e.name),
            description: String(e.description ?? ""),
            inputSchema: e.input_schema,
            source: byName.has(String(e.name)) ? "host" : "block",
          };
          if (typeof e.group === "string") info.group = e.group;
          return info;
        }),
      );
    });
  };
}
