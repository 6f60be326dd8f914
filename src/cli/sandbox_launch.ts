/**
 * The run path's way into the sandbox: handing a run that asked for it (`sandboxWanted`, decided
 * with the run's settings in `run_args.ts`) to the launcher (`src/sandbox/launcher.ts`, loaded only
 * then), which starts the run again, confined, as its child, waits for it, sweeps the grants for
 * git repositories and configuration files (`.env`) it made or changed and exits with its code.
 *
 * Loaded only for a run that is sandboxed (the run command imports it dynamically once
 * `sandboxWanted`, in `run_args.ts`, says so, or in the confined runtime's stage): an
 * unconfined run's start-up does not load it (a compile root in deno.json's `compile.include`).
 *
 * Two entries:
 * - `launchRun`, from the run command: a run that asked (`--sandbox`, or `AGENT_BLOCK_SANDBOX`
 *   from the environment or the project's `.env`) is launched or fails closed with the
 *   launcher's `AgentBlockError`, before any Lua runs. It reads the sandbox's settings once
 *   (`sandboxSettingsFromEnv`: from the process environment, what the project's `.env` added
 *   allowed only to make them stricter, and `--sandbox-net`) and hands them to the launcher typed,
 *   with, in the user-namespace stage, the proxy the first launcher handed across the exec
 *   (`net_bridge.ts`'s variables). First it mints `serve`'s token in the home
 *   when there is none (`src/serve/token.ts`), so the launcher has a token to keep read-only,
 *   lays out the run's packages in `node_modules` (`layOutPackages`, `src/proc/self.ts`): the
 *   stages after it use `node_modules` as it is, and the confined one could not write it, and
 *   warms Deno's caches for the run path when they are cold (`src/proc/warm_run_path.ts`: the
 *   confined runtime reads them but cannot write them) (these modules are imported only here,
 *   so a run that is not sandboxed does not load them);
 * - `launchEarly`, from `cli.ts` when the command line names `--sandbox` or the process
 *   environment sets `AGENT_BLOCK_SANDBOX`: the same decision taken before the runtime's modules
 *   and the Lua engine are loaded, so the launcher's own start stays small (the sandbox
 *   benchmark's ratio). It never reports anything: whatever does not launch (help, a bad flag,
 *   a sandbox that is not asked for, a launch that fails) falls through to the ordinary path,
 *   which decides again and reports — so the early path cannot run anything unconfined. The
 *   `.env` warnings are said by the process that launches, and not again by the stages after it.
 */
import { dirname, join } from "node:path";
import type { SeenIds } from "../clients/mesh/seen_ids.ts";
import type { InProcessOptions } from "../runner/in_process.ts";
import { edgeProcessEnv } from "./environment.ts";
import { parseRunArgs, type RunSettings, sandboxWanted, sayWarnings } from "./run_args.ts";
import { projectAdded, sandboxSettingsFromEnv } from "../config/env_settings.ts";
import { writeStderr } from "../obs/log.ts";
import { AgentBlockError } from "../errors.ts";

/** Where a run stands in the sandbox launch (`src/sandbox/stage.ts`): unset outside it. */
export type RunStage = "runtime" | "userns";

const enc = new TextEncoder();

/**
 * Hands the run to the launcher, which exits the process with the run's code once the run has
 * ended and been swept; returns only by throwing (`AgentBlockError`: fail closed), and throws
 * only before the confined run has started (so the early path's fall-through never runs it twice).
 */
