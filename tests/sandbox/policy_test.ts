/**
 * The sandbox's pure parts: the policy from a run's environment (the edge's `sandboxSettingsFromEnv`
 * through `policy.ts`), the Landlock plan
 * per ABI with its fail-closed cases (`landlock.ts`), the seccomp program (run through a small
 * BPF interpreter here, so a wrong jump fails), the runtime stage's confinement check
 * (`stage.ts`), and the start-up line.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import {
  configCandidates,
  configPathsOf,
  configPlaces,
  gitDirsOf,
  type PolicyFs,
  PROJECT_CONFIG,
  repositoryDirs,
  resolvePolicy,
  sandboxRequest,
} from "../../src/sandbox/policy.ts";
import { grantedRights, NET_ABI, planLandlock } from "../../src/sandbox/landlock.ts";
import { permittedEmpty } from "../../src/sandbox/caps.ts";
import { IO_URING_NRS, seccompProgram } from "../../src/sandbox/seccomp.ts";
import { archInfo } from "../../src/sandbox/sys.ts";
import { enterRuntime, parseStage } from "../../src/sandbox/stage.ts";
import { startupLine } from "../../src/sandbox/launcher.ts";
import { AgentBlockError } from "../../src/errors.ts";
import { sandboxRequested, sandboxSettingsFromEnv } from "../../src/config/env_settings.ts";

/**
 * The request a run of `project` makes: the settings the edge reads from the starter's `env` (and
 * what the project's `.env` adds), through the policy's `sandboxRequest`.
 */
function requestOf(
  env: Record<string, string>,
  project: string,
  cwd: string,
  fromProject: Record<string, string> = {},
) {
  return sandboxRequest(sandboxSettingsFromEnv(env, cwd, { fromProject }), project);
}

Deno.test("sandboxRequested: off when unset, empty, 0, false, no, off (any case); on otherwise", () => {
  for (const off of [undefined, "", " ", "0", "false", "FALSE", "no", "Off", " off "]) {
    assert.equal(sandboxRequested(off), false, String(off));
  }
  for (const on of ["1", "true", "yes", "on", "landlock", "2"]) assert.equal(sandboxRequested(on), true, on);
});

Deno.test("sandboxRequest: the seed's grants, FS_RW entries, TCP and the .git opt-out from the run's env", () => {
  const r = requestOf(
    { HOME: "/home/u", AGENT_BLOCK_SANDBOX_FS_RW: "/opt/cache::rel/dir", AGENT_BLOCK_SANDBOX_TCP: "Off" },
    "/p",
    "/cwd",
  );
  assert.deepEqual(r.grants.map((g) => `${g.source}=${g.path}`), [
    "project=/p",
    "home=/home/u/.agent-block",
    "tmp=/tmp",
    "device=/dev/null",
    "device=/dev/urandom",
    "device=/dev/tty",
    "fs_rw=/opt/cache",
    "fs_rw=/cwd/rel/dir",
  ]);
  assert.equal(r.tcp, false);
  assert.equal(r.gitRw, false);
  assert.equal(requestOf({ AGENT_BLOCK_HOME: "/h" }, "/p", "/").grants[1].path, "/h");
  for (const on of [undefined, "", "1", "true", "yes", "ON"]) {
    assert.equal(
      requestOf(on === undefined ? {} : { AGENT_BLOCK_SANDBOX_TCP: on }, "/p", "/").tcp,
      true,
    );
  }
  assert.equal(requestOf({ AGENT_BLOCK_SANDBOX_GIT_RW: "1" }, "/p", "/").gitRw, true);
  assert.throws(
    () => requestOf({ AGENT_BLOCK_SANDBOX_TCP: "maybe" }, "/p", "/"),
    /AGENT_BLOCK_SANDBOX_TCP must be 1, true, yes, on or 0, false, no, off; got 'maybe'/,
  );
  assert.throws(
    () => requestOf({ AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI: "x" }, "/p", "/"),
    /AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI must be a non-negative integer/,
  );
});

