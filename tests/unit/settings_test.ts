/** The run settings layering (src/config/settings.ts), pure: config file < environment < flags. */
import assert from "node:assert/strict";
import { parseLabels, type RunFlags, runFlags } from "../../src/config/settings.ts";
import { resolveRunSettings } from "../../src/config/env_settings.ts";
import { AgentBlockError, UsageError } from "../../src/errors.ts";

const flags = (extra: Partial<RunFlags> = {}): RunFlags => ({
  script: "a.lua",
  labels: {},
  nats: {},
  ...extra,
});
const throwsWith = (fn: () => unknown, kind: typeof UsageError | typeof AgentBlockError, message: string) =>
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof kind, `expected ${kind.name}, got ${(e as Error)?.constructor?.name}`);
    assert.equal((e as Error).message, message);
    return true;
  });

Deno.test("settings: defaults with no config, no environment, no flags", () => {
  assert.deepEqual(resolveRunSettings(flags(), {}, {}), {
    script: "a.lua",
    block: undefined,
    project: ".",
    prompt: undefined,
    context: undefined,
    result: undefined,
    outcome: undefined,
    labels: {},
    cpuLimitSecs: undefined,
    memoryLimitMb: undefined,
    mcpTimeoutSecs: 30,
    progress: false,
    events: undefined,
    relay: undefined,
    secretKey: undefined,
    natsVars: {},
  });
});

Deno.test("settings: the config file is the lowest layer", () => {
  const s = resolveRunSettings(flags(), {}, {
    prompt: "p",
    context: "c",
    result: "r",
    labels: { a: "1" },
    cpu_limit_secs: 2,
    memory_limit_mb: 64,
    mcp_timeout_secs: 9,
  });
  assert.equal(s.prompt, "p");
  assert.equal(s.context, "c");
  assert.equal(s.result, "r");
  assert.deepEqual(s.labels, { a: "1" });
  assert.equal(s.cpuLimitSecs, 2);
  assert.equal(s.memoryLimitMb, 64);
  assert.equal(s.mcpTimeoutSecs, 9);
});

Deno.test("settings: the environment beats the file for the knobs that have a variable", () => {
  const env = {
    AGENT_BLOCK_CPU_LIMIT_SECS: "3",
    AGENT_BLOCK_MEMORY_LIMIT_MB: "128",
    AGENT_BLOCK_MCP_TIMEOUT_SECS: "12",
  };
  const s = resolveRunSettings(flags(), env, { cpu_limit_secs: 2, memory_limit_mb: 64, mcp_timeout_secs: 9 });
  assert.equal(s.cpuLimitSecs, 3);
  assert.equal(s.memoryLimitMb, 128);
  assert.equal(s.mcpTimeoutSecs, 12);
});

Deno.test("settings: prompt, context and result have no variable: the environment never sets them", () => {
  const s = resolveRunSettings(
    flags(),
    { AGENT_BLOCK_PROMPT: "x", PROMPT: "y", AGENT_BLOCK_RESULT: "z" },
    {},
  );
  assert.equal(s.prompt, undefined);
  assert.equal(s.result, undefined);
});

Deno.test("settings: flags beat the environment and the file; labels merge key by key", () => {
  const env = {
    AGENT_BLOCK_CPU_LIMIT_SECS: "3",
    AGENT_BLOCK_MEMORY_LIMIT_MB: "128",
    AGENT_BLOCK_MCP_TIMEOUT_SECS: "12",
  };
  const s = resolveRunSettings(
    flags({
      prompt: "fp",
      context: "fc",
      result: "fr",
      project: "proj",
      labels: { b: "flag" },
      cpuLimitSecs: 4,
      memoryLimitMb: 256,
      mcpTimeoutSecs: 15,
    }),
    env,
    { prompt: "p", context: "c", result: "r", labels: { a: "file", b: "file" }, cpu_limit_secs: 2 },
  );
  assert.deepEqual(
    [s.prompt, s.context, s.result, s.project, s.cpuLimitSecs, s.memoryLimitMb, s.mcpTimeoutSecs],
    ["fp", "fc", "fr", "proj", 4, 256, 15],
  );
  assert.deepEqual(s.labels, { a: "file", b: "flag" });
});

