/**
 * `agent-block … | head`: when stdout's reader goes away, the run is not failed by its next
 * `print` (src/obs/log.ts writeStdout). The rest of the output is dropped with one warning on
 * stderr, and the script runs to its end. The reader closes its end of the pipe first and only
 * then lets the script go on printing (a file the script waits for), so the write that meets the
 * closed pipe is certain, not a matter of timing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, tempProject } from "../helpers.ts";

const SCRIPT = `print("first")
while not std.fs.exists("go") do std.task.sleep(0.01) end
for i = 1, 2000 do print("line " .. i) end
io.write("and io.write too\\n")
io.stdout:write("and io.stdout:write\\n")
return "finished"
`;

async function closedStdoutRun(args: string[], root: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, ...args],
    cwd: root,
    env: { NO_COLOR: "1", AGENT_BLOCK_HOME: join(root, "_home") },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.getReader();
  let seen = "";
  while (!seen.includes("first\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += new TextDecoder().decode(value);
  }
  await reader.cancel(); // the reader goes away, as `head` does
  Deno.writeTextFileSync(join(root, "go"), "");
  const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
  return { seen, code: status.code, stderr };
}

Deno.test("a closed stdout does not fail the run: the rest is discarded with one warning", async () => {
  const root = await tempProject({ "gen.lua": SCRIPT });
  const r = await closedStdoutRun(["-s", "gen.lua", "--result", "r.out"], root);
  assert.equal(r.seen, "first\n");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(Deno.readTextFileSync(join(root, "r.out")), "finished", "the script ran to its end");
  assert.equal(
    r.stderr,
    "[warn] agent-block: stdout was closed by its reader; the rest of the output is discarded\n",
  );
  assert.doesNotMatch(r.stderr, /traceback|Broken pipe|internal failure/i);
});
