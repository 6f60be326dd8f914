/**
 * The correlation ids a run carries, named once.
 *
 * Owns the one table that ties each id's request field (`Correlation` in `runner/runner.ts`),
 * its key where it is written out (`__ab_obs` on MCP calls and mesh payloads, the `meta` of the
 * kernel's seed events, `ab.obs` lines) and its environment variable (`AGENT_BLOCK_TRACE_ID`,
 * ...), and the ids' written-out order (`orderedIds`).
 *
 * The variables are a channel into other processes, not a setting read here: the in-process
 * runner writes the run's ids into the run's environment so that an agent-block process the
 * run starts (`sh.exec`, an MCP server running blocks) inherits them and reads them at ITS edge
 * (`settingsFromEnv`, `src/config/env_settings.ts`, which reads them with this table). Inside a
 * run the ids travel typed (`RunContext.correlation`) to the four writers (the kernel's seed
 * events, MCP's trace context, the mesh's `__ab_obs`, observability lines). The request's JSON
 * codec (`runner/request_json.ts`) maps the request's whole `Correlation`.
 *
 * Invariants: pure; the table's order is the order ids are written out; an id that is unset or
 * empty is absent from `orderedIds`' answer, never an empty string.
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

/** A run's correlation ids by key (`trace_id`, ...): only the ids set, none empty. */
export type RunCorrelationIds = Readonly<
  Partial<Record<"trace_id" | "run_id" | "agent_id" | "agent_name", string>>
>;

/** `ids` in table order, with `fallback` for the keys they lack; empty values left out. */
export function orderedIds(
  ids: RunCorrelationIds,
  fallback: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of RUN_CORRELATION_IDS) {
    const v = ids[id.key] || fallback[id.key];
    if (v !== undefined && v !== "") out[id.key] = v;
  }
  return out;
}

/** The run-environment variable of the id with request field `field`. */
export function correlationVariable(field: CorrelationId["field"]): string {
  return RUN_CORRELATION_IDS.find((id) => id.field === field)!.variable;
}
