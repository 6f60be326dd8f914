/**
 * A test-only downstream: seed 002's in-process spawner (`AgentBlockInProcessSpawnerFactory`)
 * reproduced over the embedding SDK, importing nothing but the package
 * (`@agent-block/agent-block`), as an engine outside this repository would.
 *
 * The factory is state-less and kind-level: it holds only the process-wide settings (the run
 * environment, and optionally `$AGENT_BLOCK_HOME`). `build(spec, profile)` compiles one agent
 * (its mode, its server grant, its fallback project root); `invoke(invocation)` runs one task
 * of it and resolves with `{ value, parts, error? }`.
 *
 * Invariants (the seed's contract):
 * - Prompt-based mode (no `spec.script_path`): `ScriptSource.defaultAgent` with only the
 *   `spec.mcp_servers` named by an `mcp__<server>__<tool>` entry of `profile.tools`; a granted
 *   server offers every tool it has (grant per server, not per tool). Other names (`Read`,
 *   `WebSearch`) are inert. A grant naming a server the spec does not define is refused by
 *   `build` (this reproduction's choice: a misspelt grant fails loudly).
 * - Script-based mode: `ScriptSource.path(spec.script_path)`, run verbatim; the script owns its
 *   MCP connections, so declared `mcp__` entries are refused by `build`, before anything runs.
 * - `_CONTEXT` is `profile.system_prompt`; `_PROMPT` is the input, a structured input
 *   JSON-encoded; `_TASK_METADATA` and `_AGENT_CTX` are set natively (nesting kept).
 * - The result comes through `bus.emit`: kind `artifact` stages the part `payload.name` =
 *   `payload.content` and the run goes on; the first emit of any other kind is the terminal
 *   result, normalised to `payload.content`, else `payload.response`, else the whole payload.
 *   A run that never emits a terminal result, or that does not end well, fails the invocation
 *   (`error` set).
 * - The project root is, highest first: `invocation.work_dir`, `invocation.project_root`,
 *   `spec.project_root`, the host's working directory when `build` ran. It is the run's
 *   `std.env.project_root()`, its working directory (a bare relative path resolves there) and the
 *   default cwd of `sh.exec` and MCP servers; the host process's working directory is never changed.
 * - `invocation.signal` cancels the run; `spec.mcp_rpc_timeout_ms` bounds every MCP request.
 */
import {
  ARTIFACT_KIND,
  BlockConfig,
  BlockError,
  type BusEvent,
  type JsonValue,
  runBlock,
  ScriptSource,
} from "@agent-block/agent-block";

/** An MCP server of the agent's pool. */
export interface McpServerSpec {
  name: string;
  command: string;
  args?: string[];
}

/** `AgentDef.spec` of the agent-block kind: every key optional. */
export interface AgentSpec {
  project_root?: string;
  script_path?: string;
  mcp_rpc_timeout_ms?: number;
  mcp_servers?: McpServerSpec[];
}

/** `AgentDef.profile`: the system prompt and the effective tool grant. */
export interface AgentProfile {
  system_prompt?: string;
  tools: string[];
}

/** One task for the agent. */
export interface WorkerInvocation {
  /** The step's input: a string as it is, anything else JSON-encoded. */
  prompt: JsonValue;
  task_metadata?: JsonValue;
  agent_ctx?: JsonValue;
  work_dir?: string;
  project_root?: string;
  signal?: AbortSignal;
}

/** What an invocation produced. */
export interface WorkerResult {
  /** The terminal result (normalised), `undefined` when there was none. */
  value: unknown;
  /** The staged parts, by name. */
  parts: Record<string, unknown>;
  /** Why the invocation failed, when it did. */
  error?: BlockError;
  /** What the run logged (its stderr), for diagnostics. */
  log: string;
}

/** The process-wide settings of the factory. */
export interface SpawnerSettings {
  /** The environment every run gets (the SDK's default would be this process's). */
  env: Record<string, string>;
  /** `$AGENT_BLOCK_HOME` of every run. */
  home?: string;
}

/** The servers of `spec` that `tools` grants (`mcp__<server>__<tool>`), in the spec's order. */
export function resolveNeededMcpServers(spec: AgentSpec, tools: string[]): McpServerSpec[] {
  const granted = new Set(mcpServersOf(tools));
  const pool = spec.mcp_servers ?? [];
  for (const name of granted) {
    if (!pool.some((s) => s.name === name)) {
      throw new BlockError("config", `tool grant names MCP server '${name}', which spec.mcp_servers lacks`);
    }
  }
  return pool.filter((s) => granted.has(s.name));
}