Deno.test("resolvePolicy: missing FS_RW entries are skipped by name, an unresolvable project stops start-up", () => {
  const dirs = new Set(["/p", "/real/home", "/tmp", "/extra"]);
  const links: Record<string, string> = { "/home/u/.agent-block": "/real/home" };
  const fs: PolicyFs = {
    realPath: (p) => {
      const r = links[p] ?? p;
      if (!dirs.has(r) && !r.startsWith("/dev/")) throw new Deno.errors.NotFound(`no ${p}`);
      return r;
    },
    lstat: (p) => {
      if (!dirs.has(p) && !p.startsWith("/dev/")) throw new Deno.errors.NotFound(`no ${p}`);
      return { isFile: !dirs.has(p), isDirectory: dirs.has(p), isSymlink: false };
    },
    readTextFile: () => {
      throw new Deno.errors.NotFound("none");
    },
  };
  const env = { HOME: "/home/u", AGENT_BLOCK_SANDBOX_FS_RW: "/extra:/gone" };
  const p = resolvePolicy(requestOf(env, "/p", "/"), fs);
  assert.deepEqual(p.writable.map((w) => [w.path, w.dir, w.asked ?? null]), [
    ["/p", true, null],
    ["/real/home", true, "/home/u/.agent-block"],
    ["/tmp", true, null],
    ["/dev/null", false, null],
    ["/dev/urandom", false, null],
    ["/dev/tty", false, null],
    ["/extra", true, null],
  ]);
  assert.deepEqual(p.skipped, ["/gone"]);
  assert.throws(
    () => resolvePolicy(requestOf(env, "/nowhere", "/"), fs),
    (e) => e instanceof AgentBlockError && /project root \/nowhere cannot be resolved/.test(e.message),
  );
});

Deno.test("gitDirsOf: a .git directory, a gitdir: file and its commondir (a linked worktree)", async () => {
  const root = await tempDir();
  const plain = join(root, "plain");
  Deno.mkdirSync(join(plain, ".git"), { recursive: true });
  assert.deepEqual(gitDirsOf(plain), [join(plain, ".git")]);
  const main = join(root, "main");
  const wtGit = join(main, ".git", "worktrees", "wt");
  Deno.mkdirSync(wtGit, { recursive: true });
  Deno.writeTextFileSync(join(wtGit, "commondir"), "../..\n");
  const wt = join(root, "wt");
  Deno.mkdirSync(wt);
  Deno.writeTextFileSync(join(wt, ".git"), `gitdir: ${wtGit}\n`);
  assert.deepEqual(gitDirsOf(wt), [wtGit, join(main, ".git")]);
  Deno.writeTextFileSync(join(wt, ".git"), "gitdir: ../main/.git/worktrees/wt\n"); // relative
  assert.deepEqual(gitDirsOf(wt), [wtGit, join(main, ".git")]);
  assert.deepEqual(gitDirsOf(join(root, "plain", ".git")), []); // no .git inside
});

Deno.test("repositoryDirs: the project's own, and an enclosing checkout's only when a grant holds it", async () => {
  const root = Deno.realPathSync(await tempDir());
  const outer = join(root, "outer");
  const project = join(outer, "a", "proj");
  Deno.mkdirSync(join(outer, ".git"), { recursive: true });
  Deno.mkdirSync(join(project, ".git"), { recursive: true });
  const grant = (path: string) => ({ path, dir: true });
  // a grant above the checkout (as /tmp is): its repository is the run's to rewrite, so listed
  assert.deepEqual(repositoryDirs(project, [grant(project), grant(root)]), [
    join(project, ".git"),
    join(outer, ".git"),
  ]);
  // no grant holds it: Landlock refuses writes there already
  assert.deepEqual(repositoryDirs(project, [grant(project)]), [join(project, ".git")]);
  // a file grant is no directory grant
  assert.deepEqual(repositoryDirs(project, [grant(project), { path: root, dir: false }]), [
    join(project, ".git"),
  ]);
});

Deno.test("planLandlock: fail closed without Landlock or without network rules for a TCP denial", () => {
  const none = planLandlock(0, true);
  assert.ok(none instanceof AgentBlockError);
  assert.match(none.message, /enforces no Landlock.*does not run unconfined/);
  const seam = planLandlock(0, true, true);
  assert.ok(seam instanceof AgentBlockError);
  assert.match(seam.message, /pretended by AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI=0/);
  const tcp = planLandlock(NET_ABI - 1, false);
  assert.ok(tcp instanceof AgentBlockError);
  assert.match(tcp.message, /AGENT_BLOCK_SANDBOX_TCP denies TCP.*ABI 3.*Linux 6\.7/);
  // ABI 3, TCP allowed: runs, naming what it drops
  const old = planLandlock(3, true);
  assert.ok(!(old instanceof AgentBlockError));
  assert.deepEqual(old.dropped, ["IOCTL_DEV (device ioctls), Linux 6.10"]);
  assert.equal(old.handledNet, 0n);
  const first = planLandlock(1, true);
  assert.ok(!(first instanceof AgentBlockError));
  assert.equal(first.dropped.length, 3);
  assert.match(first.dropped.join("; "), /REFER.*TRUNCATE.*IOCTL_DEV/);
  const now = planLandlock(7, false);
  assert.ok(!(now instanceof AgentBlockError));
  assert.deepEqual(now.dropped, []);
  assert.equal(now.handledNet, 3n);
  assert.equal(now.handledFs & 0b1101n, 0n, "execute, read file and read dir are never handled");
});

