/**
 * The request's JSON form: every field survives a round trip exactly (bytes included, the
 * signal left out), and the parser refuses what is not a request, naming the field.
 */
import assert from "node:assert/strict";
import {
  parseRequestJson,
  REQUEST_JSON_VERSION,
  requestToJson,
  requestToObject,
} from "../../src/runner/request_json.ts";
import type { RunRequest } from "../../src/runner/runner.ts";

const FULL: RunRequest = {
  script: { source: "return _PROMPT", name: "full.lua", dir: "/srv/lib", chunkname: "=ab:driver" },
  name: "full",
  projectRoot: "/srv/project",
  prompt: "say hi",
  context: { file: "ctx.md" },
  labels: { job: "nightly", run: "r1" },
  env: { PATH: "/usr/bin", EMPTY: "" },
  cwd: "/srv/project/sub",
  home: "/srv/home",
  timeoutMs: 60_000,
  limits: { cpuSeconds: 1.5, memoryMb: 64 },
  mcpTimeoutMs: 5000,
  stores: { kv: ":memory:", sql: "sql.sqlite", ts: "/abs/ts.sqlite", kernel: "knl.sqlite" },
  mesh: { relay: "nats://127.0.0.1:4222", secretKey: "ab".repeat(32) },
  globals: { _TASK: { id: "T-7", tags: ["a", "b"], n: 2.5, ok: true, none: null } },
  sandbox: true,
  correlation: {
    traceId: "t",
    parentSpan: "p",
    runId: "r",
    agentId: "a",
    agentName: "n",
    parentSession: "s",
    stepKey: "k",
  },
  settings: {
    logLevel: "debug",
    unseal: true,
    taskGraceMs: 0,
    home: "/srv/ab-home",
    knlCommitMs: 60_000,
    knlBusyTimeoutMs: 1500,
    sqlBusyTimeoutMs: 0,
    llmMaxResponseBytes: 1024,
    sandboxTcpOff: true,
    stores: { kv: ":memory:", kernel: "k.sqlite" },
    childEnv: { kind: "allowlist", names: ["KEEP", "ALSO"] },
    mesh: {
      secretKey: "cd".repeat(32),
      natsCredsFile: "a.creds",
      natsNkeyFile: "n.seed",
      natsToken: "t",
      natsTokenFile: "t.txt",
      natsTlsCaFile: "ca.pem",
      recordPayloads: true,
    },
    warnings: ["AGENT_BLOCK_LOG must be one of debug, info, warn, error, off; got 'x' (using info)"],
  },
  telemetry: {
    tracesEndpoint: "http://127.0.0.1:4318/v1/traces",
    metricsEndpoint: "http://127.0.0.1:4318/v1/metrics",
    protocol: "http/json",
    headers: { authorization: "Bearer t" },
    timeoutMs: 2000,
    serviceName: "ci",
    resourceAttributes: { "deployment.environment": "ci" },
    captureContent: true,
  },
};

Deno.test("request JSON: every field round-trips exactly", () => {
  assert.deepEqual(parseRequestJson(requestToJson(FULL), "req.json"), FULL);
  const minimal: RunRequest = { script: { path: "/p/x.lua" }, projectRoot: "/p", env: {} };
  assert.deepEqual(parseRequestJson(requestToJson(minimal), "req.json"), minimal);
  assert.equal(requestToObject(minimal).version, REQUEST_JSON_VERSION);
});

Deno.test("request JSON: bytes of source come back as the same bytes; the signal is not serialised", () => {
  const bytes = new Uint8Array([0x72, 0x65, 0xff, 0x00, 0x0a]);
  const r: RunRequest = {
    script: { source: bytes, name: "b.lua" },
    projectRoot: "/p",
    env: {},
    signal: new AbortController().signal,
  };
  const back = parseRequestJson(requestToJson(r), "req.json");
  assert.deepEqual(back.script, { source: bytes, name: "b.lua" });
  assert.equal("signal" in back, false);
});

Deno.test("request JSON: the parser names the file and the field", () => {
  const base = requestToObject({ script: { path: "/p/x.lua" }, projectRoot: "/p", env: {} });
  const bad = (patch: Record<string, unknown>, re: RegExp) =>
    assert.throws(() => parseRequestJson(JSON.stringify({ ...base, ...patch }), "run.json"), re);
  bad({ version: 2 }, /run\.json: field 'version' must be 1/);
  bad({ nonsense: 1 }, /run\.json: unknown field 'nonsense'/);
  bad({ limits: { cpu_seconds: "x" } }, /run\.json: field 'limits\.cpu_seconds' must be a positive number/);
  bad({ limits: { cpu: 1 } }, /run\.json: unknown field 'limits\.cpu'/);
  bad({ timeout_ms: 1.5 }, /field 'timeout_ms' must be a positive integer/);
  bad({ env: { A: 1 } }, /field 'env\.A' must be a string, got 1/);
  bad({ script: { path: "" } }, /field 'script\.path' must not be empty/);
  bad({ script: { name: "x.lua" } }, /'script' needs exactly one of 'path', 'source' and 'source_base64'/);
  bad({ project_root: undefined }, /field 'project_root' is required/);
  bad({ prompt: { text: "x" } }, /unknown field 'prompt\.text'/);
  bad({ correlation: { run_id: 5 } }, /field 'correlation\.run_id' must be a string/);
  bad({ mesh: { secret_key: "k" } }, /field 'mesh\.relay' is required/);
  bad({ sandbox: "yes" }, /field 'sandbox' must be true or false/);
  bad(
    { settings: { log_level: "loud" } },
    /field 'settings\.log_level' must be one of debug, info, warn, error, off, got "loud"/,
  );
  bad(
    { settings: { task_grace_ms: -1 } },
    /field 'settings\.task_grace_ms' must be a whole number from 0 to 2147483647, got -1/,
  );
  bad({ settings: { warnings: [1] } }, /field 'settings\.warnings' must be an array of strings/);
  bad({ settings: { grace: 1 } }, /unknown field 'settings\.grace'/);
  bad(
    { settings: { knl_commit_ms: 60_001 } },
    /field 'settings\.knl_commit_ms' must be a whole number from 0 to 60000/,
  );
  bad(
    { settings: { mesh: { nats_token: 5 } } },
    /field 'settings\.mesh\.nats_token' must be a string, got 5/,
  );
  const t = {
    traces_endpoint: "http://c/v1/traces",
    protocol: "http/json",
    timeout_ms: 10,
    service_name: "s",
  };
  bad(
    { telemetry: { ...t, protocol: "grpc" } },
    /field 'telemetry\.protocol' must be http\/protobuf or http\/json/,
  );
  bad({ telemetry: { ...t, timeout_ms: undefined } }, /field 'telemetry\.timeout_ms' is required/);
  bad({ telemetry: { ...t, endpoint: "x" } }, /unknown field 'telemetry\.endpoint'/);
  assert.throws(() => parseRequestJson("{", "run.json"), /run\.json: not valid JSON/);
  assert.throws(() => parseRequestJson("[]", "run.json"), /run\.json: must be a JSON object, got array/);
});

Deno.test("request JSON: the writer refuses what the reader would (a non-finite limit)", () => {
  assert.throws(
    () => requestToJson({ script: { path: "/x" }, projectRoot: "/", env: {}, limits: { cpuSeconds: NaN } }),
    /the request: field 'limits\.cpu_seconds' must be a positive number/,
  );
});