/** The server names of the `mcp__<server>__<tool>` entries of `tools`. */
function mcpServersOf(tools: string[]): string[] {
  return tools.flatMap((t) => {
    const m = /^mcp__(.+?)__.+$/.exec(t);
    return m ? [m[1]] : [];
  });
}

/** The terminal value of a result payload: `content`, else `response`, else the payload. */
function normalise(payload: unknown): unknown {
  if (typeof payload === "object" && payload !== null && !Array.isArray(payload)) {
    const p = payload as Record<string, unknown>;
    if (p.content !== undefined) return p.content;
    if (p.response !== undefined) return p.response;
  }
  return payload;
}

/** One compiled agent. */
export class Seed002Agent {
  constructor(
    readonly settings: SpawnerSettings,
    readonly script: ScriptSource,
    readonly systemPrompt: string | undefined,
    readonly fallbackRoot: string,
    readonly mcpRpcTimeoutMs: number | undefined,
  ) {}

  /** Runs one task. */
  async invoke(inv: WorkerInvocation): Promise<WorkerResult> {
    const parts: Record<string, unknown> = {};
    const logged: Uint8Array[] = [];
    let terminal: { value: unknown } | undefined;
    const captor = (event: BusEvent) => {
      if (event.kind === ARTIFACT_KIND) {
        const p = event.payload as { name: string; content?: unknown };
        parts[p.name] = p.content;
      } else if (terminal === undefined) {
        terminal = { value: normalise(event.payload) };
      }
      return true;
    };
    const projectRoot = inv.work_dir ?? inv.project_root ?? this.fallbackRoot;
    const b = BlockConfig.builder(this.script, projectRoot)
      .prompt(typeof inv.prompt === "string" ? inv.prompt : JSON.stringify(inv.prompt))
      .extraGlobals({ _TASK_METADATA: inv.task_metadata ?? {}, _AGENT_CTX: inv.agent_ctx ?? {} })
      .env(this.settings.env)
      .hostHandler(captor)
      .stderr((bytes) => logged.push(bytes.slice()));
    if (this.systemPrompt !== undefined) b.context(this.systemPrompt);
    if (this.settings.home !== undefined) b.home(this.settings.home);
    if (this.mcpRpcTimeoutMs !== undefined) b.mcpRpcTimeoutMs(this.mcpRpcTimeoutMs);
    if (inv.signal) b.signal(inv.signal);

    const report = await runBlock(b.build());
    const value = terminal?.value;
    const decoder = new TextDecoder();
    const log = logged.map((bytes) => decoder.decode(bytes, { stream: true })).join("") + decoder.decode();
    const failed = (error: BlockError): WorkerResult => ({ value, parts, error, log });
    if (report.error) return failed(report.error);
    if (report.exitCode !== 0) {
      return failed(
        new BlockError(
          "script",
          `the run ended with exit code ${report.exitCode} (${report.outcome.status})`,
        ),
      );
    }
    if (terminal === undefined) {
      return failed(
        new BlockError(
          "script",
          `the script never emitted a result (bus.emit with a kind other than '${ARTIFACT_KIND}')`,
        ),
      );
    }
    return { value, parts, log };
  }
}

/** The factory: process-wide settings only; all agent specialisation comes from spec + profile. */
export class Seed002SpawnerFactory {
  constructor(readonly settings: SpawnerSettings) {}

  /** Compiles an agent; throws a `BlockError` (code `config`) for a grant it cannot honour. */
  build(spec: AgentSpec, profile: AgentProfile): Seed002Agent {
    let script: ScriptSource;
    if (spec.script_path !== undefined) {
      const declared = profile.tools.filter((t) => t.startsWith("mcp__"));
      if (declared.length > 0) {
        throw new BlockError(
          "config",
          `a script-based agent owns its MCP connections; drop the mcp__ tool grant(s) ${
            declared.join(", ")
          }`,
        );
      }
      script = ScriptSource.path(spec.script_path);
    } else {
      const servers = resolveNeededMcpServers(spec, profile.tools);
      script = ScriptSource.defaultAgent({
        mcpServers: servers.map((s) => ({ name: s.name, command: s.command, args: s.args ?? [] })),
      });
    }
    return new Seed002Agent(
      this.settings,
      script,
      profile.system_prompt,
      spec.project_root ?? Deno.cwd(),
      spec.mcp_rpc_timeout_ms,
    );
  }
}
