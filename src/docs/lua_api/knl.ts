/** Reference entries: `require("knl")`, the kernel's Lua half. */
import type { Entry, Field, Section } from "./types.ts";

const S: Field = { name: "s", type: "knl.Session", doc: "The session." };
const BEAT: Field = { name: "beat", type: "integer", doc: "The beat number (into `meta.beat`)." };
const MS: Field = { name: "elapsed_ms", type: "number", optional: true, doc: "How long the call took." };
const SEQ = [
  { type: "integer", name: "seq", doc: "The event's sequence number in the session." },
  { type: "integer", name: "position", doc: "Its position in the log." },
];

const view = (name: string, doc: string, cols: string, example: string, extra: Field[] = []): Entry => ({
  kind: "function",
  name: `knl.views.${name}`,
  doc: `${doc} One SELECT through \`s:query\`; a view of your own is a function of the same form.`,
  params: [S, ...extra],
  returns: [{ type: "table[]", doc: `Rows: ${cols}.` }],
  example,
});

const outcome = (kind: string, doc: string): Entry => ({
  kind: "function",
  name: `knl.Outcome.${kind}`,
  doc: `Makes a \`${kind}\` outcome (${doc}) from its fields, for a loop of your own.`,
  params: [{ name: "fields", type: "table", doc: "`beat`, `out`, `reason`, `error`, ..." }],
  returns: [{ type: "knl.BeatOutcome", doc: `The fields, with \`kind = "${kind}"\`.` }],
  example: `local o = knl.Outcome.${kind}({ beat = 1 })`,
});

