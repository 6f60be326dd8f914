/**
 * Reference entries: the shell packs `require("policy")` and `require("supervisor")`, and the
 * consumer `require("coding")` built from them.
 */
import type { Entry, Field, Section } from "./types.ts";

const fn = (
  name: string,
  doc: string,
  params: Field[],
  returns: { type: string; doc: string }[],
  example: string,
  errors?: string,
): Entry => ({ kind: "function", name, doc, params, returns, example, ...(errors ? { errors } : {}) });

const PIECE = { type: "policy.Piece", doc: "A tool-policy piece (for `policy.tool_policy`)." };
const PRED = { type: "policy.Predicate", doc: "An argument predicate (for `policy.args`)." };
const FOLD = { type: "policy.Fold", doc: "A fold (for `device.fold`)." };
const FILTER = { type: "policy.Filter", doc: "A filter (for `device.filters`)." };
const MSGS: Field = { name: "messages", type: "llm.Message[]", doc: "A conversation." };
const N: Field = { name: "n", type: "integer", doc: "How many." };
const STOP = { type: "supervisor.Predicate", doc: "A stop predicate." };

export const POLICY: Section = {
  id: "policy",
  title: 'require("policy")',
  file: "policy",
  module: "policy",
  tables: ["policy", "policy.fold", "policy.filters", "policy.cost", "policy.budget"],
  doc: "A shell pack: values for the kernel's seams — `tool_policy`, `fold`, `filters`, `cost` — each a " +
    "small composable piece, and the numbers a Port's `profile` declares, fed into them. A pack is a " +
    "value you hand to `knl.device` or consult in your own loop, not a registry the host reads; the " +
    "module's `---` header is the guide. `agent-block vendor policy` writes a copy with a warning; for a " +
    'partial change shadow it and delegate to `require("embedded.policy")`.',
  entries: [
    {
      kind: "alias",
      name: "policy.Piece",
      type:
        'fun(call: { id: string, name: string, input: table }, s: knl.Session?): (boolean|"stop"|nil), string?',
      doc: 'Answers nil (no opinion), true (allow), false with a reason (deny) or `"stop"` with a reason.',
    },
    {
      kind: "alias",
      name: "policy.Predicate",
      type: "fun(input: table, call: table): boolean, string?",
      doc: "True when the call's input is acceptable, else false and why.",
    },
    {
      kind: "alias",
      name: "policy.Fold",
      type: "fun(messages: llm.Message[], s: knl.Session?): llm.Message[]",
      doc: "The conversation a beat sends, from the session's; never changes a message it is given.",
    },
    {
      kind: "alias",
      name: "policy.Filter",
      type: "fun(req: table, s: knl.Session?): table?",
      doc: "A new request, or nil when it changes nothing.",
    },
    fn(
      "policy.allow",
      "A piece denying every call to a tool not named.",
      [{ name: "names", type: "string|string[]", doc: "The tools allowed." }],
      [PIECE],
      'local p = policy.allow({ "fs_read", "fs_edit" })',
    ),
    fn(
      "policy.deny",
      "A piece denying every call to a tool named.",
      [{ name: "names", type: "string|string[]", doc: "The tools denied." }],
      [PIECE],
      'local p = policy.deny("fs_write")',
    ),
    fn(
      "policy.under",
      "A predicate: the input's path field names a path inside `root` (both relative to the project " +
        "root, compared after normalising `.` and `..`).",
      [
        { name: "root", type: "string", doc: "A directory, relative to the project root." },
        { name: "field", type: "string", optional: true, doc: 'The input field (default `"path"`).' },
      ],
      [PRED],
      'local in_src = policy.under("src")',
      "Raises when `root` is outside the project root.",
    ),
    fn(
      "policy.no_symlinks",
      "A predicate: the input's path field neither is nor passes through a symbolic link below the project " +
        "root, so a lexical check (`policy.under`, a glob) holds for the file the path really names.",
      [{ name: "field", type: "string", optional: true, doc: 'The input field (default `"path"`).' }],
      [PRED],
      'local p = policy.args("fs_edit", policy.under("src"), policy.no_symlinks())',
    ),
    fn(
      "policy.matches",
      "A predicate: the input's string field matches a Lua pattern. Not for shell commands: a pattern " +
        "cannot tell one command from a list (`^git ` matches `git status; touch x`); use `policy.command`.",
      [
        { name: "pattern", type: "string", doc: "A Lua pattern." },
        { name: "field", type: "string", optional: true, doc: 'The input field (default `"command"`).' },
      ],
      [PRED],
      'local ticket = policy.matches("^[A-Z]+%-%d+$", "ticket")',
    ),
    fn(
      "policy.command",
      "A predicate: the input's field is a shell command of plain words (split and unquoted as the shell " +
        "would) whose first words are one of `prefixes`. Control and redirection operators, newlines, " +
        "command and parameter substitutions, unquoted globs, braces and tildes, and comments are refused, " +
        "so what runs is exactly the program and arguments checked.",
      [
        {
          name: "prefixes",
          type: "string|(string|string[])[]",
          doc: 'A prefix (`"git status"`) or a list of them, each a string of words or a list of words.',
        },
        {
          name: "opts",
          type: "{ field?: string, operators?: boolean }",
          optional: true,
          doc: '`field` (default `"command"`); `operators = true` lets `;`, `&`, `|`, `&&` and `||` join ' +
            "commands, each of which must then start with a prefix (redirections and substitutions stay refused).",
        },
      ],
      [PRED],
      'local git_read = policy.args("sh", policy.command({ "git status", "git diff", "git log" }))',
    ),
    fn(
      "policy.args",
      "A piece: calls to `tool` must satisfy every predicate; other tools get no opinion.",
      [
        {
          name: "tool",
          type: "string|string[]",
          doc: 'A tool name, a list of them, or `"*"` for every tool.',
        },
        { name: "...", type: "policy.Predicate", doc: "The predicates." },
      ],
      [PIECE],
      'local p = policy.args("fs_edit", policy.under("src"))',
    ),
    fn(
      "policy.approve",
      'A piece answering for the absent human: per tool (or `"*"`) `"allow"`, `"deny"` or a function ' +
        '`(call, s)` answering true / `"allow"`, false / `"deny"` (and why), `"stop"`, or nil.',
      [{ name: "rules", type: "table<string, string|function>", doc: "The rules by tool name." }],
      [PIECE],
      'local p = policy.approve({ fs_read = "allow", ["*"] = function(call) return call.name ~= "sh" end })',
    ),
    fn(
      "policy.tool_policy",
      "One `device.tool_policy` from pieces tried in order: the first that denies or stops decides, " +
        "one answering true allows, else `opts.default`. Every decision is a `policy_decision` event " +
        "`{ tool, id, verdict, rule, reason }` in the session log under the beat's number (`opts.record " +
        "= false` skips it). A piece that raises denies the call.",
      [
        { name: "pieces", type: "policy.Piece[]", doc: "The pieces." },
        {
          name: "opts",
          type: '{ default: ("allow"|"deny")?, record: boolean? }',
          optional: true,
          doc: "Default verdict (allow) and whether to record (true).",
        },
      ],
      [{ type: "function", doc: "The tool policy." }],
      "local dev = knl.device({ llm = port, tools = tools,\n" +
        '  tool_policy = policy.tool_policy({ policy.deny("fs_write"), policy.args("fs_edit", policy.under("src")) }) })',
    ),
    fn(
      "policy.rel_path",
      "A path as the file tools see it: relative to the project root and normalised; nil (and the " +
        "absolute path) when it leaves the root.",
      [{ name: "path", type: "string", doc: "A path." }],
      [{ type: "string?", doc: "The relative path." }, { type: "string?", doc: "The absolute path." }],
      'policy.rel_path("./src/../src/a.lua") --> "src/a.lua"',
    ),
    fn(
      "policy.message_tokens",
      "Estimated tokens of one message (4 characters a token); kept per message table.",
      [{ name: "m", type: "llm.Message", doc: "A message." }],
      [{ type: "integer", doc: "The estimate." }],
      'local n = policy.message_tokens({ role = "user", content = "hi" })',
    ),
    fn(
      "policy.estimate_tokens",
      "Estimated tokens of a conversation.",
      [MSGS],
      [{ type: "integer", doc: "The estimate." }],
      "local n = policy.estimate_tokens(s:messages())",
    ),
    fn(
      "policy.limits",
      "What a Port's profile declares, as the numbers the seams take: `{ context_window, " +
        "max_output_tokens, reasoning, thinking, max_tokens, input_budget }` (`input_budget` = the window " +
        "less `reserve` and the output; nil without a window).",
      [
        { name: "profile", type: "table", doc: "A Port's `profile`." },
        {
          name: "opts",
          type: "{ context_window: integer?, max_tokens: integer?, reserve: number? }",
          optional: true,
          doc: "Stand-ins for what the profile lacks; `reserve` (default 0.1) of the window kept free.",
        },
      ],
      [{ type: "table", doc: "The limits." }],
      "local lim = policy.limits(port.profile)",
    ),
    fn(
      "policy.fold.last_turns",
      "A fold keeping the first message (the task) and the last `n` assistant turns with what followed each.",
      [N],
      [FOLD],
      "local f = policy.fold.last_turns(6)",
    ),
    fn(
      "policy.fold.clear_tool_results",
      "A fold that, while the estimate is over `budget`, replaces tool results older than the last `keep` " +
        "(default 2) with a placeholder naming how much was cut.",
      [{
        name: "opts",
        type: "{ budget: integer, keep: integer? }",
        doc: "Token budget, results kept whole.",
      }],
      [FOLD],
      "local f = policy.fold.clear_tool_results({ budget = 50000, keep = 3 })",
    ),
    fn(
      "policy.fold.under",
      "A fold dropping the oldest turns (the task stays) until the estimate is under `budget`, keeping at " +
        "least `min_turns` (default 1).",
      [
        { name: "budget", type: "integer", doc: "Tokens." },
        { name: "min_turns", type: "integer", optional: true, doc: "Turns always kept." },
      ],
      [FOLD],
      "local f = policy.fold.under(100000)",
    ),
    fn(
      "policy.fold.summarise",
      "A fold that, past `trigger` tokens, replaces the turns before the last `keep` (default 2) with a " +
        "summary written through `port` — once per cut, recorded as `fold_summary`. A failed summary " +
        "leaves the conversation whole (a warning says why).",
      [{
        name: "opts",
        type: "{ port: table, trigger: integer, keep: integer?, max_tokens: integer? }",
        doc: "The summarising Port and when to summarise.",
      }],
      [FOLD],
      "local f = policy.fold.summarise({ port = port, trigger = 80000 })",
    ),
    fn(
      "policy.fold.chain",
      "Folds applied in order.",
      [{ name: "...", type: "policy.Fold", doc: "The folds." }],
      [FOLD],
      "local f = policy.fold.chain(policy.fold.clear_tool_results({ budget = 9000 }), policy.fold.under(9000))",
    ),
    fn(
      "policy.fold.fit",
      "The fold keeping a request within what the profile allows (`policy.limits(...).input_budget`): old " +
        "tool results cleared first, then the oldest turns dropped.",
      [
        { name: "profile", type: "table", doc: "A Port's `profile`." },
        { name: "opts", type: "table", optional: true, doc: "As for `policy.limits`." },
      ],
      [FOLD],
      "local dev = knl.device({ llm = port, fold = policy.fold.fit(port.profile) })",
      "Raises when neither the profile nor `opts` gives a context window.",
    ),
    {
      kind: "value",
      name: "policy.SECRET_PATTERNS",
      type: "string[]",
      doc:
        "The Lua patterns `policy.filters.redact` replaces: API keys (`sk-ant-`, `sk-`), AWS access keys, " +
        "GitHub and Slack tokens, bearer tokens, PEM private keys.",
    },
    fn(
      "policy.filters.redact",
      "A filter replacing secret-shaped strings (`policy.SECRET_PATTERNS` and `patterns`) and the literal " +
        "`secrets` in every text and tool result of a request. The log keeps what the tools answered.",
      [{
        name: "opts",
        type: "{ patterns: string[]?, secrets: string[]?, replacement: string? }",
        optional: true,
        doc: 'More patterns, literals (4 characters or more), the replacement (`"[redacted]"`).',
      }],
      [FILTER],
      'local f = policy.filters.redact({ secrets = { std.env.get("DB_PASSWORD") } })',
    ),
    fn(
      "policy.filters.cap_tool_output",
      "A filter cutting each tool result longer than `max_chars` to its head and tail, noting what was cut.",
      [{ name: "max_chars", type: "integer", doc: "At least 64." }],
      [FILTER],
      "local f = policy.filters.cap_tool_output(20000)",
    ),
    fn(
      "policy.cost.usd",
      "A `device.cost` charging each response's USD at its model's price (`llm_proto.prices` merged with " +
        "`prices`: input, output, cache_read, cache_write per million tokens).",
      [{
        name: "opts",
        type: "{ prices: table?, model: string? }",
        optional: true,
        doc: "Price overrides; `model` checks at once that it has a price.",
      }],
      [{ type: "fun(out: table): number", doc: "The cost function." }],
      "local dev = knl.device({ llm = port, cost = policy.cost.usd() })",
      "Raises for a `model` without a price; the function raises for a response whose model has none.",
    ),
    fn(
      "policy.cost.tokens",
      "A `device.cost` charging each response's total tokens.",
      [],
      [{ type: "fun(out: table): number", doc: "The cost function." }],
      "local c = policy.cost.tokens()",
    ),
    fn(
      "policy.budget.usd",
      'A session budget in USD (`{ amount, tag = "usd" }`), charged by `policy.cost.usd`.',
      [{ name: "amount", type: "number", doc: "Dollars." }],
      [{ type: "knl.Budget", doc: "The budget." }],
      'knl.session({ owner = "me", budget = policy.budget.usd(0.5) }, function(s) end)',
    ),
    fn(
      "policy.budget.tokens",
      'A session budget in tokens (`{ amount, tag = "tokens" }`).',
      [{ name: "amount", type: "number", doc: "Tokens." }],
      [{ type: "knl.Budget", doc: "The budget." }],
      "local b = policy.budget.tokens(200000)",
    ),
  ],
};