Deno.test("settings: a flag set means its variable is not even read (a bad one is ignored)", () => {
  const s = resolveRunSettings(flags({ cpuLimitSecs: 4 }), { AGENT_BLOCK_CPU_LIMIT_SECS: "nonsense" }, {});
  assert.equal(s.cpuLimitSecs, 4);
});

Deno.test("settings: an empty variable is unset", () => {
  const s = resolveRunSettings(flags(), { AGENT_BLOCK_CPU_LIMIT_SECS: "" }, { cpu_limit_secs: 2 });
  assert.equal(s.cpuLimitSecs, 2);
});

Deno.test("settings: a bad variable is an error naming the variable and the value", () => {
  const r = (env: Record<string, string>) => () => resolveRunSettings(flags(), env, {});
  throwsWith(
    r({ AGENT_BLOCK_CPU_LIMIT_SECS: "abc" }),
    AgentBlockError,
    "AGENT_BLOCK_CPU_LIMIT_SECS must be a positive number, got 'abc'",
  );
  throwsWith(
    r({ AGENT_BLOCK_MEMORY_LIMIT_MB: "0" }),
    AgentBlockError,
    "AGENT_BLOCK_MEMORY_LIMIT_MB must be a positive number, got '0'",
  );
  throwsWith(
    r({ AGENT_BLOCK_MCP_TIMEOUT_SECS: "2.5" }),
    AgentBlockError,
    "AGENT_BLOCK_MCP_TIMEOUT_SECS must be a positive integer, got '2.5'",
  );
  throwsWith(
    r({ AGENT_BLOCK_MCP_TIMEOUT_SECS: "-1" }),
    AgentBlockError,
    "AGENT_BLOCK_MCP_TIMEOUT_SECS must be a positive integer, got '-1'",
  );
});

Deno.test("runFlags: values from parsed flags; numbers validated naming the flag", () => {
  assert.deepEqual(
    runFlags({
      script: "s.lua",
      project: "p",
      prompt: "hi",
      context: "ctx",
      config: "c.json",
      result: "out",
      outcome: "o.json",
      label: ["a=1", "b=x=y"],
      "cpu-limit": "1.5",
      "memory-limit": "64",
      "mcp-timeout-secs": "7",
      progress: true,
      events: "ev.jsonl",
      relay: "nats://127.0.0.1:4222",
      "secret-key": "ab".repeat(32),
    }),
    {
      script: "s.lua",
      block: undefined,
      relay: "nats://127.0.0.1:4222",
      secretKey: "ab".repeat(32),
      nats: {},
      project: "p",
      prompt: "hi",
      context: "ctx",
      config: "c.json",
      result: "out",
      outcome: "o.json",
      labels: { a: "1", b: "x=y" },
      cpuLimitSecs: 1.5,
      memoryLimitMb: 64,
      mcpTimeoutSecs: 7,
      progress: true,
      events: "ev.jsonl",
    },
  );
  throwsWith(
    () => runFlags({ script: "s", relay: "nats://a:1,ws://b/ws" }),
    UsageError,
    "--relay: only nats:// and tls:// URLs can be listed (a cluster), got 'nats://a:1,ws://b/ws' " +
      "(expected nats://host:port[,nats://host:port...] (tls:// for TLS), ws://host:port/ws or wss://host/ws)",
  );
  throwsWith(
    () => runFlags({ script: "s", "secret-key": "g".repeat(64) }),
    UsageError,
    "--secret-key: expected 64 hex characters (an Ed25519 seed), found a non-hex character",
  );
  throwsWith(
    () => runFlags({ script: "s", "cpu-limit": "0" }),
    UsageError,
    "--cpu-limit must be a positive number, got '0'",
  );
  throwsWith(
    () => runFlags({ script: "s", "memory-limit": "lots" }),
    UsageError,
    "--memory-limit must be a positive number, got 'lots'",
  );
  throwsWith(
    () => runFlags({ script: "s", "mcp-timeout-secs": "1.5" }),
    UsageError,
    "--mcp-timeout-secs must be a positive integer, got '1.5'",
  );
});

Deno.test("runFlags: exactly one of --script and --block", () => {
  throwsWith(
    () => runFlags({}),
    UsageError,
    "nothing to run: pass --script FILE or --block NAME (see --help)",
  );
  throwsWith(
    () => runFlags({ script: "a", block: "b" }),
    AgentBlockError,
    "--script and --block contradict each other: name one script to run",
  );
  assert.equal(runFlags({ block: "hello" }).block, "hello");
});

