/**
 * The environment one run sees: a read-only record resolved at the edge, plus the run's own
 * overlay.
 *
 * Owns `RunEnv`. The edge (the CLI, the MCP server, `serve`, `mod.ts` for the SDK) builds the base
 * record once — the process environment layered with the project's `.env` by the seed's rule —
 * and hands it to the run as `RunSpec.env`, with the run's `AGENT_BLOCK_*` settings parsed from
 * it once and typed (`src/run_settings.ts`); below the edge the run's `RunEnv` is what `std.env`
 * reads and what the run's children start from (keys and base URLs, child environments), never
 * a source of the run's own configuration. Nothing below the edge reads or writes `Deno.env`
 * (tests/arch/deno_env_test.ts holds that).
 *
 * Invariants:
 * - the base record is copied and frozen at construction: the edge cannot change a running run's
 *   view afterwards, and the run cannot change the edge's;
 * - `set` writes the overlay only (`std.env.set`); `get` and `toObject` see base and overlay
 *   merged, so the run's children (`sh.exec`, `io.popen`, MCP servers) inherit what the run set,
 *   and no other run, nor the process, sees any of it;
 * - `set(name, undefined)` hides a base variable from this run (an unset, not an empty string).
 * - A numeric setting that is set but malformed is an error naming the variable and the value
 *   (`wholeMilliseconds`, which the edge's parser uses), never silently its default.
 */

/** A run's view of its environment. */
export class RunEnv {
  readonly #base: Readonly<Record<string, string>>;
  readonly #overlay = new Map<string, string | undefined>();

  /**
   * A view over `base` (copied; later changes to the argument are not seen).
   * @param base the variables resolved at the edge
   */
  constructor(base: Readonly<Record<string, string>> = {}) {
    this.#base = Object.freeze({ ...base });
  }

  /** The value of `name`, or `undefined` when it is unset for this run. */
  get(name: string): string | undefined {
    if (this.#overlay.has(name)) return this.#overlay.get(name);
    return Object.hasOwn(this.#base, name) ? this.#base[name] : undefined;
  }

  /** The value of `name` when it is set and not blank, else `undefined`. */
  nonEmpty(name: string): string | undefined {
    const v = this.get(name);
    return v !== undefined && v.trim() !== "" ? v : undefined;
  }

  /** Sets (or with `undefined`, unsets) `name` for this run and the children it starts later. */
  set(name: string, value: string | undefined): void {
    this.#overlay.set(name, value);
  }

  /** Every variable set for this run, base and overlay merged: a child's starting point. */
  toObject(): Record<string, string> {
    const out: Record<string, string> = { ...this.#base };
    for (const [k, v] of this.#overlay) {
      if (v === undefined) delete out[k];
      else out[k] = v;
    }
    return out;
  }
}

/**
 * A whole number of milliseconds from 0 to `max` in `env`'s variable `name`, or `fallback` when
 * it is unset or blank. Throws a `RangeError` naming the variable and the value for anything else.
 */
export function wholeMilliseconds(
  env: { get(name: string): string | undefined },
  name: string,
  fallback: number,
  max = 2_147_483_647,
): number {
  const raw = env.get(name);
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max) {
    throw new RangeError(`${name} must be a whole number of milliseconds from 0 to ${max}, got '${raw}'`);
  }
  return n;
}
