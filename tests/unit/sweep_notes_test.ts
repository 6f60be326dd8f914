/**
 * `src/sandbox/sweep_notes.ts`: whether a killed sandbox launcher left a sweep of a project undone
 * (what every CLI command asks before it reads the project's `.env`), and the worker's kernel
 * export that will not read a `.env` while one is owed. Notes are written here as a launcher
 * writes them (`<pid>-<start>.json`, the plan's `roots` first the project); a gone launcher is a
 * pid no process has.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { leftoverSweep, processKey, SWEEPS_DIR } from "../../src/sandbox/sweep_notes.ts";
import { runKernelExport } from "../../src/serve/run_export.ts";
import { tempDir } from "../helpers.ts";

/** A pid no process has now (pid_max is at most 2^22). */
const GONE = 4_194_304 + 7;

async function world() {
  const home = await tempDir("ab_notes_home_");
  const project = await tempDir("ab_notes_proj_");
  Deno.mkdirSync(join(home, SWEEPS_DIR));
  const note = (name: string, text: string) => Deno.writeTextFileSync(join(home, SWEEPS_DIR, name), text);
  return { home, project, note };
}

Deno.test("sweep notes: a gone launcher's note of the project is owed; its own, others' and done ones are not", async () => {
  const { home, project, note } = await world();
  assert.equal(leftoverSweep(home, project), false, "no note");
  note(`${processKey(Deno.pid)}.json`, JSON.stringify({ roots: [project] }));
  assert.equal(leftoverSweep(home, project), false, "its launcher still runs");
  note(`${GONE}-1.json`, "");
  assert.equal(leftoverSweep(home, project), false, "an empty note is a sweep done");
  note(`${GONE}-2.json`, JSON.stringify({ roots: ["/somewhere/else"] }));
  assert.equal(leftoverSweep(home, project), false, "another project's");
  note(`${GONE}-3.json`, "{ torn");
  assert.equal(leftoverSweep(home, project), false, "unreadable: the sweep that reads it says so");
  note(`${GONE}-4.json`, JSON.stringify({ roots: [Deno.realPathSync(project)] }));
  assert.equal(leftoverSweep(home, project), true);
  // the project named through a symlink is the same project
  const link = join(await tempDir("ab_notes_link_"), "p");
  Deno.symlinkSync(project, link);
  assert.equal(leftoverSweep(home, link), true);
  assert.equal(leftoverSweep(join(home, "nowhere"), project), false, "a home without notes");
});

Deno.test("sweep notes: a worker does not read a project's .env for its kernel export while a sweep is owed", async () => {
  const { home, project, note } = await world();
  Deno.writeTextFileSync(join(project, ".env"), "AGENT_BLOCK_KNL_PATH=/elsewhere/kernel.sqlite\n");
  let read: string | undefined;
  const pathOf = (env: Readonly<Record<string, string>>) => (read = env.AGENT_BLOCK_KNL_PATH, undefined);
  const before = runKernelExport(project, {}, ["s_1"], pathOf, (root) => leftoverSweep(home, root));
  assert.ok("why" in before);
  assert.equal(read, "/elsewhere/kernel.sqlite", "read when nothing is owed");
  read = undefined;
  note(`${GONE}-5.json`, JSON.stringify({ roots: [Deno.realPathSync(project)] }));
  const owed = runKernelExport(project, {}, ["s_1"], pathOf, (root) => leftoverSweep(home, root));
  assert.ok("why" in owed);
  assert.match(owed.why, /killed before its sweep/);
  assert.equal(read, undefined, "the .env was not read");
});
