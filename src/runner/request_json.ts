/**
 * The JSON form of a `RunRequest`: what the child runner writes for its child (`--request FILE`)
 * and what any runner across a boundary (a queue, another machine) sends. The one place that
 * form is defined, with its strict parser beside it (as `outcome_json.ts` is for the outcome).
 *
 * Layer: runner. The form (an object, snake_case; `version`, `script`, `project_root` and `env`
 * always present, every other field only when set):
 * - `version`: 1;
 * - `script`: `{"path": "..."}`, or `{"name": "...", "source": "..."}` (`"source_base64"` for
 *   bytes, so they come back exactly) with optional `"dir"` and `"chunkname"`;
 * - `name`, `project_root`, `cwd`, `home`: strings;
 * - `prompt`, `context`: a string, or `{"file": "..."}` (read when the run starts);
 * - `labels`, `env`: objects of strings;
 * - `timeout_ms`, `mcp_timeout_ms`: positive integers;
 * - `limits`: `{"cpu_seconds", "memory_mb"}`, positive numbers;
 * - `stores`: `{"kv", "sql", "ts", "kernel"}`, strings;
 * - `mesh`: `{"relay", "secret_key"?}`, strings;
 * - `globals`: an object of JSON values;
 * - `sandbox`: a boolean;
 * - `correlation`: `{"trace_id", "parent_span", "run_id", "agent_id", "agent_name",
 *   "parent_session", "step_key"}`, strings;
 * - `settings` (`RunSettings`, what the edge parsed from `AGENT_BLOCK_*` variables):
 *   `{"log_level", "unseal", "task_grace_ms", "home", "knl_commit_ms", "knl_busy_timeout_ms",
 *   "sql_busy_timeout_ms", "llm_max_response_bytes", "sandbox_tcp_off", "warnings", "stores",
 *   "child_env", "mesh"}` — a level name, booleans, whole numbers of ms, a positive integer, a path, an array
 *   of strings, `{"kv", "sql", "ts", "kernel"}`, `{"kind", "names"?}` (`inherit`, `strip-secrets`,
 *   `allowlist` with its names) and `{"secret_key", "nats_creds_file",
 *   "nats_nkey_file", "nats_token", "nats_token_file", "nats_tls_ca_file", "record_payloads"}`;
 * - `telemetry`: `{"traces_endpoint", "metrics_endpoint"?, "protocol", "headers"?, "timeout_ms",
 *   "service_name", "resource_attributes"?, "capture_content"?}` (`TelemetrySettings`).
 *
 * Invariants: `parseRequestJson(requestToJson(r))` deep-equals `r` without its `signal` (a
 * handle, never serialised). The parser refuses anything else — an unknown version or field, a
 * wrong type, an empty path — with a `RequestJsonError` naming the file and the field
 * (`limits.cpu_seconds`), so a malformed request is never run as something else. The writer
 * checks what it writes with the same parser: it never writes a request the reader refuses.
 */
import type { JsonValue } from "../json/codec.ts";
import type { MeshSettings } from "../run_settings.ts";
import type {
  Correlation,
  RunRequest,
  RunSettings,
  RunStores,
  RunText,
  TelemetrySettings,
} from "./runner.ts";

/** Version of the JSON form this module writes and reads. */
export const REQUEST_JSON_VERSION = 1;

/** A malformed request; the message names the file and the field. */
export class RequestJsonError extends Error {
  /**
   * An error with `message`.
   * @param message names the file and the field
   */
  constructor(message: string) {
    super(message);
    this.name = "RequestJsonError";
  }
}

const toBase64 = (b: Uint8Array): string => (b as unknown as { toBase64(): string }).toBase64();
const fromBase64 = (s: string): Uint8Array =>
  (Uint8Array as unknown as { fromBase64(s: string): Uint8Array }).fromBase64(s);

const CORRELATION: [keyof Correlation, string][] = [
  ["traceId", "trace_id"],
  ["parentSpan", "parent_span"],
  ["runId", "run_id"],
  ["agentId", "agent_id"],
  ["agentName", "agent_name"],
  ["parentSession", "parent_session"],
  ["stepKey", "step_key"],
];
const STORES: (keyof RunStores)[] = ["kv", "sql", "ts", "kernel"];

