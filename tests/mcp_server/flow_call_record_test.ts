/**
 * The kernel record of `run_flow` calls (`src/mcp_server/flow_tool.ts`, `call_record.ts`): a real
 * `agent-block mcp` process, the v2 SDK client over stdio in each era, and the project's kernel
 * database (SQLite) read back directly. Each call — refused, completed, failed, waiting, resumed —
 * is a session of its own holding who called, the arguments, the flow's status and the run; a run
 * the call started carries the call's label on its own session.
 */
import { join } from "node:path";
import { closeStore, type EventRow, type EventStore, openExistingStore } from "../../src/knl/store.ts";
import { listSessions } from "../../src/knl/export.ts";
import { waitFor, writeTree } from "../helpers.ts";
import {
  assert,
  assertEquals,
  assertStringIncludes,
  connectStdio,
  freshProject,
  resultText,
  waitForFile,
} from "./mcp_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const P = (at: string) => ({ op: "path", at });

const FLOW = JSON.stringify({
  id: "echo-flow",
  agents: [
    { name: "echo", kind: "block", spec: { block: "echo" } },
    { name: "defers", kind: "block", spec: { block: "defers", on_defer: "wait" } },
    { name: "raises", kind: "block", spec: { block: "raises" } },
  ],
  flow: {
    kind: "seq",
    children: [
      { kind: "step", ref: "echo", in: P("$.msg"), out: P("$.echoed") },
      {
        kind: "branch",
        cond: { op: "eq", lhs: P("$.echoed.prompt"), rhs: { op: "lit", value: "wait" } },
        then: { kind: "step", ref: "defers", in: { op: "lit", value: "" }, out: P("$.db") },
        else: {
          kind: "branch",
          cond: { op: "eq", lhs: P("$.echoed.prompt"), rhs: { op: "lit", value: "fail" } },
          then: { kind: "step", ref: "raises", in: { op: "lit", value: "" }, out: P("$.r") },
          else: { kind: "seq", children: [] },
        },
      },
    ],
  },
});

function sessionOf(r: { _meta?: Record<string, unknown> }): string {
  const id = r._meta?.["agent-block/session"];
  assert(typeof id === "string", `no session in ${JSON.stringify(r)}`);
  return id;
}

/** Reads the project's kernel database (the server's own writes are committed by then). */
function withStore<T>(root: string, fn: (store: EventStore) => T): T {
  const path = join(root, ".agent-block", "knl.sqlite");
  const store = openExistingStore(path);
  try {
    return fn(store);
  } finally {
    closeStore(path);
  }
}

function kinds(rows: EventRow[]): string[] {
  return rows.map((e) => e.kind);
}

Deno.test({
  name:
    "mcp call record: run_flow calls over stdio are kernel sessions — completed, failed, waiting, resumed and refused — linked to the flow run's session",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    writeTree(p.root, { "flows/echo.bp.json": FLOW });
    const s = await connectStdio(p.root, p.home);
    try {
      const done = await s.client.callTool({
        name: "run_flow",
        arguments: { flow: "echo.bp.json", init: { msg: "hi" } },
      });
      assert(!done.isError, resultText(done));
      const doneRun = JSON.parse(resultText(done)).run_id as string;
      const failed = await s.client.callTool({
        name: "run_flow",
        arguments: { flow: "echo.bp.json", init: { msg: "fail" } },
      });
      assertEquals(failed.isError, true);
      const waiting = await s.client.callTool({
        name: "run_flow",
        arguments: { flow: "echo.bp.json", init: { msg: "wait" } },
      });
      const waitRun = JSON.parse(resultText(waiting)).run_id as string;
      const resumed = await s.client.callTool({
        name: "run_flow",
        arguments: { run_id: waitRun, answer: { rows: 3 } },
      });
      assert(!resumed.isError, resultText(resumed));
      const refused = await s.client.callTool({ name: "run_flow", arguments: { flow: "../secrets.json" } });
      assertEquals(refused.isError, true);

      withStore(p.root, (store) => {
        // A completed run: who called, with what, how it ended, and the run it made.
        const call = sessionOf(done);
        const ev = store.read(call);
        assertEquals(kinds(ev), ["session_open", "mcp_call", "mcp_result", "session_close"]);
        assertEquals(ev[0].data.owner, "agent-block mcp");
        assertEquals(ev[0].data.script, "flows/echo.bp.json");
        assertEquals(ev[0].meta, { mcp_kind: "tool", mcp_name: "run_flow" });
        assertEquals(ev[1].data.arguments, { flow: "echo.bp.json", init: { msg: "hi" } });
        assertEquals(ev[1].data.client, { name: "agent-block-test", version: "0" });
        assertEquals(ev[1].data.era, "2025");
        assertEquals(ev[2].data.outcome, "completed");
        assertEquals(ev[2].data.run, doneRun);
        assertEquals(ev[2].data.sessions, [doneRun]);
        assertEquals((ev[2].data.value as { ctx: unknown }).ctx, {
          msg: "hi",
          echoed: { prompt: "hi", context: null },
        });
        assertEquals(ev[3].data.status, "ok");
        // The other way: the flow run's own session names the call.
        const linked = listSessions(store, { labels: { mcp_call: call } });
        assertEquals(linked.map((x) => x.id), [doneRun]);
        assertEquals(linked[0].owner, "flow");
        assertEquals(kinds(store.read(doneRun)).at(-1), "session_close");

        // A failed run closes its call as an error, with the step's message.
        const f = store.read(sessionOf(failed));
        assertEquals(f[2].data.outcome, "failed");
        assertStringIncludes(String(f[2].data.error), "raises");
        assertEquals(f[3].data.status, "error");

        // Waiting is not an error; the resume is a call of its own on the same run.
        const w = store.read(sessionOf(waiting));
        assertEquals([w[2].data.outcome, w[2].data.run, w[3].data.status], ["waiting", waitRun, "ok"]);
        const r = store.read(sessionOf(resumed));
        assertEquals(r[1].data.arguments, { run_id: waitRun, answer: { rows: 3 } });
        assertEquals([r[2].data.outcome, r[2].data.sessions, r[3].data.status], [
          "completed",
          [waitRun],
          "ok",
        ]);
        assertEquals(listSessions(store, { labels: { mcp_call: sessionOf(waiting) } }).map((x) => x.id), [
          waitRun,
        ]);

        // A refused call ran nothing and says why.
        const x = store.read(sessionOf(refused));
        assertEquals(kinds(x), ["session_open", "mcp_call", "mcp_result", "session_close"]);
        assertEquals(x[2].data.outcome, "invalid");
        assertStringIncludes(String(x[2].data.error), "unknown flow '../secrets.json'");
        assertEquals(x[2].data.sessions, []);
        assertEquals(x[3].data.status, "error");

        // knl lists every run_flow call.
        assertEquals(listSessions(store, { labels: { mcp_name: "run_flow" } }).length, 5);
      });
    } finally {
      await s.close();
    }
  },
});

