/**
 * The prebuilt bundle of the CLI (src/cli/prebuilt.ts, tools/gen_bundle.ts): the committed bundle
 * is what the sources build to, it is chosen only while every source matches its manifest, and
 * `cli.ts` runs the sources the moment one does not.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { hashSources, loadPrebuilt, MANIFEST_NAME, STAMPS_NAME } from "../../src/cli/prebuilt.ts";
import { REPO_ROOT } from "../helpers.ts";

const dec = new TextDecoder();

Deno.test("bundle/cli is what the sources build to (run `deno task gen` if this fails)", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(REPO_ROOT, "tools", "gen_bundle.ts"), "--check"],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, dec.decode(out.stderr));
});

/** A directory with `files` (relative path → text), a bundle entry and a manifest over `files`. */
async function withBundleTree(
  files: Record<string, string>,
  fn: (t: {
    root: string;
    load: () => Promise<{ from: string } | undefined>;
    writeManifest: (extra?: Record<string, unknown>) => Promise<void>;
  }) => Promise<void>,
): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "ab_prebuilt_" });
  try {
    const rootUrl = new URL(`file://${root}/`);
    Deno.mkdirSync(join(root, "bundle"));
    for (const [rel, text] of Object.entries(files)) {
      Deno.mkdirSync(dirname(join(root, rel)), { recursive: true });
      Deno.writeTextFileSync(join(root, rel), text);
    }
    Deno.writeTextFileSync(join(root, "bundle", "main.js"), "export const from = 'bundle';\n");
    const sources = Object.keys(files);
    const writeManifest = async (extra: Record<string, unknown> = {}) =>
      Deno.writeTextFileSync(
        join(root, "bundle", MANIFEST_NAME),
        JSON.stringify({
          entry: "./main.js",
          sources,
          sha256: await hashSources(rootUrl, sources),
          ...extra,
        }),
      );
    await writeManifest();
    await fn({ root, load: () => loadPrebuilt(new URL("bundle/", rootUrl), rootUrl), writeManifest });
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
}

Deno.test("loadPrebuilt: the entry only while every listed source is byte-identical", async () => {
  await withBundleTree({ "src/a.ts": "export const a = 1;\n", "src/b.lua": "return 2\n" }, async (t) => {
    const { root, load, writeManifest } = t;
    assert.equal((await load())?.from, "bundle");

    // Bytes moved from one file to the next change the digest too.
    Deno.writeTextFileSync(join(root, "src", "a.ts"), "export const a = 1;\nr");
    Deno.writeTextFileSync(join(root, "src", "b.lua"), "eturn 2\n");
    assert.equal(await load(), undefined, "an edited source");
    Deno.writeTextFileSync(join(root, "src", "a.ts"), "export const a = 1;\n");
    Deno.writeTextFileSync(join(root, "src", "b.lua"), "return 2\n");
    assert.equal((await load())?.from, "bundle", "restored sources match again");

    Deno.removeSync(join(root, "src", "b.lua"));
    assert.equal(await load(), undefined, "a missing source");
    Deno.writeTextFileSync(join(root, "src", "b.lua"), "return 2\n");

    await writeManifest({ entry: "./nowhere.js" });
    assert.equal(await load(), undefined, "an entry that does not load");
    await writeManifest({ sha256: 42 });
    assert.equal(await load(), undefined, "a malformed manifest");
    Deno.writeTextFileSync(join(root, "bundle", MANIFEST_NAME), "{ not json");
    assert.equal(await load(), undefined, "a manifest that is not JSON");
    Deno.removeSync(join(root, "bundle", MANIFEST_NAME));
    assert.equal(await load(), undefined, "no manifest");
  });
});