/** Runs a classic-BPF seccomp program on (nr, arch, args' low words); answers its return value. */
function runBpf(prog: Uint8Array, nr: number, arch: number, args: number[] = []): number {
  const v = new DataView(prog.buffer);
  let acc = 0;
  for (let pc = 0; pc < prog.length / 8;) {
    const code = v.getUint16(pc * 8, true);
    const jt = v.getUint8(pc * 8 + 2);
    const jf = v.getUint8(pc * 8 + 3);
    const k = v.getUint32(pc * 8 + 4, true);
    if (code === 0x20) {
      acc = k === 0 ? nr : k === 4 ? arch : k >= 16 && (k - 16) % 8 === 0 ? args[(k - 16) / 8] ?? 0 : NaN;
    } else if (code === 0x54) acc = acc & k;
    else if (code === 0x15) {
      pc += 1 + (acc === k ? jt : jf);
      continue;
    } else if (code === 0x45) {
      pc += 1 + ((acc & k) !== 0 ? jt : jf);
      continue;
    } else if (code === 0x06) return k;
    else throw new Error(`unexpected instruction ${code} at ${pc}`);
    pc++;
  }
  throw new Error("fell off the end of the program");
}

Deno.test("seccompProgram: io_uring answers EPERM, x32 numbers too, everything else is allowed", () => {
  const EPERM = 0x00050001;
  const ALLOW = 0x7fff0000;
  for (const arch of ["x86_64", "aarch64"]) {
    const info = archInfo(arch)!;
    const prog = seccompProgram(info);
    for (const nr of IO_URING_NRS) {
      assert.equal(runBpf(prog, nr, info.auditArch), EPERM, `${arch} ${nr}`);
      assert.equal(runBpf(prog, nr, 0x40000003), EPERM, `${arch} compat ${nr}`);
    }
    for (const nr of [0, 1, 59, 424, 428, 444]) {
      assert.equal(runBpf(prog, nr, info.auditArch), ALLOW, `${arch} ${nr}`);
    }
    if (info.x32Bit !== undefined) {
      assert.equal(runBpf(prog, info.x32Bit | 1, info.auditArch), EPERM, "x32 write");
      assert.equal(runBpf(prog, info.x32Bit | 425, info.auditArch), EPERM, "x32 io_uring_setup");
    }
  }
  assert.equal(archInfo("riscv64"), undefined);
});

Deno.test("seccompProgram with TCP denied: the sockets around TCP answer EPERM, UDP, Unix and TCP itself do not", () => {
  const EPERM = 0x00050001;
  const ALLOW = 0x7fff0000;
  for (const arch of ["x86_64", "aarch64"]) {
    const info = archInfo(arch)!;
    const denied = seccompProgram(info, { tcp: false });
    const open = seccompProgram(info, { tcp: true });
    const sock = (prog: Uint8Array, args: readonly number[]) =>
      runBpf(prog, info.socketNr, info.auditArch, [...args]);
    const SOCK_CLOEXEC = 0o2000000;
    for (
      const [what, args] of [
        ["MPTCP", [2, 1, 262]],
        ["MPTCP v6", [10, 1 | SOCK_CLOEXEC, 262]],
        ["SCTP stream", [2, 1, 132]],
        ["raw", [2, 3, 6]],
        ["raw v6", [10, 3, 0]],
        ["packet", [17, 3, 0]],
        ["SMC", [43, 1, 0]],
        ["INET SOCK_PACKET", [2, 10, 0]],
      ] as const
    ) {
      assert.equal(sock(denied, args), EPERM, `${arch} ${what}`);
      assert.equal(sock(open, args), ALLOW, `${arch} ${what} with TCP allowed`);
    }
    for (
      const [what, args] of [
        ["TCP", [2, 1, 0]],
        ["TCP explicit", [10, 1 | SOCK_CLOEXEC, 6]],
        ["UDP", [2, 2, 0]],
        ["Unix", [1, 1, 0]],
        ["netlink", [16, 3, 0]],
      ] as const
    ) {
      assert.equal(sock(denied, args), ALLOW, `${arch} ${what}`);
    }
    for (const nr of info.compatSocketNrs) {
      assert.equal(runBpf(denied, nr, 0x40000003, [1, 1, 0]), EPERM, `${arch} compat socket ${nr}`);
      assert.equal(
        runBpf(open, nr, 0x40000003, [2, 1, 262]),
        ALLOW,
        `${arch} compat socket ${nr}, TCP allowed`,
      );
    }
    for (const nr of IO_URING_NRS) assert.equal(runBpf(denied, nr, info.auditArch), EPERM);
  }
});