/** The JSON object for `request` (its `signal` left out). */
export function requestToObject(request: RunRequest): Record<string, unknown> {
  const r = request;
  const s = r.script;
  const script: Record<string, unknown> = "path" in s
    ? { path: s.path }
    : typeof s.source === "string"
    ? { name: s.name, source: s.source }
    : { name: s.name, source_base64: toBase64(s.source) };
  if (!("path" in s) && s.dir !== undefined) script.dir = s.dir;
  if (!("path" in s) && s.chunkname !== undefined) script.chunkname = s.chunkname;
  const out: Record<string, unknown> = {
    version: REQUEST_JSON_VERSION,
    script,
    project_root: r.projectRoot,
    env: { ...r.env },
  };
  const put = (k: string, v: unknown) => {
    if (v !== undefined) out[k] = v;
  };
  put("name", r.name);
  put("prompt", r.prompt);
  put("context", r.context);
  put("labels", r.labels);
  put("cwd", r.cwd);
  put("home", r.home);
  put("timeout_ms", r.timeoutMs);
  if (r.limits) {
    const l: Record<string, number> = {};
    if (r.limits.cpuSeconds !== undefined) l.cpu_seconds = r.limits.cpuSeconds;
    if (r.limits.memoryMb !== undefined) l.memory_mb = r.limits.memoryMb;
    out.limits = l;
  }
  put("mcp_timeout_ms", r.mcpTimeoutMs);
  if (r.stores) {
    const st: Record<string, string> = {};
    for (const k of STORES) if (r.stores[k] !== undefined) st[k] = r.stores[k]!;
    out.stores = st;
  }
  if (r.mesh) {
    out.mesh = r.mesh.secretKey !== undefined
      ? { relay: r.mesh.relay, secret_key: r.mesh.secretKey }
      : { relay: r.mesh.relay };
  }
  put("globals", r.globals);
  put("sandbox", r.sandbox);
  if (r.correlation) {
    const c: Record<string, string> = {};
    for (const [ts, json] of CORRELATION) if (r.correlation[ts] !== undefined) c[json] = r.correlation[ts]!;
    out.correlation = c;
  }
  if (r.settings) out.settings = settingsToObject(r.settings);
  if (r.telemetry) {
    const t = r.telemetry;
    const o: Record<string, unknown> = {
      traces_endpoint: t.tracesEndpoint,
      protocol: t.protocol,
      timeout_ms: t.timeoutMs,
      service_name: t.serviceName,
    };
    if (t.metricsEndpoint !== undefined) o.metrics_endpoint = t.metricsEndpoint;
    if (t.headers !== undefined) o.headers = { ...t.headers };
    if (t.resourceAttributes !== undefined) o.resource_attributes = { ...t.resourceAttributes };
    if (t.captureContent !== undefined) o.capture_content = t.captureContent;
    out.telemetry = o;
  }
  return out;
}

/** `RunSettings`' fields, their JSON names and kinds (`whole`: a whole number from 0 to the bound). */
const SETTINGS: [keyof RunSettings, string, "level" | "bool" | "whole" | "positive" | "path" | "list"][] = [
  ["logLevel", "log_level", "level"],
  ["unseal", "unseal", "bool"],
  ["taskGraceMs", "task_grace_ms", "whole"],
  ["home", "home", "path"],
  ["knlCommitMs", "knl_commit_ms", "whole"],
  ["knlBusyTimeoutMs", "knl_busy_timeout_ms", "whole"],
  ["sqlBusyTimeoutMs", "sql_busy_timeout_ms", "whole"],
  ["llmMaxResponseBytes", "llm_max_response_bytes", "positive"],
  ["sandboxTcpOff", "sandbox_tcp_off", "bool"],
  ["warnings", "warnings", "list"],
];
/** `MeshSettings`' string fields and their JSON names. */
const MESH_SETTINGS: [Exclude<keyof MeshSettings, "recordPayloads">, string][] = [
  ["secretKey", "secret_key"],
  ["natsCredsFile", "nats_creds_file"],
  ["natsNkeyFile", "nats_nkey_file"],
  ["natsToken", "nats_token"],
  ["natsTokenFile", "nats_token_file"],
  ["natsTlsCaFile", "nats_tls_ca_file"],
];
const LOG_LEVELS = ["debug", "info", "warn", "error", "off"];
const MAX_MS = 2_147_483_647;

