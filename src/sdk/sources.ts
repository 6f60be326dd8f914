/**
 * Where a block's script and its `_PROMPT` / `_CONTEXT` come from: `ScriptSource` and `TextSource`.
 *
 * Owns the three script sources of the SDK — a file, inline source with the name its errors
 * show, the embedded default agent — and their checks; reading files happens when the run
 * starts (`run_block.ts`), against the run's working directory, never at build time.
 */
import type { JsonValue } from "../json/codec.ts";
import { resolve } from "node:path";
import { BlockError } from "./errors.ts";
import { secretKeyProblem as hexProblem } from "../clients/mesh/base64url.ts";

/**
 * An MCP server the default agent connects, in `agent.run`'s `mcp_servers` form: `name` plus
 * `command` (and `args`, `env`, `cwd`) for a stdio server, or `url` (and `transport_opts`) for a
 * remote one. A stdio server's default working directory is the run's project root.
 *
 * ```ts
 * import { BlockError, type McpServerConfig, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const notes: McpServerConfig = { name: "notes", command: "notes-mcp", args: ["--read-only"] };
 * const search: McpServerConfig = { name: "search", url: "https://mcp.example.com/mcp" };
 * const agent = ScriptSource.defaultAgent({ mcpServers: [notes, search] });
 * assert.equal(agent.kind, "default_agent");
 * // checked when the source is made: a server is either a command or a url
 * assert.throws(
 *   () => ScriptSource.defaultAgent({ mcpServers: [{ name: "both", command: "x", url: "http://y" }] }),
 *   BlockError,
 * );
 * ```
 */
export interface McpServerConfig {
  /** The server's name: its tools are offered as `<name>__<tool>`, grouped as `<name>`. */
  name: string;
  /** The command of a stdio server. */
  command?: string;
  /** Its arguments. */
  args?: string[];
  /** Extra environment variables of its process. */
  env?: Record<string, string>;
  /** Its working directory (default: the project root). */
  cwd?: string;
  /** The URL of a Streamable HTTP or SSE server. */
  url?: string;
  /** Further `agent.run` server options (`transport_opts`, ...), passed through as they are. */
  [option: string]: JsonValue | undefined;
}

/**
 * What the default agent runs with.
 *
 * ```ts
 * import { BlockConfig, type DefaultAgentOptions, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * // an offline model: the `replay` provider answers from a JSON Lines script
 * const dir = await Deno.makeTempDir();
 * const replay = join(dir, "model.jsonl");
 * const answer = { expect: { system_contains: "terse" }, content: "Paris." }; // one line per model turn
 * await Deno.writeTextFile(replay, JSON.stringify(answer));
 *
 * const options: DefaultAgentOptions = { agentOptions: { provider: "replay", replay, max_iterations: 2 } };
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.defaultAgent(options), dir)
 *     .prompt("What is the capital of France?")
 *     .context("You are terse.")
 *     .stores({ kernel: ":memory:" })
 *     .env({})
 *     .build(),
 * );
 * assert.equal(report.value, "Paris.");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export interface DefaultAgentOptions {
  /** The MCP servers `agent.run` connects; every tool of each is offered to the model. */
  mcpServers?: readonly McpServerConfig[];
  /**
   * Further `agent.run` options (`model`, `provider`, `max_iterations`, `tool_groups`,
   * `extra_tools`, ...), in its own snake_case names. `prompt`, `system` and `mcp_servers` are
   * the SDK's: refused here.
   */
  agentOptions?: Readonly<Record<string, JsonValue>>;
}

/**
 * The script a block runs. Make one with `ScriptSource.path`, `.inline` or `.defaultAgent`.
 *
 * ```ts
 * import { ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * function describe(source: ScriptSource): string {
 *   switch (source.kind) {
 *     case "path":
 *       return `file ${source.path}`;
 *     case "inline":
 *       return `inline ${source.name}`;
 *     case "default_agent":
 *       return `default agent with ${source.options.mcpServers?.length ?? 0} MCP server(s)`;
 *   }
 * }
 * assert.equal(describe(ScriptSource.inline("return 1", "one.lua")), "inline one.lua");
 * assert.equal(describe(ScriptSource.defaultAgent()), "default agent with 0 MCP server(s)");
 * ```
 */
export type ScriptSource =
  | { readonly kind: "path"; readonly path: string }
  | { readonly kind: "inline"; readonly source: string | Uint8Array; readonly name: string }
  | { readonly kind: "default_agent"; readonly options: DefaultAgentOptions };

