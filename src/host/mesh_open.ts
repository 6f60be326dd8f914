/**
 * Opening a run's mesh connection (`--relay`) before its script runs.
 *
 * Owns where the identity and credentials come from — all from the run, none from the process
 * (the variables below are read by the edge into `RunContext.settings.mesh`; the CLI's run
 * environment has the project's `.env` layered in): the secret key from `MeshSpec.secretKey`
 * (`--secret-key`) or the run's `AGENT_BLOCK_MESH_SECRET_KEY`,
 * else a random key with a warning that the AgentId changes every run; NATS credentials from
 * `AGENT_BLOCK_NATS_CREDS` (a `.creds` file, resolved against the run's working directory and
 * read now), `AGENT_BLOCK_NATS_NKEY` (a file holding an nkey seed), `AGENT_BLOCK_NATS_TOKEN` or
 * `AGENT_BLOCK_NATS_TOKEN_FILE` (or `nats://token@host` in the URL), and
 * `AGENT_BLOCK_NATS_TLS_CA` (the CA's PEM file: TLS required). The key and the
 * token join the run's secrets, so no log line, record or outcome shows them. A NATS run's
 * replay memory is the project's file in the home, `<home>/mesh-seen/<project key>.sqlite`
 * (`meshSeenFile`, `seen_ids.ts`), so a captured message is not accepted again by the agent's
 * next run; a confined run is handed the sandbox launcher's instead (`RunSpec.meshSeenIds`, the
 * `seen` argument: `seen_remote.ts`), since it may not write that file. Dropped-message warnings go
 * through a `RepeatLimit` (10 lines per 10 s, then a count); the logger escapes the control
 * characters a forged `from` may carry.
 *
 * Under the sandbox's network allow-list the CLI edge hands the proxy's in-namespace URL down
 * (`RunSpec.netProxy`, the `proxy` argument): the transport reaches its server through it, as
 * the run's only way out; the connected line says so (`through the sandbox's proxy`).
 *
 * Why a module of its own: `src/runtime/run.ts` imports it (and through it the transports) only
 * when a run has `--relay`, so a run without one pays nothing at start-up.
 *
 * Invariant: any failure here is a `MeshStartError` whose message names the flag, variable, file
 * or URL involved; the run then never starts (exit 1).
 */
import { dirname, resolve } from "node:path";
import { MeshIdentity } from "../clients/mesh/identity.ts";
import { secretKeyProblem } from "../clients/mesh/base64url.ts";
import {
  connectMesh,
  MeshUrlError,
  meshUrlProblem,
  parseMeshUrl,
  shownUrl,
} from "../clients/mesh/connect.ts";
import { FileSeenIds, MemorySeenIds, meshSeenFile, type SeenIds } from "../clients/mesh/seen_ids.ts";
import { MeshError, type MeshTransport } from "../clients/mesh/transport.ts";
import { BusHost } from "./bus.ts";
import type { RunContext } from "./context.ts";
import { inboundHandler } from "./mesh.ts";
import { RepeatLimit } from "../obs/repeat_limit.ts";

/** What a run needs to join the mesh. */
export interface MeshSpec {
  /** `--relay`: `nats://host:port[,...]`, `ws://host:port/ws` or `wss://...`. */
  relay: string;
  /** `--secret-key`: 64 hex characters (an Ed25519 seed); else the run's variable, else random. */
  secretKey?: string;
}

/** The mesh could not be joined: the run does not start. */
export class MeshStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MeshStartError";
  }
}

/** The identity `spec` and the run's environment give. */
function identityOf(spec: MeshSpec, run: RunContext): MeshIdentity {
  const fromFlag = spec.secretKey !== undefined && spec.secretKey.trim() !== "";
  const key = fromFlag ? spec.secretKey! : run.settings.mesh?.secretKey;
  if (key === undefined || key.trim() === "") return MeshIdentity.random();
  run.secrets.add(key);
  const why = secretKeyProblem(key);
  if (why !== undefined) {
    // the message names where the key came from: the flag, or the variable the edge read it from
    throw new MeshStartError(
      fromFlag ? `mesh: --secret-key: ${why}` : `mesh: AGENT_BLOCK_MESH_SECRET_KEY: ${why}`,
    );
  }
  return MeshIdentity.fromSeedHex(key);
}

/**
 * The replay window's memory for a NATS run: `given` (the sandbox launcher's), else the project's
 * file in the home, so that a restarted agent still refuses a captured message; this process's
 * memory (with a warning) when the file cannot be opened. A relay run needs none (its sessions
 * are encrypted: a captured frame cannot be played into a new one).
 */