Deno.test({
  name: "mcp call record: a 2026-07-28 client's run_flow call over stdio names its era and client",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    writeTree(p.root, { "flows/echo.bp.json": FLOW });
    const s = await connectStdio(p.root, p.home, { era: "auto" });
    try {
      assertEquals(s.client.getNegotiatedProtocolVersion(), "2026-07-28");
      const done = await s.client.callTool({
        name: "run_flow",
        arguments: { flow: "echo.bp.json", init: { msg: "yo" } },
      });
      assert(!done.isError, resultText(done));
      const run = JSON.parse(resultText(done)).run_id;
      withStore(p.root, (store) => {
        const ev = store.read(sessionOf(done));
        assertEquals(ev[1].data.era, "2026-07-28");
        assertEquals(ev[1].data.client, { name: "agent-block-test", version: "0" });
        assertEquals([ev[2].data.outcome, ev[2].data.run], ["completed", run]);
      });
    } finally {
      await s.close();
    }
  },
});

Deno.test({
  name:
    "mcp call record: a run_flow call the client cancels mid-step is recorded cancelled, as is its flow run",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const started = join(p.scratch, "started");
    writeTree(p.root, {
      "blocks/napper.lua": `local f = assert(io.open(_PROMPT, "w")) f:write("1") f:close()
std.task.sleep(300)
return "woke"
`,
      "flows/nap.bp.json": JSON.stringify({
        id: "nap-flow",
        agents: [{ name: "napper", kind: "block", spec: { block: "napper" } }],
        flow: { kind: "step", ref: "napper", in: { op: "lit", value: started }, out: P("$.nap") },
      }),
    });
    const s = await connectStdio(p.root, p.home);
    try {
      const ac = new AbortController();
      const pending = s.client.callTool({ name: "run_flow", arguments: { flow: "nap.bp.json" } }, {
        signal: ac.signal,
        timeout: 300_000,
      });
      pending.catch(() => undefined);
      await waitForFile(started, "the flow's step to start");
      ac.abort("the test cancels");
      await pending.then(() => assert(false, "the cancelled call answered"), () => undefined);
      // The server writes the call's end once the flow run has stopped.
      const path = join(p.root, ".agent-block", "knl.sqlite");
      let call = "";
      await waitFor(() =>
        withStore(p.root, (store) => {
          const c = listSessions(store, { labels: { mcp_name: "run_flow" } });
          call = c[0]?.id ?? "";
          return c.length === 1 && c[0].status !== null && c[0].status !== undefined;
        }), { what: `the cancelled call's session closed in ${path}`, timeoutMs: 60_000 });
      withStore(p.root, (store) => {
        const ev = store.read(call);
        assertEquals(kinds(ev), ["session_open", "mcp_call", "mcp_result", "session_close"]);
        assertEquals(ev[2].data.outcome, "cancelled");
        assertEquals(ev[3].data.status, "cancelled");
        const run = ev[2].data.run as string;
        assertEquals(listSessions(store, { labels: { mcp_call: call } }).map((x) => x.id), [run]);
        assertEquals(store.read(run).find((e) => e.kind === "flow.run_finished")?.data.status, "cancelled");
      });
    } finally {
      await s.close();
    }
  },
});
