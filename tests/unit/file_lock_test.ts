/**
 * `util/file_lock.ts`: the whole-life `flock` shared by serve's manager lock and the flow runs'
 * locks — taken without waiting, refused while another open file holds it (in this process too),
 * probed without being kept, and, when its holder removes it, never left locked on a removed file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir, waitFor, waitUnlocked } from "../helpers.ts";
import { lockIsHeld, releaseLockFile, tryLockFile } from "../../src/util/file_lock.ts";

Deno.test("file lock: one holder at a time; a probe does not keep it; a removed lock is free and re-creatable", async () => {
  const dir = await tempDir("ab_flock_");
  const path = join(dir, "x.lock");
  assert.equal(lockIsHeld(path), false, "no file: not held");
  const a = tryLockFile(path, { mode: 0o200 });
  assert.ok(a);
  assert.equal(Deno.statSync(path).mode! & 0o777, 0o200);
  assert.equal(tryLockFile(path, { mode: 0o200 }), undefined, "a second open file is refused");
  assert.equal(lockIsHeld(path), true);
  assert.equal(lockIsHeld(path), true, "the probe let go of nothing it did not have");
  // a taker that opened the file before the holder removed it must not lock the removed file
  const stale = Deno.openSync(path, { write: true });
  releaseLockFile(a, path);
  assert.equal(Deno.statSync(dir).isDirectory && [...Deno.readDirSync(dir)].length, 0, "removed on release");
  assert.equal(lockIsHeld(path), false);
  // free once no child spawned meanwhile by another test file still holds a copy of `a` (helpers.ts:
  // waitUnlocked says why)
  await waitFor(() => stale.tryLockSync(true), {
    what: "the removed file's lock to be free",
    timeoutMs: 10_000,
  });
  const b = tryLockFile(path, { mode: 0o200 });
  assert.ok(b, "a new file is taken while the removed one is locked");
  assert.equal(lockIsHeld(path), true);
  stale.close();
  releaseLockFile(b);
  await waitUnlocked(path, "the lock released without removal to be free");
  assert.ok(Deno.statSync(path).isFile);
});