Deno.test("grantedRights: no rule grants making a block or character device", () => {
  const plan = planLandlock(7, true);
  assert.ok(!(plan instanceof AgentBlockError));
  const MAKE_CHAR = 1n << 6n;
  const MAKE_BLOCK = 1n << 11n;
  assert.equal(
    plan.handledFs & (MAKE_CHAR | MAKE_BLOCK),
    MAKE_CHAR | MAKE_BLOCK,
    "handled: denied everywhere",
  );
  for (const dir of [true, false]) {
    assert.equal(grantedRights(plan, dir) & (MAKE_CHAR | MAKE_BLOCK), 0n);
  }
  assert.equal(grantedRights(plan, true) & (1n << 8n), 1n << 8n, "regular files are still made");
});

Deno.test("enterRuntime: the hidden stage flag runs only in a confined process", () => {
  const confined = "Name:\tdeno\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n";
  enterRuntime(confined);
  assert.throws(
    () => enterRuntime("Name:\tdeno\nNoNewPrivs:\t0\nSeccomp:\t0\n"),
    /--sandbox-stage=runtime is agent-block's own flag .* not confined: use --sandbox/,
  );
  assert.equal(parseStage("--sandbox-stage=runtime"), "runtime");
  assert.equal(parseStage("--sandbox-stage=userns"), "userns");
  assert.throws(() => parseStage("--sandbox-stage=other"), /unknown sandbox stage/);
});

Deno.test("startupLine: what is enforced, and a .git that stays writable says so", () => {
  const plan = planLandlock(7, true);
  assert.ok(!(plan instanceof AgentBlockError));
  const policy = resolvePolicy(requestOf({ HOME: "/" }, "/tmp", "/"));
  const line = startupLine(policy, plan, true, "WRITABLE (no mount namespace)");
  assert.match(
    line,
    /^agent-block: sandbox on \(Landlock ABI 7, seccomp\): writes only to \/tmp, .*\/dev\/null/,
  );
  assert.match(
    line,
    /TCP allowed; io_uring denied; \.git WRITABLE \(no mount namespace\); agent-block config read-only; no capabilities$/,
  );
  assert.match(
    startupLine(policy, plan, true, "read-only", "WRITABLE (no mount namespace)"),
    /agent-block config WRITABLE \(no mount namespace\)/,
  );
});

Deno.test("sandboxRequest: the project's .env may make the sandbox stricter, never looser", () => {
  const dotenv = {
    AGENT_BLOCK_SANDBOX_FS_RW: "/etc",
    AGENT_BLOCK_SANDBOX_GIT_RW: "1",
    AGENT_BLOCK_HOME: "/",
    HOME: "/",
    AGENT_BLOCK_SANDBOX_TEST_USERNS: "1",
    AGENT_BLOCK_SANDBOX_TCP: "1",
  };
  const r = requestOf({ AGENT_BLOCK_HOME: "/h", AGENT_BLOCK_SANDBOX_TCP: "0" }, "/p", "/", dotenv);
  assert.deepEqual(r.grants.map((g) => g.path), [
    "/p",
    "/h",
    "/tmp",
    "/dev/null",
    "/dev/urandom",
    "/dev/tty",
  ]);
  assert.equal(r.gitRw, false);
  assert.equal(r.testUserNs, false);
  assert.equal(r.tcp, false, "the starter's TCP denial stands");
  // what the starter did not set is listed (a warning each); what it set is not (it wins anyway)
  assert.deepEqual(r.ignored, [
    "AGENT_BLOCK_SANDBOX_FS_RW",
    "AGENT_BLOCK_SANDBOX_GIT_RW",
    "HOME",
    "AGENT_BLOCK_SANDBOX_TEST_USERNS",
  ]);
  // a denial from .env counts
  assert.equal(requestOf({}, "/p", "/", { AGENT_BLOCK_SANDBOX_TCP: "off" }).tcp, false);
  assert.equal(requestOf({}, "/p", "/", { AGENT_BLOCK_SANDBOX_TCP: "on" }).tcp, true);
  assert.throws(
    () => requestOf({}, "/p", "/", { AGENT_BLOCK_SANDBOX_TCP: "maybe" }),
    /AGENT_BLOCK_SANDBOX_TCP/,
  );
});

