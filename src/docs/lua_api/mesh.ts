/** Reference entries: `mesh`, agents talking to agents (`--relay`). */
import type { Section } from "./types.ts";

const NOT_CONNECTED = "Without `--relay` it raises `mesh.<name>: mesh not connected (no --relay specified)`.";

export const MESH: Section = {
  id: "mesh",
  title: "mesh",
  file: "agent-block",
  tables: ["mesh"],
  doc: "Messages between agents, addressed by AgentId (the 43-character base64url public key of the " +
    "run's `--secret-key`). The run joins the mesh before the script starts when `--relay` names a NATS " +
    "server or cluster (`nats://host:4222[,...]`) or an agent-mesh relay (`ws(s)://host:port/ws`). Every " +
    "message is signed; what arrives with a `from` that did not sign it is dropped. A payload table (or " +
    "nil) gets `__ab_obs = { trace_id, run_id, agent_id, agent_name }` from the run's correlation " +
    "variables unless it has one (with OpenTelemetry export on, also `traceparent`: the span of the send or " +
    "request, under which the receiving run's `mesh.receive` span goes). " +
    'Failures are error tables `{ message, source = "mesh", kind, peer }` ' +
    "with `kind` one of `timeout`, `unreachable`, `closed`, `connect`, `auth`, `remote`, `too_large`, " +
    "`payload`, `protocol` or `not_connected`. Another agent's request arrives as the bus event " +
    '`{ kind = "mesh", id, payload, meta = { from } }`; the handler\'s return value is the reply.',
  entries: [
    {
      kind: "function",
      name: "mesh.agent_id",
      doc: "This agent's AgentId, the address other agents send to.",
      returns: [{ type: "string", doc: "43 characters of base64url." }],
      errors: NOT_CONNECTED,
      example: 'log.info("reach me at " .. mesh.agent_id())',
    },
    {
      kind: "function",
      name: "mesh.send",
      doc: "Delivers `payload` to another agent and returns once it arrived (over NATS: the receiver " +
        "acknowledged it; its handler's answer is not awaited). Waits at most 10 s.",
      params: [
        { name: "agent_id", type: "string", doc: "The target's AgentId." },
        {
          name: "payload",
          type: "any",
          optional: true,
          doc: "A JSON value (tables, strings, numbers, ...).",
        },
      ],
      errors: "Raises an error table on failure (`kind`: `unreachable`, `timeout`, `too_large`, ...). " +
        NOT_CONNECTED,
      example: 'mesh.send(peer, { event = "done", items = 3 })',
    },
    {
      kind: "function",
      name: "mesh.request",
      doc: "Asks another agent and returns its reply (JSON `null` is `std.json.null`). A peer whose " +
        'handler raised answers `{ error = "..." }`, which is returned, not raised.',
      params: [
        { name: "agent_id", type: "string", doc: "The target's AgentId." },
        { name: "payload", type: "any", optional: true, doc: "A JSON value." },
        {
          name: "timeout",
          type: "number",
          optional: true,
          doc: "Seconds to wait for the reply (default 30).",
        },
      ],
      returns: [{ type: "any", doc: "The reply payload." }],
      errors: "Raises an error table when no reply comes (`timeout`), nobody listens at `agent_id` " +
        "(`unreachable`), or the payload cannot travel (`too_large`, `payload`). " + NOT_CONNECTED,
      example: 'local r = mesh.request(peer, { q = "status" }, 5)\nif r.error then log.warn(r.error) end',
    },
    {
      kind: "function",
      name: "mesh.on",
      doc: 'Handles requests from other agents: the same as `bus.on("mesh", fn)`. The handler gets ' +
        "`{ kind, id, payload, meta = { from } }` while the script runs `bus.serve()`; what it returns is " +
        "the reply, what it raises is answered as `{ error = message }`. It may itself call `mesh.request`.",
      params: [{ name: "fn", type: "fun(event: bus.Event): any", doc: "The handler." }],
      errors: NOT_CONNECTED,
      example: "mesh.on(function(ev)\n  return { echo = ev.payload, from = ev.meta.from }\nend)\nbus.serve()",
    },
  ],
};
