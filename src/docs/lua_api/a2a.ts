/** Reference entries: `a2a`, the A2A (Agent2Agent 1.0) client. */
import type { Field, Section } from "./types.ts";

const URL: Field = {
  name: "url",
  type: "string",
  doc: "The agent's base URL (its card is read from `/.well-known/agent-card.json`), or the card's own URL " +
    "(ending in `.json`).",
};

const OPTS: Field = {
  name: "opts",
  type: "a2a.Opts",
  optional: true,
  doc: "Timeout, headers, binding.",
};

const TASK_ID: Field = { name: "task_id", type: "string", doc: "The task's id (`a2a.Task.id`)." };

export const A2A: Section = {
  id: "a2a",
  title: "a2a",
  file: "agent-block",
  tables: ["a2a"],
  doc: "A client for A2A (Agent2Agent, spec 1.0) agents, over JSON-RPC or HTTP+JSON as the agent's card " +
    "offers (the official `@a2a-js/sdk` client). Every call answers `{ ok = true, ... }` or an " +
    "`a2a.Failure`; only bad arguments raise. The calling task yields while a call runs; cancelling it " +
    "aborts the call. A watched run is told each call (`a2a_call` in `--events`). `agent-block a2a serve` " +
    "serves a project's blocks as such an agent.",
  entries: [
    {
      kind: "class",
      name: "a2a.Opts",
      doc: "Options every call takes.",
      fields: [
        { name: "timeout", type: "number", optional: true, doc: "Seconds for the whole call (default 120)." },
        {
          name: "headers",
          type: "table<string, string>",
          optional: true,
          doc: "HTTP headers on every request of the call, the card's included (e.g. `authorization`); " +
            "their values join the run's secrets.",
        },
        {
          name: "binding",
          type: "string",
          optional: true,
          doc: '`"JSONRPC"` or `"HTTP+JSON"` (default: the first of the card\'s interfaces we speak).',
        },
      ],
    },
    {
      kind: "class",
      name: "a2a.SendOpts",
      extends: "a2a.Opts",
      doc: "Options of `a2a.send`.",
      fields: [
        {
          name: "on_update",
          type: "fun(ev: a2a.Update)",
          optional: true,
          doc: "Sees each streamed event in order, as a Lua task (it may yield); an error it raises raises " +
            "out of `send`. A non-streaming agent gives one `task` event.",
        },
        { name: "context_id", type: "string", optional: true, doc: "Continue this conversation." },
        {
          name: "task_id",
          type: "string",
          optional: true,
          doc: "Continue this task (an `input-required` one).",
        },
        {
          name: "skill",
          type: "string",
          optional: true,
          doc: "Sets `metadata.skill` (which block an agent-block agent runs).",
        },
      ],
    },
    {
      kind: "class",
      name: "a2a.Message",
      doc: "A message to send (or a plain string: one text part).",
      fields: [
        { name: "text", type: "string", optional: true, doc: "A text part." },
        {
          name: "parts",
          type: "table[]",
          optional: true,
          doc:
            "More parts in the spec's JSON form: `{ text = ... }`, `{ data = ... }`, `{ url = ..., mediaType = ... }`.",
        },
        { name: "metadata", type: "table", optional: true, doc: "The message's metadata." },
        { name: "skill", type: "string", optional: true, doc: "Sets `metadata.skill`." },
      ],
    },
    {
      kind: "class",
      name: "a2a.Update",
      doc: "One streamed event, as `on_update` sees it.",
      fields: [
        { name: "kind", type: "string", doc: '`"task"`, `"status"` or `"artifact"`.' },
        {
          name: "state",
          type: "string",
          optional: true,
          doc: "`task` and `status`: the task's state, lower case (`submitted`, `working`, `completed`, " +
            "`failed`, `canceled`, `rejected`, `input-required`, `auth-required`).",
        },
        {
          name: "text",
          type: "string",
          optional: true,
          doc: "The text parts of the status message or artifact.",
        },
        { name: "name", type: "string", optional: true, doc: "`artifact`: the artifact's name." },
        { name: "event", type: "table", doc: "The event in the spec's JSON form." },
      ],
    },
    {
      kind: "class",
      name: "a2a.Task",
      doc: "A task as `send`, `get` and `cancel` answer it.",
      fields: [
        { name: "ok", type: "boolean", doc: "`true`." },
        { name: "id", type: "string", optional: true, doc: "The task's id (absent for a message answer)." },
        { name: "context_id", type: "string", optional: true, doc: "The conversation's id." },
        {
          name: "state",
          type: "string",
          doc: 'The final state (see `a2a.Update.state`), or `"message"` when the agent answered with a ' +
            "message instead of a task.",
        },
        {
          name: "text",
          type: "string",
          doc:
            "The text parts of the artifacts (else of the status message, or of the message), joined by newlines.",
        },
        {
          name: "task",
          type: "table",
          optional: true,
          doc: "The task in the spec's JSON form (status, artifacts, history).",
        },
        {
          name: "message",
          type: "table",
          optional: true,
          doc: "The agent's message, when it answered with one.",
        },
      ],
    },
    {
      kind: "class",
      name: "a2a.Failure",
      doc: "What a failed call answers.",
      fields: [
        { name: "ok", type: "boolean", doc: "`false`." },
        {
          name: "error",
          type: "string",
          doc:
            "What went wrong, naming the call and the agent (a malformed card names the field), scrubbed " +
            "of the run's secrets.",
        },
        {
          name: "kind",
          type: "string",
          doc: "`card` (unreachable or malformed card), `transport`, `timeout`, `stream` (the stream ended " +
            "before a final state: the agent dropped it), `invalid` (not a URL), `remote` (the agent answered " +
            "an error).",
        },
        {
          name: "code",
          type: "string",
          optional: true,
          doc: "With `remote`: the A2A error reason (`TASK_NOT_FOUND`, ...).",
        },
      ],
    },
    {
      kind: "function",
      name: "a2a.card",
      doc: "Fetches and checks an agent's card.",
      params: [URL, OPTS],
      returns: [{ type: "table", doc: "`{ ok = true, card, name, skills }`, or an `a2a.Failure`." }],
      errors: "Raises only for bad arguments.",
      example: 'local c = a2a.card("http://127.0.0.1:7790")\nif c.ok then print(c.name, #c.skills) end',
    },
    {
      kind: "function",
      name: "a2a.send",
      doc: "Sends a message and waits for the task's final state (streamed when the agent streams), or for " +
        "an `input-required`/`auth-required` state.",
      params: [
        URL,
        { name: "message", type: "string|a2a.Message", doc: "The message." },
        {
          name: "opts",
          type: "a2a.SendOpts",
          optional: true,
          doc: "Updates, conversation, timeout, headers.",
        },
      ],
      returns: [{ type: "a2a.Task|a2a.Failure", doc: "The task, or the failure." }],
      errors: "Raises for bad arguments and for an error raised by `on_update`.",
      example: 'local r = a2a.send("http://127.0.0.1:7790", "summarise the README", {\n' +
        '  skill = "summarise",\n  on_update = function(ev) print(ev.kind, ev.state or ev.name) end,\n})\n' +
        'if r.ok and r.state == "completed" then print(r.text) end',
    },
    {
      kind: "function",
      name: "a2a.get",
      doc: "The task as the agent has it now.",
      params: [URL, TASK_ID, OPTS],
      returns: [{ type: "a2a.Task|a2a.Failure", doc: "The task, or the failure." }],
      errors: "Raises only for bad arguments.",
      example: "local t = a2a.get(url, id)\nprint(t.state)",
    },
    {
      kind: "function",
      name: "a2a.cancel",
      doc: "Asks the agent to cancel the task; answers the task as it then is.",
      params: [URL, TASK_ID, OPTS],
      returns: [{
        type: "a2a.Task|a2a.Failure",
        doc: "The task, or the failure (`TASK_NOT_CANCELABLE` for a finished one).",
      }],
      errors: "Raises only for bad arguments.",
      example: 'local t = a2a.cancel(url, id)\nassert(t.state == "canceled")',
    },
  ],
};
