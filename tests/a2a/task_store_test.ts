/**
 * The A2A server's task store keeps every unfinished task and the newest finished ones: past
 * twice the bound it forgets the oldest finished, and what it keeps reads back as saved.
 */
import { assertEquals } from "../mcp_server/mcp_helpers.ts";
import { type Task, TaskState } from "@a2a-js/sdk";
import { ServerCallContext } from "@a2a-js/sdk/server";
import { BoundedTaskStore } from "../../src/a2a_server/task_store.ts";

function task(id: string, state: TaskState): Task {
  return {
    id,
    contextId: "c",
    status: { state, message: undefined, timestamp: new Date().toISOString() },
    artifacts: [],
    history: [],
    metadata: undefined,
  };
}

Deno.test("a2a task store: the oldest finished tasks are forgotten, unfinished ones never", async () => {
  const ctx = new ServerCallContext();
  const store = new BoundedTaskStore(3);
  await store.save(task("live", TaskState.TASK_STATE_WORKING), ctx);
  for (let i = 0; i < 6; i++) await store.save(task(`done-${i}`, TaskState.TASK_STATE_COMPLETED), ctx);
  // At 6 finished (twice 3) the store kept the newest 3.
  assertEquals(store.finishedCount, 3);
  assertEquals(await store.load("done-0", ctx), undefined);
  assertEquals(await store.load("done-2", ctx), undefined);
  assertEquals((await store.load("done-3", ctx))?.status?.state, TaskState.TASK_STATE_COMPLETED);
  assertEquals((await store.load("live", ctx))?.status?.state, TaskState.TASK_STATE_WORKING);
  // A task saved again as finished counts once, and moves to the newest end.
  await store.save(task("live", TaskState.TASK_STATE_COMPLETED), ctx);
  assertEquals(store.finishedCount, 4);
  const listed = await store.list({
    tenant: "",
    contextId: "",
    status: 0,
    pageSize: 50,
    pageToken: "",
    historyLength: undefined,
    statusTimestampAfter: undefined,
    includeArtifacts: false,
  }, ctx);
  assertEquals(listed.tasks.map((t) => t.id).sort(), ["done-3", "done-4", "done-5", "live"]);
});
