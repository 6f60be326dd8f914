/**
 * The `--config` file: everything ONE run is, for a caller that has all of it to pass.
 *
 * Owns the schema (JSON object; every field optional):
 * - `prompt`, `context`, `result`, `outcome` — strings (no environment variable has them, on purpose);
 * - `labels` — object of string values;
 * - `cpu_limit_secs`, `memory_limit_mb` — positive numbers;
 * - `mcp_timeout_secs` — a positive integer;
 * - `progress` — a boolean (`--progress`); `events` — a non-empty string, a file or `-` (`--events`);
 * - `relay` — a mesh URL (`--relay`: `nats://...` or `ws(s)://...`). The secret key has no field
 *   on purpose: a config file is easily committed; it comes from `--secret-key` or the
 *   environment (`AGENT_BLOCK_MESH_SECRET_KEY`, also from the project's `.env`);
 * - `nats_creds`, `nats_nkey`, `nats_token_file`, `nats_tls_ca` — non-empty strings, files (the
 *   `--nats-creds`, `--nats-nkey`, `--nats-token-file`, `--nats-tls-ca` of a NATS `relay`; the
 *   files, not the secrets in them, so the config file holds no secret). Each is checked to be a
 *   file name here; reading it is the mesh's, when the run joins.
 * Unknown fields are refused (a typo must not silently change nothing). Every error names the
 * file and the field.
 */
import { AgentBlockError } from "../errors.ts";
import { meshUrlProblem } from "../clients/mesh/connect.ts";

/** A parsed `--config` file. */
export interface RunConfig {
  prompt?: string;
  context?: string;
  result?: string;
  outcome?: string;
  labels?: Record<string, string>;
  cpu_limit_secs?: number;
  memory_limit_mb?: number;
  mcp_timeout_secs?: number;
  progress?: boolean;
  events?: string;
  relay?: string;
  nats_creds?: string;
  nats_nkey?: string;
  nats_token_file?: string;
  nats_tls_ca?: string;
}

/** The config file's NATS credential fields (files), as `--nats-*` flags name them. */
export const NATS_CONFIG_FIELDS = ["nats_creds", "nats_nkey", "nats_token_file", "nats_tls_ca"] as const;

const KNOWN = new Set([
  "prompt",
  "context",
  "result",
  "outcome",
  "labels",
  "cpu_limit_secs",
  "memory_limit_mb",
  "mcp_timeout_secs",
  "progress",
  "events",
  "relay",
  ...NATS_CONFIG_FIELDS,
]);

/** How a config error names a JSON value's type (`null` and `array` apart from `object`). */
export function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

/** Validates parsed JSON as a run config. `file` names the file in errors. */
export function validateRunConfig(data: unknown, file: string): RunConfig {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new AgentBlockError(`${file}: must be a JSON object, got ${typeName(data)}`);
  }
  const obj = data as Record<string, unknown>;
  for (const k of Object.keys(obj)) {
    if (!KNOWN.has(k)) {
      throw new AgentBlockError(`${file}: unknown field '${k}' (known: ${[...KNOWN].join(", ")})`);
    }
  }
  const out: RunConfig = {};
  for (const k of ["prompt", "context", "result", "outcome"] as const) {
    if (obj[k] === undefined) continue;
    if (typeof obj[k] !== "string") {
      throw new AgentBlockError(`${file}: field '${k}' must be a string, got ${typeName(obj[k])}`);
    }
    out[k] = obj[k] as string;
  }
  if (obj.labels !== undefined) {
    const l = obj.labels;
    if (typeof l !== "object" || l === null || Array.isArray(l)) {
      throw new AgentBlockError(`${file}: field 'labels' must be an object, got ${typeName(l)}`);
    }
    out.labels = {};
    for (const [k, v] of Object.entries(l)) {
      if (typeof v !== "string") {
        throw new AgentBlockError(`${file}: field 'labels.${k}' must be a string, got ${typeName(v)}`);
      }
      out.labels[k] = v;
    }
  }
  if (obj.progress !== undefined) {
    if (typeof obj.progress !== "boolean") {
      throw new AgentBlockError(`${file}: field 'progress' must be a boolean, got ${typeName(obj.progress)}`);
    }
    out.progress = obj.progress;
  }
  if (obj.events !== undefined) {
    if (typeof obj.events !== "string" || obj.events.trim() === "") {
      throw new AgentBlockError(
        `${file}: field 'events' must be a file path or "-", got ${
          typeof obj.events === "string" ? "''" : typeName(obj.events)
        }`,
      );
    }
    out.events = obj.events;
  }
  if (obj.relay !== undefined) {
    if (typeof obj.relay !== "string") {
      throw new AgentBlockError(`${file}: field 'relay' must be a string, got ${typeName(obj.relay)}`);
    }
    const why = meshUrlProblem(obj.relay, `${file}: field 'relay'`);
    if (why !== undefined) throw new AgentBlockError(why);
    out.relay = obj.relay;
  }
  for (const k of NATS_CONFIG_FIELDS) {
    const v = obj[k];
    if (v === undefined) continue;
    if (typeof v !== "string" || v.trim() === "") {
      throw new AgentBlockError(
        `${file}: field '${k}' must be a file path, got ${typeof v === "string" ? "''" : typeName(v)}`,
      );
    }
    out[k] = v;
  }
  for (const k of ["cpu_limit_secs", "memory_limit_mb", "mcp_timeout_secs"] as const) {
    const v = obj[k];
    if (v === undefined) continue;
    if (typeof v !== "number" || !(v > 0) || (k === "mcp_timeout_secs" && !Number.isInteger(v))) {
      throw new AgentBlockError(
        `${file}: field '${k}' must be a positive ${k === "mcp_timeout_secs" ? "integer" : "number"}, got ${
          typeof v === "number" ? v : typeName(v)
        }`,
      );
    }
    out[k] = v;
  }
  return out;
}

/**
 * Reads and validates a config file.
 * @param path the file (absolute: the caller resolves it against its working directory)
 * @param label how errors name the file (default `path`; the CLI passes the flag's value)
 */
export function readRunConfig(path: string, label = path): RunConfig {
  return validateRunConfig(readConfigJson(path, label), label);
}

/**
 * A config file's parsed JSON, not yet validated (`run_config.ts` and `nats_config.ts` check it).
 * @throws AgentBlockError naming `label` when the file cannot be read or is not JSON
 */
export function readConfigJson(path: string, label = path): unknown {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
    throw new AgentBlockError(`cannot read config ${label}: ${why}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new AgentBlockError(`${label}: not valid JSON: ${(e as Error).message}`);
  }
}