/** The JSON object of `settings` (only the fields set). */
function settingsToObject(s: RunSettings): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [ts, json] of SETTINGS) {
    const v = s[ts];
    if (v !== undefined) o[json] = Array.isArray(v) ? [...v] : v;
  }
  if (s.stores) {
    const st: Record<string, string> = {};
    for (const k of STORES) if (s.stores[k] !== undefined) st[k] = s.stores[k]!;
    o.stores = st;
  }
  if (s.childEnv) {
    o.child_env = s.childEnv.kind === "allowlist"
      ? { kind: "allowlist", names: [...s.childEnv.names] }
      : { kind: s.childEnv.kind };
  }
  if (s.mesh) {
    const m: Record<string, unknown> = {};
    for (const [ts, json] of MESH_SETTINGS) if (s.mesh[ts] !== undefined) m[json] = s.mesh[ts];
    if (s.mesh.recordPayloads !== undefined) m.record_payloads = s.mesh.recordPayloads;
    o.mesh = m;
  }
  return o;
}

/**
 * The request file's text for `request` (one line, trailing newline).
 * @throws RequestJsonError when the request has no JSON form (a non-finite number, a wrong type)
 */
export function requestToJson(request: RunRequest): string {
  const text = JSON.stringify(requestToObject(request));
  requestFromObject(JSON.parse(text), "the request"); // what the reader would refuse is never written
  return text + "\n";
}

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

function shown(v: unknown): string {
  return ["string", "number", "boolean"].includes(typeof v) ? JSON.stringify(v) : typeName(v);
}

/** A field-by-field reader over one JSON object, its errors naming `file` and the field path. */
class Fields {
  constructor(readonly file: string, readonly obj: Record<string, unknown>, readonly path: string) {}

  fail(field: string, rule: string, v: unknown): never {
    throw new RequestJsonError(`${this.file}: field '${this.path}${field}' ${rule}, got ${shown(v)}`);
  }

  only(known: readonly string[]): void {
    for (const k of Object.keys(this.obj)) {
      if (!known.includes(k)) throw new RequestJsonError(`${this.file}: unknown field '${this.path}${k}'`);
    }
  }

  str(k: string, nonEmpty = false): string | undefined {
    const v = this.obj[k];
    if (v === undefined) return undefined;
    if (typeof v !== "string") this.fail(k, "must be a string", v);
    if (nonEmpty && v === "") this.fail(k, "must not be empty", v);
    return v;
  }

  need<T>(k: string, v: T | undefined): T {
    if (v === undefined) throw new RequestJsonError(`${this.file}: field '${this.path}${k}' is required`);
    return v;
  }

  positive(k: string, integer: boolean): number | undefined {
    const v = this.obj[k];
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || (integer && !Number.isInteger(v))) {
      this.fail(k, `must be a positive ${integer ? "integer" : "number"}`, v);
    }
    return v;
  }

  /** A whole number from 0 to `max`. */
  whole(k: string, max: number): number | undefined {
    const v = this.obj[k];
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > max) {
      this.fail(k, `must be a whole number from 0 to ${max}`, v);
    }
    return v;
  }

  /** One of `choices`. */
  oneOf(k: string, choices: readonly string[]): string | undefined {
    const v = this.str(k);
    if (v !== undefined && !choices.includes(v)) this.fail(k, `must be one of ${choices.join(", ")}`, v);
    return v;
  }

  /** An array of strings. */
  stringList(k: string): string[] | undefined {
    const v = this.obj[k];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
      this.fail(k, "must be an array of strings", v);
    }
    return [...(v as string[])];
  }

  bool(k: string): boolean | undefined {
    const v = this.obj[k];
    if (v === undefined) return undefined;
    if (typeof v !== "boolean") this.fail(k, "must be true or false", v);
    return v;
  }

  sub(k: string): Fields | undefined {
    const v = this.obj[k];
    if (v === undefined) return undefined;
    if (typeof v !== "object" || v === null || Array.isArray(v)) this.fail(k, "must be an object", v);
    return new Fields(this.file, v as Record<string, unknown>, `${this.path}${k}.`);
  }

  strings(k: string): Record<string, string> | undefined {
    const f = this.sub(k);
    if (!f) return undefined;
    for (const key of Object.keys(f.obj)) f.str(key);
    return { ...f.obj } as Record<string, string>;
  }

  text(k: string): RunText | undefined {
    const v = this.obj[k];
    if (v === undefined || typeof v === "string") return v;
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      this.fail(k, "must be a string or {file}", v);
    }
    const f = this.sub(k)!;
    f.only(["file"]);
    return { file: f.need("file", f.str("file", true)) };
  }
}