/**
 * The constructors of a `ScriptSource` (the value `ScriptSource`); each checks its arguments and
 * throws a `BlockError` with code `config` for one it refuses.
 *
 * ```ts
 * import { BlockError, ScriptSource, type ScriptSourceConstructors } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const make: ScriptSourceConstructors = ScriptSource;
 * assert.deepEqual(make.path("blocks/triage.lua"), { kind: "path", path: "blocks/triage.lua" });
 * assert.throws(() => make.inline("return 1", ""), (e) => e instanceof BlockError && e.code === "config");
 * ```
 */
export interface ScriptSourceConstructors {
  /** A Lua file (relative paths resolve against the run's working directory). */
  path(file: string): ScriptSource;
  /** Lua source held in memory; `name` is what its errors and `_SCRIPT_NAME` show. */
  inline(source: string | Uint8Array, name: string): ScriptSource;
  /** The embedded default agent (see `ScriptSource.defaultAgent`). */
  defaultAgent(options?: DefaultAgentOptions): ScriptSource;
}

/**
 * The ways to name a block's script.
 *
 * @example The three sources
 * ```ts
 * import { ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const fromFile = ScriptSource.path("blocks/triage.lua"); // resolved against the run's cwd
 * const inline = ScriptSource.inline("return _PROMPT:upper()", "upper.lua");
 * const agent = ScriptSource.defaultAgent({
 *   mcpServers: [{ name: "notes", command: "notes-mcp", args: [] }],
 *   agentOptions: { max_iterations: 8 },
 * });
 * assert.deepEqual([fromFile.kind, inline.kind, agent.kind], ["path", "inline", "default_agent"]);
 * ```
 */
export const ScriptSource: ScriptSourceConstructors = {
  /**
   * A Lua file (relative paths resolve against the run's working directory).
   * @param file the script's path
   */
  path(file: string): ScriptSource {
    if (typeof file !== "string" || file === "") {
      throw new BlockError(
        "config",
        `ScriptSource.path: the file must be a non-empty string, got ${show(file)}`,
      );
    }
    return Object.freeze({ kind: "path", path: file });
  },
  /**
   * Lua source held in memory; `name` is what its errors and `_SCRIPT_NAME` show. Its `require`
   * tier is the project root.
   * @param source the Lua source text (or bytes)
   * @param name the chunk's name, for example `"triage.lua"`
   */
  inline(source: string | Uint8Array, name: string): ScriptSource {
    if (typeof source !== "string" && !(source instanceof Uint8Array)) {
      throw new BlockError(
        "config",
        `ScriptSource.inline: the source must be a string or bytes, got ${show(source)}`,
      );
    }
    if (typeof name !== "string" || name === "") {
      throw new BlockError(
        "config",
        `ScriptSource.inline: the name must be a non-empty string, got ${show(name)}`,
      );
    }
    return Object.freeze({ kind: "inline", source, name });
  },
  /**
   * The embedded default agent: one `agent.run` with `_PROMPT` as the prompt, `_CONTEXT` as the
   * system prompt, the given MCP servers and every registered tool (host tools included). It
   * emits the result table as the event `agent_result`, returns its `content`, and raises
   * `agent.run`'s error when the run failed.
   * @param options the MCP servers and further `agent.run` options
   */
  defaultAgent(options: DefaultAgentOptions = {}): ScriptSource {
    const servers = options.mcpServers ?? [];
    if (!Array.isArray(servers)) {
      throw new BlockError(
        "config",
        `ScriptSource.defaultAgent: mcpServers must be an array, got ${show(servers)}`,
      );
    }
    const names = new Set<string>();
    servers.forEach((s, i) => {
      const at = `ScriptSource.defaultAgent: mcpServers[${i}]`;
      if (typeof s !== "object" || s === null) {
        throw new BlockError("config", `${at} must be an object, got ${show(s)}`);
      }
      if (typeof s.name !== "string" || s.name === "") {
        throw new BlockError("config", `${at}.name must be a non-empty string, got ${show(s.name)}`);
      }
      if (names.has(s.name)) throw new BlockError("config", `${at}.name '${s.name}' is given twice`);
      names.add(s.name);
      if ((s.command === undefined) === (s.url === undefined)) {
        throw new BlockError("config", `${at} ('${s.name}') needs exactly one of 'command' and 'url'`);
      }
    });
    for (const k of ["prompt", "system", "mcp_servers"]) {
      if (options.agentOptions && Object.hasOwn(options.agentOptions, k)) {
        throw new BlockError(
          "config",
          `ScriptSource.defaultAgent: agentOptions.${k} is set by the SDK (prompt, context, mcpServers)`,
        );
      }
    }
    return Object.freeze({
      kind: "default_agent",
      options: { mcpServers: [...servers], agentOptions: { ...options.agentOptions } },
    });
  },
};