export async function launchRun(argv: string[], s: RunSettings, stage?: RunStage): Promise<never> {
  const { launchSandboxed, prepareNet } = await import("../sandbox/launcher.ts");
  const { SEEN_SOCKET_VAR, SEEN_TOKEN_VAR } = await import("../clients/mesh/seen_remote.ts");
  // the replay memory's socket is the launcher's to name (`keep` below), never inherited
  const processEnv: Record<string, string> = { ...edgeProcessEnv() };
  delete processEnv[SEEN_SOCKET_VAR];
  delete processEnv[SEEN_TOKEN_VAR];
  // The sandbox's settings, read once: from the process environment (whoever started the run),
  // what the project's .env added allowed only to make them stricter (sandboxSettingsFromEnv).
  const settings = sandboxSettingsFromEnv(processEnv, s.cwd, {
    fromProject: projectAdded(s.env, processEnv),
    netFlag: s.sandboxNet,
    runEnv: s.env,
  });
  if (stage === undefined) {
    // serve's token exists before the run, so the launcher keeps it read-only: a confined run
    // cannot plant a token a later manager would serve with (minted as serve mints it)
    const { mintTokenIfAbsent } = await import("../serve/token.ts");
    try {
      mintTokenIfAbsent(join(settings.home, "serve.token"));
    } catch {
      // a home that cannot be written grants nothing: the launcher says what it could not protect
    }
  }
  if (stage === undefined) {
    // The confined stages use node_modules as it is and could not write it (src/proc/self.ts):
    // the packages are laid out now, while this process may still write.
    const { layOutPackages, selfLaunch } = await import("../proc/self.ts");
    const launch = selfLaunch();
    try {
      await layOutPackages(launch);
    } catch (e) {
      throw new AgentBlockError(
        `--sandbox: cannot lay out the packages the confined run needs in node_modules: ${
          (e as Error).message
        }`,
      );
    }
    // Deno's caches, which the confined runtime may read but not write: warmed from out here
    // when this checkout's run path was never loaded unconfined (src/proc/warm_run_path.ts)
    const { warmRunPath } = await import("../proc/warm_run_path.ts");
    const why = await warmRunPath(launch, processEnv);
    if (why) {
      writeStderr(enc.encode(
        `[warn] agent-block: --sandbox: could not warm Deno's caches for the confined runtime (${why}); ` +
          `sandboxed runs from this checkout start slower until an unconfined run of it\n`,
      ));
    }
  }
  const req = {
    argv,
    settings,
    processEnv,
    cwd: s.cwd,
    project: s.project,
    inUserNs: stage === "userns",
    // the proxy the first launcher started, handed across the user-namespace hop's exec
    ...(stage === "userns" ? { handedProxy: await handedProxy(processEnv) } : {}),
    say: (line: string) => writeStderr(enc.encode(line + "\n")),
    relay: s.relay,
    // a request's (`serve`, `mcp --sandbox`) relay is in the request
    keep: await natsRelay(s.relay ?? s.request?.mesh?.relay)
      ? await seenKeeper(settings.home, s.projectRoot)
      : undefined,
  };
  // under the allow-list the proxy starts here, outside the namespace the launch enters
  return launchSandboxed({ ...req, net: prepareNet(req) });
}

/** True when `relay` is a NATS URL (whose runs keep a replay memory, `seen_ids.ts`). */
async function natsRelay(relay: string | undefined): Promise<boolean> {
  if (relay === undefined) return false;
  const { meshUrlProblem, parseMeshUrl } = await import("../clients/mesh/connect.ts");
  if (meshUrlProblem(relay) !== undefined) return false;
  return parseMeshUrl(relay).kind === "nats";
}

/**
 * What the launcher calls to keep the run's replay memory (`LaunchRequest.keep`): the project's
 * file in the home (`meshSeenFile`), opened, and served on a socket (`serveSeenIds`) the confined
 * runtime reaches with `connectSeenIds`. A file that cannot be opened is said, and the run's mesh
 * remembers ids for the run only (as an unconfined run's does then).
 */
async function seenKeeper(
  home: string,
  project: string,
): Promise<() => { env: Record<string, string>; close(): void } | undefined> {
  const { FileSeenIds, meshSeenFile } = await import("../clients/mesh/seen_ids.ts");
  const { SEEN_SOCKET_VAR, SEEN_TOKEN_VAR, serveSeenIds } = await import("../clients/mesh/seen_remote.ts");
  return () => {
    const path = meshSeenFile(home, project);
    let store;
    try {
      Deno.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      store = new FileSeenIds(path);
    } catch (e) {
      writeStderr(enc.encode(
        `[warn] agent-block: --sandbox: cannot open the mesh's replay memory ${path} (${
          (e as Error).message
        }): replayed messages are refused within this run only\n`,
      ));
      return undefined;
    }
    const service = serveSeenIds(store);
    return {
      env: { [SEEN_SOCKET_VAR]: service.socket, [SEEN_TOKEN_VAR]: service.token },
      close: () => {
        service.close();
        store.close();
      },
    };
  };
}

