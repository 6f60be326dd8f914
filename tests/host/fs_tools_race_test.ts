/**
 * The file tools against an attacker who changes the tree between the confinement check and the
 * file operation (issue 14, §7), and who plants hard links: deterministic, through the seam
 * `confinedIoSeam.beforeOpen` of `src/host/fs_tools/confined_io.ts`, which runs after `confine`
 * approved the path and before anything is opened. There each test swaps a directory or a file
 * for a symbolic link to a directory outside the roots, as a racing process would at the worst
 * moment; the tool must fail with a clear error and nothing outside may be read, written, created
 * or removed. The tools run in this process (`runLua`), so the seam set here is the one they see.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertIncludes, runLua, tempDir } from "../helpers.ts";
import { confinedIoSeam } from "../../src/host/fs_tools/confined_io.ts";

/** A project and a directory beside it (outside the roots) holding `secret.txt`. */
async function layout() {
  const base = await tempDir("ab_fsrace_");
  const proj = join(base, "proj");
  const out = join(base, "outside");
  Deno.mkdirSync(join(proj, "sub"), { recursive: true });
  Deno.mkdirSync(out);
  Deno.writeTextFileSync(join(out, "secret.txt"), "SECRET\n");
  Deno.writeTextFileSync(join(proj, "sub", "secret.txt"), "inside\n");
  Deno.writeTextFileSync(join(proj, "f.txt"), "one\n");
  return { base, proj, out };
}

/**
 * Calls one tool from Lua with `swap` run between the check and the open (or, with `late`, between
 * opening the file's directory and the file); answers its text.
 */
async function callWith(
  proj: string,
  swap: (() => void) | undefined,
  name: string,
  input: string,
  late = false,
) {
  if (late) confinedIoSeam.beforeLast = swap;
  else confinedIoSeam.beforeOpen = swap;
  try {
    const r = await runLua(
      `std.fs.register_tools({ allowed = { "fs_write", "fs_rollback", "fs_search_replace" } })
       local ok, v = pcall(tool.call, ${JSON.stringify(name)}, ${input})
       return ok and v or ("ERR " .. tostring(v))`,
      { projectRoot: proj },
    );
    if (r.outcome.status !== "returned") throw new Error(JSON.stringify(r.outcome));
    return r.outcome.value as string;
  } finally {
    confinedIoSeam.beforeOpen = confinedIoSeam.beforeLast = undefined;
  }
}

/** Replaces the directory entry `path` by a symlink to `to` (the original kept beside it). */
const swapForLink = (path: string, to: string) => () => {
  Deno.renameSync(path, path + ".orig");
  Deno.symlinkSync(to, path);
};

const listing = (dir: string) => [...Deno.readDirSync(dir)].map((e) => e.name).sort();
const SWAPPED = "a symbolic link replaced part of the path after it was checked";

Deno.test("attack: fs_read of a file whose directory is swapped for a symlink after the check reads nothing outside", async () => {
  const { proj, out } = await layout();
  const r = await callWith(
    proj,
    swapForLink(join(proj, "sub"), out),
    "fs_read",
    `{ path = "sub/secret.txt" }`,
  );
  assert.equal(r, `ERR fs_read: sub/secret.txt: ${SWAPPED}; nothing was read or written`);
});

Deno.test("attack: fs_read of a file swapped for a symlink after the check reads nothing outside", async () => {
  const { proj, out } = await layout();
  const r = await callWith(
    proj,
    swapForLink(join(proj, "sub", "secret.txt"), join(out, "secret.txt")),
    "fs_read",
    `{ path = "sub/secret.txt" }`,
  );
  assert.equal(r, `ERR fs_read: sub/secret.txt: ${SWAPPED}; nothing was read or written`);
});

Deno.test("attack: fs_write through a directory swapped for a symlink after the check writes and creates nothing outside", async () => {
  const { proj, out } = await layout();
  for (const file of ["secret.txt", "new.txt"]) {
    const sub = join(proj, "sub");
    try {
      Deno.removeSync(sub, { recursive: true });
    } catch { /* first round */ }
    Deno.mkdirSync(sub);
    const r = await callWith(
      proj,
      swapForLink(sub, out),
      "fs_write",
      `{ path = "sub/${file}", content = "PWNED" }`,
    );
    assertIncludes(r, `ERR fs_write: sub/${file}: ${SWAPPED}`);
    Deno.removeSync(sub);
    Deno.removeSync(sub + ".orig", { recursive: true });
  }
  assert.equal(Deno.readTextFileSync(join(out, "secret.txt")), "SECRET\n");
  assert.deepEqual(listing(out), ["secret.txt"]);
});