/**
 * Text given inline, or read from a file when the run starts (relative to the run's cwd: the
 * project root unless `.cwd()` names another).
 *
 * ```ts
 * import { BlockConfig, runBlock, ScriptSource, type TextSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(join(dir, "system.md"), "You review pull requests.");
 * const context: TextSource = { file: "system.md" }; // read when the run starts, in its project root
 * const prompt: TextSource = "Review #42";
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline("return _CONTEXT .. ' / ' .. _PROMPT", "ctx.lua"), dir)
 *     .context(context)
 *     .prompt(prompt)
 *     .env({})
 *     .build(),
 * );
 * assert.equal(report.value, "You review pull requests. / Review #42");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export type TextSource = string | { readonly file: string };

/** Checks a `TextSource` for the builder; `field` names it in the error. */
export function checkTextSource(field: string, v: TextSource): TextSource {
  if (typeof v === "string") return v;
  if (typeof v === "object" && v !== null && typeof v.file === "string" && v.file !== "") {
    return Object.freeze({ file: v.file });
  }
  throw new BlockError("config", `${field} must be a string or { file: <path> }, got ${show(v)}`);
}

/** A value for an error message. */
export function show(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "object") return "an object";
  return `${typeof v}${typeof v === "number" || typeof v === "boolean" ? ` ${v}` : ""}`;
}

/**
 * Where the mesh identity (`secretKey`) comes from, like the script and the prompt: the 64 hex
 * characters themselves, a variable of the run's environment (`{ env }`, read when the run
 * starts), or a file (`{ file }`, read when the run starts, relative to the run's cwd; surrounding
 * whitespace ignored — a key file usually ends in a newline). A source that gives no valid key
 * is the run's `config` error, naming the source; the key itself is never in a message.
 *
 * ```ts
 * import { BlockConfig, runBlock, ScriptSource, type SecretKeySource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const fromEnv: SecretKeySource = { env: "MY_AGENT_KEY" };
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline("return 'ok'", "k.lua"), ".")
 *     .secretKey(fromEnv)
 *     .env({}) // the variable is not there
 *     .build(),
 * );
 * assert.equal(report.error?.code, "config");
 * assert.equal(report.error?.message, "secretKey: the variable MY_AGENT_KEY is not set");
 * ```
 */
export type SecretKeySource = string | { readonly env: string } | { readonly file: string };

/** Checks a `SecretKeySource` for the builder (a key given as a value is checked now). */
export function checkSecretKeySource(v: SecretKeySource): SecretKeySource {
  if (typeof v === "string") {
    const why = hexProblem(v);
    if (why !== undefined) throw new BlockError("config", `secretKey: ${why}`);
    return v;
  }
  if (typeof v === "object" && v !== null) {
    const o = v as { env?: unknown; file?: unknown };
    if (typeof o.env === "string" && o.env !== "" && o.file === undefined) {
      return Object.freeze({ env: o.env });
    }
    if (typeof o.file === "string" && o.file !== "" && o.env === undefined) {
      return Object.freeze({ file: o.file });
    }
  }
  throw new BlockError(
    "config",
    `secretKey must be 64 hex characters, { env: <variable> } or { file: <path> }, got ${show(v)}`,
  );
}

/**
 * The key `source` gives, read now (`env` from the run's environment, `file` against `cwd`);
 * throws an `Error` naming the source, never the key, when it gives none or a bad one.
 */
export async function readSecretKey(
  source: SecretKeySource | undefined,
  env: Readonly<Record<string, string>>,
  cwd: string,
): Promise<string | undefined> {
  if (source === undefined || typeof source === "string") return source;
  let key: string;
  let from: string;
  if ("env" in source) {
    from = `the variable ${source.env}`;
    const v = env[source.env];
    if (v === undefined || v.trim() === "") throw new Error(`secretKey: ${from} is not set`);
    key = v.trim();
  } else {
    from = `the file ${source.file}`;
    try {
      key = (await Deno.readTextFile(resolve(cwd, source.file))).trim();
    } catch (e) {
      const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
      throw new Error(`secretKey: cannot read ${from}: ${why}`);
    }
  }
  const why = hexProblem(key);
  if (why !== undefined) throw new Error(`secretKey: ${from} does not hold a key: ${why}`);
  return key;
}