Deno.test("loadPrebuilt: a verified match is remembered by stat stamps, which any write invalidates", async () => {
  await withBundleTree({ "a.ts": "export const a = 1;\n" }, async ({ root, load }) => {
    const src = join(root, "a.ts");
    const sha256 = JSON.parse(Deno.readTextFileSync(join(root, "bundle", MANIFEST_NAME))).sha256;
    const record = () => JSON.parse(Deno.readTextFileSync(join(root, "bundle", STAMPS_NAME)));

    assert.equal((await load())?.from, "bundle");
    const rec = record();
    assert.equal(rec.sha256, sha256);
    assert.equal(rec.files.length, 1);
    const [size, mtime, , ino] = rec.files[0];
    assert.equal(size, Deno.statSync(src).size);
    assert.equal(ino, Deno.statSync(src).ino);
    assert.equal(mtime, Deno.statSync(src).mtime!.getTime());

    // The record is trusted when it is not racy: a forged one claiming the current stamps for the
    // manifest is believed without reading the contents, which here no longer match.
    Deno.writeTextFileSync(src, "export const a = 2;\n"); // same size, other bytes
    const now = Deno.statSync(src);
    const stamp = [now.size, now.mtime!.getTime(), Math.floor(now.ctime!.getTime() / 1000), now.ino!];
    const forge = (at: number) =>
      Deno.writeTextFileSync(
        join(root, "bundle", STAMPS_NAME),
        JSON.stringify({ sha256, at, files: [stamp] }),
      );
    forge(stamp[2] + 10);
    assert.equal((await load())?.from, "bundle", "stamps that match are believed");
    // ...but not when the ctime falls in the second of the verification (a write then keeps it).
    forge(stamp[2]);
    assert.equal(await load(), undefined, "a racy record falls back to the contents");

    // An edit that keeps the size and puts the old mtime back still changes the ctime or inode.
    Deno.writeTextFileSync(src, "export const a = 1;\n");
    assert.equal((await load())?.from, "bundle");
    const before = record().files[0];
    Deno.writeTextFileSync(src, "export const a = 3;\n");
    Deno.utimeSync(src, new Date(), new Date(before[1]));
    const after = Deno.statSync(src);
    assert.equal(after.mtime!.getTime(), before[1]);
    assert.equal(await load(), undefined, "same size and mtime, other bytes");
  });
});

/** Copies what `cli.ts` needs into a fresh directory (npm packages linked, not copied). */
async function copyCheckout(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "ab_checkout_" });
  const copy = async (rel: string) => {
    const out = await new Deno.Command("cp", { args: ["-R", join(REPO_ROOT, rel), join(dir, rel)] }).output();
    assert.equal(out.code, 0, `cp ${rel}: ${dec.decode(out.stderr)}`);
  };
  for (const rel of ["cli.ts", "deno.json", "deno.lock", "src", "embedded", "bundle"]) await copy(rel);
  Deno.symlinkSync(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

async function versionOf(checkout: string): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", join(checkout, "cli.ts"), "--version"],
    cwd: checkout,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, dec.decode(out.stderr));
  return dec.decode(out.stdout).trim();
}

Deno.test("cli.ts runs the bundle while it matches the sources, and the sources once one is edited", async () => {
  const checkout = await copyCheckout();
  try {
    // Mark the copy's bundle (its manifest does not cover the chunks themselves) to see it run.
    const { VERSION } = await import("../../src/version.ts");
    let marked = 0;
    for (const e of Deno.readDirSync(join(checkout, "bundle", "cli"))) {
      const path = join(checkout, "bundle", "cli", e.name);
      const text = Deno.readTextFileSync(path);
      if (e.name.endsWith(".js") && text.includes(`"${VERSION}"`)) {
        Deno.writeTextFileSync(path, text.replaceAll(`"${VERSION}"`, `"${VERSION}-bundled"`));
        marked++;
      }
    }
    assert.ok(marked > 0, "the version string is in the bundle");
    assert.equal(await versionOf(checkout), `agent-block ${VERSION}-bundled`);

    // An edit to any source the bundle was built from: the sources run, edit included.
    const versionTs = join(checkout, "src", "version.ts");
    Deno.writeTextFileSync(
      versionTs,
      Deno.readTextFileSync(versionTs).replace(`"${VERSION}"`, `"${VERSION}-edited"`),
    );
    assert.equal(await versionOf(checkout), `agent-block ${VERSION}-edited`);
  } finally {
    Deno.removeSync(checkout, { recursive: true });
  }
});