Deno.test("parseLabels: KEY=VALUE pairs, a later key wins; a bad one names the command", () => {
  assert.deepEqual(parseLabels(["a=1", "a=2", "b="]), { a: "2", b: "" });
  throwsWith(() => parseLabels(["novalue"]), UsageError, "--label must be KEY=VALUE, got 'novalue'");
  throwsWith(
    () => parseLabels(["=x"], "knl sessions"),
    UsageError,
    "knl sessions: --label must be KEY=VALUE, got '=x'",
  );
});

Deno.test("settings: progress is a flag, a switch variable, or a config field; events a flag or a field", () => {
  const r = (
    f: Partial<RunFlags>,
    env: Record<string, string>,
    cfg: Parameters<typeof resolveRunSettings>[2],
  ) => resolveRunSettings(flags(f), env, cfg);
  assert.equal(r({}, {}, {}).progress, false);
  assert.equal(r({}, {}, { progress: true }).progress, true);
  for (const on of ["1", "true", "YES", " on "]) {
    assert.equal(r({}, { AGENT_BLOCK_PROGRESS: on }, {}).progress, true);
  }
  for (const off of ["0", "false", "no", "Off"]) {
    assert.equal(r({}, { AGENT_BLOCK_PROGRESS: off }, { progress: true }).progress, false, off);
  }
  assert.equal(r({}, { AGENT_BLOCK_PROGRESS: "" }, { progress: true }).progress, true, "empty is unset");
  assert.equal(r({ progress: true }, { AGENT_BLOCK_PROGRESS: "0" }, {}).progress, true, "the flag wins");
  throwsWith(
    () => r({}, { AGENT_BLOCK_PROGRESS: "loud" }, {}),
    AgentBlockError,
    "AGENT_BLOCK_PROGRESS must be 1, true, yes, on or 0, false, no, off; got 'loud'",
  );
  assert.equal(r({}, {}, { events: "a.jsonl" }).events, "a.jsonl");
  assert.equal(r({ events: "-" }, {}, { events: "a.jsonl" }).events, "-");
  assert.equal(r({}, { AGENT_BLOCK_EVENTS: "x.jsonl" }, {}).events, undefined, "no variable: one run's");
  throwsWith(
    () => runFlags({ script: "s", events: "" }),
    UsageError,
    "--events must be a file path, or - for stderr; got ''",
  );
});

Deno.test("settings: a NATS relay's credential files: flag, then environment, then config file", () => {
  const relay = "nats://127.0.0.1:4222";
  const cfg = { relay, nats_nkey: "cfg.seed", nats_creds: "cfg.creds", nats_tls_ca: "ca.pem" };
  const s = resolveRunSettings(
    flags({ nats: { nats_nkey: "flag.seed" } }),
    { AGENT_BLOCK_NATS_CREDS: "env.creds", AGENT_BLOCK_NATS_TLS_CA: "" },
    cfg,
  );
  assert.deepEqual(s.natsVars, {
    AGENT_BLOCK_NATS_NKEY: "flag.seed", // the flag wins
    // AGENT_BLOCK_NATS_CREDS: the environment's stays (absent here: the run keeps its own)
    AGENT_BLOCK_NATS_TLS_CA: "ca.pem", // an empty variable is unset: the config's
  });
  assert.deepEqual(runFlags({ script: "s", relay, "nats-token-file": "t" }).nats, { nats_token_file: "t" });
  throwsWith(
    () => runFlags({ script: "s", relay, "nats-creds": " " }),
    UsageError,
    "--nats-creds needs a file",
  );
  throwsWith(
    () => resolveRunSettings(flags({ nats: { nats_creds: "c" } }), {}, {}),
    UsageError,
    "--nats-creds is for a NATS relay (--relay nats://...), and the run has no relay",
  );
  throwsWith(
    () => resolveRunSettings(flags(), {}, { relay: "ws://127.0.0.1:9800/ws", nats_nkey: "k" }),
    AgentBlockError,
    "the config file's field 'nats_nkey' is for a NATS relay (--relay nats://...), and the run has a relay that is not NATS",
  );
});
