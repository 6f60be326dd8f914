/**
 * A fake GitHub releases page on 127.0.0.1 for the installer and Action tests: real archives
 * packed by `tools/release_archive.ts` (real tar and xz), their `.sha256` files and
 * `checksums.txt`, served in GitHub's layout:
 * - `/releases/download/v<X>/<file>`;
 * - `/releases/latest/download/<file>` → 302 to the latest version's file;
 * - `/releases/latest` → 302 to `/releases/tag/v<latest>` (200), as GitHub redirects it.
 * Each version's "binary" is a shell script the test gives (a stand-in answering `--version`, or a
 * wrapper running the source CLI). `corrupt` versions are served with a `.sha256` that does not
 * match; `symlinks` versions hold a symlink where the binary belongs. Every request is recorded; `close()` stops the server (call it in `finally`).
 */
import { join } from "node:path";
import { REPO_ROOT, tempDir } from "../helpers.ts";
import {
  archiveName,
  binaryName,
  packageTarget,
  stageDirName,
  type Target,
  writeChecksums,
} from "../../tools/release_archive.ts";

/** A running fake release server. */
export interface FakeRelease {
  /** The releases page's URL, what `AGENT_BLOCK_DOWNLOAD_URL` names. */
  url: string;
  /** Request paths in order (`GET /releases/...`). */
  requests: string[];
  /** Stops the server. */
  close(): Promise<void>;
}

/** The target of this machine, as the installer detects it. */
export const HOST_TARGET = Deno.build.target as Target;

/** A stand-in binary: a shell script that answers `--version` as agent-block `version` would. */
export function fakeBinary(version: string): string {
  return `#!/bin/sh\nif [ "$1" = --version ]; then\n  printf 'agent-block %s\\ncommit fake\\n' ${version}\n  exit 0\nfi\n` +
    `echo "fake agent-block ${version}: $*"\n`;
}

/** Packs and serves the given versions (version → binary text); `latest` is one of them. */
export async function fakeRelease(
  opts: {
    versions: Record<string, string>;
    latest: string;
    corrupt?: string[];
    /** Versions whose archived binary is a symlink to this path instead (version → target). */
    symlinks?: Record<string, string>;
  },
): Promise<FakeRelease> {
  const root = await tempDir("ab_fake_release_");
  for (const [version, binary] of Object.entries(opts.versions)) {
    const dir = join(root, `v${version}`);
    Deno.mkdirSync(join(dir, stageDirName(HOST_TARGET)), { recursive: true });
    const bin = join(dir, stageDirName(HOST_TARGET), binaryName(HOST_TARGET));
    const link = opts.symlinks?.[version];
    if (link !== undefined) Deno.symlinkSync(link, bin);
    else {
      Deno.writeTextFileSync(bin, binary);
      Deno.chmodSync(bin, 0o755);
    }
    const archive = await packageTarget(dir, HOST_TARGET, REPO_ROOT);
    if (opts.corrupt?.includes(version)) {
      Deno.writeTextFileSync(`${archive}.sha256`, `${"0".repeat(64)}  ${archiveName(HOST_TARGET)}\n`);
    }
    writeChecksums(dir);
  }
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    requests.push(`${req.method} ${path}`);
    const redirect = (to: string) => new Response(null, { status: 302, headers: { location: to } });
    let m = path.match(/^\/releases\/latest\/download\/([^/]+)$/);
    if (m) return redirect(`/releases/download/v${opts.latest}/${m[1]}`);
    if (path === "/releases/latest") return redirect(`/releases/tag/v${opts.latest}`);
    m = path.match(/^\/releases\/tag\/v([^/]+)$/);
    if (m && m[1] in opts.versions) return new Response(`release v${m[1]}\n`);
    m = path.match(/^\/releases\/download\/v([^/]+)\/([^/]+)$/);
    if (m && m[1] in opts.versions && !m[2].startsWith(".")) {
      try {
        return new Response(Deno.readFileSync(join(root, `v${m[1]}`, m[2])));
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    }
    return new Response("Not Found\n", { status: 404 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/releases`,
    requests,
    close: () => server.shutdown(),
  };
}