export const KNL: Section = {
  id: "knl",
  title: 'require("knl")',
  file: "knl",
  module: "knl",
  tables: ["knl", "knl.views", "knl.record", "knl.Outcome"],
  doc: "The sealed Lua half of the kernel: a session is an append-only event log with a budget, a " +
    "device a frozen bundle of policy, a beat one model call plus the tools it asks for. There is no " +
    "run loop: the caller writes it (`agent.run` is one). The log is `<project>/.agent-block/knl.sqlite` " +
    "(`AGENT_BLOCK_KNL_PATH` moves it); `agent-block knl export` reads it from outside. Ports and tool " +
    'sets come from `require("knl_adapter")` (`adapter.anthropic:open{...}`, `adapter.tools{...}`).',
  entries: [
    { kind: "value", name: "knl.VERSION", type: "string", doc: 'The kernel\'s version (`"1.0"`).' },
    {
      kind: "class",
      name: "knl.Budget",
      doc: "What the session's owner granted.",
      fields: [
        { name: "amount", type: "number", doc: "The amount." },
        {
          name: "tag",
          type: "string",
          optional: true,
          doc: "Its unit: `beats` (default), `tokens`, or what a device's `cost` returns.",
        },
      ],
    },
    {
      kind: "class",
      name: "knl.SessionOpts",
      doc: "Options of a session.",
      fields: [
        { name: "owner", type: "string", optional: true, doc: "Who runs it." },
        { name: "budget", type: "knl.Budget", optional: true, doc: "Its budget (none: unlimited)." },
        { name: "scope", type: "any", optional: true, doc: "What it is about (recorded)." },
        {
          name: "labels",
          type: "table<string, any>",
          optional: true,
          doc: "Labels on its seed event (beside the run's `--label`s).",
        },
        {
          name: "store",
          type: '"mem"|{ sqlite: string }',
          optional: true,
          doc: "`knl.session` only: another store than the project's.",
        },
        {
          name: "children",
          type: "knl.SessionOpts[]",
          optional: true,
          doc: "Child sessions opened and closed with it.",
        },
      ],
    },
    {
      kind: "class",
      name: "knl.EventIn",
      doc: "An event to append.",
      fields: [
        { name: "kind", type: "string", doc: "Its kind (not `session_open` / `session_close`)." },
        { name: "data", type: "table", optional: true, doc: "Its data." },
        { name: "meta", type: "table", optional: true, doc: "Its metadata." },
      ],
    },
    {
      kind: "class",
      name: "knl.Event",
      doc: "A row of the published `events` table (`knl.api().schema`).",
      fields: [
        { name: "position", type: "integer", doc: "The log's global order." },
        { name: "stream", type: "string", doc: "The session id." },
        { name: "seq", type: "integer", doc: "Order within the session." },
        { name: "epoch_ms", type: "integer", doc: "When it happened." },
        { name: "kind", type: "string", doc: "`msg_user`, `llm_request`, `tool_call`, ..." },
        { name: "schema_version", type: "integer", doc: "Its shape's version (reads are upcast)." },
        { name: "meta", type: "table", doc: "Labels, `beat`, correlation ids." },
        { name: "data", type: "table", doc: "The payload." },
      ],
    },
    {
      kind: "class",
      name: "knl.Session",
      doc: "An open (or closed) session: a stream of the log. Its methods are called with `:`.",
      fields: [
        { name: "id", type: "string", doc: "The session id." },
        { name: "owner", type: "string", optional: true, doc: "Its owner." },
        { name: "budget", type: "knl.Budget", optional: true, doc: "Its budget." },
        { name: "spent", type: "number", doc: "What the beats have been charged." },
        { name: "beats", type: "integer", doc: "Beats taken, refused ones included (the last beat number)." },
        { name: "closed", type: "boolean", doc: "Whether it is closed." },
        { name: "parent", type: "knl.Session", optional: true, doc: "The parent session." },
        { name: "children", type: "knl.Session[]", doc: "Child sessions." },
      ],
    },
    {
      kind: "function",
      name: "knl.Session:append",
      doc: "Appends an event and commits it (with anything deferred before it); with `opts.defer` it waits " +
        "for the next commit instead and nothing is returned. `opts.beat` files it under that beat " +
        "(`meta.beat`, as the kernel files a beat's own events): a pack recording a decision during a beat " +
        "passes `s.beats`.",
      params: [
        { name: "ev", type: "knl.EventIn", doc: "`{ kind, data?, meta? }`." },
        {
          name: "opts",
          type: "{ defer: boolean?, beat: integer? }",
          optional: true,
          doc: "`defer`, `beat`.",
        },
      ],
      returns: SEQ,
      errors: "Raises for a closed session or a reserved kind.",
      example: 's:append({ kind = "msg_user", data = { content = "hello" } })',
    },
    {
      kind: "function",
      name: "knl.Session:events",
      doc: "The session's events from `from` (default 1), in seq order, upcast to today's shapes.",
      params: [{ name: "from", type: "integer", optional: true, doc: "First seq." }],
      returns: [{ type: "knl.Event[]", doc: "The events." }],
      example: "for _, e in ipairs(s:events()) do print(e.seq, e.kind) end",
    },
    {
      kind: "function",
      name: "knl.Session:view",
      doc:
        'A built-in view: `"tail"` (the last `opts.n` events, default 10) or `"events"` (from `opts.from`).',
      params: [
        { name: "name", type: '"tail"|"events"', doc: "The view." },
        { name: "opts", type: "{ n: integer?, from: integer? }", optional: true, doc: "Its options." },
      ],
      returns: [{ type: "knl.Event[]", doc: "The events." }],
      errors: "Raises for another name (query views are the functions in `knl.views`).",
      example: 'local last = s:view("tail", { n = 3 })',
    },
    {
      kind: "function",
      name: "knl.Session:query",
      doc: "One read-only SELECT over the published `events` table (filter on `stream = ?` yourself).",
      params: [
        { name: "sql", type: "string", doc: "The SELECT." },
        { name: "params", type: "table", optional: true, doc: "Its parameters." },
        {
          name: "opts",
          type: "{ raw: boolean?, limit: integer? }",
          optional: true,
          doc: "`raw`: keep JSON columns as text; `limit`: at most this many rows.",
        },
      ],
      returns: [{ type: "table[]", doc: "The rows." }],
      errors: "Raises for anything but one SELECT, or an SQL error.",
      example: 's:query("SELECT kind, COUNT(*) AS n FROM events WHERE stream = ? GROUP BY kind", { s.id })',
    },
    {
      kind: "function",
      name: "knl.Session:messages",
      doc: "The conversation folded from the session's events (a copy, in the providers' message shape).",
      returns: [{ type: "llm.Message[]", doc: "The messages." }],
      example: "local history = s:messages()",
    },
    {
      kind: "function",
      name: "knl.Session:remaining",
      doc: "What is left of the budget.",
      returns: [{ type: "number", doc: "The remainder (`math.huge` without a budget)." }],
      example: "if s:remaining() <= 0 then return end",
    },
    {
      kind: "function",
      name: "knl.Session:close",
      doc: "Closes the session and its open children in one transaction (the bracket does this for you).",
      params: [
        { name: "status", type: "string", optional: true, doc: "Default `ok`." },
        { name: "err", type: "any", optional: true, doc: "The error, recorded with the close." },
      ],
      returns: [{ type: "boolean", doc: "False when it was already closed." }],
      example: 's:close("error", "gave up")',
    },
    {
      kind: "function",
      name: "knl.Session:spawn",
      doc: "Opens a child session (its seed event names the parent); with `fn` bracketed like `knl.session`.",
      params: [
        { name: "opts", type: "knl.SessionOpts", optional: true, doc: "The child's options." },
        {
          name: "fn",
          type: "fun(child: knl.Session): any",
          optional: true,
          doc: "Runs with the child, which is then closed.",
        },
      ],
      returns: [{ type: "any", doc: "What `fn` returns, or the open child without `fn`." }],
      example: 'local sub = s:spawn({ owner = "helper" })',
    },
    {
      kind: "class",
      name: "knl.Store",
      local: "Store",
      doc: "An opened session log, from `knl.open`.",
      fields: [{ name: "path", type: "string", optional: true, doc: "Its file (`:memory:` for `mem`)." }],
    },
    {
      kind: "function",
      name: "knl.Store:session",
      doc: "Opens a session on this store; with `fn` bracketed like `knl.session`.",
      params: [
        { name: "opts", type: "knl.SessionOpts", optional: true, doc: "Its options." },
        { name: "fn", type: "fun(s: knl.Session): any", optional: true, doc: "Runs with the session." },
      ],
      returns: [{ type: "any", doc: "What `fn` returns, or the open session without `fn`." }],
      example: 'local s = knl.open({ store = "mem" }):session({ owner = "me" })',
    },
    {
      kind: "function",
      name: "knl.Store:query",
      doc: "One read-only SELECT over the store's `events` table, across sessions.",
      params: [
        { name: "sql", type: "string", doc: "The SELECT." },
        { name: "params", type: "table", optional: true, doc: "Its parameters." },
        { name: "opts", type: "{ raw: boolean?, limit: integer? }", optional: true, doc: "As `s:query`." },
      ],
      returns: [{ type: "table[]", doc: "The rows." }],
      example: 'local rows = store:query("SELECT DISTINCT stream FROM events")',
    },
    {
      kind: "function",
      name: "knl.Store:events",
      doc: "The events of stream `id` from `from` (default 1), upcast.",
      params: [
        { name: "id", type: "string", doc: "The session id." },
        { name: "from", type: "integer", optional: true, doc: "First seq." },
      ],
      returns: [{ type: "knl.Event[]", doc: "The events." }],
      example: "local evs = store:events(result.session_id)",
    },
    {
      kind: "function",
      name: "knl.Store:has",
      doc: "True when stream `id` has events.",
      params: [{ name: "id", type: "string", doc: "The session id." }],
      returns: [{ type: "boolean", doc: "Whether it has." }],
      example: "assert(store:has(id))",
    },
    {
      kind: "function",
      name: "knl.open",
      doc: "Opens a store: the project's database (nil), `\"mem\"` (this run's in-memory log) or " +
        "`{ sqlite = path }`.",
      params: [{
        name: "opts",
        type: '{ store: "mem"|{ sqlite: string }? }',
        optional: true,
        doc: "`store`.",
      }],
      returns: [{ type: "knl.Store", doc: "The store." }],
      errors: "Raises when the store cannot be opened.",
      example: 'local store = knl.open({ store = "mem" })',
    },
    {
      kind: "function",
      name: "knl.session",
      doc: "Opens a session (its seed event stamped with the run's labels and correlation ids). With `fn`, " +
        "runs `fn(s)` and closes it either way: `ok` when fn returns, `error` when it raises (re-raised " +
        "unchanged), `exit` on `os.exit`/`job.defer`, `cancelled` when its task is cancelled. Without " +
        "`fn`, answers the open session (the run closes it as `interrupted` if you do not).",
      params: [
        { name: "opts", type: "knl.SessionOpts", doc: "owner, budget, scope, labels, store, children." },
        { name: "fn", type: "fun(s: knl.Session): any", optional: true, doc: "The bracket's body." },
      ],
      returns: [{ type: "any", doc: "What `fn` returns, or the open session without `fn`." }],
      example: 'knl.session({ owner = "me", budget = { amount = 4 } }, function(s)\n' +
        '  s:append({ kind = "msg_user", data = { content = "hi" } })\nend)',
    },
    {
      kind: "class",
      name: "knl.DeviceSpec",
      doc: "What a device is made of.",
      fields: [
        { name: "llm", type: "table", doc: "A Port: `port:chat(request)` answering an `llm.Response`." },
        {
          name: "tools",
          type: "table",
          optional: true,
          doc: "A ToolPort (`knl_adapter.tools`) or a list of flat specs with handlers.",
        },
        {
          name: "tool_policy",
          type: 'table|fun(call: table, s: knl.Session): (boolean|"stop"|nil, string?, table?)',
          optional: true,
          doc:
            '`{ allow = {...}, deny = {...} }`, or a function answering true, false (denied) or `"stop"`, ' +
            "a reason, and optionally a record of its decision, which the beat files as a `policy_decision` " +
            "event with the call (`policy.tool_policy` answers one).",
        },
        {
          name: "fold",
          type: "fun(messages: llm.Message[], s: knl.Session): llm.Message[]",
          optional: true,
          doc: "Rewrites the conversation before each request.",
        },
        {
          name: "filters",
          type: "(fun(req: table, s: knl.Session): (table|false|nil, string?))[]",
          optional: true,
          doc: "Each may replace the request, or stop the beat (false, reason).",
        },
        { name: "system", type: "string", optional: true, doc: "The system prompt." },
        {
          name: "cost",
          type: "fun(out: table, s: knl.Session): number",
          optional: true,
          doc: "What a beat charges (default tokens for a `tokens` budget, else 1).",
        },
      ],
    },
    {
      kind: "function",
      name: "knl.device",
      doc: "Freezes a device: assigning to it, or to its tools or filters, raises.",
      params: [{
        name: "spec",
        type: "knl.DeviceSpec",
        doc: "llm, tools, tool_policy, fold, filters, system, cost.",
      }],
      returns: [{ type: "table", doc: "The frozen device." }],
      errors:
        "Raises naming the field for an unknown field or one of the wrong type, or an `llm` without `chat`.",
      example: 'local adapter = require("knl_adapter")\n' +
        'local dev = knl.device({ llm = adapter.replay:open({ replay = "model.jsonl" }), system = "Be brief." })',
    },
    {
      kind: "class",
      name: "knl.BeatOutcome",
      doc:
        "What a beat answers: `ok`, `refused` (over budget: the model was not called), `error` (the call " +
        "failed or answered outside the Response shape) or `stopped` (a filter, the tool policy or " +
        "`on_response` stopped it).",
      fields: [
        { name: "kind", type: '"ok"|"refused"|"error"|"stopped"', doc: "The outcome." },
        { name: "beat", type: "integer", optional: true, doc: "The beat number." },
        {
          name: "out",
          type: "table",
          optional: true,
          doc:
            "`{ content, text, tools, usage, stop_reason, model }`; `tools` lists the calls with their `result` and `is_error`.",
        },
        { name: "reason", type: "string", optional: true, doc: "`refused` / `stopped`: why." },
        { name: "error", type: "string", optional: true, doc: "`error`: the message." },
        {
          name: "cause",
          type: "table",
          optional: true,
          doc: "`error`: the Port's error table (an `llm.Error`).",
        },
      ],
    },
    {
      kind: "function",
      name: "knl.beat",
      doc: "One model call plus the tools it asks for, charged to the session's budget, every step " +
        "recorded (`llm_request`, then `llm_response` or `llm_call_failed`, a `tool_call` / `tool_result` " +
        "pair per call, `budget_charge`).",
      params: [
        S,
        { name: "device", type: "table", doc: "From `knl.device`." },
        {
          name: "opts",
          type:
            "{ max_tokens: integer?, tool_choice: any?, on_response: (fun(out: table, s: knl.Session): string?)? }",
          optional: true,
          doc: "`on_response` runs after the response is recorded and before any tool: returning a reason " +
            "stops the beat, its calls answered `not run: <reason>`.",
        },
      ],
      returns: [{ type: "knl.BeatOutcome", doc: "The outcome." }],
      errors:
        "Raises for a closed session or a value that is not a device; a cancel or `os.exit` passes through.",
      example: "local out = knl.beat(s, dev)\nif not knl.Outcome.is_ok(out) then print(out) end",
    },
    {
      kind: "function",
      name: "knl.api",
      doc: "The kernel's published surface.",
      returns: [{
        type: "table",
        doc:
          '`{ version, table = "events", schema = { { name, type, doc } }, kinds, builtin_views, views, outcomes }`.',
      }],
      example: "for _, c in ipairs(knl.api().schema) do print(c.name, c.type) end",
    },
    {
      kind: "function",
      name: "knl.fold_event",
      doc: "Folds one event into a messages array, as a session does on every append (`msg_user`, " +
        "`msg_assistant`, `llm_response`, `tool_result` add to it; other kinds do nothing).",
      params: [
        { name: "msgs", type: "llm.Message[]", doc: "The messages, changed in place." },
        { name: "kind", type: "string", doc: "The event kind." },
        { name: "data", type: "table", doc: "The event data." },
      ],
      example: 'knl.fold_event(msgs, "msg_user", { content = "hi" })',
    },
    view(
      "beats",
      "One row per beat.",
      "`beat, started, ended, calls, tool_calls, input_tokens, output_tokens, outcome`",
      "for _, b in ipairs(knl.views.beats(s)) do print(b.beat, b.outcome) end",
    ),
    view(
      "tool_pairs",
      "Each tool call with its result (nil while pending): the first `tool_result` after it with the same id " +
        "in the same beat, so ids a server reuses across turns pair right.",
      "`seq, beat, id, name, input, content, is_error, ms`",
      "local pairs_ = knl.views.tool_pairs(result.session)",
    ),
    view(
      "ledger",
      "The budget's ledger: one row per charge and per refusal.",
      "`seq, beat, kind, tag, amount, spent, remaining`",
      "local ledger = knl.views.ledger(s)",
    ),
    view(
      "usage",
      "Token usage per model.",
      "`model, calls, input_tokens, output_tokens, total_tokens, cache_read_input_tokens, cache_creation_input_tokens, thinking_tokens`",
      "local u = knl.views.usage(s)[1]",
    ),
    view(
      "sessions",
      "The store's sessions, newest first (`s` is any session of the store).",
      "`id, owner, labels, started, closed, status, beats, tokens`",
      'local recent = knl.views.sessions(s, { labels = { job = "nightly" }, limit = 10 })',
      [{
        name: "opts",
        type: "{ labels: table<string, any>?, limit: integer? }",
        optional: true,
        doc: "Filter on the seed event's labels; bound the rows.",
      }],
    ),
    {
      kind: "function",
      name: "knl.record.llm_request",
      doc: "Records `llm_request` (what was asked; the messages themselves are already in the log), for a " +
        "loop that calls a Port itself.",
      params: [S, { name: "req", type: "table", doc: "The request." }, BEAT, {
        name: "profile",
        type: "table",
        optional: true,
        doc: "The Port's profile.",
      }],
      returns: SEQ,
      example: "knl.record.llm_request(s, req, 1, port.profile)",
    },
    {
      kind: "function",
      name: "knl.record.llm_response",
      doc: "Records `llm_response` (the normalised response, `total_tokens` filled in, the server's " +
        "`context_management` report kept when it sent one).",
      params: [S, { name: "resp", type: "llm.Response", doc: "The response." }, BEAT, MS],
      returns: [SEQ[0], { type: "llm.Usage", name: "usage", doc: "The usage as recorded." }],
      example: "local _, usage = knl.record.llm_response(s, resp, 1, 830)",
    },
    {
      kind: "function",
      name: "knl.record.llm_call_failed",
      doc: "Records `llm_call_failed`.",
      params: [S, { name: "err", type: "any", doc: "The error." }, BEAT, MS],
      returns: SEQ,
      example: "knl.record.llm_call_failed(s, err, 1, 120)",
    },
    {
      kind: "function",
      name: "knl.record.tool_call",
      doc: "Records `tool_call`.",
      params: [
        S,
        { name: "call", type: "{ id: string, name: string, input: table }", doc: "The call." },
        BEAT,
      ],
      returns: SEQ,
      example: "knl.record.tool_call(s, { id = b.id, name = b.name, input = b.input }, 1)",
    },
    {
      kind: "function",
      name: "knl.record.tool_result",
      doc: "Records `tool_result`.",
      params: [
        S,
        { name: "call", type: "{ id: string, name: string }", doc: "The call answered." },
        { name: "content", type: "any", doc: "The result." },
        { name: "is_error", type: "boolean", optional: true, doc: "A failure." },
        BEAT,
        MS,
      ],
      returns: SEQ,
      example: "knl.record.tool_result(s, call, '{\"words\":5}', false, 1, 3)",
    },
    {
      kind: "value",
      name: "knl.Outcome.KINDS",
      type: "string[]",
      doc: '`{ "ok", "refused", "error", "stopped" }`.',
    },
    outcome("ok", "the beat ran"),
    outcome("refused", "over budget"),
    outcome("error", "the call failed"),
    outcome("stopped", "a filter, the policy or `on_response` stopped it"),
    {
      kind: "function",
      name: "knl.Outcome.is_ok",
      doc: "True for an `ok` outcome.",
      params: [{ name: "o", type: "any", doc: "Any value." }],
      returns: [{ type: "boolean", doc: "Whether it is `ok`." }],
      example: "if knl.Outcome.is_ok(out) then print(out.out.text) end",
    },
    {
      kind: "function",
      name: "knl.Outcome.is",
      doc: "True for any outcome.",
      params: [{ name: "o", type: "any", doc: "Any value." }],
      returns: [{ type: "boolean", doc: "Whether it is one." }],
      example: "assert(knl.Outcome.is(out))",
    },
  ],
};