Deno.test("attack: fs_write, fs_edit and fs_search_replace of a file swapped for a symlink after the check leave the target alone", async () => {
  const { proj, out } = await layout();
  const target = join(out, "secret.txt");
  const calls: [string, string][] = [
    ["fs_write", `{ path = "f.txt", content = "PWNED" }`],
    ["fs_edit", `{ path = "f.txt", start_line = 1, end_line = 1, expect = "one", content = "PWNED" }`],
    ["fs_search_replace", `{ path = "f.txt", search = "one", replace = "PWNED" }`],
  ];
  for (const [tool, input] of calls) {
    const f = join(proj, "f.txt");
    Deno.removeSync(f);
    try {
      Deno.removeSync(f + ".orig");
    } catch { /* first round */ }
    Deno.writeTextFileSync(f, "one\n");
    const r = await callWith(proj, swapForLink(f, target), tool, input);
    assertIncludes(r, `ERR ${tool}: f.txt: ${SWAPPED}`, tool);
  }
  assert.equal(Deno.readTextFileSync(target), "SECRET\n");
});

Deno.test("attack: fs_write creating directories under a parent swapped for a symlink after the check creates nothing outside", async () => {
  const { proj, out } = await layout();
  const r = await callWith(
    proj,
    swapForLink(join(proj, "sub"), out),
    "fs_write",
    `{ path = "sub/a/b/new.txt", content = "PWNED" }`,
  );
  assertIncludes(r, `ERR fs_write: sub/a/b/new.txt: ${SWAPPED}`);
  assert.deepEqual(listing(out), ["secret.txt"]);
  // without an attacker the same call creates the directories inside
  Deno.removeSync(join(proj, "sub"));
  Deno.renameSync(join(proj, "sub.orig"), join(proj, "sub"));
  const ok = await callWith(proj, undefined, "fs_write", `{ path = "sub/a/b/new.txt", content = "fine" }`);
  assert.equal(ok, "fs_write: wrote sub/a/b/new.txt (4 bytes)");
  assert.equal(Deno.readTextFileSync(join(proj, "sub", "a", "b", "new.txt")), "fine");
});

Deno.test("attack: fs_rollback after its directory was swapped for a symlink removes and restores nothing outside", async () => {
  for (const at of [3, 4]) {
    const { proj, out } = await layout();
    Deno.writeTextFileSync(join(out, "made.txt"), "outside\n");
    const r = await runLuaRollback(proj, swapForLink(join(proj, "sub"), out), at);
    const attacked = (p: string) => `ERR fs_rollback: ${p}: ${SWAPPED}; nothing was read or written`;
    assert.deepEqual(r.split("\n"), [
      "fs_write: wrote sub/made.txt (3 bytes)",
      "fs_write: wrote sub/secret.txt (3 bytes)",
      // swapped at the restore: the removal then finds the link at its own check
      at === 3
        ? attacked("sub/secret.txt")
        : "fs_rollback: sub/secret.txt restored; 0 earlier edit(s) of it can still be undone",
      at === 3
        ? `ERR fs_rollback: path 'sub/made.txt' is outside the allowed roots (${proj})`
        : attacked("sub/made.txt"),
    ]);
    assert.equal(Deno.readTextFileSync(join(out, "made.txt")), "outside\n", "an outside file was removed");
    assert.equal(
      Deno.readTextFileSync(join(out, "secret.txt")),
      "SECRET\n",
      "an outside file was restored over",
    );
  }
});

/**
 * Writes two files in `sub`, then rolls both back (the newest first), `swap` running at the
 * `at`-th check the seam sees (3: the first rollback's, 4: the second's).
 */
