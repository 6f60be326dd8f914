/**
 * The launcher's part of `--sandbox-net allow-list`: the proxy started outside, the network
 * namespace entered, its loopback brought up, and the proxy variables the runtime and its
 * children get.
 *
 * Owns:
 * - `startProxy`: runs the proxy (`net_proxy.ts`: from source its own entry `src/cli/proxy_stage.ts`,
 *   with Deno's update check off; compiled this binary at `--sandbox-stage=proxy`: `proxyCommand`)
 *   with a Unix socket in a fresh private directory and a random token (both in its environment),
 *   without waiting for it: the run's bridge waits for the socket. It is started before the
 *   namespace exists, so it alone keeps the host's network; it ends when the run does (it watches
 *   its parent: the launcher, which stays until the run has ended and been swept);
 * - `enterNetNamespace`: `unshare(CLONE_NEWNET)` on the launcher's main thread (as root), then
 *   `lo` up (`SIOCSIFFLAGS`): the namespace has that loopback and no other interface, so no route
 *   out — TCP, UDP and DNS to anywhere outside fail with `ENETUNREACH`, and abstract Unix
 *   sockets (scoped by network namespace) reach no process outside. Without privilege the
 *   user-namespace hop of `mount_ns.ts` takes `--net` too, and the second launcher brings `lo`
 *   up. Where neither works the run fails closed (`AgentBlockError`), never runs open;
 * - `proxyEnv`: `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` (and their lower-case spellings: curl
 *   reads only `http_proxy`) pointing at the bridge (`net_bridge.ts`), `NO_PROXY` removed (every
 *   host goes through the proxy), and the socket and token for the runtime (`SOCKET_VAR`,
 *   `TOKEN_VAR`). The token (random, per run) opens every connection to the proxy: its socket is
 *   a file another run's processes could reach, its token is only in this run's environment.
 * The test seam `AGENT_BLOCK_SANDBOX_TEST_NO_NETNS=1` (starter only) pretends the kernel refuses
 * network namespaces: honoured only where it makes start-up fail.
 */
import { join } from "node:path";
import { AgentBlockError } from "../errors.ts";
import { type SelfLaunch, selfLaunch } from "../proc/self.ts";
import type { AllowEntry } from "./net_policy.ts";
import { BRIDGE_PORT, PROXY_CONFIG_VAR, SOCKET_VAR, TOKEN_VAR } from "./net_bridge.ts";
import type { ProxyStageConfig } from "./net_proxy.ts";
import { cstring, lastError, type Sys } from "./sys.ts";
import { userNamespaceHop } from "./mount_ns.ts";

const CLONE_NEWNET = 0x40000000;
const UNSHARE = "/usr/bin/unshare";
/** The proxy stage's entry, run as the program from a source checkout (`src/cli/proxy_stage.ts`). */
const PROXY_MAIN = new URL("../cli/proxy_stage.ts", import.meta.url).pathname;
const SIOCGIFFLAGS = 0x8913n;
const SIOCSIFFLAGS = 0x8914n;
const IFF_UP = 0x1;
const AF_INET = 2;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;

/** The proxy a run's launcher started. */
export interface StartedProxy {
  socket: string;
  /** What every connection to it starts with (`net_proxy.ts`). */
  token: string;
  /** Ends the proxy and removes its directory (a launch that failed after starting it). */
  kill(): void;
  /** Settles when the proxy has ended: its exit status (0 once its run has gone). */
  ended: Promise<Deno.CommandStatus>;
}

/**
 * Starts the proxy for `allow` and returns at once, without waiting for it to listen: its start
 * (a Deno process's, ~20 ms of CPU) overlaps the run's own, and the run's bridge waits for its
 * socket (`connectProxy`). One that fails to start says why on stderr (inherited); the launcher,
 * watching `ended`, then stops the run (and without a launcher watching — after the user-namespace
 * hop — the run's bridge fails it once its bound has passed), never letting it reach the network
 * another way. The configuration (socket, token, list) goes in the proxy's environment
 * (`PROXY_CONFIG_VAR`), not on its command line: `/proc/<pid>/cmdline` is anyone's to read, its
 * environment only its user's (and not a confined run's: Landlock refuses it access to processes
 * outside its domain).
 */
export function startProxy(allow: AllowEntry[], launch: SelfLaunch = selfLaunch()): StartedProxy {
  const dir = Deno.makeTempDirSync({ prefix: "agent-block-net-" });
  Deno.chmodSync(dir, 0o700);
  const socket = join(dir, "proxy.sock");
  const token = Array.from(crypto.getRandomValues(new Uint8Array(24)), (b) => b.toString(16).padStart(2, "0"))
    .join("");
  const { cmd, args, env } = proxyCommand({ socket, token, allow, parent: Deno.pid }, launch);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd, {
      args,
      env,
      stdin: "null",
      stdout: "null",
      stderr: "inherit",
    }).spawn();
  } catch (e) {
    Deno.removeSync(dir, { recursive: true });
    throw new AgentBlockError(
      `--sandbox-net allow-list: cannot start the proxy (${cmd}): ${(e as Error).message}`,
    );
  }
  child.unref();
  return {
    socket,
    token,
    ended: child.status,
    kill: () => {
      // it may not have set up its own ending yet (nobody waited for it): killed outright, and
      // its directory removed here
      try {
        child.kill("SIGKILL");
      } catch {
        // gone already
      }
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // removed already
      }
    },
  };
}

