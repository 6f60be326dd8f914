/**
 * Sandbox start-up: `agent-block --sandbox -s hello.lua` against `agent-block -s hello.lua`, in
 * the same run and interleaved. The sandbox costs one more start: the launcher (the CLI up to
 * its flag parsing, then the Landlock, seccomp and mount calls) `execve`s the runtime, which
 * starts as an unconfined run would. Target: at most 1.3 × the unconfined run. Prints medians
 * (and minimums) of `BENCH_ITERATIONS` (default 25) runs per variant and the ratio; skipped
 * with the reason where the sandbox cannot be had (not Linux, no Landlock).
 *
 * Where the extra start goes (December 2026, shared 2-core machine, unconfined run ~95-100 ms;
 * ratio 1.29-1.37 from run to run): the launcher's process is ~13 ms of Deno's own start (an
 * empty `deno run`), ~12 ms of modules up to the launcher — ~7 ms of it Deno's Node-compat start
 * for `node:path`/`node:url`/`node:util`, which the flag parsing and path handling need — and
 * ~3.5 ms in the launcher (libc's FFI binding ~1.7, policy ~0.7, the mount namespace, Landlock
 * and seccomp ~1 together). The confined runtime then starts as an unconfined run does. Kept
 * down by cli.ts handing a sandboxed run to the launcher before wasmoon or the runtime is loaded
 * (with the static wasm import, wasmoon's evaluation added ~30 ms: ratio ~1.5).
 */
import { join } from "node:path";
import { landlockAbi } from "../src/sandbox/landlock.ts";
import { sys } from "../src/sandbox/sys.ts";
import { median, timeRun } from "./startup_bench.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const TARGET = 1.3;

export default async function sandboxBench(): Promise<void> {
  const c = Deno.build.os === "linux" ? sys() : "not Linux";
  const abi = typeof c === "string" ? 0 : landlockAbi(c);
  if (abi === 0) {
    console.log(`skipped: the sandbox cannot be had here (${typeof c === "string" ? c : "no Landlock"})`);
    return;
  }
  const dir = await Deno.makeTempDir({ prefix: "ab_bench_sandbox_" });
  try {
    Deno.writeTextFileSync(join(dir, "hello.lua"), `print("hello")\n`);
    Deno.mkdirSync(join(dir, ".git")); // the read-only .git is part of what is measured
    const env: Record<string, string> = {
      NO_COLOR: "1",
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? dir,
      AGENT_BLOCK_HOME: join(dir, "home"),
    };
    const cli = join(ROOT, "cli.ts");
    const variants = [
      { label: "agent-block -s hello.lua", args: ["run", "-A", "--quiet", cli, "-s", "hello.lua"] },
      {
        label: "agent-block --sandbox -s hello.lua",
        args: ["run", "-A", "--quiet", cli, "--sandbox", "-s", "hello.lua"],
      },
    ];
    const n = Number(Deno.env.get("BENCH_ITERATIONS") ?? 25);
    const times: number[][] = variants.map(() => []);
    for (const v of variants) await timeRun(v.args, dir, env); // warm the caches
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < variants.length; k++) times[k].push(await timeRun(variants[k].args, dir, env));
    }
    const base = median(times[0]);
    for (let k = 0; k < variants.length; k++) {
      const med = median(times[k]);
      const ratio = med / base;
      const verdict = k === 0 ? "" : `  (target <= ${TARGET}: ${ratio <= TARGET ? "met" : "missed"})`;
      console.log(
        `${variants[k].label.padEnd(36)} median ${med.toFixed(1).padStart(7)} ms  min ${
          Math.min(...times[k]).toFixed(1).padStart(6)
        }  ratio ${ratio.toFixed(2)}${verdict}`,
      );
    }
    console.log(
      `(Landlock ABI ${abi}; ${n} interleaved runs per variant; ratio of medians against the unconfined run)`,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
