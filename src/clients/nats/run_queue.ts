/**
 * The run queue's JetStream objects: the work-queue stream, its per-queue pull consumers, the
 * run-state KV bucket and the results object store — their names, their settings, creating
 * them on first use, and how long a request to them waits (`JETSTREAM_SETUP_TIMEOUT_MS` for the
 * setup, `JETSTREAM_TIMEOUT_MS` for a running process's requests).
 *
 * Owns the layout (every manager and worker agree on it; `docs/runbooks/nats.md` lists it):
 * - stream `AGENT_BLOCK_RUNS`, subjects `agent_block.runs.>` (a run of job `j` on queue `q` is
 *   published on `agent_block.runs.<q>.<j>`), work-queue retention, file storage, a duplicate
 *   window of `DUPLICATE_WINDOW_MS` (a `Nats-Msg-Id` seen within it is not stored again);
 * - a durable pull consumer `agent_block_<q>` per queue, filtered to `agent_block.runs.<q>.>`,
 *   explicit acks, `AckWait` as asked (the workers send in-progress acks well inside it), no
 *   delivery limit (the worker decides from the run's state what a redelivery is);
 * - KV bucket `AGENT_BLOCK_RUN_STATE` (file storage, one revision kept per key), written with
 *   revision compare-and-set by its users (`kv_write.ts`'s `casWrite`: a write whose request is
 *   lost is re-read, never written blind again);
 * - KV bucket `AGENT_BLOCK_RUN_SLOTS` (file storage, one revision per key, keys expire after
 *   `SLOT_TTL_MS`): the managers' interval claims, `<job>.<due ms>` — opened by managers only
 *   (`{ slots: true }`; a worker never touches it, and its user needs no permission on it). The
 *   expiry is what cleans it: a claim is needed only while another manager may still decide the
 *   same slot, so claims do not pile up one per interval forever. An existing bucket is used with
 *   the expiry it has;
 * - object store `AGENT_BLOCK_RUN_RESULTS` (file storage): values past the inline limit.
 * Stop requests travel on core NATS, `agent_block.stop.<run_id>` (nothing stored: a worker
 * holding the run ends it).
 *
 * Invariants: an existing stream or consumer is used as it is when its settings are compatible
 * and refused otherwise (`RunQueueSetupError` naming the object and the setting) — nothing here
 * ever updates or deletes an existing stream, so nothing in it is lost; names of jobs and queues
 * become subject tokens and keys only through `subjectToken`.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import {
  AckPolicy,
  type Consumer,
  DeliverPolicy,
  jetstream,
  type JetStreamClient,
  type JetStreamManager,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import { type ObjectStore, Objm } from "@nats-io/obj";

/** The work-queue stream. */
export const RUNS_STREAM = "AGENT_BLOCK_RUNS";
/** The subjects' prefix: `agent_block.runs.<queue>.<job>`. */
export const RUNS_SUBJECT_PREFIX = "agent_block.runs";
/** The run-state bucket. */
export const STATE_BUCKET = "AGENT_BLOCK_RUN_STATE";
/** The object store for large results. */
export const RESULTS_BUCKET = "AGENT_BLOCK_RUN_RESULTS";
/** Stop requests: `agent_block.stop.<run_id>`. */
export const STOP_SUBJECT_PREFIX = "agent_block.stop";
/** The stream's duplicate window (a `Nats-Msg-Id` within it is stored once). */
export const DUPLICATE_WINDOW_MS = 10 * 60_000;
/** The interval-claims bucket (managers only). */
export const SLOTS_BUCKET = "AGENT_BLOCK_RUN_SLOTS";
/**
 * How long an interval claim is kept (the slots bucket's `max_age`). A manager decides a slot
 * within a tick of it falling due; only one that was stopped (not following the runs) for
 * longer than this, and comes back with an older last end, could claim once again a slot
 * another manager ran.
 */
export const SLOT_TTL_MS = 24 * 3600_000;
/** The default `AckWait` of a queue's consumer. */
export const DEFAULT_ACK_WAIT_MS = 30_000;

/** An existing stream, consumer or bucket that this layout cannot use. */
export class RunQueueSetupError extends Error {
  /** @param message the object, the setting found and the one needed */
  constructor(message: string) {
    super(message);
    this.name = "RunQueueSetupError";
  }
}

/**
 * `name` as one subject token / key part: kept when it is made of `[A-Za-z0-9_-]`, else
 * `~` and its UTF-8 bytes in hex (so no `.`, `*`, `>` or space ever splits a subject).
 */
