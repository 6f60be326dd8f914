/**
 * The input schemas declared as lshape shapes (`---@input lshape MODULE[:FIELD]`,
 * `src/blocks/declaration.ts`): a Lua module exports the shape, and the server serves the JSON
 * Schema it stands for (its conversion: `lshape_input.lua`).
 *
 * Owns resolving one such declaration: a short run of `lshape_input.lua` from the block's
 * directory (so `require` finds what the block itself would), through the runner the caller
 * gives (the in-process runner; a confined child run under `--sandbox`), and a cache of the
 * answers.
 *
 * Invariants:
 * - An answer is reused while nothing it can depend on changed: the key holds the block file's
 *   modification time and size, and those of every file `require(MODULE)` could load from the block's
 *   directory and the project's and home's `lib/` tiers (`<name>.lua`, `<name>/init.lua`) — so an
 *   edit of the module is seen at the next listing.
 * - A failure (the module missing or raising, the value not a shape, a kind with no JSON form)
 *   is an answer too, cached the same way: the tool is left out and the reason, with the
 *   block's file and the `@input` line, is logged once per change.
 * - One resolution per key at a time: concurrent listings share it.
 */
import { dirname, join } from "node:path";
import type { BlockEntry } from "../blocks/registry.ts";
import type { JsonSchema, ToolDeclaration } from "../blocks/declaration.ts";
import type { BlockRunner, RunReport } from "../runner/runner.ts";
import type { Logger } from "../obs/log.ts";
import converter from "./lshape_input.lua" with { type: "text" };

/** What resolving needs. */
export interface LshapeContext {
  projectRoot: string;
  /** `$AGENT_BLOCK_HOME`. */
  home: string;
  env: Readonly<Record<string, string>>;
  /** Runs the conversion (the in-process runner, or the confined one under `--sandbox`). */
  runner: () => BlockRunner<RunReport>;
  log: Logger;
}

/** A resolved schema, or why there is none. */
export type LshapeAnswer = { schema: JsonSchema } | { error: string };

const RUN_TIMEOUT_MS = 10_000;

/** A file's modification time and size (null: not there): what tells an edit. */
function stamp(path: string): string | null {
  try {
    const s = Deno.statSync(path);
    return `${s.mtime?.getTime() ?? 0}:${s.size}`;
  } catch {
    return null;
  }
}

/** Resolves and caches lshape input schemas. */
export class LshapeInputs {
  readonly #answers = new Map<string, { key: string; answer: Promise<LshapeAnswer> }>();

  constructor(private readonly cx: LshapeContext) {}

  /** What the answer for `block` depends on (see the module doc). */
  #key(block: BlockEntry, decl: ToolDeclaration): string {
    const rel = decl.inputLshape!.module.split(".");
    const dirs = [
      dirname(block.path),
      join(this.cx.projectRoot, ".agent-block", "lib"),
      join(this.cx.projectRoot, "lib"),
      join(this.cx.home, "lib"),
    ];
    const files = dirs.flatMap((d) => [join(d, ...rel) + ".lua", join(d, ...rel, "init.lua")]);
    return JSON.stringify([decl.inputLshape, stamp(block.path), files.map(stamp)]);
  }

  /** The input schema of `block` (a tool declared with `@input lshape`). */
  resolve(block: BlockEntry & { declaration: ToolDeclaration }): Promise<LshapeAnswer> {
    const decl = block.declaration;
    const key = this.#key(block, decl);
    const known = this.#answers.get(block.path);
    if (known && known.key === key) return known.answer;
    const answer = this.#run(block, decl).then((a) => {
      if ("error" in a) {
        this.cx.log.warn(
          `${block.path}:${
            decl.inputLshape!.line
          }: @input lshape: ${a.error} (tool '${decl.name}' is not served)`,
        );
      }
      return a;
    });
    this.#answers.set(block.path, { key, answer });
    return answer;
  }

  async #run(block: BlockEntry, decl: ToolDeclaration): Promise<LshapeAnswer> {
    const { module, field } = decl.inputLshape!;
    let report: RunReport;
    try {
      report = await this.cx.runner().run({
        script: {
          source: converter,
          name: `${block.name}.input.lua`,
          dir: dirname(block.path),
          chunkname: "=ab:lshape_input",
        },
        name: block.name,
        projectRoot: this.cx.projectRoot,
        env: this.cx.env,
        timeoutMs: RUN_TIMEOUT_MS,
        globals: { _ARGS: field === undefined ? { module } : { module, field } },
      });
    } catch (e) {
      return { error: `internal failure: ${(e as Error)?.message ?? e}` };
    }
    const o = report.outcome;
    if (o.status === "raised") return { error: o.message };
    if (o.status !== "returned") {
      return { error: `the conversion ${o.status === "timed_out" ? "timed out" : "did not finish"}` };
    }
    const text = typeof o.value === "string"
      ? o.value
      : new TextDecoder().decode(o.value ?? new Uint8Array());
    try {
      return { schema: JSON.parse(text) as JsonSchema };
    } catch (e) {
      return { error: `the conversion returned no JSON: ${(e as Error).message}` };
    }
  }
}