/** The `stores` object of `f` (a request's or its settings'), when present. */
function storesFrom(f: Fields): RunStores | undefined {
  const st = f.sub("stores");
  if (!st) return undefined;
  st.only(STORES);
  const stores: RunStores = {};
  for (const k of STORES) {
    const v = st.str(k, true);
    if (v !== undefined) stores[k] = v;
  }
  return stores;
}

/** Builds a request from parsed JSON; `file` names the source in errors. */
export function requestFromObject(data: unknown, file: string): RunRequest {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new RequestJsonError(`${file}: must be a JSON object, got ${typeName(data)}`);
  }
  const f = new Fields(file, data as Record<string, unknown>, "");
  f.only([
    "version",
    "script",
    "name",
    "project_root",
    "prompt",
    "context",
    "labels",
    "env",
    "cwd",
    "home",
    "timeout_ms",
    "limits",
    "mcp_timeout_ms",
    "stores",
    "mesh",
    "globals",
    "sandbox",
    "correlation",
    "settings",
    "telemetry",
  ]);
  if (f.obj.version !== REQUEST_JSON_VERSION) {
    f.fail("version", `must be ${REQUEST_JSON_VERSION}`, f.obj.version ?? "nothing");
  }
  const sf = f.need("script", f.sub("script"));
  let script: RunRequest["script"];
  if (sf.obj.path !== undefined) {
    sf.only(["path"]);
    script = { path: sf.str("path", true)! };
  } else {
    sf.only(["name", "source", "source_base64", "dir", "chunkname"]);
    const name = sf.need("name", sf.str("name", true));
    const text = sf.str("source");
    const b64 = sf.str("source_base64");
    if ((text === undefined) === (b64 === undefined)) {
      throw new RequestJsonError(
        `${file}: field 'script' needs exactly one of 'path', 'source' and 'source_base64'`,
      );
    }
    let source: string | Uint8Array;
    if (text !== undefined) source = text;
    else {
      try {
        source = fromBase64(b64!);
      } catch (e) {
        throw new RequestJsonError(
          `${file}: field 'script.source_base64' is not base64: ${(e as Error).message}`,
        );
      }
    }
    const inline: RunRequest["script"] = { source, name };
    const dir = sf.str("dir", true), chunkname = sf.str("chunkname", true);
    if (dir !== undefined) inline.dir = dir;
    if (chunkname !== undefined) inline.chunkname = chunkname;
    script = inline;
  }
  const r: RunRequest = {
    script,
    projectRoot: f.need("project_root", f.str("project_root", true)),
    env: f.need("env", f.strings("env")),
  };
  const set = <K extends keyof RunRequest>(k: K, v: RunRequest[K] | undefined) => {
    if (v !== undefined) r[k] = v;
  };
  set("name", f.str("name", true));
  set("prompt", f.text("prompt"));
  set("context", f.text("context"));
  set("labels", f.strings("labels"));
  set("cwd", f.str("cwd", true));
  set("home", f.str("home", true));
  set("timeoutMs", f.positive("timeout_ms", true));
  const lf = f.sub("limits");
  if (lf) {
    lf.only(["cpu_seconds", "memory_mb"]);
    const limits: RunRequest["limits"] = {};
    const cpu = lf.positive("cpu_seconds", false), mem = lf.positive("memory_mb", false);
    if (cpu !== undefined) limits.cpuSeconds = cpu;
    if (mem !== undefined) limits.memoryMb = mem;
    r.limits = limits;
  }
  set("mcpTimeoutMs", f.positive("mcp_timeout_ms", true));
  const stores = storesFrom(f);
  if (stores) r.stores = stores;
  const mf = f.sub("mesh");
  if (mf) {
    mf.only(["relay", "secret_key"]);
    const relay = mf.need("relay", mf.str("relay", true));
    const key = mf.str("secret_key", true);
    r.mesh = key !== undefined ? { relay, secretKey: key } : { relay };
  }
  const gf = f.sub("globals");
  if (gf) r.globals = gf.obj as Record<string, JsonValue>;
  set("sandbox", f.bool("sandbox"));
  const cf = f.sub("correlation");
  if (cf) {
    cf.only(CORRELATION.map(([, j]) => j));
    const c: Correlation = {};
    for (const [ts, json] of CORRELATION) {
      const v = cf.str(json);
      if (v !== undefined) c[ts] = v;
    }
    r.correlation = c;
  }
  const sf2 = f.sub("settings");
  if (sf2) r.settings = settingsFromObject(sf2);
  const tf = f.sub("telemetry");
  if (tf) {
    tf.only([
      "traces_endpoint",
      "metrics_endpoint",
      "protocol",
      "headers",
      "timeout_ms",
      "service_name",
      "resource_attributes",
      "capture_content",
    ]);
    const protocol = tf.need("protocol", tf.str("protocol")) as TelemetrySettings["protocol"];
    if (protocol !== "http/protobuf" && protocol !== "http/json") {
      tf.fail("protocol", "must be http/protobuf or http/json", protocol);
    }
    const t: TelemetrySettings = {
      tracesEndpoint: tf.need("traces_endpoint", tf.str("traces_endpoint", true)),
      protocol,
      timeoutMs: tf.need("timeout_ms", tf.positive("timeout_ms", true)),
      serviceName: tf.need("service_name", tf.str("service_name", true)),
    };
    const metrics = tf.str("metrics_endpoint", true);
    if (metrics !== undefined) t.metricsEndpoint = metrics;
    const headers = tf.strings("headers");
    if (headers !== undefined) t.headers = headers;
    const attrs = tf.strings("resource_attributes");
    if (attrs !== undefined) t.resourceAttributes = attrs;
    const capture = tf.bool("capture_content");
    if (capture !== undefined) t.captureContent = capture;
    r.telemetry = t;
  }
  return r;
}

