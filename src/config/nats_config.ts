/**
 * The `--config` file of `serve` and `worker`: the run queue's connection, in the same JSON form
 * and with the same field names as a run's `--config` (`run_config.ts`), so one settings format
 * carries NATS credentials for the manager, the workers and a run's mesh.
 *
 * Owns the schema (a JSON object; every field optional): `nats` — the server URL(s),
 * `nats://host:port[,...]` (as `--nats`); `nats_creds`, `nats_nkey`, `nats_token_file`,
 * `nats_tls_ca` — non-empty strings naming files (as `--nats-creds`, `--nats-nkey`,
 * `--nats-token-file`, `--nats-tls-ca`). The files, not the secrets in them: the settings file
 * holds no secret. Unknown fields are refused (a typo must not silently change nothing). Every
 * error is an `AgentBlockError` naming the file and the field. Reading the credential files, and
 * the rule that a flag wins over the file's field, are the edge's (`src/cli/nats_flags.ts`).
 */
import { AgentBlockError } from "../errors.ts";
import { NATS_CONFIG_FIELDS, readConfigJson, typeName } from "./run_config.ts";

/** A parsed `serve` / `worker` `--config` file. */
export interface NatsConfig {
  nats?: string;
  nats_creds?: string;
  nats_nkey?: string;
  nats_token_file?: string;
  nats_tls_ca?: string;
}

const KNOWN = ["nats", ...NATS_CONFIG_FIELDS];

/** Validates parsed JSON as a `serve` / `worker` config. `file` names the file in errors. */
export function validateNatsConfig(data: unknown, file: string): NatsConfig {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new AgentBlockError(`${file}: must be a JSON object, got ${typeName(data)}`);
  }
  const obj = data as Record<string, unknown>;
  for (const k of Object.keys(obj)) {
    if (!KNOWN.includes(k)) {
      throw new AgentBlockError(`${file}: unknown field '${k}' (known: ${KNOWN.join(", ")})`);
    }
  }
  const out: NatsConfig = {};
  for (const k of KNOWN as (keyof NatsConfig)[]) {
    const v = obj[k];
    if (v === undefined) continue;
    if (typeof v !== "string" || v.trim() === "") {
      const want = k === "nats" ? "a NATS URL (nats://host:port[,...])" : "a file path";
      throw new AgentBlockError(
        `${file}: field '${k}' must be ${want}, got ${typeof v === "string" ? "''" : typeName(v)}`,
      );
    }
    out[k] = v;
  }
  return out;
}

/**
 * Reads and validates a `serve` / `worker` config file.
 * @param path the file (absolute: the caller resolves it against its working directory)
 * @param label how errors name the file (the CLI passes the flag's value)
 */
export function readNatsConfig(path: string, label = path): NatsConfig {
  return validateNatsConfig(readConfigJson(path, label), label);
}
