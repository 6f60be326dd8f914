/**
 * The calls of declared blocks waiting for their client (`src/mcp_server/call_session.ts`): a
 * fresh state every round, stray answers ignored, and the bound on waiting calls.
 */
import assert from "node:assert/strict";
import type { ServerContext } from "@modelcontextprotocol/server";
import { CallSession, CallTable } from "../../src/mcp_server/call_session.ts";

/** The part of a request context a call session uses. */
function ctx(inputResponses?: Record<string, unknown>): ServerContext {
  return {
    mcpReq: { signal: new AbortController().signal, envelope: { v: 1 }, inputResponses },
  } as unknown as ServerContext;
}

const ABILITIES = { sampling: true, elicitation: true, roots: true, declared: {} };

Deno.test("attack: calls that ask their client and are never answered cannot pile up (the one waiting longest is ended)", () => {
  const table = new CallTable(3);
  const sessions = Array.from({ length: 5 }, () => new CallSession(ctx(), ABILITIES, undefined));
  for (const s of sessions) {
    s.suspend(60_000, () => table.delete(s.state));
    table.add(s);
  }
  assert.equal(table.size, 3);
  assert.deepEqual(sessions.map((s) => s.abort.signal.aborted), [true, true, false, false, false]);
  assert.match(String(sessions[0].abort.signal.reason), /too many calls waiting for their client \(3\)/);
  // A state is good for one answer: taken once, then unknown.
  const last = sessions[4];
  assert.equal(table.take(last.state), last);
  assert.equal(table.take(last.state), undefined);
  for (const s of sessions) s.finish({ ok: true, value: "" }); // clears the expiry timers
});

Deno.test("call session: every round gets a fresh state; answers to nothing pending are ignored", async () => {
  const s = new CallSession(ctx(), ABILITIES, undefined);
  const first = s.state;
  const second = s.suspend(60_000, () => {});
  assert.notEqual(first, second);
  // No pending request: resuming with stray answers changes nothing.
  s.resume(ctx({ stray: { action: "accept" } }), undefined);
  assert.equal(s.unanswered(), undefined);
  s.finish({ ok: true, value: "done" });
  assert.deepEqual(await s.next(), { kind: "done", value: { ok: true, value: "done" } });
});
