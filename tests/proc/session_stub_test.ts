/**
 * The session stub (src/proc/session_stub.ts): run for real, it keeps the command's pid, makes it
 * the leader of a session and process group of its own, and leaves it with SIGKILL as its
 * parent-death signal — a command started through it dies with the process that started it, even
 * a shell of the test's own (not agent-block) SIGKILLed; its exit codes say what failed; and
 * `ProcessGroups` starts children through it.
 */
import assert from "node:assert/strict";
import { ProcessGroups } from "../../src/proc/group.ts";
import { parentDeathWrapper } from "../../src/proc/parent_death.ts";
import { sessionStub, stubElf } from "../../src/proc/session_stub.ts";
import { processAlive, waitFor } from "../helpers.ts";

const stub = sessionStub();
const ignore = !("path" in stub);
if (ignore) console.warn(`session_stub_test: skipped: ${"why" in stub ? stub.why : ""}`);
/** The stub as any process of this user can run it (`/proc/self` would be that process). */
const stubPath = () => "path" in stub ? stub.path.replace("/proc/self/", `/proc/${Deno.pid}/`) : "";

/** Fields of `/proc/<pid>/stat` after the command: [state, ppid, pgrp, session]. */
function stat(pid: number): string[] {
  const s = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return s.slice(s.lastIndexOf(")") + 2).split(" ").slice(0, 4);
}

Deno.test("session stub: a 64-bit little-endian x86_64 executable, its code after the headers", () => {
  const b = stubElf();
  assert.deepEqual([...b.subarray(0, 6)], [0x7f, 0x45, 0x4c, 0x46, 2, 1]);
  const v = new DataView(b.buffer);
  assert.equal(v.getUint16(18, true), 0x3e);
  assert.equal(Number(v.getBigUint64(24, true)) - 0x400000, 176, "the entry is the first instruction");
  assert.equal(b.length, 176 + 76);
});

Deno.test({
  name: "session stub: same pid, its own session and group, SIGKILL as parent-death signal",
  ignore,
  fn: async () => {
    // python3 reads its own parent-death signal (prctl PR_GET_PDEATHSIG) where it is installed;
    // the session and group come from /proc either way.
    const py = "import ctypes as c; l=c.CDLL(None); v=c.c_int(); l.prctl(2, c.byref(v)); print(v.value)";
    const hasPython = ["/usr/bin/python3", "/bin/python3"].some((p) => {
      try {
        return Deno.statSync(p).isFile;
      } catch {
        return false;
      }
    });
    const child = new Deno.Command(stubPath(), {
      args: ["/bin/sh", "-c", `echo $$; read x; ${hasPython ? `exec python3 -c '${py}'` : "echo 9"}`],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!out.includes("\n")) out += (await reader.read()).value ?? "";
    assert.equal(Number(out.trim()), child.pid, "the stub execs the command in place");
    const [, ppid, pgrp, session] = stat(child.pid);
    assert.equal(Number(ppid), Deno.pid);
    assert.equal(Number(pgrp), child.pid, "it leads its own process group");
    assert.equal(Number(session), child.pid, "it leads its own session");
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode("go\n"));
    await w.close();
    out = "";
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      out += r.value;
    }
    assert.equal(out.trim(), "9", "PR_GET_PDEATHSIG reads SIGKILL");
    assert.equal((await child.status).code, 0);
  },
});

Deno.test({
  name: "session stub: a command started through it dies when the process that started it is SIGKILLed",
  ignore,
  fn: async () => {
    // A shell (not agent-block) starts `sleep` through the stub and waits; SIGKILL to the shell
    // leaves the sleep nothing but the kernel's parent-death signal to end it.
    const parent = new Deno.Command("/bin/sh", {
      args: ["-c", `"$0" /bin/sleep 300 & echo $!; wait`, stubPath()],
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = parent.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!out.includes("\n")) out += (await reader.read()).value ?? "";
    const sleeper = Number(out.trim());
    await waitFor(() => {
      try {
        return Deno.readTextFileSync(`/proc/${sleeper}/cmdline`).startsWith("/bin/sleep\0");
      } catch {
        return false;
      }
    }, { what: "sleep to run", timeoutMs: 20_000 });
    assert.ok(processAlive(sleeper));
    parent.kill("SIGKILL");
    await parent.status;
    await reader.cancel();
    await waitFor(() => !processAlive(sleeper), {
      what: `sleep ${sleeper} to die with its parent`,
      timeoutMs: 20_000,
    });
  },
});

Deno.test({
  name: "session stub: exits 127 when the program cannot be run, 125 when the session cannot be made",
  ignore,
  fn: async () => {
    const missing = await new Deno.Command(stubPath(), { args: ["/no/such/program-ab36"], stderr: "null" })
      .output();
    assert.equal(missing.code, 127);
    // A process that leads a group already cannot call setsid: the stub run by the stub is one.
    const leader = await new Deno.Command(stubPath(), { args: [stubPath(), "/bin/true"], stderr: "null" })
      .output();
    assert.equal(leader.code, 125);
  },
});

Deno.test({
  name: "session stub: ProcessGroups starts its children through it, each in a session of its own",
  ignore,
  fn: async () => {
    const w = parentDeathWrapper();
    assert.ok("kind" in w && w.kind === "stub", "the stub is preferred over setsid and setpriv");
    const groups = new ProcessGroups(1000, { PATH: "/usr/bin:/bin" });
    const p = groups.spawn({ cmd: ["sh", "-c", "cut -d' ' -f1,5,6 /proc/$$/stat"], stderr: "null" });
    const out = await new Response(p.child.stdout).text();
    await p.status;
    assert.deepEqual(out.trim().split(" ").map(Number), [p.pid, p.pid, p.pid]);
    await groups.endAll();
  },
});
