/**
 * Process tags (src/proc/tags.ts) and the parent-death wrapper (src/proc/parent_death.ts): the
 * format, stacking and matching of tags, reading them back from a real child, and a wrapped
 * spawn that still behaves as Deno's own (same pid, same errors for a missing or non-executable
 * program).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ProcessGroups } from "../../src/proc/group.ts";
import { parentDeathWrapper } from "../../src/proc/parent_death.ts";
import { hasTag, newRegistryId, processTags, tagsValue } from "../../src/proc/tags.ts";
import { tempDir, waitFor } from "../helpers.ts";

const linux = Deno.build.os === "linux";

Deno.test("tags: inherited valid tags come first, junk is dropped, the innermost 16 are kept", () => {
  const a = `${newRegistryId()}.1`;
  const b = `${newRegistryId()}.22`;
  assert.match(a, /^[0-9a-f]{16}\.1$/);
  assert.equal(tagsValue(undefined, a), a);
  assert.equal(tagsValue(`${a} ; rm -rf / x.1`, b), `${a} ${b}`);
  const many = Array.from({ length: 20 }, (_, i) => `${"0".repeat(16)}.${i}`).join(" ");
  const v = tagsValue(many, b).split(" ");
  assert.equal(v.length, 16);
  assert.equal(v[15], b);
  assert.equal(v[0], `${"0".repeat(16)}.5`);
});

Deno.test("tags: a tag matches itself; a registry prefix matches its tags only", () => {
  const id = newRegistryId();
  const tags = ["aaaaaaaaaaaaaaaa.3", `${id}.12`];
  assert.ok(hasTag(tags, `${id}.12`));
  assert.ok(!hasTag(tags, `${id}.1`), "one tag is not a prefix of another");
  assert.ok(hasTag(tags, `${id}.`));
  assert.ok(!hasTag(tags, "bbbbbbbbbbbbbbbb."));
});

Deno.test({
  name: "tags: a child's tags are read back from /proc; a pid without any has none",
  ignore: !linux,
  fn: async () => {
    const groups = new ProcessGroups(1000, { PATH: "/usr/bin:/bin" });
    const p = groups.spawn({
      cmd: ["/bin/sh", "-c", "read x"],
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    });
    try {
      // read once the child runs its own program: while it is still being exec'd (through
      // setpriv), /proc/<pid>/environ can show a half-built environment
      await waitFor(() => {
        try {
          return Deno.readTextFileSync(`/proc/${p.pid}/cmdline`).startsWith("/bin/sh\0-c\0read x");
        } catch {
          return false;
        }
      }, { what: "the child to run /bin/sh", timeoutMs: 20_000 });
      assert.deepEqual(processTags(p.pid), [`${groups.id}.1`]);
      assert.deepEqual(processTags(2 ** 22 + 12345), []);
    } finally {
      await p.child.stdin.close();
      await p.status;
    }
  },
});

Deno.test({
  name:
    "parent death: a wrapped child keeps its pid; a missing or non-executable program throws as Deno's spawn",
  ignore: !linux || !("path" in parentDeathWrapper()),
  fn: async () => {
    const dir = await tempDir();
    const groups = new ProcessGroups(1000, { PATH: `/usr/bin:/bin:${dir}` });
    const p = groups.spawn({ cmd: ["sh", "-c", "echo $$"], stderr: "null" });
    const out = await new Response(p.child.stdout).text();
    await p.status;
    assert.equal(Number(out.trim()), p.pid, "setpriv execs the command in place");
    assert.throws(() => groups.spawn({ cmd: ["no-such-program-ab14"] }), Deno.errors.NotFound);
    assert.throws(() => groups.spawn({ cmd: [join(dir, "absent")] }), Deno.errors.NotFound);
    Deno.writeTextFileSync(join(dir, "plain.txt"), "not a program");
    assert.throws(() => groups.spawn({ cmd: [join(dir, "plain.txt")] }), Deno.errors.PermissionDenied);
    assert.throws(() => groups.spawn({ cmd: ["./plain.txt"], cwd: dir }), Deno.errors.PermissionDenied);
    assert.equal(groups.size, 0, "nothing was registered for a spawn that failed");
  },
});
