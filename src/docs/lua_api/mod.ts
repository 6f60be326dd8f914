/**
 * The Lua API reference: every global, table, function and module the runtime gives a script,
 * as data — the one source of truth `docs/lua-api.md` and the LuaCATS annotation files are
 * generated from (`src/docs/render_*.ts`, `tools/gen_lua_api.ts`, `agent-block types`).
 *
 * Invariant, held by `tests/docs/lua_api_test.ts` against a real run: every function and value a
 * script can reach through the agent-block globals (`std.*`, `sh`, `tool`, `mcp`, `mesh`, `llm`, `bus`,
 * `job`, `http`, `a2a`, `log`, the run's `_PROMPT`/`_CONTEXT`/`_SCRIPT_NAME`), through
 * `require("agent")`, `require("knl")`, the packs `policy` and `supervisor` and the consumer
 * `coding`, the methods of task handles, kernel sessions, stores and supervisor watches, and the
 * globals of a spec file has an entry here, and no entry names anything that does not exist
 * (`mcp.client`, which only a served MCP call has, is walked in such a call). A change of the Lua surface therefore fails the suite until this file says it.
 *
 * Not on the CLI's start-up path: only the `types` subcommand (loaded on first use), the
 * generator and the tests import it.
 */
import type { Section } from "./types.ts";
import { GLOBALS, JOB, LOG } from "./globals.ts";
import { STD, STD_ENV, STD_JSON, STD_PATH, STD_TIME } from "./std_core.ts";
import { STD_TASK } from "./std_task.ts";
import { STD_FS } from "./std_fs.ts";
import { STD_KV, STD_SQL, STD_TS } from "./stores.ts";
import { HTTP, SH } from "./sh_http.ts";
import { BUS, TOOL } from "./tool_bus.ts";
import { LLM } from "./llm.ts";
import { MCP } from "./mcp.ts";
import { MCP_CLIENT } from "./mcp_client.ts";
import { MESH } from "./mesh.ts";
import { A2A } from "./a2a.ts";
import { AGENT } from "./agent.ts";
import { KNL } from "./knl.ts";
import { LSPEC } from "./lspec.ts";
import { CODING, COMPILE_LOOP, POLICY, SUPERVISOR } from "./packs.ts";

export type * from "./types.ts";

/** The sections, in the order the reference shows them. */
export const LUA_API: readonly Section[] = [
  GLOBALS,
  STD,
  STD_JSON,
  STD_ENV,
  STD_PATH,
  STD_TIME,
  STD_TASK,
  STD_FS,
  STD_KV,
  STD_SQL,
  STD_TS,
  SH,
  HTTP,
  TOOL,
  BUS,
  JOB,
  LOG,
  LLM,
  MCP,
  MCP_CLIENT,
  MESH,
  A2A,
  AGENT,
  KNL,
  POLICY,
  SUPERVISOR,
  CODING,
  COMPILE_LOOP,
  LSPEC,
];
