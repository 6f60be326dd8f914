// The replay window's memory (src/clients/mesh/seen_ids.ts): an id is refused again until its
// message is stale by its own stamp (a sender clock ahead of ours included), in memory and in the
// project's file, where a second opener (the agent's next run) still refuses it; and where that
// file is (the home's mesh-seen/, which the sandbox keeps read-only).
import assert from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import { FileSeenIds, FRESH_MS, MemorySeenIds, meshSeenFile } from "../../src/clients/mesh/seen_ids.ts";
import { meshSeenDir } from "../../src/home.ts";
import { HOME_READ_ONLY } from "../../src/sandbox/policy.ts";
import { tempDir } from "../helpers.ts";

Deno.test("attack: mesh seen ids refuse a replay while the message is fresh, across openers of the file", async () => {
  const file = join(await tempDir("ab_seen_"), "mesh_seen.sqlite");
  const now = Date.now();
  for (const make of [() => new MemorySeenIds(), () => new FileSeenIds(file)]) {
    const seen = make();
    const ahead = now + FRESH_MS - 1000; // stamped by a sender whose clock is ahead: still fresh
    assert.equal(seen.add("id-1", ahead, now), true);
    assert.equal(seen.add("id-1", ahead, now), false);
    // past arrival + window, but the stamp keeps it fresh until ts + window: still refused
    assert.equal(seen.add("id-1", ahead, now + FRESH_MS + 500), false);
    assert.equal(seen.add("id-2", now, now), true);
    seen.close();
  }
  const again = new FileSeenIds(file); // the next run of the agent
  try {
    assert.equal(again.add("id-2", now, now + 1), false, "remembered across openers");
    assert.equal(again.add("id-2", now, now + 2 * FRESH_MS), true, "forgotten once stale");
  } finally {
    again.close();
  }
});

Deno.test("mesh seen ids: a project's memory is one file in the home's mesh-seen/, whatever name reaches the project", async () => {
  const base = await tempDir("ab_seen_file_");
  const home = join(base, "home");
  const project = join(base, "project");
  Deno.mkdirSync(project);
  Deno.symlinkSync(project, join(base, "link"));
  const file = meshSeenFile(home, project);
  assert.equal(dirname(file), meshSeenDir(home));
  assert.equal(
    meshSeenFile(home, join(base, "link")),
    file,
    "a symlink to the project names the same memory",
  );
  assert.equal(meshSeenFile(home, project + "/"), file);
  assert.notEqual(meshSeenFile(home, base), file, "another project has its own");
  // the sandbox keeps the same directory read-only (policy.ts)
  assert.ok(HOME_READ_ONLY.includes(basename(meshSeenDir(home))));
});
