/**
 * The sandbox escape suite: a block run under `--sandbox` tries every way out of the boundary the
 * README documents — writing outside the grants from Lua (`io.open`, `std.fs.write`, the file
 * tools given the outside directory as a root), from an `sh.exec` child, a grandchild, a
 * detached (`setsid`) child, `io.popen`, an MCP server child; through a symlink; by `rename` and
 * `mv` out of the project; into `.git` (a hook, the config); TCP connect (from our TypeScript
 * and from a child) and listen with `AGENT_BLOCK_SANDBOX_TCP=0`; `io_uring_setup` from a child
 * (`io_uring_probe.ts`). Each must fail and leave nothing outside; each allowed path must still
 * work (the project root, `/tmp`, an `AGENT_BLOCK_SANDBOX_FS_RW` entry, the kv/sql/ts stores and
 * the kernel log, reading `.git`, TCP when it is allowed). The last test prints `escapes: E/N`.
 *
 * Two sandboxed runs do all the attempts (one with TCP allowed, one denied); each `attack:`
 * test checks one attempt's report and what it left on disk.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempProject } from "../helpers.ts";
import { answerHttp, gitProtectionMissing, outsideDir, sandboxedRun, sandboxEnv, SKIP } from "./support.ts";

if (SKIP) console.warn(`escape_attack_test: skipped: ${SKIP}`);
const opts = { ignore: SKIP !== undefined, sanitizeResources: false, sanitizeOps: false };

const SCRIPT = new URL("./escape.lua", import.meta.url).pathname;
const PROBE = new URL("./io_uring_probe.ts", import.meta.url).pathname;

interface Suite {
  project: string;
  outside: string;
  fsRw: string;
  tmpFile: string;
  /** Connections the test's server accepted. */
  accepted: number;
  report: Record<string, string>;
  stderr: string;
}