export function subjectToken(name: string): string {
  if (/^[A-Za-z0-9_-]+$/.test(name)) return name;
  return "~" + [...new TextEncoder().encode(name)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The subject a run of `job` on `queue` is published on. */
export function runSubject(queue: string, job: string): string {
  return `${RUNS_SUBJECT_PREFIX}.${subjectToken(queue)}.${subjectToken(job)}`;
}

/** The durable consumer of `queue`. */
export function consumerName(queue: string): string {
  return `agent_block_${subjectToken(queue).replace("~", "x")}`;
}

const NS = 1_000_000;

/** The JetStream handles of one connection, the layout ensured. */
export interface RunQueueHandles {
  nc: NatsConnection;
  /** Requests of a running process (`JETSTREAM_TIMEOUT_MS`); `state`, `results`, `slots` use it too. */
  js: JetStreamClient;
  /** Setup requests (`JETSTREAM_SETUP_TIMEOUT_MS`). */
  jsm: JetStreamManager;
  state: KV;
  results: ObjectStore;
  /** The interval claims (opened for managers only: `openRunQueue(nc, { slots: true })`). */
  slots?: KV;
}

/** What `openRunQueue` opens beyond the shared layout. */
export interface RunQueueOpenOptions {
  /** Open (create when missing) the interval-claims bucket: a manager's connection. */
  slots?: boolean;
  /** The claims' expiry when this call creates the bucket (default `SLOT_TTL_MS`). */
  slotTtlMs?: number;
}

/**
 * How long one JetStream request of a running manager or worker (a state write or read, a
 * publish's ack, a result's put) waits for the server, ms: the client's default. A request lost
 * across a server restart or stall costs this long, no more: what must not fail on one lost
 * request is retried safely (`kv_write.ts`: a state write re-reads before it writes again), so a
 * saturated machine's slow answer is waited out by retries, not by a long timeout.
 */
export const JETSTREAM_TIMEOUT_MS = 5_000;
/**
 * How long a setup request (`openRunQueue`, `queueConsumer`: a stream, bucket or consumer looked
 * up or created, once per process) waits, ms: as long as the connect timeout (`connection.ts`),
 * since a saturated machine's start may be slow and these are not retried.
 */
export const JETSTREAM_SETUP_TIMEOUT_MS = 20_000;

/**
 * Creates what is missing of the layout on `nc` (stream, buckets, object store) and checks what
 * exists.
 * @throws RunQueueSetupError for an incompatible existing stream
 */
export async function openRunQueue(
  nc: NatsConnection,
  opts: RunQueueOpenOptions = {},
): Promise<RunQueueHandles> {
  const jsm = await jetstreamManager(nc, { timeout: JETSTREAM_SETUP_TIMEOUT_MS });
  let info;
  try {
    info = await jsm.streams.info(RUNS_STREAM);
  } catch (e) {
    if (!/stream not found/i.test(`${(e as Error).message}`)) throw e;
  }
  if (info) {
    const c = info.config;
    const wrong: string[] = [];
    if (c.retention !== RetentionPolicy.Workqueue) wrong.push(`retention is ${c.retention}, not workqueue`);
    if (!(c.subjects ?? []).includes(`${RUNS_SUBJECT_PREFIX}.>`)) {
      wrong.push(`subjects are ${JSON.stringify(c.subjects ?? [])}, not ["${RUNS_SUBJECT_PREFIX}.>"]`);
    }
    if ((c.duplicate_window ?? 0) <= 0) wrong.push("it keeps no duplicate window");
    if (wrong.length > 0) {
      throw new RunQueueSetupError(
        `stream ${RUNS_STREAM} exists with settings the run queue cannot use: ${wrong.join("; ")} ` +
          `(it was left as it is; remove it or point the queue at another server)`,
      );
    }
  } else {
    await jsm.streams.add({
      name: RUNS_STREAM,
      subjects: [`${RUNS_SUBJECT_PREFIX}.>`],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      duplicate_window: DUPLICATE_WINDOW_MS * NS,
    });
  }
  // created (or found) with the setup timeout, then used through a client of the short one
  const setup = jsm.jetstream();
  const made = await new Kvm(setup).create(STATE_BUCKET, { history: 1, storage: StorageType.File });
  await new Objm(setup).create(RESULTS_BUCKET, { storage: StorageType.File });
  const madeSlots = opts.slots
    ? await new Kvm(setup).create(SLOTS_BUCKET, {
      history: 1,
      storage: StorageType.File,
      ttl: opts.slotTtlMs ?? SLOT_TTL_MS,
    })
    : undefined;
  const js = jetstream(nc, { timeout: JETSTREAM_TIMEOUT_MS });
  const bind = async (bucket: string, kv: KV) =>
    await new Kvm(js).open(bucket, {
      allow_direct: (await kv.status()).streamInfo.config.allow_direct === true,
    });
  const state = await bind(STATE_BUCKET, made);
  const results = await new Objm(js).open(RESULTS_BUCKET, false);
  const slots = madeSlots ? await bind(SLOTS_BUCKET, madeSlots) : undefined;
  return { nc, js, jsm, state, results, ...(slots ? { slots } : {}) };
}

/**
 * The durable pull consumer of `queue`, created when missing with `ackWaitMs`.
 * @throws RunQueueSetupError for an existing consumer of another filter or ack policy
 */
export async function queueConsumer(h: RunQueueHandles, queue: string, ackWaitMs: number): Promise<Consumer> {
  const name = consumerName(queue);
  const filter = `${RUNS_SUBJECT_PREFIX}.${subjectToken(queue)}.>`;
  let existing;
  try {
    existing = await h.jsm.consumers.info(RUNS_STREAM, name);
  } catch (e) {
    if (!/consumer not found/i.test(`${(e as Error).message}`)) throw e;
  }
  if (existing) {
    const c = existing.config;
    if (c.filter_subject !== filter || c.ack_policy !== AckPolicy.Explicit) {
      throw new RunQueueSetupError(
        `consumer ${name} of stream ${RUNS_STREAM} exists with filter ${c.filter_subject} and ack policy ` +
          `${c.ack_policy}; the run queue needs ${filter} and explicit acks`,
      );
    }
  } else {
    await h.jsm.consumers.add(RUNS_STREAM, {
      durable_name: name,
      filter_subject: filter,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ackWaitMs * NS,
      max_deliver: -1,
    });
  }
  return await h.jsm.jetstream().consumers.get(RUNS_STREAM, name);
}