export const SUPERVISOR: Section = {
  id: "supervisor",
  title: 'require("supervisor")',
  file: "supervisor",
  module: "supervisor",
  tables: ["supervisor", "supervisor.stop"],
  doc: "A shell pack, one set with `policy`: stop predicates for a loop, and a tree of loops — a parent " +
    "session delegating to child loops, each in a child session with its own device and budget, " +
    "restarted with a fresh fold when it stalls, and a report of what each spent from the kernel's " +
    "views. Each attempt's session carries the labels `child` and `attempt` and ends with a " +
    "`supervisor_child` event.",
  entries: [
    {
      kind: "alias",
      name: "supervisor.Predicate",
      type: "fun(state: table): string?",
      doc: "A reason to stop, or nil. `state` has `beats`, `progress_beat`, `repeats`, `spent`, `budget`, " +
        "`started_ms`, `outcome`.",
    },
    fn(
      "supervisor.stop.no_progress",
      "Stops after `n` beats in a row without progress (by default: a successful tool call not made before).",
      [N],
      [STOP],
      "local p = supervisor.stop.no_progress(3)",
    ),
    fn(
      "supervisor.stop.repeated_call",
      "Stops when the same tool call (name and input) was made `n` times in a row.",
      [N],
      [STOP],
      "local p = supervisor.stop.repeated_call(3)",
    ),
    fn(
      "supervisor.stop.budget_fraction",
      "Stops once the fraction `f` of the grant is spent.",
      [{ name: "f", type: "number", doc: "In (0, 1]." }],
      [STOP],
      "local p = supervisor.stop.budget_fraction(0.9)",
    ),
    fn(
      "supervisor.stop.wall_clock",
      "Stops once `seconds` have passed since the watch began (restarts included).",
      [{ name: "seconds", type: "number", doc: "The limit." }],
      [STOP],
      "local p = supervisor.stop.wall_clock(600)",
    ),
    fn(
      "supervisor.stop.max_beats",
      "Stops after `n` beats of the attempt.",
      [N],
      [STOP],
      "local p = supervisor.stop.max_beats(30)",
    ),
    {
      kind: "class",
      name: "supervisor.Watch",
      local: "Watch",
      doc: "A watcher over a loop's beats, from `supervisor.watch`; `w.state` is what the predicates see.",
      fields: [{ name: "state", type: "table", doc: "The predicates' state." }],
    },
    fn(
      "supervisor.watch",
      "A watcher: folds each beat's outcome into a state and asks the predicates.",
      [
        { name: "preds", type: "supervisor.Predicate[]", optional: true, doc: "The predicates, in order." },
        {
          name: "opts",
          type:
            "{ progress: (fun(out: table, state: table): boolean)?, budget: knl.Budget?, spent: number? }",
          optional: true,
          doc: "What progress is, the grant, what was spent before.",
        },
      ],
      [{ type: "supervisor.Watch", doc: "The watcher." }],
      "local w = supervisor.watch({ supervisor.stop.repeated_call(3) })",
    ),
    fn(
      "supervisor.Watch:observe",
      "Folds one beat's outcome (and session `s`'s spending) into the state; answers the first " +
        "predicate's reason.",
      [
        { name: "outcome", type: "knl.BeatOutcome", doc: "What `knl.beat` answered." },
        { name: "s", type: "knl.Session", optional: true, doc: "The attempt's session." },
      ],
      [{ type: "string?", doc: "Why to stop, or nil." }],
      "local why = w:observe(knl.beat(s, dev), s)",
    ),
    fn(
      "supervisor.Watch:reset",
      "Starts a fresh attempt: beats, progress and repeats start over; the clock and spending go on.",
      [],
      [{ type: "supervisor.Watch", doc: "The watcher." }],
      "w:reset()",
    ),
    {
      kind: "class",
      name: "supervisor.ChildSpec",
      doc: "One child loop.",
      fields: [
        { name: "name", type: "string", doc: "Its name (the child session's owner and `child` label)." },
        {
          name: "device",
          type: "table|fun(attempt: integer): table",
          doc: "A `knl.device`, or a function making one per attempt.",
        },
        { name: "prompt", type: "string", doc: "What it is asked." },
        { name: "budget", type: "knl.Budget", optional: true, doc: "Its grant, over all attempts." },
        { name: "stop", type: "supervisor.Predicate[]", optional: true, doc: "When it has stalled." },
        { name: "restarts", type: "integer", optional: true, doc: "Restarts after a stall (default 0)." },
        { name: "max_beats", type: "integer", optional: true, doc: "Beats per attempt (default 20)." },
        { name: "max_tokens", type: "integer", optional: true, doc: "Per model call." },
        {
          name: "progress",
          type: "fun(out: table, state: table): boolean",
          optional: true,
          doc: "What progress is.",
        },
      ],
    },
    {
      kind: "class",
      name: "supervisor.ChildReport",
      doc: "What a child did.",
      fields: [
        { name: "name", type: "string", doc: "Its name." },
        {
          name: "status",
          type: '"done"|"budget"|"error"|"stopped"|"stalled"|"max_beats"',
          doc: "How its last attempt ended.",
        },
        { name: "reason", type: "string", optional: true, doc: "Why, when not done." },
        { name: "attempts", type: "integer", doc: "Attempts made." },
        { name: "sessions", type: "string[]", doc: "Their session ids." },
        { name: "beats", type: "integer", doc: "Beats over all attempts (from `knl.views.beats`)." },
        { name: "tool_calls", type: "integer", doc: "Tool calls over all attempts." },
        { name: "spent", type: "number", doc: "What it spent, in its budget's unit." },
        { name: "tag", type: "string", optional: true, doc: "That unit." },
        {
          name: "usage",
          type: "table",
          doc: "Calls and tokens summed from `knl.views.usage` (and `cost_usd`).",
        },
        { name: "content", type: "string", optional: true, doc: "Its last text." },
      ],
    },
    fn(
      "supervisor.child",
      "Runs one child loop under `s` in a child session: beats until the model answers without tools " +
        "(`done`), the budget is refused (`budget`), a beat fails or stops, `max_beats` pass, or a " +
        "predicate fires (`stalled`: restarted in a fresh session while `restarts` remain). Never raises " +
        "for the child's failure (a cancel or the run's end passes through).",
      [
        { name: "s", type: "knl.Session", doc: "The parent session." },
        { name: "spec", type: "supervisor.ChildSpec", doc: "The child." },
      ],
      [{ type: "supervisor.ChildReport", doc: "Its report." }],
      'local r = supervisor.child(s, { name = "fix", device = dev, prompt = "fix it", budget = policy.budget.tokens(5e4) })',
      "Raises for a malformed spec.",
    ),
    fn(
      "supervisor.run",
      "The children in order under `s`; the parent goes on past a child that failed or ran out of budget " +
        "(`opts.stop_after(report)` returning true ends early). Answers `{ ok, children, usage, spent }`: " +
        "`ok` when every child is done, `spent` per budget unit.",
      [
        { name: "s", type: "knl.Session", doc: "The parent session." },
        { name: "specs", type: "supervisor.ChildSpec[]", doc: "The children." },
        {
          name: "opts",
          type: "{ stop_after: (fun(r: supervisor.ChildReport): boolean)? }",
          optional: true,
          doc: "When to end the tree early.",
        },
      ],
      [{ type: "table", doc: "The tree's report." }],
      "local rep = supervisor.run(s, { a, b })",
      "Raises for a malformed spec (before any child runs).",
    ),
    fn(
      "supervisor.report",
      "What one session spent, from the kernel's views: `{ session_id, beats, calls, tool_calls, " +
        "input_tokens, output_tokens, total_tokens, cache_read_input_tokens, cache_creation_input_tokens, " +
        "cost_usd, spent, tag }`.",
      [{ name: "s", type: "knl.Session", doc: "A session." }],
      [{ type: "table", doc: "The report." }],
      "local r = supervisor.report(s)",
    ),
  ],
};

