/**
 * What the run queue carries and keeps: the queued run (the message a manager publishes) and
 * the run's state (its KV entry), as versioned JSON with strict parsers.
 *
 * Owns both forms. A queued run is `{v, run_id, job, project, queue, max_attempts, request}`,
 * `request` the `RunRequest` the manager made in `request_json.ts`'s form with what must not
 * cross machines taken out: its environment is empty (a worker runs with its own), its script
 * and project root are the job's names, not paths (a worker runs the block of its own copy of
 * the project: no code ever travels over the queue). A state is keyed `run.<run_id>` and holds
 * `queued` → `running` (worker, attempt, pid) → an end (`ok`, `deferred`, `failed`, `timed_out`,
 * `stopped`, `lost`) with the outcome (`outcome_json.ts`'s form; a returned value past
 * `INLINE_RESULT_BYTES` is in the results object store under the run id, `result_object`), the
 * exit code, the stderr tail and the counts. Every state text carries a fresh `write_id` (one per
 * `stateText` call), so a writer whose request was lost recognises its own write in the bucket
 * (`kv_write.ts`: "exactly my bytes" never matches another write, even of an equal state).
 *
 * Invariants: parsing never trusts a field's type (a malformed message is a `QueueFormError`
 * naming the field, and the worker terminates that message); an ended state is never followed
 * by another state of the same run (every writer checks `isEnded` under compare-and-set).
 */
import { parseJson, stringifyJson } from "../json/codec.ts";
import type { RunCountsRecord, RunState } from "./record.ts";

/** The forms' version. */
export const QUEUE_FORM_VERSION = 1;

/** A queued run, as published. */
export interface QueuedRun {
  run_id: string;
  job: string;
  /** The project's id (`project` in job.toml, else its directory's name). */
  project: string;
  queue: string;
  max_attempts: number;
  /** `requestToObject` of the manager's request, environment emptied and paths taken out. */
  request: Record<string, unknown>;
}

/** A run's state in the bucket. */
export interface QueueRunState {
  run_id: string;
  job: string;
  project: string;
  queue: string;
  state: "queued" | RunState;
  /** The worker running or having run the latest attempt. */
  worker: string | null;
  /** Attempts begun (0 while queued the first time). */
  attempt: number;
  max_attempts: number;
  queued_ms: number;
  started_ms: number | null;
  ended_ms: number | null;
  pid: number | null;
  exit_code: number | null;
  /** `outcomeToObject` of the end, a large returned value left out (`result_object`). */
  outcome: Record<string, unknown> | null;
  result_bytes: number | null;
  /** The results object holding the value (the run id), when it was too large to inline. */
  result_object: string | null;
  /** The results object holding the run's kernel export (`<run id>.knl`), when it opened sessions. */
  knl_object?: string | null;
  message: string | null;
  stderr_tail: string;
  counts: RunCountsRecord | null;
  requested: boolean;
  /** The write that stored this state (random, fresh in every `stateText`). */
  write_id?: string;
}

/** A message or state that does not have the queue's form. */
export class QueueFormError extends Error {
  /** @param message the field and what is wrong */
  constructor(message: string) {
    super(message);
    this.name = "QueueFormError";
  }
}

/** The KV key of run `id`'s state. */
export function stateKey(id: string): string {
  return `run.${id}`;
}

/** True for a state no later state may follow. */
export function isEnded(s: QueueRunState["state"]): boolean {
  return s !== "queued" && s !== "running";
}

const obj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function field<T>(
  o: Record<string, unknown>,
  key: string,
  ok: (v: unknown) => boolean,
  what: string,
  where: string,
): T {
  if (!ok(o[key])) {
    throw new QueueFormError(`${where}: '${key}' must be ${what}, got ${JSON.stringify(o[key])}`);
  }
  return o[key] as T;
}
const isStr = (v: unknown) => typeof v === "string" && v !== "";
const isInt = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;

/** The message text of `q`. */
export function queuedRunText(q: QueuedRun): string {
  return stringifyJson({ v: QUEUE_FORM_VERSION, ...q });
}

/**
 * Parses a queued run message.
 * @throws QueueFormError naming the field
 */
export function parseQueuedRun(text: string, where: string): QueuedRun {
  let d: unknown;
  try {
    d = parseJson(text);
  } catch (e) {
    throw new QueueFormError(`${where}: not JSON: ${(e as Error).message}`);
  }
  if (!obj(d)) throw new QueueFormError(`${where}: must be a JSON object`);
  if (d.v !== QUEUE_FORM_VERSION) {
    throw new QueueFormError(`${where}: 'v' must be ${QUEUE_FORM_VERSION}, got ${JSON.stringify(d.v)}`);
  }
  return {
    run_id: field(
      d,
      "run_id",
      (v) => typeof v === "string" && /^[0-9a-z]+-[0-9a-f]{8}$/.test(v),
      "a run id",
      where,
    ),
    job: field(d, "job", isStr, "a job name", where),
    project: field(d, "project", isStr, "a project id", where),
    queue: field(d, "queue", isStr, "a queue name", where),
    max_attempts: field(
      d,
      "max_attempts",
      (v) => isInt(v) && (v as number) >= 1,
      "a whole number >= 1",
      where,
    ),
    request: field(d, "request", obj, "an object", where),
  };
}

/** A run's state as it is queued: nothing has happened to it yet. */
export function queuedState(
  run: Pick<
    QueueRunState,
    "run_id" | "job" | "project" | "queue" | "max_attempts" | "queued_ms" | "requested"
  >,
): QueueRunState {
  return {
    ...run,
    state: "queued",
    worker: null,
    attempt: 0,
    started_ms: null,
    ended_ms: null,
    pid: null,
    exit_code: null,
    outcome: null,
    result_bytes: null,
    result_object: null,
    message: null,
    stderr_tail: "",
    counts: null,
  };
}

/**
 * The KV value of `s`, stamped with a fresh `write_id`: one text per write (its tries reuse it),
 * never equal to another write's.
 */
export function stateText(s: QueueRunState): string {
  return stringifyJson({ v: QUEUE_FORM_VERSION, ...s, write_id: crypto.randomUUID() });
}

/**
 * Parses a state entry.
 * @throws QueueFormError naming the field
 */
export function parseState(text: string, where: string): QueueRunState {
  let d: unknown;
  try {
    d = parseJson(text);
  } catch (e) {
    throw new QueueFormError(`${where}: not JSON: ${(e as Error).message}`);
  }
  if (!obj(d) || d.v !== QUEUE_FORM_VERSION) {
    throw new QueueFormError(`${where}: not a run state of version ${QUEUE_FORM_VERSION}`);
  }
  field(d, "run_id", isStr, "a run id", where);
  field(d, "state", isStr, "a state", where);
  field(d, "attempt", isInt, "a whole number", where);
  const { v: _v, ...rest } = d;
  return rest as unknown as QueueRunState;
}