/**
 * In the confined runtime under a NATS `--relay` whose launcher keeps the replay memory (it named
 * the socket in the environment): the connection to it, made now — before any Lua runs or any
 * child exists, so the launcher's one client is this process. Undefined otherwise. A socket that
 * cannot be reached gives a memory that refuses every message (`connectSeenIds`).
 */
export async function connectSeenStore(): Promise<SeenIds | undefined> {
  const { connectSeenIds, SEEN_SOCKET_VAR, SEEN_TOKEN_VAR } = await import("../clients/mesh/seen_remote.ts");
  const env = edgeProcessEnv();
  const socket = env[SEEN_SOCKET_VAR];
  if (!socket) return undefined;
  return await connectSeenIds(socket, env[SEEN_TOKEN_VAR] ?? "");
}

/**
 * The proxy's socket and token the first launcher handed the user-namespace stage across the
 * exec (`net_bridge.ts`'s variables, read at this stage's entry).
 */
async function handedProxy(
  processEnv: Readonly<Record<string, string>>,
): Promise<{ socket?: string; token?: string }> {
  const { SOCKET_VAR, TOKEN_VAR } = await import("../sandbox/net_bridge.ts");
  return { socket: processEnv[SOCKET_VAR], token: processEnv[TOKEN_VAR] };
}

/** The early launch: re-executes a sandboxed run confined, or returns for the ordinary path. */
export async function launchEarly(argv: string[]): Promise<void> {
  let s: RunSettings | "help" | "version";
  try {
    s = await parseRunArgs(argv, true);
  } catch {
    return; // the ordinary path reports it
  }
  if (typeof s === "string" || !sandboxWanted(s)) return;
  sayWarnings(s.warnings); // the confined runtime parses its command line quietly
  await launchRun(argv, s).catch(() => undefined); // the ordinary path launches again, or reports why not
}

/** The confined runtime's way out under the allow-list: what its runner is told. */
export interface NetBridge {
  /** The subscription to the proxy's refusals (`RunSpec.netDenials`). */
  denials: NonNullable<InProcessOptions["netDenials"]>;
  /**
   * The bridge as an HTTP proxy URL (`http://127.0.0.1:BRIDGE_PORT`, `RunSpec.netProxy`): the
   * mesh transports, which read no proxy variable, go through it.
   */
  proxy: string;
}

/**
 * In the confined runtime under `--sandbox-net allow-list` (the launcher named the proxy's socket
 * in the environment): starts the loopback bridge to the proxy (`src/sandbox/net_bridge.ts`) and
 * returns the subscription to its refusals, which holds those that come before the run listens,
 * and the bridge's URL for the runner (`netProxy`: how the mesh transport, which reads no proxy
 * variable, learns its way out). Undefined otherwise.
 */
export async function startNetBridge(): Promise<NetBridge | undefined> {
  const { BRIDGE_PORT, SOCKET_VAR, startBridge, TOKEN_VAR } = await import("../sandbox/net_bridge.ts");
  const env = edgeProcessEnv();
  const socket = env[SOCKET_VAR];
  if (!socket) return undefined;
  const early: { host: string; port: number; reason: string }[] = [];
  let listener: ((d: { host: string; port: number; reason: string }) => void) | undefined;
  // before any Lua: every refusal of the run's requests reaches the run
  // the proxy starts beside this runtime: the bridge waits for it, within a bound
  await startBridge(socket, env[TOKEN_VAR] ?? "", (d) => listener ? listener(d) : early.push(d)).ready
    .catch((e: Error) => {
      throw new AgentBlockError(e.message);
    });
  return {
    denials: (fn) => {
      listener = fn;
      for (const d of early.splice(0)) fn(d);
    },
    proxy: `http://127.0.0.1:${BRIDGE_PORT}`,
  };
}