export const CODING: Section = {
  id: "coding",
  title: 'require("coding")',
  file: "coding",
  module: "coding",
  tables: ["coding"],
  doc: "A consumer built from the kernel and both packs: `coding.run(opts)` edits files with the file " +
    "tools of `std.fs` until a verify command passes. One kernel session (owner `coding`); each edit is " +
    "a `coding_edit` event, each verify run a `coding_verify`, each undo a `coding_rollback`, every " +
    "file-tool call a `policy_decision`, and the end a `coding_result`. `examples/coding_loop.lua` is a " +
    "block over it. `agent-block vendor coding` gives the project a copy.",
  entries: [
    {
      kind: "class",
      name: "coding.RunOpts",
      doc: "Options of `coding.run`; the model is `llm` (a Port) or `provider` with the Port's options " +
        "(`model`, `api_key`, `base_url`, `replay`, `max_tokens`, ... as `agent.run` takes them).",
      fields: [
        { name: "prompt", type: "string", doc: "The task (required)." },
        {
          name: "verify",
          type: "string|fun(): { code: integer?, stdout: string?, stderr: string? }",
          doc: "A shell command (`sh.exec` in the project root), or a Lua function; exit 0 passes.",
        },
        { name: "verify_timeout", type: "number", optional: true, doc: "Seconds (default 120)." },
        {
          name: "files",
          type: "string|string[]",
          optional: true,
          doc: "What may be edited: paths or globs (`*`, `?`, `**`) relative to the project root; nil = any.",
        },
        { name: "llm", type: "table", optional: true, doc: "A Port." },
        {
          name: "provider",
          type: '"anthropic"|"openai"|"replay"',
          optional: true,
          doc: "Default anthropic.",
        },
        { name: "max_iterations", type: "integer", optional: true, doc: "Default 5." },
        {
          name: "max_beats",
          type: "integer",
          optional: true,
          doc: "Model calls per iteration (default 20).",
        },
        {
          name: "budget",
          type: "knl.Budget",
          optional: true,
          doc: "The session's budget (`policy.budget.tokens(n)`, `policy.budget.usd(x)`).",
        },
        { name: "rollback", type: "boolean", optional: true, doc: "Undo a failed iteration's edits." },
        {
          name: "verify_first",
          type: "boolean",
          optional: true,
          doc: "Verify before iteration 1 (default true).",
        },
        { name: "allow_write", type: "boolean", optional: true, doc: "Offer `fs_write` too." },
        { name: "tail_chars", type: "integer", optional: true, doc: "Output tails kept (default 2000)." },
        { name: "stop", type: "supervisor.Predicate[]", optional: true, doc: "Checked after each beat." },
        {
          name: "tool_policy",
          type: "policy.Piece|policy.Piece[]",
          optional: true,
          doc: "More pieces, after the files allow-list.",
        },
        { name: "fold", type: "policy.Fold", optional: true, doc: "The device's fold." },
        { name: "filters", type: "policy.Filter[]", optional: true, doc: "The device's filters." },
        { name: "system", type: "string", optional: true, doc: "The system prompt." },
        { name: "cost", type: "fun(out: table): number", optional: true, doc: "The device's cost." },
        { name: "store", type: '"mem"|{ sqlite: string }', optional: true, doc: "As for `agent.run`." },
        {
          name: "on_iteration",
          type:
            "fun(info: { iteration: integer, edits: integer, last_verify: table, usage: llm.Usage }): boolean?",
          optional: true,
          doc: "After each failed verify; returning false stops (`stopped`).",
        },
      ],
    },
    {
      kind: "class",
      name: "coding.Result",
      doc: "What `coding.run` answers; `result.session` (through the metatable) is the closed session.",
      fields: [
        { name: "ok", type: "boolean", doc: "True when verify passed." },
        { name: "iterations", type: "integer", doc: "Iterations run (0: it passed before any)." },
        { name: "modified_files", type: "string[]", doc: "Files edited (and not rolled back), sorted." },
        {
          name: "last_verify",
          type: "{ code: integer?, stdout_tail: string, stderr_tail: string, timed_out: boolean? }",
          optional: true,
          doc: "The last verify run.",
        },
        {
          name: "stop_reason",
          type: '"passed"|"stagnated"|"budget"|"max_iterations"|"stopped"|"error"',
          doc: "Why it ended; `stagnated`: the same failure twice with no edit.",
        },
        { name: "usage", type: "llm.Usage", doc: "Summed over the run." },
        { name: "session_id", type: "string", optional: true, doc: "The kernel session." },
        { name: "error", type: "string", optional: true, doc: "When not ok: why." },
      ],
    },
    fn(
      "coding.run",
      "Edits files until the verify command passes: each iteration is model calls (reading and editing " +
        "with `fs_read`, `fs_edit`, `fs_search_replace`) until the model answers without tools, then " +
        "verify; a failure is the next iteration's message. Never throws (a cancel or os.exit passes " +
        "through).",
      [{ name: "opts", type: "coding.RunOpts", doc: "The task, verify, files, model and limits." }],
      [{ type: "coding.Result", doc: "How it ended." }],
      'local r = require("coding").run({ prompt = "make the specs pass", verify = "agent-block test",\n' +
        '  files = { "src/**/*.lua" }, budget = require("policy").budget.usd(0.5) })',
    ),
  ],
};