Deno.test("attack: sandbox settings: no variable of the project's .env widens what the starter's environment gives", () => {
  // Every widening a .env could try, each on its own and all at once, against a starter that sets
  // nothing: the settings are those of an empty starter environment, and every starter-only name
  // is listed (a warning each).
  const starter = {};
  const base = sandboxSettingsFromEnv(starter, "/cwd");
  const widen: Record<string, string> = {
    AGENT_BLOCK_SANDBOX_FS_RW: "/etc:/root",
    AGENT_BLOCK_SANDBOX_GIT_RW: "1",
    AGENT_BLOCK_HOME: "/",
    HOME: "/",
    USERPROFILE: "/",
    AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI: "0",
    AGENT_BLOCK_SANDBOX_TEST_USERNS: "1",
    AGENT_BLOCK_SANDBOX_NET_ALLOW: "*.evil.example,169.254.169.254:80",
    AGENT_BLOCK_SANDBOX_TEST_NO_NETNS: "1",
  };
  for (const [name, value] of Object.entries(widen)) {
    const one = sandboxSettingsFromEnv(starter, "/cwd", { fromProject: { [name]: value }, runEnv: starter });
    assert.deepEqual({ ...one, ignored: [] }, base, name);
    assert.deepEqual(one.ignored, [name]);
  }
  const all = sandboxSettingsFromEnv(starter, "/cwd", { fromProject: widen });
  assert.deepEqual({ ...all, ignored: [] }, base);
  assert.deepEqual([...all.ignored].sort(), Object.keys(widen).sort());
  // under an allow-list the starter chose, .env neither lists hosts nor loosens the mode
  const listed = {
    ...starter,
    AGENT_BLOCK_SANDBOX_NET: "allow-list",
    AGENT_BLOCK_SANDBOX_NET_ALLOW: "a.example",
  };
  const strict = sandboxSettingsFromEnv(listed, "/cwd", {
    fromProject: { AGENT_BLOCK_SANDBOX_NET: "open", AGENT_BLOCK_SANDBOX_NET_ALLOW: "b.example" },
  });
  assert.equal(strict.net, "allow-list");
  assert.deepEqual(strict.netAllow, ["a.example"]);
  // the starter's TCP denial stands against .env's TCP and network mode
  const denied = sandboxSettingsFromEnv({ AGENT_BLOCK_SANDBOX_TCP: "no" }, "/cwd", {
    fromProject: { AGENT_BLOCK_SANDBOX_TCP: "yes", AGENT_BLOCK_SANDBOX_NET: "open" },
  });
  assert.equal(denied.tcp, false);
  assert.equal(denied.net, "off");
  // and .env can deny: TCP (so the network too) and the network alone
  const tight = sandboxSettingsFromEnv({}, "/cwd", { fromProject: { AGENT_BLOCK_SANDBOX_TCP: "Off" } });
  assert.equal(tight.tcp, false);
  assert.equal(tight.net, "off");
  assert.equal(
    sandboxSettingsFromEnv({}, "/", { fromProject: { AGENT_BLOCK_SANDBOX_NET: "off" } }).net,
    "off",
  );
});

