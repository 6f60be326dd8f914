/** Reference entries: `tool` (the tool registry) and `bus` (events). */
import type { Section } from "./types.ts";

export const TOOL: Section = {
  id: "tool",
  title: "tool",
  file: "agent-block",
  tables: ["tool"],
  doc: "The registry of Lua tools a model can call (`agent.run` offers every registered tool). Tools " +
    "keep registration order; registering a name again replaces its entry in place.",
  entries: [
    {
      kind: "class",
      name: "tool.Schema",
      doc: "What a tool tells the model.",
      fields: [
        { name: "description", type: "string", doc: "What the tool does." },
        {
          name: "input_schema",
          type: "table",
          optional: true,
          doc: "JSON Schema of the input (default an empty object schema).",
        },
      ],
    },
    {
      kind: "class",
      name: "tool.Spec",
      doc: "A tool in the Anthropic tools format, as `tool.schema` lists it.",
      fields: [
        { name: "name", type: "string", doc: "The name." },
        { name: "description", type: "string", doc: "The description." },
        { name: "input_schema", type: "table", doc: "JSON Schema of the input." },
        { name: "group", type: "string", optional: true, doc: "Its group, when registered with one." },
      ],
    },
    {
      kind: "function",
      name: "tool.register",
      doc: "Registers `handler(input)` under `name`. The handler runs in the calling task, so it may make " +
        "host calls; what it returns goes to the model (a table as JSON), what it raises becomes an " +
        "error result the model sees.",
      params: [
        { name: "name", type: "string", doc: "The tool name (non-empty)." },
        { name: "schema", type: "tool.Schema", doc: "Description and input schema." },
        { name: "handler", type: "fun(input: table): any", doc: "Runs the tool." },
        {
          name: "meta",
          type: "{ group: string? }",
          optional: true,
          doc: "`group`, for `agent.run`'s `tool_groups`.",
        },
      ],
      example: 'tool.register("add", {\n  description = "Adds two numbers.",\n' +
        '  input_schema = { type = "object", properties = { a = { type = "number" }, b = { type = "number" } } },\n' +
        "}, function(input) return { sum = input.a + input.b } end)",
    },
    {
      kind: "function",
      name: "tool.call",
      doc: "Calls a registered tool.",
      params: [
        { name: "name", type: "string", doc: "The tool name." },
        { name: "input", type: "table", optional: true, doc: "Its input." },
      ],
      returns: [{ type: "any", doc: "What the handler returns." }],
      errors: "Raises for an unknown name (listing the known ones) and what the handler raises.",
      example: 'local r = tool.call("add", { a = 1, b = 2 }) --> { sum = 3 }',
    },
    {
      kind: "function",
      name: "tool.list",
      doc: "The registered tool names, in registration order.",
      returns: [{ type: "string[]", doc: "The names." }],
      example: 'print(table.concat(tool.list(), ", "))',
    },
    {
      kind: "function",
      name: "tool.schema",
      doc: "The registered tools in the Anthropic tools format, in registration order.",
      returns: [{ type: "tool.Spec[]", doc: "The tools." }],
      example: "local offered = tool.schema()",
    },
    {
      kind: "function",
      name: "tool.exists",
      doc: "True when a tool of that name is registered.",
      params: [{ name: "name", type: "string", doc: "The tool name." }],
      returns: [{ type: "boolean", doc: "Whether it is." }],
      example: 'if not tool.exists("fs_read") then std.fs.register_tools() end',
    },
    {
      kind: "function",
      name: "tool.revision",
      doc: "A number that changes whenever a registration changes the registry.",
      returns: [{ type: "integer", doc: "The revision." }],
      example: "local rev = tool.revision()",
    },
  ],
};

export const BUS: Section = {
  id: "bus",
  title: "bus",
  file: "agent-block",
  tables: ["bus"],
  doc: "Events between the script, its tasks and the embedder. `bus.emit` never blocks. An event goes to " +
    "the Lua handler of its kind, else an embedder's TypeScript handler of its kind (delivered at once), " +
    "else `bus.on_any`, else the embedder's catch-all; Lua handlers run when the script serves the bus " +
    "(`bus.serve`), one event at a time in emission order, each as a task of its own. A failing handler " +
    'is logged as a warning. `bus.emit("artifact", { name, content })` stages a named part an embedder ' +
    "reads from `BlockReport.artifacts`.",
  entries: [
    {
      kind: "class",
      name: "bus.Event",
      doc: "What a handler receives.",
      fields: [
        { name: "kind", type: "string", doc: "The kind given to `emit`." },
        { name: "id", type: "string", doc: "The id given to `emit`, or a generated UUID." },
        { name: "payload", type: "any", doc: "The payload." },
        { name: "meta", type: "table", doc: "Metadata (empty for events emitted from Lua)." },
      ],
    },
    {
      kind: "function",
      name: "bus.emit",
      doc: "Emits an event; it waits in the queue for `bus.serve` unless a TypeScript handler takes it. " +
        "Never blocks and never waits for a handler: what a handler returns (its acknowledgement) is not " +
        "given back here — only an embedder's `BusHost.emit` receives one.",
      params: [
        { name: "kind", type: "string", doc: "The event kind (non-empty)." },
        { name: "payload", type: "any", optional: true, doc: "A JSON-able payload." },
        { name: "id", type: "string", optional: true, doc: "The event id (default a new UUID)." },
      ],
      returns: [{ type: "string", doc: "The event id." }],
      example: 'bus.emit("progress", { done = 3, of = 10 })',
    },
    {
      kind: "function",
      name: "bus.on",
      doc: "Sets the Lua handler of a kind (replacing the previous one). Its first return value is the " +
        "event's acknowledgement, which an embedder's `BusHost.emit` receives.",
      params: [
        { name: "kind", type: "string", doc: "The event kind." },
        { name: "fn", type: "fun(ev: bus.Event): any", doc: "The handler." },
      ],
      example: 'bus.on("job", function(ev) log.info("job", ev.payload.name) end)',
    },
    {
      kind: "function",
      name: "bus.on_any",
      doc: "Sets the handler of every kind that has no handler of its own.",
      params: [{ name: "fn", type: "fun(ev: bus.Event): any", doc: "The handler." }],
      example: "bus.on_any(function(ev) log.debug(ev.kind) end)",
    },
    {
      kind: "function",
      name: "bus.serve",
      doc: "Dispatches queued events to the Lua handlers until `bus.stop()`, or with `until_idle` until no " +
        "event is queued and no handler runs. When the embedder serves the bus in the background " +
        "(`autoServeBus`), only `{ until_idle = true }` is allowed: it waits until that dispatcher is idle.",
      params: [{ name: "opts", type: "{ until_idle: boolean? }", optional: true, doc: "`until_idle`." }],
      example: 'bus.emit("tick", 1)\nbus.serve({ until_idle = true })',
    },
    {
      kind: "function",
      name: "bus.stop",
      doc: "Makes the running `bus.serve` return once the handler in flight finishes; queued events wait " +
        "for the next `serve`.",
      example: 'bus.on("done", function() bus.stop() end)',
    },
    {
      kind: "function",
      name: "bus.pending",
      doc: "The number of events waiting for a Lua handler to be served.",
      returns: [{ type: "integer", doc: "The queue length." }],
      example: "if bus.pending() > 0 then bus.serve({ until_idle = true }) end",
    },
  ],
};
