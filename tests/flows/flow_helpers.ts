/**
 * Support for the flow tests: a temporary project with blocks, a Blueprint compiled from a
 * document, and a run through the real in-process runner recorded in the project's kernel file.
 * Builds on `tests/helpers.ts` (temporary projects, the test environment).
 */
import { join } from "node:path";
import { tempProject, testEnv } from "../helpers.ts";
import { parseBlueprint } from "../../src/flows/blueprint.ts";
import { type CompiledFlow, compileFlow } from "../../src/flows/compile.ts";
import { type FlowRunOptions, runFlow } from "../../src/flows/run.ts";
import { openStore } from "../../src/knl/store.ts";
import { InProcessRunner } from "../../src/runner/in_process.ts";
import type { Json } from "../../src/flows/path.ts";

/** Path and expression builders for flow documents. */
export const P = (at: string) => ({ op: "path", at });
export const L = (value: unknown) => ({ op: "lit", value });
export const step = (ref: string, input: unknown, out: string) => ({
  kind: "step",
  ref,
  in: input,
  out: P(out),
});
export const seq = (...children: unknown[]) => ({ kind: "seq", children });
export const assign = (at: string, value: unknown) => ({ kind: "assign", at: P(at), value });

/** A block agent running `blocks/<name>.lua`. */
export const blockAgent = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  kind: "block",
  spec: { block: name },
  ...extra,
});

/** A project with `files`, and a compiler and runner for documents in it. */
export async function flowProject(files: Record<string, string> = {}) {
  const root = await tempProject(files, "ab_flow_");
  const storePath = join(root, ".agent-block", "knl.sqlite");
  const compile = (doc: unknown, file = "flow.bp.json"): CompiledFlow => {
    const bp = parseBlueprint(doc, { file: join(root, file), projectRoot: root });
    return compileFlow(bp, { projectRoot: root, home: join(root, "home") });
  };
  const options = (compiled: CompiledFlow, extra: Partial<FlowRunOptions> = {}): FlowRunOptions => ({
    compiled,
    runner: new InProcessRunner({ stdout: () => {}, stderr: () => {} }),
    projectRoot: root,
    env: testEnv(),
    store: openStore(storePath),
    home: join(root, "home"),
    ...extra,
  });
  const run = (doc: unknown, initCtx?: Json, extra: Partial<FlowRunOptions> = {}) =>
    runFlow({ ...options(compile(doc), extra), initCtx });
  return { root, storePath, compile, options, run, store: () => openStore(storePath) };
}
