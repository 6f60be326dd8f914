/**
 * The NATS flags `serve --nats` and `worker` share: the URL list and the credential files, read
 * here at the edge.
 *
 * Owns `--nats URL[,URL…]`, `--nats-creds FILE`, `--nats-nkey FILE` (an nkey seed),
 * `--nats-token-file FILE`, `--nats-tls-ca FILE`, and `--config FILE` (`src/config/nats_config.ts`:
 * the same settings as the fields `nats`, `nats_creds`, `nats_nkey`, `nats_token_file`,
 * `nats_tls_ca` — the field names of a run's `--config` — each flag winning over its field): each
 * file is read now, and one that cannot be read is a `UsageError` (exit 2) naming the flag and
 * the file, or an `AgentBlockError` (exit 1) naming the config file and the field; a malformed
 * URL is one of them naming the URL with its credentials masked. Connecting (`connectQueue`): a
 * server that refuses the credentials is an `AgentBlockError` with exit 2 (the credentials given
 * are wrong), any other failure exit 1; both name the masked URL only. Relative files resolve
 * against `cwd`.
 */
import { resolve } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { connectNatsTarget, NatsConnectError } from "../clients/nats/connection.ts";
import { type NatsAuth, type NatsTarget, NatsUrlError, parseNatsUrls } from "../clients/nats/urls.ts";
import type { OptionSpec, ParsedValues } from "./args.ts";
import { type NatsConfig, readNatsConfig } from "../config/nats_config.ts";

/** The flags, for `parseFlags`. */
export const NATS_FLAGS: Record<string, OptionSpec> = {
  nats: { type: "string" },
  "nats-creds": { type: "string" },
  "nats-nkey": { type: "string" },
  "nats-token-file": { type: "string" },
  "nats-tls-ca": { type: "string" },
  config: { type: "string" },
};

/** The help lines of the flags. */
export const NATS_FLAGS_HELP =
  `      --nats URL[,URL]  the NATS server(s) of the run queue (nats://host:4222; credentials in the URL
                        are masked in every message)
      --nats-creds FILE       a .creds file (user JWT + nkey seed)
      --nats-nkey FILE        a file holding an nkey seed
      --nats-token-file FILE  a file holding a token
      --nats-tls-ca FILE      the CA (PEM) the server's certificate must chain to (TLS required)
      --config FILE     JSON settings: nats, nats_creds, nats_nkey, nats_token_file, nats_tls_ca
                        (as the flags above, which win; paths against the working directory)`;

/** A parsed NATS target and its credentials. */
export interface NatsSettings {
  target: NatsTarget;
  auth: NatsAuth;
}

/** The credential flags and their config fields. */
const CREDENTIALS = [
  { flag: "nats-creds", field: "nats_creds" },
  { flag: "nats-nkey", field: "nats_nkey" },
  { flag: "nats-token-file", field: "nats_token_file" },
  { flag: "nats-tls-ca", field: "nats_tls_ca" },
] as const;

/**
 * The NATS settings of `values` and its `--config` file (undefined without a URL in either).
 * @throws UsageError naming the flag, the file or the (masked) URL; AgentBlockError naming the
 *   config file and its field
 */
export function natsSettings(command: string, v: ParsedValues, cwd: string): NatsSettings | undefined {
  const configFlag = v.config as string | undefined;
  const cfg: NatsConfig = configFlag === undefined ? {} : (() => {
    try {
      return readNatsConfig(resolve(cwd, configFlag), configFlag);
    } catch (e) {
      if (e instanceof AgentBlockError) throw new AgentBlockError(`${command}: ${e.message}`);
      throw e;
    }
  })();
  // where a setting came from, for its errors: the flag, or the config file's field
  const source = (flag: string, field: keyof NatsConfig) =>
    v[flag] !== undefined
      ? {
        value: v[flag] as string,
        named: `--${flag}`,
        fail: (m: string) => new UsageError(`${command}: ${m}`),
      }
      : cfg[field] !== undefined
      ? {
        value: cfg[field]!,
        named: `${configFlag}: field '${field}'`,
        fail: (m: string) => new AgentBlockError(`${command}: ${m}`),
      }
      : undefined;
  const url = source("nats", "nats");
  const creds = CREDENTIALS.map((c) => ({ ...c, from: source(c.flag, c.field) })).filter((c) => c.from);
  if (url === undefined) {
    if (creds.length > 0) {
      const first = creds[0].from!;
      throw first.fail(
        `${first.named} needs --nats${configFlag ? ` (or the field 'nats' of ${configFlag})` : ""}`,
      );
    }
    return undefined;
  }
  let target: NatsTarget;
  try {
    target = parseNatsUrls(url.value);
  } catch (e) {
    if (e instanceof NatsUrlError) throw url.fail(`${url.named}: ${e.message}`);
    throw e;
  }
  const auth: NatsAuth = {};
  for (const c of creds) {
    const from = c.from!;
    const path = resolve(cwd, from.value);
    let text: string;
    try {
      text = Deno.readTextFileSync(path);
    } catch (e) {
      throw from.fail(`${from.named} ${path} cannot be read: ${(e as Error).message}`);
    }
    if (c.field === "nats_creds") auth.creds = text;
    else if (c.field === "nats_nkey") {
      const seed = text.trim();
      if (!/^S[A-Z2-7]{57}$/.test(seed)) {
        throw from.fail(`${from.named} ${from.value}: not an nkey seed (one line starting with S)`);
      }
      auth.nkeySeed = seed;
    } else if (c.field === "nats_token_file") auth.token = text.trim();
    else auth.tlsCa = text;
  }
  return { target, auth };
}

/**
 * Connects to the run queue's server.
 * @throws AgentBlockError (exit 2 when the server refused the credentials, else 1)
 */
export async function connectQueue(command: string, s: NatsSettings, name: string): Promise<NatsConnection> {
  try {
    return await connectNatsTarget(s.target, s.auth, name);
  } catch (e) {
    if (e instanceof NatsConnectError) {
      throw new AgentBlockError(
        `${command}: ${e.message}${e.kind === "auth" ? " (the server refused the credentials)" : ""}`,
        e.kind === "auth" ? EXIT.USAGE : EXIT.FAILED,
      );
    }
    throw e;
  }
}
