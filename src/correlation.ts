/**
 * The correlation ids a run carries in its environment, named once.
 *
 * Owns the one table that ties each id's request field (`Correlation` in `runner/runner.ts`),
 * its key where it is written out (`__ab_obs` on MCP calls and mesh payloads, the `meta` of the
 * kernel's seed events, `ab.obs` lines) and its run-environment variable (`AGENT_BLOCK_TRACE_ID`,
 * ...), and reading them from an environment view (`correlationIds`).
 *
 * Why one table: the runner puts the ids into the run's environment and four readers (the
 * kernel's seed events, MCP's trace context, the mesh's `__ab_obs`, observability lines) take
 * them out; each kept its own copy of the names before, so an id added to one went missing in
 * the others. The request's JSON codec (`runner/request_json.ts`) maps the request's whole
 * `Correlation`, of which these are the part a run's environment carries.
 *
 * Invariants: pure; the table's order is the order ids are written out; an id that is unset or
 * empty is absent from `correlationIds`' answer, never an empty string.
 */

/** One correlation id a run carries in its environment. */
export interface CorrelationId {
  /** Its field of the request's `Correlation`. */
  readonly field: "traceId" | "runId" | "agentId" | "agentName";
  /** Its key where it is written out (`__ab_obs`, kernel `meta`, `ab.obs`, request JSON). */
  readonly key: "trace_id" | "run_id" | "agent_id" | "agent_name";
  /** Its run-environment variable. */
  readonly variable: string;
}

/** The ids a run's environment carries, in the order they are written out. */
export const RUN_CORRELATION_IDS: readonly CorrelationId[] = [
  { field: "traceId", key: "trace_id", variable: "AGENT_BLOCK_TRACE_ID" },
  { field: "runId", key: "run_id", variable: "AGENT_BLOCK_RUN_ID" },
  { field: "agentId", key: "agent_id", variable: "AGENT_BLOCK_AGENT_ID" },
  { field: "agentName", key: "agent_name", variable: "AGENT_BLOCK_AGENT_NAME" },
];

/**
 * The ids `get` (a run environment's lookup) sets, by key, in table order; an unset or empty one
 * takes its value from `fallback` (by key), else is left out.
 */
export function correlationIds(
  get: (variable: string) => string | undefined,
  fallback: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of RUN_CORRELATION_IDS) {
    const v = get(id.variable) || fallback[id.key];
    if (v !== undefined && v !== "") out[id.key] = v;
  }
  return out;
}

/** The run-environment variable of the id with request field `field`. */
export function correlationVariable(field: CorrelationId["field"]): string {
  return RUN_CORRELATION_IDS.find((id) => id.field === field)!.variable;
}
