/**
 * The file tools' confinement (src/host/fs_tools/confine.ts): lexical and symlink escapes, a
 * dangling link on the way, paths that do not exist yet. About files, so on a temporary tree.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { confine, within } from "../../src/host/fs_tools/confine.ts";
import { ToolError } from "../../src/host/fs_tools/tool_error.ts";

const toolError = (fn: () => unknown, message: string) =>
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ToolError, `expected a ToolError, got ${e}`);
    assert.equal((e as Error).message, message);
    return true;
  });

Deno.test("within: the root itself and below it, not a sibling with the same prefix", () => {
  assert.ok(within("/p", "/p"));
  assert.ok(within("/p", "/p/a/b"));
  assert.ok(within("/p/", "/p/a"));
  assert.ok(!within("/p", "/pp"));
  assert.ok(!within("/p", "/"));
});

Deno.test("confine: relative to the project root, real paths, escapes refused", () => {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "ab_confine_" }));
  const outsideDir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "ab_confine_out_" }));
  Deno.mkdirSync(join(root, "src"));
  Deno.writeTextFileSync(join(root, "src", "a.txt"), "a");
  Deno.symlinkSync(outsideDir, join(root, "escape"));
  Deno.symlinkSync(join(root, "src"), join(root, "inside"));
  Deno.symlinkSync(join(root, "nowhere"), join(root, "dangling"));
  const roots = [root];
  try {
    assert.equal(confine(roots, root, "fs_read", "src/a.txt"), join(root, "src", "a.txt"));
    assert.equal(confine(roots, root, "fs_read", join(root, "src", "a.txt")), join(root, "src", "a.txt"));
    assert.equal(
      confine(roots, root, "fs_write", "new/dir/f.txt"),
      join(root, "new", "dir", "f.txt"),
      "not there yet",
    );
    assert.equal(
      confine(roots, root, "fs_read", "inside/a.txt"),
      join(root, "src", "a.txt"),
      "a link inside is followed",
    );
    const outside = `is outside the allowed roots (${root})`;
    toolError(() => confine(roots, root, "fs_read", "../x"), `fs_read: path '../x' ${outside}`);
    toolError(() => confine(roots, root, "fs_read", "/etc/passwd"), `fs_read: path '/etc/passwd' ${outside}`);
    toolError(
      () => confine(roots, root, "fs_write", "escape/f.txt"),
      `fs_write: path 'escape/f.txt' ${outside}`,
    );
    toolError(
      () => confine(roots, root, "fs_write", "dangling/f.txt"),
      "fs_write: path 'dangling/f.txt' goes through a dangling symbolic link",
    );
    toolError(
      () => confine(roots, root, "fs_read", ""),
      "fs_read: input field 'path' must be a non-empty string, got string",
    );
    toolError(
      () => confine(roots, root, "fs_read", 3),
      "fs_read: input field 'path' must be a non-empty string, got number",
    );
    // An extra root admits what is below it.
    assert.equal(confine([root, outsideDir], root, "fs_write", "escape/f.txt"), join(outsideDir, "f.txt"));
  } finally {
    Deno.removeSync(root, { recursive: true });
    Deno.removeSync(outsideDir, { recursive: true });
  }
});