export const COMPILE_LOOP: Section = {
  id: "compile_loop",
  title: 'require("compile_loop")',
  file: "compile_loop",
  module: "compile_loop",
  tables: ["compile_loop"],
  doc: "The older tool factory for an edit → run → fix loop (seed 002: embedded into core), kept as a " +
    "compatibility module over `coding.run`. `make(conf)` registers the tool and returns it. The tool's " +
    "input is `{ spec, target_file | target_files, lang? }` (both or neither target raises; relative " +
    "targets are taken from the run's working directory and must lie inside the project root); its " +
    'handler answers a JSON string `{ ok, artifact_path, modified_files, iters, summary ("PASS in N ' +
    'iters" or "give-up: ..."), failure_reason, last_error }`.',
  entries: [
    {
      kind: "class",
      name: "compile_loop.Conf",
      doc: "What `make` takes.",
      fields: [
        {
          name: "runner",
          type:
            "fun(target: string|string[]): { ok: boolean?, stdout: string?, stderr: string?, code: integer? }",
          doc: "Runs the target (a list of paths for `target_files`); `ok` nil means `code == 0`.",
        },
        {
          name: "llm",
          type: "table",
          optional: true,
          doc:
            "`{ provider (default openai), base_url, api_key, api_key_env, model, max_tokens, temperature, " +
            "disable_thinking, timeout, replay }`.",
        },
        { name: "max_iters", type: "integer", optional: true, doc: "Default 5." },
        { name: "lang", type: "string", optional: true, doc: "Default `lua`." },
        { name: "name", type: "string", optional: true, doc: "The tool's name (default `compile_loop`)." },
        { name: "system", type: "string", optional: true, doc: "The system prompt." },
        { name: "on_iter", type: "fun(info: table)", optional: true, doc: "After each failed iteration." },
        {
          name: "edit_mode",
          type: '"full"|"diff"',
          optional: true,
          doc: "Accepted; the edits are `coding`'s.",
        },
        { name: "target_func", type: "string", optional: true, doc: "Accepted, unused." },
      ],
    },
    fn(
      "compile_loop.make",
      "Registers the tool (`tool.register`) and returns `{ name, schema, handler }`; `handler(input)` runs " +
        "`coding.run` with the spec and the targets as the files it may write, and `runner` as verify.",
      [{ name: "conf", type: "compile_loop.Conf", doc: "The runner, the model and the limits." }],
      [{ type: "{ name: string, schema: table, handler: fun(input: table): string }", doc: "The tool." }],
      'local t = require("compile_loop").make({ runner = function(path)\n' +
        '  local r = sh.exec("lua " .. path) return { ok = r.ok, stdout = r.stdout, stderr = r.stderr, code = r.code }\n' +
        'end, llm = { provider = "anthropic" } })',
      "Raises when `conf.runner` is not a function; the handler raises for a bad input.",
    ),
  ],
};
