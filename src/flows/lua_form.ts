/**
 * The Lua form of a Blueprint (`.bp.lua`): a Lua script, run as a block through the runner, whose
 * returned table is the Blueprint (built with `require("flow")`, the embedded builders).
 *
 * Invariant: the script runs like any block (its project, environment and sandbox rules); what it
 * returns goes through the same linker and checks as a JSON Blueprint, with the script's path in
 * every message. A script that raises, or returns no table, is a `BlueprintError` (exit 2).
 */
import { dirname, relative } from "node:path";
import type { BlockRunner } from "../runner/runner.ts";
import { type Blueprint, parseBlueprint } from "./blueprint.ts";
import { BlueprintError } from "./errors.ts";
import { stepRunner } from "./step_runner.ts";

/** What evaluating a `.bp.lua` needs. */
export interface LuaFormOptions {
  /** Runs the script. */
  runner: BlockRunner;
  /** The project root. */
  projectRoot: string;
  /** The script's environment. */
  env: Readonly<Record<string, string>>;
  /** `--include` directories. */
  includes?: readonly string[];
}

/** Evaluates the `.bp.lua` at `file` (absolute) and reads the Blueprint it returns. */
export async function readLuaBlueprint(
  file: string,
  options: LuaFormOptions & { name?: string },
): Promise<Blueprint> {
  const name = options.name ?? file;
  const run = await stepRunner(options.runner)({
    script: { path: file },
    projectRoot: options.projectRoot,
    env: options.env,
    labels: { flow_blueprint: relative(options.projectRoot, file) },
    globals: {},
  });
  const o = run.outcome;
  if (o.status !== "returned") {
    const why = o.status === "raised"
      ? o.message
      : o.status === "deferred"
      ? `deferred: ${o.reason}`
      : o.status;
    throw new BlueprintError(`${name}: the Lua Blueprint did not return: ${why}`);
  }
  if (run.returned?.type !== "table") {
    throw new BlueprintError(
      `${name}: a .bp.lua returns the Blueprint table, got ${
        run.returned?.type === "string" ? "a string" : "nothing"
      }`,
    );
  }
  return parseBlueprint(run.returned.value, {
    file,
    name,
    dir: dirname(file),
    includes: options.includes,
    projectRoot: options.projectRoot,
  });
}
