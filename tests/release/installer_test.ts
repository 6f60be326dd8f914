/**
 * install.sh (and install.ps1 where PowerShell runs) against a fake release on 127.0.0.1
 * (`fake_release.ts`: real tar.xz archives, real checksums, GitHub's URL layout): a good install,
 * a checksum mismatch refused with nothing installed, an unknown platform refused before any
 * download (a fake `uname` on PATH), an idempotent re-install, a pinned version, and the URL and
 * version checks. The shell scripts of the distribution pass shellcheck (Debian's; `.ci/run`
 * installs it, the check is skipped with a reason without it).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, tempDir, testEnv } from "../helpers.ts";
import { fakeBinary, fakeRelease, HOST_TARGET } from "./fake_release.ts";
import { archiveName } from "../../tools/release_archive.ts";

const posix = Deno.build.os === "linux" || Deno.build.os === "darwin";
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function install(args: string[], env: Record<string, string>, path?: string): Promise<Run> {
  const base = testEnv({ NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost", ...env });
  if (path !== undefined) base.PATH = path;
  const r = await new Deno.Command("/bin/sh", {
    args: [join(REPO_ROOT, "install.sh"), ...args],
    env: base,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: r.code, stdout: dec(r.stdout), stderr: dec(r.stderr) };
}

async function versionOf(bin: string): Promise<string> {
  const r = await new Deno.Command(bin, { args: ["--version"], stdout: "piped" }).output();
  assert.equal(r.code, 0);
  return dec(r.stdout).split("\n")[0];
}

function exists(p: string): boolean {
  try {
    Deno.lstatSync(p);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

const RELEASES = { "0.2.0": fakeBinary("0.2.0"), "0.3.0": fakeBinary("0.3.0"), "0.2.1": fakeBinary("0.2.1") };

Deno.test({
  name: "installer: a good install of the latest release, checksum checked, with how to put it on PATH",
  ignore: !posix,
  fn: async () => {
    const rel = await fakeRelease({ versions: RELEASES, latest: "0.3.0" });
    try {
      const dir = join(await tempDir("ab_inst_"), "bin");
      const r = await install([], { AGENT_BLOCK_DOWNLOAD_URL: rel.url, AGENT_BLOCK_INSTALL_DIR: dir });
      assert.equal(r.code, 0, r.stderr);
      const bin = join(dir, "agent-block");
      assert.equal(await versionOf(bin), "agent-block 0.3.0");
      assert.ok((Deno.statSync(bin).mode! & 0o111) !== 0, "the binary is executable");
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["agent-block"]);
      assert.match(r.stderr, new RegExp(`installed agent-block 0\\.3\\.0 to ${dir}/agent-block`));
      assert.match(
        r.stderr,
        new RegExp(`${dir} is not on PATH; add it, e\\.g\\. in ~/\\.profile: export PATH="${dir}:\\$PATH"`),
      );
      const archive = archiveName(HOST_TARGET);
      assert.deepEqual(rel.requests, [
        `GET /releases/latest/download/${archive}`,
        `GET /releases/download/v0.3.0/${archive}`,
        `GET /releases/latest/download/${archive}.sha256`,
        `GET /releases/download/v0.3.0/${archive}.sha256`,
      ]);
    } finally {
      await rel.close();
    }
  },
});

Deno.test({
  name: "installer: the default directory is ~/.agent-block/bin; no PATH advice when it is on PATH",
  ignore: !posix,
  fn: async () => {
    const rel = await fakeRelease({ versions: RELEASES, latest: "0.3.0" });
    try {
      const home = await tempDir("ab_inst_home_");
      const dir = join(home, ".agent-block", "bin");
      const r = await install(
        [],
        { AGENT_BLOCK_DOWNLOAD_URL: rel.url, HOME: home },
        `${dir}:${Deno.env.get("PATH")}`,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await versionOf(join(dir, "agent-block")), "agent-block 0.3.0");
      assert.doesNotMatch(r.stderr, /not on PATH/);
    } finally {
      await rel.close();
    }
  },
});

Deno.test({
  name: "attack: installer: an archive that does not match its checksum is refused and nothing is installed",
  ignore: !posix,
  fn: async () => {
    const rel = await fakeRelease({ versions: RELEASES, latest: "0.3.0", corrupt: ["0.2.1"] });
    try {
      const root = await tempDir("ab_inst_bad_");
      const fresh = join(root, "fresh");
      let r = await install(["--version", "0.2.1"], {
        AGENT_BLOCK_DOWNLOAD_URL: rel.url,
        AGENT_BLOCK_INSTALL_DIR: fresh,
      });
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /error: checksum mismatch for agent-block-.*: the release says 0{64}, the download is [0-9a-f]{64}; nothing was installed/,
      );
      assert.ok(!exists(fresh), "the install directory was not even created");
      // Over an existing install: it stays as it was, byte for byte, with nothing beside it.
      const kept = join(root, "kept");
      assert.equal(
        (await install([], { AGENT_BLOCK_DOWNLOAD_URL: rel.url, AGENT_BLOCK_INSTALL_DIR: kept })).code,
        0,
      );
      const before = Deno.readFileSync(join(kept, "agent-block"));
      r = await install(["--version", "0.2.1"], {
        AGENT_BLOCK_DOWNLOAD_URL: rel.url,
        AGENT_BLOCK_INSTALL_DIR: kept,
      });
      assert.equal(r.code, 1, r.stderr);
      assert.deepEqual(Deno.readFileSync(join(kept, "agent-block")), before);
      assert.deepEqual([...Deno.readDirSync(kept)].map((e) => e.name), ["agent-block"]);
      assert.equal(await versionOf(join(kept, "agent-block")), "agent-block 0.3.0");
    } finally {
      await rel.close();
    }
  },
});

Deno.test({
  name: "installer: an unknown platform is refused before any download",
  ignore: !posix,
  fn: async () => {
    const rel = await fakeRelease({ versions: RELEASES, latest: "0.3.0" });
    try {
      const root = await tempDir("ab_inst_plat_");
      const fakeBin = join(root, "fakebin");
      Deno.mkdirSync(fakeBin);
      const uname = join(fakeBin, "uname");
      const dir = join(root, "bin");
      const cases: [string, string, RegExp][] = [
        [
          "SunOS",
          "x86_64",
          /error: no prebuilt binary for the OS 'SunOS' \(there are Linux, macOS and Windows ones\)/,
        ],
        [
          "Linux",
          "riscv64",
          /error: no prebuilt binary for the architecture 'riscv64' \(there are x86_64 and aarch64 ones\)/,
        ],
        ["MINGW64_NT-10.0-19045", "x86_64", /error: on Windows use install\.ps1 from the same release/],
      ];
      for (const [os, arch, want] of cases) {
        Deno.writeTextFileSync(
          uname,
          `#!/bin/sh\ncase "$1" in -s) echo '${os}' ;; -m) echo '${arch}' ;; *) echo '${os}' ;; esac\n`,
        );
        Deno.chmodSync(uname, 0o755);
        const r = await install(
          [],
          { AGENT_BLOCK_DOWNLOAD_URL: rel.url, AGENT_BLOCK_INSTALL_DIR: dir },
          `${fakeBin}:${Deno.env.get("PATH")}`,
        );
        assert.equal(r.code, 1, `${os}/${arch}: ${r.stderr}`);
        assert.match(r.stderr, want);
      }
      assert.deepEqual(rel.requests, [], "nothing was downloaded");
      assert.ok(!exists(dir), "nothing was installed");
    } finally {
      await rel.close();
    }
  },
});

Deno.test({
  name: "installer: a re-install is idempotent (same binary, nothing left beside it)",
  ignore: !posix,
  fn: async () => {
    const rel = await fakeRelease({ versions: RELEASES, latest: "0.3.0" });
    try {
      const dir = join(await tempDir("ab_inst_again_"), "bin");
      const env = { AGENT_BLOCK_DOWNLOAD_URL: rel.url, AGENT_BLOCK_INSTALL_DIR: dir };
      const first = await install([], env);
      assert.equal(first.code, 0, first.stderr);
      const bytes = Deno.readFileSync(join(dir, "agent-block"));
      const second = await install([], env);
      assert.equal(second.code, 0, second.stderr);
      assert.equal(second.stderr, first.stderr);
      assert.deepEqual(Deno.readFileSync(join(dir, "agent-block")), bytes);
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["agent-block"]);
      // and a pinned older version over it, then the latest again
      assert.equal((await install(["--version", "0.2.0"], env)).code, 0);
      assert.equal(await versionOf(join(dir, "agent-block")), "agent-block 0.2.0");
      assert.equal((await install([], env)).code, 0);
      assert.deepEqual(Deno.readFileSync(join(dir, "agent-block")), bytes);
    } finally {
      await rel.close();
    }
  },
});

Deno.test({
  name:
    "installer: --version pins a release (0.2.0, v0.2.0, --version=0.2.0); an unknown one installs nothing",
  ignore: !posix,
  fn: async () => {
    const rel = await fakeRelease({ versions: RELEASES, latest: "0.3.0" });
    try {
      const root = await tempDir("ab_inst_pin_");
      for (
        const [i, args] of [["--version", "0.2.0"], ["--version", "v0.2.0"], ["--version=0.2.0"]].entries()
      ) {
        const dir = join(root, `bin${i}`);
        const r = await install(args, { AGENT_BLOCK_DOWNLOAD_URL: rel.url, AGENT_BLOCK_INSTALL_DIR: dir });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(await versionOf(join(dir, "agent-block")), "agent-block 0.2.0");
      }
      assert.ok(
        rel.requests.every((q) => q.startsWith("GET /releases/download/v0.2.0/")),
        rel.requests.join("\n"),
      );
      const dir = join(root, "none");
      const r = await install(["--version", "9.9.9"], {
        AGENT_BLOCK_DOWNLOAD_URL: rel.url,
        AGENT_BLOCK_INSTALL_DIR: dir,
      });
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /error: cannot download http:\/\/127\.0\.0\.1:\d+\/releases\/download\/v9\.9\.9\/agent-block-/,
      );
      assert.ok(!exists(dir));
    } finally {
      await rel.close();
    }
  },
});

Deno.test({
  name: "attack: installer: refuses a plain-http mirror off this machine and a version that is not one",
  ignore: !posix,
  fn: async () => {
    const dir = join(await tempDir("ab_inst_url_"), "bin");
    let r = await install([], {
      AGENT_BLOCK_DOWNLOAD_URL: "http://example.com/releases",
      AGENT_BLOCK_INSTALL_DIR: dir,
    });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /AGENT_BLOCK_DOWNLOAD_URL must be an https:\/\/ URL \(plain http only from this machine\), got 'http:\/\/example\.com\/releases'/,
    );
    r = await install([], {
      AGENT_BLOCK_DOWNLOAD_URL: "http://127.0.0.1.example.com/releases",
      AGENT_BLOCK_INSTALL_DIR: dir,
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /must be an https:\/\/ URL/);
    for (const v of ["../../x", "latest/../1", "1.0.0/evil", "", "x1"]) {
      r = await install(["--version", v], { AGENT_BLOCK_INSTALL_DIR: dir });
      assert.equal(r.code, 1, v);
      assert.match(r.stderr, /--version must be a release version like 0\.2\.0/, v);
    }
    r = await install(["--bogus"], { AGENT_BLOCK_INSTALL_DIR: dir });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /unknown argument '--bogus'/);
    assert.ok(!exists(dir));
  },
});

Deno.test({
  name:
    "attack: installer: a mirror URL whose host only starts like this machine's (http://localhost:@other-host/) is refused",
  ignore: !posix,
  fn: async () => {
    const dir = join(await tempDir("ab_inst_host_"), "bin");
    for (
      const url of [
        "http://localhost:@example.com/releases",
        "http://127.0.0.1:80@example.com/releases",
        "http://localhost:x/releases",
        "http://[::1]:1@example.com/",
        "http://localhost.example.com/releases",
      ]
    ) {
      const r = await install([], { AGENT_BLOCK_DOWNLOAD_URL: url, AGENT_BLOCK_INSTALL_DIR: dir });
      assert.equal(r.code, 1, url);
      assert.match(r.stderr, /must be an https:\/\/ URL \(plain http only from this machine\)/, url);
      assert.doesNotMatch(r.stderr, /downloading/, url);
    }
    assert.ok(!exists(dir));
  },
});

Deno.test({
  name: "attack: installer: an archive whose binary is a symlink is refused; the file it names is untouched",
  ignore: !posix,
  fn: async () => {
    const root = await tempDir("ab_inst_link_");
    const victim = join(root, "victim");
    Deno.writeTextFileSync(victim, "#!/bin/sh\necho not agent-block\n");
    Deno.chmodSync(victim, 0o600);
    const rel = await fakeRelease({ versions: RELEASES, latest: "0.3.0", symlinks: { "0.3.0": victim } });
    try {
      const dir = join(root, "bin");
      const r = await install([], { AGENT_BLOCK_DOWNLOAD_URL: rel.url, AGENT_BLOCK_INSTALL_DIR: dir });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /holds no regular file agent-block-.*\/agent-block; nothing was installed/);
      assert.equal(Deno.statSync(victim).mode! & 0o777, 0o600, "the installer did not chmod the victim");
      assert.ok(!exists(dir));
    } finally {
      await rel.close();
    }
  },
});

const shellcheck = Deno.build.os === "windows"
  ? undefined
  : ["/usr/bin/shellcheck", "/usr/local/bin/shellcheck"].find(exists);
if (!shellcheck && Deno.build.os !== "windows") {
  console.error(
    "installer_test: skipping the shellcheck test: shellcheck is not installed (.ci/run installs Debian's)",
  );
}

Deno.test({
  name: "installer: install.sh, action/run.sh and tools/smoke_test.sh are POSIX sh that shellcheck passes",
  ignore: !shellcheck,
  fn: async () => {
    const files = ["install.sh", "action/run.sh", "tools/smoke_test.sh"].map((f) => join(REPO_ROOT, f));
    const r = await new Deno.Command(shellcheck!, {
      args: ["--shell=sh", "--severity=style", ...files],
      stdout: "piped",
      stderr: "piped",
    })
      .output();
    assert.equal(r.code, 0, dec(r.stdout) + dec(r.stderr));
    for (const f of files) assert.match(Deno.readTextFileSync(f), /^#!\/bin\/sh\n/);
  },
});

function onPath(cmd: string): boolean {
  const sepChar = Deno.build.os === "windows" ? ";" : ":";
  const exts = Deno.build.os === "windows" ? [".exe", ".cmd", ""] : [""];
  return (Deno.env.get("PATH") ?? "").split(sepChar).some((d) => exts.some((x) => exists(join(d, cmd + x))));
}

const ps1Ready = Deno.build.os === "windows" && onPath("pwsh") && onPath("zip");
if (!ps1Ready) {
  console.error(
    "installer_test: skipping the install.ps1 test: it needs Windows with pwsh and zip " +
      "(the action-test workflow runs install.ps1 on a Windows runner)",
  );
}

Deno.test({
  name:
    "installer: install.ps1 installs a checked release and refuses a checksum mismatch (Windows with pwsh)",
  ignore: !ps1Ready,
  fn: async () => {
    const rel = await fakeRelease({ versions: RELEASES, latest: "0.3.0", corrupt: ["0.2.1"] });
    try {
      const dir = join(await tempDir("ab_inst_ps1_"), "bin");
      const ps = (args: string[]) =>
        new Deno.Command("pwsh", {
          args: ["-NoProfile", "-NonInteractive", "-File", join(REPO_ROOT, "install.ps1"), ...args],
          env: testEnv({ AGENT_BLOCK_DOWNLOAD_URL: rel.url, AGENT_BLOCK_INSTALL_DIR: dir }),
          stdout: "piped",
          stderr: "piped",
        }).output();
      let r = await ps(["-Version", "0.2.1"]);
      assert.notEqual(r.code, 0);
      assert.match(dec(r.stderr) + dec(r.stdout), /checksum mismatch/);
      assert.ok(!exists(join(dir, "agent-block.exe")));
      r = await ps([]);
      assert.equal(r.code, 0, dec(r.stderr));
      assert.ok(exists(join(dir, "agent-block.exe")));
    } finally {
      await rel.close();
    }
  },
});