function settingsFromObject(f: Fields): RunSettings {
  f.only([...SETTINGS.map(([, j]) => j), "stores", "mesh", "child_env"]);
  const s: Record<string, unknown> = {};
  for (const [ts, json, kind] of SETTINGS) {
    const v = kind === "level"
      ? f.oneOf(json, LOG_LEVELS)
      : kind === "bool"
      ? f.bool(json)
      : kind === "whole"
      ? f.whole(json, ts === "knlCommitMs" ? 60_000 : MAX_MS)
      : kind === "positive"
      ? f.positive(json, true)
      : kind === "path"
      ? f.str(json, true)
      : f.stringList(json);
    if (v !== undefined) s[ts] = v;
  }
  const out = s as RunSettings;
  const stores = storesFrom(f);
  if (stores) out.stores = stores;
  const cf = f.sub("child_env");
  if (cf) {
    const kind = cf.need("kind", cf.oneOf("kind", ["inherit", "strip-secrets", "allowlist"]));
    if (kind === "allowlist") {
      cf.only(["kind", "names"]);
      out.childEnv = { kind, names: cf.need("names", cf.stringList("names")) };
    } else {
      cf.only(["kind"]);
      out.childEnv = { kind: kind as "inherit" | "strip-secrets" };
    }
  }
  const mf = f.sub("mesh");
  if (mf) {
    mf.only([...MESH_SETTINGS.map(([, j]) => j), "record_payloads"]);
    const mesh: MeshSettings = {};
    for (const [ts, json] of MESH_SETTINGS) {
      const v = mf.str(json, true);
      if (v !== undefined) mesh[ts] = v;
    }
    const rp = mf.bool("record_payloads");
    if (rp !== undefined) mesh.recordPayloads = rp;
    out.mesh = mesh;
  }
  return out;
}

/**
 * Parses a request file's text. `file` names the file in errors.
 * @throws RequestJsonError naming the file and the field
 */
export function parseRequestJson(text: string, file: string): RunRequest {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new RequestJsonError(`${file}: not valid JSON: ${(e as Error).message}`);
  }
  return requestFromObject(data, file);
}
