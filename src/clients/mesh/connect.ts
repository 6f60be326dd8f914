/**
 * Opening a mesh connection: picks the transport by the URL's scheme and loads it on demand.
 *
 * Owns the `--relay` URL rules: `nats://host[:port]` or `tls://host[:port]` (several,
 * comma-separated, form one NATS cluster; credentials as `nats://token@host` or
 * `nats://user:pass@host`, or through `MeshConnectOptions`; the list is read by the same rules as
 * `serve --nats`, `src/clients/nats/urls.ts`) selects `nats_transport.ts`; `ws://` / `wss://` selects the agent-mesh
 * relay (`relay_transport.ts`). Anything else is refused with a message naming the flag and the
 * value (`parseMeshUrl`; the edge checks its flags and config with `meshUrlProblem`, so a bad
 * value is refused before anything starts).
 *
 * Why lazily: a run without `--relay` must not pay for the NATS client or the relay's crypto, so
 * this module imports only the contract; each transport is imported when a run connects
 * (deno.json `compile.include` lists them for `deno compile`).
 */
import { type NatsTarget, NatsUrlError, parseNatsUrls } from "../nats/urls.ts";
import type { MeshIdentity } from "./identity.ts";
import type { MeshConnectOptions, MeshTransport } from "./transport.ts";

/** A `--relay` value, understood. */
export type MeshUrl =
  | { kind: "nats"; target: NatsTarget }
  | { kind: "relay"; url: string };

/** Why a `--relay` value was refused (a usage error at the edge). */
export class MeshUrlError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = "MeshUrlError";
  }
}

/** A `--relay` value (one URL or a list) with every URL's credentials removed, for messages. */
export function shownUrl(value: string): string {
  return value.replace(/\/\/[^/@,]*@/g, "//");
}

/**
 * Reads a `--relay` value.
 * @param flag how errors name where the value came from (`--relay`)
 * @throws MeshUrlError naming `flag` and the value (credentials removed)
 */
export function parseMeshUrl(value: string, flag = "--relay"): MeshUrl {
  const parts = value.split(",").map((p) => p.trim()).filter((p) => p !== "");
  const bad = (why: string) =>
    new MeshUrlError(
      `${flag}: ${why}, got '${shownUrl(value)}' (expected nats://host:port[,nats://host:port...] ` +
        `(tls:// for TLS), ws://host:port/ws or wss://host/ws)`,
    );
  if (parts.length === 0) throw bad("empty");
  const urls = parts.map((p) => {
    try {
      return new URL(p);
    } catch {
      throw bad(`'${shownUrl(p)}' is not a URL`);
    }
  });
  const schemes = new Set(urls.map((u) => u.protocol));
  if ([...schemes].every((s) => s === "nats:" || s === "tls:")) {
    try {
      return { kind: "nats", target: parseNatsUrls(parts.join(",")) };
    } catch (e) {
      if (e instanceof NatsUrlError) throw bad(e.message);
      throw e;
    }
  }
  if (urls.length === 1 && (schemes.has("ws:") || schemes.has("wss:"))) {
    if (urls[0].hostname === "") throw bad("a relay URL needs a host");
    return { kind: "relay", url: parts[0] };
  }
  if (urls.length > 1) throw bad("only nats:// and tls:// URLs can be listed (a cluster)");
  throw bad(`unknown scheme '${urls[0].protocol}'`);
}

/**
 * Why `value` is not a `--relay` value (`parseMeshUrl`'s message), or `undefined` when it is one:
 * for callers that raise their own kind of error (a usage error for a flag, a config error).
 */
export function meshUrlProblem(value: string, flag = "--relay"): string | undefined {
  try {
    parseMeshUrl(value, flag);
    return undefined;
  } catch (e) {
    if (e instanceof MeshUrlError) return e.message;
    throw e;
  }
}

/**
 * Connects `identity` to the mesh at `url` (a `--relay` value).
 * @throws MeshUrlError for a value `parseMeshUrl` refuses; MeshError when connecting fails
 */
export async function connectMesh(
  url: string,
  identity: MeshIdentity,
  options: MeshConnectOptions = {},
): Promise<MeshTransport> {
  const target = parseMeshUrl(url);
  if (target.kind === "nats") {
    const { connectNats } = await import("./nats_transport.ts");
    return await connectNats(target.target, identity, options);
  }
  const { connectRelay } = await import("./relay_transport.ts");
  return await connectRelay(new URL(target.url), identity, options);
}
