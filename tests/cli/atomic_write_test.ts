/**
 * Atomic writes killed in the middle (issue 14, §6): a real writer process (the fixture
 * `tests/fixtures/atomic_writer.ts`, the real `writeAtomic`) stops after the first chunk of a
 * large file reached its temporary file and is SIGKILLed there — deterministic, no timing: the
 * writer says where it stopped and waits. The target keeps its old content whole; the temporary
 * file of a live writer is left alone by another process's write into the same directory; once
 * the writer is dead, the next `--result` into that directory removes it. Where `strace` runs, the
 * order of the system calls shows the data fsynced before the rename and the directory after.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runCli, tempProject, waitFor } from "../helpers.ts";

const WRITER = join(REPO_ROOT, "tests/fixtures/atomic_writer.ts");
const exists = (p: string) => {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

Deno.test("attack: a writer SIGKILLed in the middle of a large atomic write leaves the old file whole; the next --result removes its temporary file", async () => {
  const root = await tempProject({ "r.lua": `return "new result"` });
  const target = join(root, "out.txt");
  const marker = join(root, "writer.marker");
  Deno.writeTextFileSync(target, "old content");
  const writer = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", WRITER, target, marker, "32"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    await waitFor(() => exists(marker), { what: "the writer to stop in the middle of its write" });
    const { tmp, written } = JSON.parse(Deno.readTextFileSync(marker)) as { tmp: string; written: number };
    assert.equal(written, 8 << 20, "stopped after the first 8 MiB chunk of 32");
    assert.equal(Deno.statSync(tmp).size, written, "the temporary file holds the part written");
    assert.match(tmp, /\/\.ab-tmp-\d+-[0-9a-f]{8}-[0-9a-f]{12}\.tmp$/);

    // Another process writing into the directory meanwhile leaves a live writer's file alone.
    const beside = await runCli(["-s", "r.lua", "--result", "beside.txt"], { cwd: root });
    assert.equal(beside.code, 0, beside.stderr);
    assert.ok(exists(tmp), "a live writer's temporary file was removed");

    writer.kill("SIGKILL");
    const status = await writer.status;
    assert.equal(status.signal, "SIGKILL");
    assert.equal(Deno.readTextFileSync(target), "old content", "the target was touched");
    assert.ok(exists(tmp), "the killed writer's temporary file is there (nothing could remove it)");

    const next = await runCli(["-s", "r.lua", "--result", "out.txt"], { cwd: root });
    assert.equal(next.code, 0, next.stderr);
    assert.equal(Deno.readTextFileSync(target), "new result");
    const left = [...Deno.readDirSync(root)].map((e) => e.name).filter((n) => n.endsWith(".tmp"));
    assert.deepEqual(left, [], "the dead writer's temporary file was left behind");
  } finally {
    try {
      writer.kill("SIGKILL");
    } catch { /* already gone */ }
    await writer.status;
    await writer.stderr.cancel();
  }
});

/** True when `strace` runs here (installed, and ptrace allowed). */
function straceWorks(): boolean {
  try {
    return new Deno.Command("strace", {
      args: ["-qq", "-e", "trace=none", "true"],
      stdout: "null",
      stderr: "null",
    })
      .outputSync().success;
  } catch {
    return false;
  }
}

Deno.test({
  name: "writeAtomic fsyncs the data before the rename and the directory after (seen by strace)",
  ignore: !straceWorks(),
  fn: async () => {
    const root = await tempProject();
    const target = join(root, "out.txt");
    const trace = join(root, "trace.txt");
    const r = await new Deno.Command("strace", {
      args: [
        "-f",
        "-qq",
        "-e",
        "trace=openat,fsync,fdatasync,rename,renameat,renameat2",
        "-o",
        trace,
        Deno.execPath(),
        "eval",
        `import { writeAtomic } from ${JSON.stringify(join(REPO_ROOT, "src/util/fs.ts"))};` +
        `writeAtomic(${JSON.stringify(target)}, "durable\\n");`,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
    assert.equal(Deno.readTextFileSync(target), "durable\n");
    // From the temporary file's creation on: its fd fsynced, the rename, the directory opened and fsynced.
    const lines = Deno.readTextFileSync(trace).split("\n").map((l) => l.replace(/^\d+\s+/, ""));
    const start = lines.findIndex((l) =>
      l.startsWith("openat(") && l.includes("/.ab-tmp-") && l.includes("O_CREAT")
    );
    assert.ok(start >= 0, `no creation of a temporary file in:\n${lines.join("\n")}`);
    const fd = /= (\d+)$/.exec(lines[start])![1];
    const steps = lines.slice(start + 1).filter((l) => /^(fsync|fdatasync|rename|openat)/.test(l));
    const rename = steps.findIndex((l) => l.startsWith("rename") && l.includes(JSON.stringify(target)));
    assert.ok(rename > 0, `no rename onto the target after it:\n${steps.join("\n")}`);
    assert.ok(
      steps.slice(0, rename).some((l) => l.startsWith(`fsync(${fd})`)),
      `the data was not fsynced before the rename:\n${steps.join("\n")}`,
    );
    const dirOpen = steps.findIndex((l, i) =>
      i > rename && l.startsWith("openat(") && l.includes(`"${root}"`)
    );
    assert.ok(dirOpen > rename, `the directory was not opened after the rename:\n${steps.join("\n")}`);
    const dirFd = /= (\d+)$/.exec(steps[dirOpen])![1];
    assert.ok(
      steps.slice(dirOpen + 1).some((l) => l.startsWith(`fsync(${dirFd})`)),
      `the directory was not fsynced:\n${steps.join("\n")}`,
    );
  },
});