/** Runs the escape block under `--sandbox` once (TCP denied when `tcp` is false). */
async function suite(tcp: boolean): Promise<Suite> {
  const project = await tempProject({ "escape.lua": Deno.readTextFileSync(SCRIPT) });
  const git = new Deno.Command("git", { args: ["init", "-q", project], stdout: "null", stderr: "null" })
    .outputSync();
  if (!git.success) throw new Error("git init failed");
  const outside = outsideDir();
  const fsRw = outsideDir();
  const tmpFile = join(await Deno.makeTempDir({ prefix: "ab_sbx_tmp_" }), "ok.txt");
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const s: Suite = { project, outside, fsRw, tmpFile, accepted: 0, report: {}, stderr: "" };
  const serving = (async () => {
    for await (const conn of listener) {
      s.accepted++;
      void answerHttp(conn, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
    }
  })();
  try {
    const prompt = JSON.stringify({
      outside,
      fs_rw: fsRw,
      tmp: tmpFile,
      deno: Deno.execPath(),
      port: listener.addr.port,
      probe: PROBE,
    });
    const env = sandboxEnv(project, {
      AGENT_BLOCK_SANDBOX_FS_RW: `${fsRw}:${join(project, "does-not-exist")}`,
      ...(tcp ? {} : { AGENT_BLOCK_SANDBOX_TCP: "0" }),
    });
    const r = await sandboxedRun(project, "escape.lua", { env, prompt });
    assert.equal(r.code, 0, `the escape block must run to its end: ${r.stderr}`);
    s.report = r.value;
    s.stderr = r.stderr;
  } finally {
    listener.close();
    await serving.catch(() => undefined);
  }
  return s;
}

let open: Promise<Suite> | undefined;
let closed: Promise<Suite> | undefined;
const tcpOpen = () => open ??= suite(true);
const tcpDenied = () => closed ??= suite(false);

let attempts = 0;
let escapes = 0;

/**
 * An escape attempt: `check` throws when it got through. A `.git` attempt (`git`) is skipped, with
 * the reason, where the read-only `.git` is allowed to be missing (`gitProtectionMissing`).
 */
function attack(name: string, run: () => Promise<Suite>, check: (s: Suite) => void, git = false): void {
  Deno.test({
    name: `attack: sandbox ${name}`,
    ...opts,
    fn: async () => {
      const s = await run();
      const missing = git ? gitProtectionMissing(s.stderr) : undefined;
      if (missing) {
        console.warn(`skipped: this user cannot have the read-only .git here (${missing})`);
        return;
      }
      attempts++;
      try {
        check(s);
      } catch (e) {
        escapes++;
        throw e;
      }
    },
  });
}

/** The attempt `key` was refused and `file` (in the outside directory) does not exist. */
function refused(key: string, file: string | undefined, pattern: RegExp) {
  return (s: Suite) => {
    const said = s.report[key];
    assert.ok(said !== undefined, `no report for ${key}: ${JSON.stringify(s.report)}\n${s.stderr}`);
    assert.match(said, pattern, `${key}: ${said}`);
    if (file !== undefined) {
      assert.equal(exists(join(s.outside, file)), false, `${key} wrote ${file} outside the grants`);
    }
  };
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

const DENIED = /denied|Permission denied|EACCES|PermissionDenied|exit [1-9]/i;

attack(
  "io.open writes outside the grants",
  tcpOpen,
  refused("io.open", "io_open.txt", /^denied: .*Permission denied/),
);
attack(
  "std.fs.write writes outside the grants",
  tcpOpen,
  refused("std.fs.write", "fs_write.txt", /^raised: .*denied/i),
);
attack(
  "the fs tools, given the outside as a root, write there",
  tcpOpen,
  refused("fs tools", "fs_tool.txt", DENIED),
);
attack(
  "an sh.exec child writes outside",
  tcpOpen,
  refused("sh.exec", "sh.txt", /^exit [1-9].*Permission denied/),
);
attack(
  "a grandchild writes outside",
  tcpOpen,
  refused("grandchild", "grand.txt", /^exit [1-9].*Permission denied/),
);
attack(
  "a detached (setsid) child writes outside",
  tcpOpen,
  refused("detached", "detached.txt", /^exit [1-9]/),
);
attack("io.popen writes outside", tcpOpen, refused("io.popen", "popen.txt", /^exit [1-9]/));
attack("an MCP server child writes outside", tcpOpen, refused("mcp server", "mcp.txt", /^false /));
attack("a symlink in the project leads outside", tcpOpen, refused("symlink", "symlink.txt", /^denied: /));
attack("os.rename moves a file out of the project", tcpOpen, (s) => {
  refused("rename", "moved.txt", /^denied: /)(s);
  assert.ok(exists(join(s.project, "moveme.txt")), "the file must still be in the project");
});
attack("mv moves a file out of the project", tcpOpen, (s) => {
  refused("mv", "moved2.txt", /^exit [1-9]/)(s);
  assert.ok(exists(join(s.project, "moveme2.txt")), "the file must still be in the project");
});
attack("a block plants a git hook with io.open", tcpOpen, (s) => {
  refused("git hook io.open", undefined, /^denied: .*Read-only file system/)(s);
  assert.equal(exists(join(s.project, ".git/hooks/pre-commit")), false);
}, true);
attack("a child plants a git hook", tcpOpen, (s) => {
  refused("git hook sh", undefined, /^exit [1-9].*Read-only file system/)(s);
  assert.equal(exists(join(s.project, ".git/hooks/post-checkout")), false);
}, true);
attack("git config points core.hooksPath elsewhere", tcpOpen, (s) => {
  refused("git config", undefined, /^exit [1-9]/)(s);
  assert.doesNotMatch(Deno.readTextFileSync(join(s.project, ".git/config")), /hooksPath/);
}, true);
attack("io_uring_setup from a child", tcpOpen, (s) => {
  // errno 1 (EPERM): the filter answered; the same probe outside the sandbox gets a ring
  refused("io_uring", undefined, /^exit 0 errno 1\b/)(s);
});
attack("TCP connect from the runtime with AGENT_BLOCK_SANDBOX_TCP=0", tcpDenied, (s) => {
  refused("http connect", undefined, /^failed: .*(PermissionDenied|Permission denied|os error 13)/i)(s);
  assert.equal(s.accepted, 0, "no connection may reach the server");
});
attack(
  "a model connection with AGENT_BLOCK_SANDBOX_TCP=0, which says the sandbox denied it",
  tcpDenied,
  (s) => {
    refused(
      "model connect",
      undefined,
      /^failed: llm: anthropic connection failed: tcp connect error: Permission denied \(os error 13\): denied by the sandbox \(AGENT_BLOCK_SANDBOX_TCP=0/,
    )(s);
    assert.equal(s.accepted, 0, "no connection may reach the server");
  },
);
attack("TCP connect from a child with AGENT_BLOCK_SANDBOX_TCP=0", tcpDenied, (s) => {
  refused("child connect", undefined, /^exit [1-9].*(PermissionDenied|Permission denied)/)(s);
  assert.equal(s.accepted, 0, "no connection may reach the server");
});
attack("TCP listen from a child with AGENT_BLOCK_SANDBOX_TCP=0", tcpDenied, (s) => {
  refused("child listen", undefined, /^exit [1-9].*(PermissionDenied|Permission denied)/)(s);
});

Deno.test({
  name: "sandbox: the io_uring probe gets a ring outside the sandbox (so its EPERM inside is the filter's)",
  ...opts,
  fn: () => {
    const r = new Deno.Command(Deno.execPath(), { args: ["run", "-A", PROBE], stdout: "piped" }).outputSync();
    assert.match(new TextDecoder().decode(r.stdout), /^fd \d+/);
  },
});

Deno.test({
  name:
    "sandbox: the allowed paths still work inside (project, child, /tmp, FS_RW, kv, sql, ts, knl, .git read)",
  ...opts,
  fn: async () => {
    for (const s of [await tcpOpen(), await tcpDenied()]) {
      const r = s.report;
      assert.equal(r["ok project"], "wrote");
      assert.match(r["ok project child"], /^exit 0 x/);
      assert.equal(r["ok tmp"], "wrote");
      assert.equal(Deno.readTextFileSync(s.tmpFile), "x");
      assert.equal(r["ok fs_rw"], "wrote");
      assert.equal(Deno.readTextFileSync(join(s.fsRw, "ok_fs_rw.txt")), "x");
      assert.equal(r["ok kv"], "v");
      assert.equal(r["ok sql"], "rows 1");
      assert.equal(r["ok ts"], "appended");
      assert.equal(r["ok knl"], "session");
      assert.match(r["ok git read"], /^ref: refs\/heads\//);
      assert.match(r["ok git status"], /^exit 0 ok/);
      // the start-up line says what is enforced; the missing FS_RW entry is skipped, by name
      assert.match(s.stderr, /agent-block: sandbox on \(Landlock ABI \d+, seccomp\): writes only to /);
      if (!gitProtectionMissing(s.stderr)) assert.match(s.stderr, /\.git read-only/);
      assert.match(s.stderr, /AGENT_BLOCK_SANDBOX_FS_RW: .*does-not-exist does not exist, skipped/);
    }
    const open = await tcpOpen();
    assert.match(
      open.report["http connect"],
      /^status 204/,
      `TCP is allowed by default: ${open.report["http connect"]}`,
    );
    assert.match(open.report["child connect"], /^exit 0 connected/);
    assert.match(open.report["child listen"], /^exit 0 listening/);
    assert.match(open.stderr, /TCP allowed/);
    assert.match((await tcpDenied()).stderr, /TCP denied/);
  },
});

Deno.test({
  name: "sandbox: the escape suite's count",
  ...opts,
  fn: async () => {
    for (const s of [await tcpOpen(), await tcpDenied()]) {
      for (const d of [s.outside, s.fsRw]) await Deno.remove(d, { recursive: true });
    }
    console.log(`escapes: ${escapes}/${attempts}`);
    assert.equal(escapes, 0);
  },
});
