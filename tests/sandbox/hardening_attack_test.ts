/**
 * The sandbox against what root (or a user namespace's root) could do around Landlock: a child
 * of a confined run holds no capability (effective, permitted, inheritable, ambient, bounding
 * all zero), cannot make a block device node for the disk the checkout is on (nor a character
 * device) in `/tmp` or the project, and with `AGENT_BLOCK_SANDBOX_TCP=0` cannot reach a TCP
 * peer over multipath TCP, nor make an SMC, raw or packet socket (UDP and Unix sockets still
 * work). Each is tried on the root path and, where util-linux `unshare` can make one, on the
 * user-namespace path (`AGENT_BLOCK_SANDBOX_TEST_USERNS=1`). The probe connects over MPTCP
 * outside the sandbox first, so its refusal inside is the filter's.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathExists, tempDir, tempProject } from "../helpers.ts";
import { outsideDir, sandboxedRun, sandboxEnv, SKIP } from "./support.ts";
import { userNamespaceHop } from "../../src/sandbox/mount_ns.ts";

const noHop = SKIP ?? (() => {
  const hop = userNamespaceHop();
  return "why" in hop ? hop.why : undefined;
})();
if (SKIP) console.warn(`hardening_attack_test: skipped: ${SKIP}`);
else if (noHop) console.warn(`hardening_attack_test: the user-namespace path is skipped: ${noHop}`);

const SCRIPT = new URL("./hardening.lua", import.meta.url).pathname;
const PROBE = new URL("./socket_probe.ts", import.meta.url).pathname;

interface Tried {
  report: Record<string, string>;
  stderr: string;
  tmp: string;
  project: string;
  accepted: number;
}

/** `major minor` of the device holding `path` (Linux's `dev_t` encoding). */
function deviceOf(path: string): string {
  const dev = BigInt(Deno.statSync(path).dev ?? 0);
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major} ${minor}`;
}

/** Runs the hardening block confined, TCP denied, on the root path or the user-namespace one. */
async function attempt(userns: boolean): Promise<Tried> {
  const project = await tempProject({ "hardening.lua": Deno.readTextFileSync(SCRIPT) });
  const tmp = await tempDir("ab_sbx_dev_");
  const outside = outsideDir();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let accepted = 0;
  const serving = (async () => {
    for await (const conn of listener) {
      accepted++;
      conn.close();
    }
  })();
  try {
    const prompt = JSON.stringify({
      tmp,
      disk: deviceOf(outside),
      deno: Deno.execPath(),
      probe: PROBE,
      port: listener.addr.port,
    });
    const env = sandboxEnv(project, {
      AGENT_BLOCK_SANDBOX_TCP: "0",
      ...(userns ? { AGENT_BLOCK_SANDBOX_TEST_USERNS: "1" } : {}),
    });
    const r = await sandboxedRun(project, "hardening.lua", { env, prompt });
    assert.equal(r.code, 0, r.stderr);
    return { report: r.value, stderr: r.stderr, tmp, project, accepted };
  } finally {
    listener.close();
    await serving.catch(() => undefined);
    await Deno.remove(outside, { recursive: true });
  }
}

const PATHS = [
  { name: "root path", userns: false, skip: SKIP },
  { name: "user-namespace path", userns: true, skip: noHop },
];

for (const path of PATHS) {
  let tried: Promise<Tried> | undefined;
  const run = () => tried ??= attempt(path.userns);
  const test = (name: string, check: (t: Tried) => void) =>
    Deno.test({
      name: `attack: sandbox ${name} (${path.name})`,
      ignore: path.skip !== undefined,
      sanitizeResources: false,
      sanitizeOps: false,
      fn: async () => check(await run()),
    });

  test("a child keeps capabilities (bounding set included)", (t) => {
    const caps = t.report["caps"];
    assert.match(caps, /^exit 0 /, caps);
    for (const set of ["Inh", "Prm", "Eff", "Bnd", "Amb"]) {
      assert.match(caps, new RegExp(`Cap${set}:\\s+0+\\n`), `Cap${set} must be empty: ${caps}`);
    }
    if (path.userns) assert.match(t.stderr, /no capabilities/);
  });
  test("a child makes a block device node for the disk in /tmp", (t) => {
    assert.match(t.report["mknod block tmp"], /^exit [1-9]/, t.report["mknod block tmp"]);
    assert.equal(pathExists(join(t.tmp, "disk")), false, "the device node was made");
  });
  test("a child makes a block device node for the disk in the project", (t) => {
    assert.match(t.report["mknod block project"], /^exit [1-9]/, t.report["mknod block project"]);
    assert.equal(pathExists(join(t.project, "disk")), false, "the device node was made");
  });
  test("a child makes a character device node in /tmp", (t) => {
    assert.match(t.report["mknod char tmp"], /^exit [1-9]/, t.report["mknod char tmp"]);
    assert.equal(pathExists(join(t.tmp, "full")), false, "the device node was made");
  });
  test("multipath TCP reaches a TCP peer with AGENT_BLOCK_SANDBOX_TCP=0", (t) => {
    assert.match(t.report["mptcp connect"], /^exit 0 errno 1 \(socket\)/, t.report["mptcp connect"]);
    assert.equal(t.accepted, 0, "a connection reached the server");
  });
  test("an SMC socket with AGENT_BLOCK_SANDBOX_TCP=0", (t) => {
    assert.match(t.report["smc socket"], /^exit 0 errno 1 \(socket\)/, t.report["smc socket"]);
  });
  test("a raw IP socket with AGENT_BLOCK_SANDBOX_TCP=0", (t) => {
    assert.match(t.report["raw socket"], /^exit 0 errno 1 \(socket\)/, t.report["raw socket"]);
  });
  test("a packet socket with AGENT_BLOCK_SANDBOX_TCP=0", (t) => {
    assert.match(t.report["packet socket"], /^exit 0 errno 1 \(socket\)/, t.report["packet socket"]);
  });
  Deno.test({
    name: `sandbox: UDP and Unix sockets still work with AGENT_BLOCK_SANDBOX_TCP=0 (${path.name})`,
    ignore: path.skip !== undefined,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const t = await run();
      assert.equal(t.report["udp socket"], "exit 0 socket\n");
      assert.equal(t.report["unix socket"], "exit 0 socket\n");
    },
  });
}

Deno.test({
  name:
    "sandbox: the socket probe connects over multipath TCP outside the sandbox (so its EPERM inside is the filter's)",
  ignore: SKIP !== undefined,
  fn: async () => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const accepted = listener.accept();
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", PROBE, "2", "1", "262", String(listener.addr.port)],
      stdout: "piped",
    }).output();
    const said = new TextDecoder().decode(r.stdout);
    if (/errno (93|22|95)/.test(said)) {
      console.warn(`this kernel has no multipath TCP (${said.trim()}): the inside refusal is still required`);
    } else {
      assert.equal(said, "connected\n");
      (await accepted).close();
    }
    listener.close();
  },
});
