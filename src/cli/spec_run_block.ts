/**
 * The host half of `lspec.run_block(path, opts)`: a spec runs a whole block end to end, as
 * `agent-block -s`/`-b` would, and gets back how it ended and what it printed.
 *
 * Owns the mapping of that Lua call onto one SDK run (`runConfig`) in this process: the block (a
 * `.lua` path taken from the project root, or a block name found as `-b` finds it), `prompt`,
 * `context`, `replay` (a JSON Lines file taken from the project root, or a list of scripted
 * responses written to a file in the spec's scratch directory; either way the run's
 * `AGENT_BLOCK_REPLAY`, which the `replay` provider reads when the block passes no `replay` of its
 * own, with `AGENT_BLOCK_FORCE_REPLAY=1`, so a block that names its provider answers from it too
 * instead of calling the live model), `env`, `labels` and `timeout`, and the result table: the `--outcome` file's fields
 * (`status`, `value`, `reason`, `code`, `message`, `traceback`, `error`, `seconds`) plus
 * `exit_code`, `stdout`, `stderr`, `artifacts` and `sessions`.
 *
 * Why in-process rather than a child `agent-block`: the spec runner cannot tell how it was started
 * (a compiled binary, `deno run cli.ts`, an installed command) and so what to spawn, a child would
 * pay Deno's start-up for every call, and `runConfig` is the very path the CLI runs a block
 * through. What a child would add — its own exit — is what the outcome already says (`exit_code` is
 * the code the CLI would end with).
 *
 * Invariants: the block runs with the spec's environment (its temporary home and stores, so a spec
 * reads what the block stored) plus `opts.env`, the spec's project root and working directory; its
 * stdout and stderr are captured, never printed; cancelling the spec's task cancels it. It raises
 * only for a bad argument or a block or replay file that is not there, never for how the block
 * ended. Installed by `agent-block test` only (`package.preload["lspec.host"]`).
 */
import { settingsFromEnv } from "../config/env_settings.ts";
import { join, resolve } from "node:path";
import type { HostModule } from "../host/context.ts";
import { optField } from "../lua/args.ts";
import { BlockConfig } from "../sdk/config.ts";
import { runConfig } from "../sdk/run_block.ts";
import { InProcessRunner } from "../runner/in_process.ts";
import { ScriptSource } from "../sdk/sources.ts";
import { outcomeToObject } from "../runner/outcome_json.ts";
import { blockRoots, findBlock, unknownBlockText } from "../blocks/registry.ts";
import { isFile } from "../util/fs.ts";

const FN = "lspec.run_block";

/** The host module; inline replay scripts are written below `scratch` (an existing directory). */
export function specRunBlockModule(scratch: string): HostModule {
  let replays = 0;
  return (engine, run) => {
    engine.define("@lspec_run_block", {
      async: async (a, cx) => {
        const path = a.string(1, "path");
        const opts = a.optTable(2, "opts") ?? {};
        const field = <T>(key: string, kind: "string" | "number" | "table") =>
          optField<T>(a, 2, "opts", opts, key, kind);
        const known = new Set(["prompt", "context", "replay", "env", "labels", "timeout"]);
        for (const k of Object.keys(opts)) {
          if (!known.has(k)) {
            throw new Error(
              `${FN}: argument 2 (opts) has an unknown field '${k}' (known: ${[...known].join(", ")})`,
            );
          }
        }
        let script: string;
        if (path.endsWith(".lua")) {
          script = resolve(run.projectRoot, path);
          if (!isFile(script)) throw new Error(`${FN}: no block file ${path} (looked for ${script})`);
        } else {
          const roots = blockRoots(run.projectRoot, run.home);
          const b = findBlock(roots, path);
          if (!b) {
            throw new Error(`${FN}: ${unknownBlockText(path, roots, { hint: "a path must end in .lua" })}`);
          }
          script = b.path;
        }
        const env: Record<string, string> = run.env.toObject();
        const replay = opts.replay;
        if (typeof replay === "string") {
          const file = resolve(run.projectRoot, replay);
          if (!isFile(file)) {
            throw new Error(`${FN}: opts.replay: no such file ${replay} (looked for ${file})`);
          }
          env.AGENT_BLOCK_REPLAY = file;
          env.AGENT_BLOCK_FORCE_REPLAY = "1";
        } else if (Array.isArray(replay)) {
          const file = join(scratch, `replay_${++replays}.jsonl`);
          await Deno.writeTextFile(file, replay.map((r) => JSON.stringify(r) + "\n").join(""));
          env.AGENT_BLOCK_REPLAY = file;
          env.AGENT_BLOCK_FORCE_REPLAY = "1";
        } else if (replay !== undefined) {
          throw new Error(`${FN}: opts.replay must be a file path or a list of scripted responses`);
        }
        const extra = field<Record<string, unknown>>("env", "table") ?? {};
        for (const [k, v] of Object.entries(extra)) {
          if (typeof v !== "string") {
            throw new Error(`${FN}: opts.env.${k} must be a string, got ${typeof v}`);
          }
          env[k] = v;
        }
        const timeout = field<number>("timeout", "number");
        const out: Uint8Array[] = [];
        const err: Uint8Array[] = [];
        const config = new BlockConfig({
          script: ScriptSource.path(script),
          projectRoot: run.projectRoot,
          prompt: field<string>("prompt", "string"),
          context: field<string>("context", "string"),
          env,
          cwd: run.cwd,
          labels: field<Record<string, string>>("labels", "table"),
          timeoutMs: timeout === undefined ? undefined : timeout * 1000,
          signal: cx.signal,
          stdout: (b) => out.push(b.slice()),
          stderr: (b) => err.push(b.slice()),
        });
        const report = await runConfig(
          config,
          { env: () => env, cwd: () => run.cwd },
          (handles) => new InProcessRunner({ ...handles, envSettings: settingsFromEnv }),
        );
        const { version: _, ...outcome } = outcomeToObject(report.outcome);
        return {
          ...outcome,
          exit_code: report.exitCode,
          stdout: text(out),
          stderr: text(err),
          artifacts: report.artifacts.map((x) => ({ name: x.name, content: x.content })),
          sessions: report.sessions,
        };
      },
    });
    engine.exec(
      'local _, H = ...\npackage.preload["lspec.host"] = function() return { run_block = H.lspec_run_block } end',
      "=ab:lspec_host",
    );
  };
}

function text(parts: Uint8Array[]): string {
  const dec = new TextDecoder();
  return parts.map((p) => dec.decode(p, { stream: true })).join("") + dec.decode();
}