Deno.test("sandboxSettingsFromEnv: paths are absolute, seams and switches parsed, errors name the variable", () => {
  const s = sandboxSettingsFromEnv(
    {
      AGENT_BLOCK_HOME: "rel/home",
      AGENT_BLOCK_SANDBOX_FS_RW: "a: :/b",
      AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI: "3",
      AGENT_BLOCK_SANDBOX_TEST_USERNS: "yes",
      AGENT_BLOCK_SANDBOX_TEST_NO_NETNS: "TRUE",
    },
    "/w",
  );
  assert.equal(s.home, "/w/rel/home");
  assert.deepEqual(s.fsRw, ["/w/a", "/b"]);
  assert.equal(s.testAbi, 3);
  assert.equal(s.testUserNs, true);
  assert.equal(s.testNoNetns, true);
  assert.equal(sandboxSettingsFromEnv({ USERPROFILE: "/up" }, "/w").home, "/up/.agent-block");
  assert.equal(sandboxSettingsFromEnv({}, "/w").home, "/w/.agent-block", "no home: the working directory's");
  assert.equal(sandboxSettingsFromEnv({ AGENT_BLOCK_HOME: " " }, "/w").home, "/w/.agent-block");
  assert.equal(
    "testAbi" in sandboxSettingsFromEnv({ AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI: "" }, "/"),
    false,
  );
  const fails: [Record<string, string>, string][] = [
    [
      { AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI: "-1" },
      "AGENT_BLOCK_SANDBOX_TEST_LANDLOCK_ABI must be a non-negative integer, got '-1'",
    ],
    [
      { AGENT_BLOCK_SANDBOX_GIT_RW: "2" },
      "AGENT_BLOCK_SANDBOX_GIT_RW must be 1, true, yes, on or 0, false, no, off; got '2'",
    ],
    [
      { AGENT_BLOCK_SANDBOX_TEST_USERNS: "y" },
      "AGENT_BLOCK_SANDBOX_TEST_USERNS must be 1, true, yes, on or 0, false, no, off; got 'y'",
    ],
    [
      { AGENT_BLOCK_SANDBOX_TEST_NO_NETNS: "x" },
      "AGENT_BLOCK_SANDBOX_TEST_NO_NETNS must be 1, true, yes, on or 0, false, no, off; got 'x'",
    ],
  ];
  for (const [env, message] of fails) {
    assert.throws(
      () => sandboxSettingsFromEnv(env, "/"),
      (e) => e instanceof AgentBlockError && e.message === message,
      message,
    );
  }
});

Deno.test("configPathsOf: the project's .env and the home's code tiers and serve files, where they exist", async () => {
  const root = await Deno.makeTempDir({ prefix: "ab_cfg_" });
  try {
    const project = join(root, "p");
    const home = join(root, "h");
    Deno.mkdirSync(project);
    Deno.mkdirSync(join(home, "lib"), { recursive: true });
    Deno.mkdirSync(join(home, "blocks"));
    assert.deepEqual(configPathsOf(project, home), [join(home, "lib"), join(home, "blocks")]);
    Deno.writeTextFileSync(join(project, ".env"), "A=1\n");
    Deno.writeTextFileSync(join(home, "serve.token"), "t\n");
    Deno.writeTextFileSync(join(home, "serve.sqlite"), "");
    Deno.writeTextFileSync(join(home, "kv.sqlite"), "");
    assert.deepEqual(configPathsOf(project, home), [
      join(project, ".env"),
      join(home, "lib"),
      join(home, "blocks"),
      join(home, "serve.token"),
      join(home, "serve.sqlite"),
    ]);
    assert.deepEqual(configPathsOf(project, undefined), [join(project, ".env")]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("configPlaces: what does not resolve (absent, a symlink to nothing) is watched, never mounted", async () => {
  const root = await Deno.makeTempDir({ prefix: "ab_cfg_" });
  try {
    const project = join(root, "p");
    const home = join(root, "h");
    Deno.mkdirSync(project);
    Deno.mkdirSync(home);
    Deno.symlinkSync(join(root, "nowhere"), join(home, "lib"));
    const { configPaths, configAbsent } = configPlaces(project, home);
    assert.deepEqual(configPaths, []);
    assert.deepEqual(configAbsent, configCandidates(project, home), "each place, unresolved");
    assert.ok(configAbsent.includes(join(project, ".env")) && configAbsent.includes(join(home, "lib")));
    Deno.mkdirSync(join(root, "nowhere"));
    Deno.writeTextFileSync(join(project, ".env"), "A=1\n");
    const later = configPlaces(project, home);
    assert.deepEqual(later.configPaths, [join(project, ".env"), join(root, "nowhere")]);
    assert.ok(!later.configAbsent.includes(join(home, "lib")));
    assert.deepEqual(configCandidates(project, undefined), PROJECT_CONFIG.map((n) => join(project, n)));
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("permittedEmpty: an unprivileged process (no permitted capability) may keep its bounding set", () => {
  assert.equal(permittedEmpty("Name:\tx\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"), true);
  assert.equal(permittedEmpty("CapPrm:\t000001ffffffffff\n"), false);
  assert.equal(permittedEmpty("CapPrm:\t0000000000000400\n"), false);
  assert.equal(permittedEmpty("no such field\n"), false, "unknown is not empty");
});
