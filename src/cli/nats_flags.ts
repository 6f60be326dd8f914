/**
 * The NATS flags `serve --nats` and `worker` share: the URL list and the credential files, read
 * here at the edge.
 *
 * Owns `--nats URL[,URL…]`, `--nats-creds FILE`, `--nats-nkey FILE` (an nkey seed),
 * `--nats-token-file FILE`, `--nats-tls-ca FILE`: each file is read now, and one that cannot be
 * read is a `UsageError` (exit 2) naming the flag and the file; a malformed URL is one naming
 * the URL with its credentials masked. Connecting (`connectQueue`): a server that refuses the
 * credentials is an `AgentBlockError` with exit 2 (the command line's credentials are wrong), any
 * other failure exit 1; both name the masked URL only. Relative files resolve against `cwd`.
 */
import { resolve } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import {
  connectNatsTarget,
  type NatsAuth,
  NatsConnectError,
  type NatsTarget,
  NatsUrlError,
  parseNatsUrls,
} from "../clients/nats/connection.ts";
import type { OptionSpec, ParsedValues } from "./args.ts";

/** The flags, for `parseFlags`. */
export const NATS_FLAGS: Record<string, OptionSpec> = {
  nats: { type: "string" },
  "nats-creds": { type: "string" },
  "nats-nkey": { type: "string" },
  "nats-token-file": { type: "string" },
  "nats-tls-ca": { type: "string" },
};

/** The help lines of the flags. */
export const NATS_FLAGS_HELP =
  `      --nats URL[,URL]  the NATS server(s) of the run queue (nats://host:4222; credentials in the URL
                        are masked in every message)
      --nats-creds FILE       a .creds file (user JWT + nkey seed)
      --nats-nkey FILE        a file holding an nkey seed
      --nats-token-file FILE  a file holding a token
      --nats-tls-ca FILE      the CA (PEM) the server's certificate must chain to (TLS required)`;

/** A parsed NATS target and its credentials. */
export interface NatsSettings {
  target: NatsTarget;
  auth: NatsAuth;
}

function readFlagFile(command: string, flag: string, file: string, cwd: string): string {
  const path = resolve(cwd, file);
  try {
    return Deno.readTextFileSync(path);
  } catch (e) {
    throw new UsageError(`${command}: --${flag} ${path} cannot be read: ${(e as Error).message}`);
  }
}

/**
 * The NATS settings of `values` (undefined without `--nats`).
 * @throws UsageError naming the flag, the file or the (masked) URL
 */
export function natsSettings(command: string, v: ParsedValues, cwd: string): NatsSettings | undefined {
  const url = v.nats as string | undefined;
  const credFlags = ["nats-creds", "nats-nkey", "nats-token-file", "nats-tls-ca"].filter((f) =>
    v[f] !== undefined
  );
  if (url === undefined) {
    if (credFlags.length > 0) throw new UsageError(`${command}: --${credFlags[0]} needs --nats`);
    return undefined;
  }
  let target: NatsTarget;
  try {
    target = parseNatsUrls(url);
  } catch (e) {
    if (e instanceof NatsUrlError) throw new UsageError(`${command}: --nats: ${e.message}`);
    throw e;
  }
  const auth: NatsAuth = {};
  const file = (flag: string) => readFlagFile(command, flag, v[flag] as string, cwd);
  if (v["nats-creds"] !== undefined) auth.creds = file("nats-creds");
  if (v["nats-nkey"] !== undefined) {
    const seed = file("nats-nkey").trim();
    if (!/^S[A-Z2-7]{57}$/.test(seed)) {
      throw new UsageError(
        `${command}: --nats-nkey ${v["nats-nkey"]}: not an nkey seed (one line starting with S)`,
      );
    }
    auth.nkeySeed = seed;
  }
  if (v["nats-token-file"] !== undefined) auth.token = file("nats-token-file").trim();
  if (v["nats-tls-ca"] !== undefined) auth.tlsCa = file("nats-tls-ca");
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