/**
 * The proxy's command for `launch`, and what its environment adds to the launcher's: from source
 * the Deno CLI on the proxy's own entry, without the project's configuration, and with Deno's
 * update check off (the proxy is outside the run's namespace: the check would be a connection to
 * dl.deno.land nobody asked for, made past the allow-list); compiled, the binary at its stage.
 */
export function proxyCommand(
  config: ProxyStageConfig,
  launch: SelfLaunch,
): { cmd: string; args: string[]; env: Record<string, string> } {
  const env: Record<string, string> = { [PROXY_CONFIG_VAR]: JSON.stringify(config) };
  if (launch.mode !== "source") {
    const [cmd, ...args] = [...launch.prefix, "--sandbox-stage=proxy"];
    return { cmd, args, env };
  }
  env.DENO_NO_UPDATE_CHECK = "1";
  return {
    cmd: launch.prefix[0],
    args: ["run", "-A", "--quiet", "--no-config", "--no-lock", PROXY_MAIN],
    env,
  };
}

/** The outcome of `enterNetNamespace`. */
export type NetNamespace =
  | { status: "entered" }
  | { status: "hop"; why: string }
  | { status: "unavailable"; why: string };

/**
 * Puts this process into a network namespace of its own with `lo` up.
 * @param inUserNs the `unshare` hop made the namespace already: only `lo` is left to do
 * @param viaUserNs take the hop even with privilege (the test seam `AGENT_BLOCK_SANDBOX_TEST_USERNS`)
 */
export function enterNetNamespace(c: Sys, inUserNs: boolean, viaUserNs: boolean): NetNamespace {
  if (!inUserNs) {
    if (viaUserNs) return { status: "hop", why: "AGENT_BLOCK_SANDBOX_TEST_USERNS=1" };
    if (c.unshare(CLONE_NEWNET) !== 0) {
      return { status: "hop", why: `unshare(CLONE_NEWNET): ${lastError(c).text}` };
    }
  }
  const up = loopbackUp(c);
  return up === undefined ? { status: "entered" } : { status: "unavailable", why: up };
}

/**
 * Why no network namespace could be had by a run started from here, or undefined when one can:
 * the user-namespace hop with `--net`, or util-linux `unshare --net` (as root), run as a child so
 * this process (a server checking before its runs) keeps its own.
 */
export function netNamespaceProbe(): string | undefined {
  const hop = userNamespaceHop(true);
  if ("prefix" in hop) return undefined;
  try {
    const r = new Deno.Command(UNSHARE, {
      args: ["--net", "--", "true"],
      clearEnv: true,
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    if (r.success) return undefined;
    return `${UNSHARE} --net: ${new TextDecoder().decode(r.stderr).trim().split("\n")[0]}; ${hop.why}`;
  } catch (e) {
    return `${(e as Error).message}; ${hop.why}`;
  }
}

/** Brings `lo` up in this network namespace; the error text, or undefined. */
function loopbackUp(c: Sys): string | undefined {
  const fd = Number(c.socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd < 0) return `a socket to configure lo: ${lastError(c).text}`;
  try {
    const ifr = new Uint8Array(40); // struct ifreq: name[16], then the union (flags: a short)
    ifr.set(cstring("lo"));
    const ptr = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(ifr)));
    if (c.ioctl(fd, SIOCGIFFLAGS, ptr) !== 0) return `reading lo's flags: ${lastError(c).text}`;
    const view = new DataView(ifr.buffer);
    view.setUint16(16, view.getUint16(16, true) | IFF_UP, true);
    if (c.ioctl(fd, SIOCSIFFLAGS, ptr) !== 0) return `bringing lo up: ${lastError(c).text}`;
    return undefined;
  } finally {
    c.close(fd);
  }
}

/** The proxy variables names: removed from a run's environment unless the launcher sets them. */
export const PROXY_VARS = [
  "HTTPS_PROXY",
  "https_proxy",
  "HTTP_PROXY",
  "http_proxy",
  "ALL_PROXY",
  "all_proxy",
  "NO_PROXY",
  "no_proxy",
  SOCKET_VAR,
  TOKEN_VAR,
];

/** `env` for the confined runtime: the proxy variables set for `proxy`, or cleared without one. */
export function proxyEnv(
  env: Readonly<Record<string, string>>,
  proxy: { socket: string; token: string } | undefined,
): Record<string, string> {
  const out: Record<string, string> = { ...env };
  if (proxy === undefined) {
    delete out[SOCKET_VAR]; // only a launcher that started a proxy names one
    delete out[TOKEN_VAR];
    return out;
  }
  for (const k of PROXY_VARS) delete out[k];
  const url = `http://127.0.0.1:${BRIDGE_PORT}`;
  for (const k of ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]) {
    out[k] = url;
  }
  out[SOCKET_VAR] = proxy.socket;
  out[TOKEN_VAR] = proxy.token;
  return out;
}