function seenIdsOf(spec: MeshSpec, run: RunContext, given: SeenIds | undefined): SeenIds | undefined {
  if (meshUrlProblem(spec.relay) !== undefined || parseMeshUrl(spec.relay).kind !== "nats") return undefined;
  if (given !== undefined) return given;
  const path = meshSeenFile(run.home, run.projectRoot);
  try {
    Deno.mkdirSync(dirname(path), { recursive: true });
    return new FileSeenIds(path);
  } catch (e) {
    run.log.warn(
      `mesh: cannot open ${path} (${
        (e as Error).message
      }): replayed messages are refused within this run only`,
    );
    return new MemorySeenIds();
  }
}

/**
 * Connects the run to the mesh and registers the close with its cleanup.
 * @param bus the run's bus (the embedder's), where inbound requests go; a fresh one when absent
 * @param proxy the HTTP proxy to reach the server through (`RunSpec.netProxy`: the sandbox's
 *   bridge under `--sandbox-net allow-list`); absent: directly
 * @param seen the replay memory to use (`RunSpec.meshSeenIds`: the sandbox launcher's); absent:
 *   the project's file. The transport closes it.
 * @throws MeshStartError
 */
export async function openMesh(
  spec: MeshSpec,
  run: RunContext,
  bus: BusHost | undefined,
  signal: AbortSignal | undefined,
  proxy?: string,
  seen?: SeenIds,
): Promise<{ transport: MeshTransport; bus: BusHost }> {
  const identity = identityOf(spec, run);
  run.secrets.addUrl(spec.relay);
  const m = run.settings.mesh ?? {};
  // `fail(why)`: the error naming the variable the edge read `path` from
  const readVarFile = async (
    path: string | undefined,
    fail: (why: string) => string,
  ): Promise<string | undefined> => {
    if (path === undefined || path === "") return undefined;
    try {
      return await Deno.readTextFile(resolve(run.cwd, path));
    } catch (e) {
      const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
      throw new MeshStartError(fail(why));
    }
  };
  const natsCreds = await readVarFile(
    m.natsCredsFile,
    (why) => `mesh: AGENT_BLOCK_NATS_CREDS: cannot read ${m.natsCredsFile}: ${why}`,
  );
  const natsNkeySeed = (await readVarFile(
    m.natsNkeyFile,
    (why) => `mesh: AGENT_BLOCK_NATS_NKEY: cannot read ${m.natsNkeyFile}: ${why}`,
  ))?.trim();
  const natsTlsCa = await readVarFile(
    m.natsTlsCaFile,
    (why) => `mesh: AGENT_BLOCK_NATS_TLS_CA: cannot read ${m.natsTlsCaFile}: ${why}`,
  );
  const natsToken = m.natsToken ||
    (await readVarFile(
      m.natsTokenFile,
      (why) => `mesh: AGENT_BLOCK_NATS_TOKEN_FILE: cannot read ${m.natsTokenFile}: ${why}`,
    ))?.trim() || undefined;
  run.secrets.add(natsToken);
  run.secrets.add(natsNkeySeed);
  const shown = shownUrl(spec.relay);
  const seenIds = seenIdsOf(spec, run, seen);
  // a flood of forged messages writes a few lines and a count, not a line each
  const drops = new RepeatLimit((line) => run.log.warn(line), "mesh: dropped messages");
  run.onCleanup(() => drops.flush());
  const runBus = bus ?? new BusHost();
  let transport: MeshTransport;
  try {
    transport = await connectMesh(spec.relay, identity, {
      signal,
      connectTimeoutMs: 10_000,
      natsCreds,
      natsToken,
      natsNkeySeed,
      natsTlsCa,
      proxy,
      seenIds,
      // in place before the transport listens (see `inboundHandler`)
      handler: inboundHandler(run, parseMeshUrl(spec.relay).kind === "nats" ? "nats" : "relay", runBus),
      onState: (e) => {
        if (e.state === "connected") {
          if (e.resumed) run.log.info(`mesh: reconnected to ${shownUrl(e.url)}`);
        } else if (e.state === "disconnected") {
          run.log.warn(`mesh: lost ${shownUrl(e.url)} (${e.reason}); reconnecting`);
        } else {
          drops.report(
            `mesh: dropped a message${e.from ? ` claiming to be from ${e.from}` : ""}: ${e.reason}`,
          );
        }
      },
    });
  } catch (e) {
    seenIds?.close();
    if (e instanceof MeshUrlError || e instanceof MeshError) throw new MeshStartError(`mesh: ${e.message}`);
    throw e;
  }
  run.onCleanup(() => transport.close());
  run.log.info(
    `mesh: connected to ${shown} (${transport.kind}${
      proxy ? ", through the sandbox's proxy" : ""
    }) as ${identity.agentId}`,
  );
  if (identity.ephemeral) {
    run.log.warn(
      `mesh: no secret key (--secret-key or AGENT_BLOCK_MESH_SECRET_KEY): using a random one, so the AgentId ` +
        `changes every run (this run: ${identity.agentId})`,
    );
  }
  run.onCleanup(() => transport.setHandler(undefined));
  return { transport, bus: runBus };
}