async function runLuaRollback(proj: string, swap: () => void, at: number): Promise<string> {
  let seen = 0;
  confinedIoSeam.beforeOpen = () => {
    if (++seen === at) swap();
  };
  try {
    const r = await runLua(
      `std.fs.register_tools({ allowed = { "fs_write", "fs_rollback" } })
       local out = {}
       local function call(name, input)
         local ok, v = pcall(tool.call, name, input)
         out[#out + 1] = ok and v or ("ERR " .. tostring(v))
       end
       call("fs_write", { path = "sub/made.txt", content = "new" })
       call("fs_write", { path = "sub/secret.txt", content = "new" })
       call("fs_rollback", { path = "sub/secret.txt" })
       call("fs_rollback", { path = "sub/made.txt" })
       return table.concat(out, "\\n")`,
      { projectRoot: proj },
    );
    if (r.outcome.status !== "returned") throw new Error(JSON.stringify(r.outcome));
    return r.outcome.value as string;
  } finally {
    confinedIoSeam.beforeOpen = undefined;
  }
}

Deno.test("attack: the file's directory moved out of the roots after the walk opened it: no read, no write, nothing left outside", async () => {
  const { proj, out } = await layout();
  const moveOut = () => Deno.renameSync(join(proj, "sub"), join(out, "sub"));
  const moved = "was moved outside the allowed roots";
  const read = await callWith(proj, moveOut, "fs_read", `{ path = "sub/secret.txt" }`, true);
  assertIncludes(read, `ERR fs_read: sub/secret.txt ${moved}`);
  Deno.renameSync(join(out, "sub"), join(proj, "sub"));
  const write = await callWith(
    proj,
    moveOut,
    "fs_write",
    `{ path = "sub/secret.txt", content = "PWNED" }`,
    true,
  );
  assertIncludes(write, `ERR fs_write: sub/secret.txt ${moved}`);
  Deno.renameSync(join(out, "sub"), join(proj, "sub"));
  const create = await callWith(
    proj,
    moveOut,
    "fs_write",
    `{ path = "sub/new.txt", content = "PWNED" }`,
    true,
  );
  assertIncludes(create, `ERR fs_write: sub/new.txt ${moved}`);
  assert.equal(Deno.readTextFileSync(join(out, "sub", "secret.txt")), "inside\n");
  assert.deepEqual(listing(join(out, "sub")), ["secret.txt"], "a file was created outside");
});

Deno.test("attack: writing through a hard link to a file outside the roots is refused; reading it is not", async () => {
  const { proj, out } = await layout();
  const target = join(out, "secret.txt");
  Deno.linkSync(target, join(proj, "hard.txt"));
  const refused = "hard.txt has 2 hard links; the file tools do not write through a hard link, " +
    "whose other names may be outside the allowed roots";
  const calls: [string, string][] = [
    ["fs_write", `{ path = "hard.txt", content = "PWNED" }`],
    ["fs_edit", `{ path = "hard.txt", start_line = 1, end_line = 1, expect = "SECRET", content = "PWNED" }`],
    ["fs_search_replace", `{ path = "hard.txt", search = "SECRET", replace = "PWNED" }`],
  ];
  for (const [tool, input] of calls) {
    assert.equal(await callWith(proj, undefined, tool, input), `ERR ${tool}: ${refused}`);
  }
  assert.equal(Deno.readTextFileSync(target), "SECRET\n");
  assert.equal(
    await callWith(proj, undefined, "fs_read", `{ path = "hard.txt" }`),
    "hard.txt: lines 1-1 of 1\n     1\tSECRET",
  );
});

Deno.test("fs tools: a FIFO is refused without blocking the run; a directory is named as one", async () => {
  const { proj } = await layout();
  const mkfifo = await new Deno.Command("mkfifo", { args: [join(proj, "pipe")] }).output();
  assert.equal(mkfifo.code, 0);
  assert.equal(
    await callWith(proj, undefined, "fs_read", `{ path = "pipe" }`),
    "ERR fs_read: pipe is not a regular file",
  );
  assert.equal(
    await callWith(proj, undefined, "fs_write", `{ path = "pipe", content = "x" }`),
    "ERR fs_write: pipe is not a regular file",
  );
  assert.equal(
    await callWith(proj, undefined, "fs_read", `{ path = "sub" }`),
    "ERR fs_read: sub is a directory",
  );
  assert.equal(
    await callWith(proj, undefined, "fs_write", `{ path = "sub", content = "x" }`),
    "ERR fs_write: sub: Is a directory",
  );
});
