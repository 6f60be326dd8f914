/**
 * The server's task store: the SDK's `InMemoryTaskStore`, bounded.
 *
 * Owns the bound: a long-running `agent-block a2a serve` must not keep every task it ever ran.
 * Tasks still going are always kept; of the finished ones (completed, failed, canceled,
 * rejected) the newest `keepFinished` are. When the finished ones reach twice that, the store is
 * rebuilt from the kept tasks (each saved again with the context it was last saved with), so the
 * cost is amortised over `keepFinished` saves and `load`/`list` keep the SDK's exact semantics
 * (owner and tenant scoping, paging): every call goes to an SDK store.
 *
 * Invariant: a task older than the newest `keepFinished` finished ones may be forgotten —
 * `GetTask` then answers `TASK_NOT_FOUND`; a task that has not finished is never forgotten.
 */
import { type ListTasksRequest, type ListTasksResponse, type Task, TaskState } from "@a2a-js/sdk";
import { InMemoryTaskStore, type ServerCallContext, type TaskStore } from "@a2a-js/sdk/server";

/** Finished tasks kept by default. */
export const KEEP_FINISHED = 1000;

const FINISHED = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/** A task store that forgets the oldest finished tasks. */
export class BoundedTaskStore implements TaskStore {
  #inner = new InMemoryTaskStore();
  /** Task id → whether it has finished and the context it was saved with, oldest save first. */
  readonly #entries = new Map<string, { finished: boolean; context: ServerCallContext }>();
  #finished = 0;

  /** @param keepFinished finished tasks kept (at least this many, at most twice) */
  constructor(private readonly keepFinished = KEEP_FINISHED) {}

  /** Finished tasks held now (for tests). */
  get finishedCount(): number {
    return this.#finished;
  }

  /** Saves `task`; may forget the oldest finished tasks. */
  async save(task: Task, context: ServerCallContext): Promise<void> {
    await this.#inner.save(task, context);
    const old = this.#entries.get(task.id);
    if (old?.finished) this.#finished--;
    this.#entries.delete(task.id);
    const finished = task.status !== undefined && FINISHED.has(task.status.state);
    this.#entries.set(task.id, { finished, context });
    if (finished) this.#finished++;
    if (this.#finished >= 2 * this.keepFinished) await this.#rebuild();
  }

  /** The task, as the SDK's store has it. */
  load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return this.#inner.load(taskId, context);
  }

  /** The tasks, as the SDK's store lists them. */
  list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.#inner.list(params, context);
  }

  async #rebuild(): Promise<void> {
    let drop = this.#finished - this.keepFinished;
    const next = new InMemoryTaskStore();
    for (const [id, e] of [...this.#entries]) {
      if (e.finished && drop > 0) {
        drop--;
        this.#entries.delete(id);
        this.#finished--;
        continue;
      }
      const task = await this.#inner.load(id, e.context);
      if (task) await next.save(task, e.context);
    }
    this.#inner = next;
  }
}
