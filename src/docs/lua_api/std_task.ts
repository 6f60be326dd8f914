/** Reference entries: `std.task` and the task handle. */
import type { Section } from "./types.ts";

export const STD_TASK: Section = {
  id: "std.task",
  title: "std.task",
  file: "agent-block",
  tables: ["std.task"],
  doc: "Concurrent tasks on one Lua state. A task runs until it waits for the host (a sleep, a " +
    "process, a request, ...), and meanwhile the others run: two tasks sleeping 100 ms each take " +
    "100 ms. When the main chunk ends, tasks still alive are cancelled. A task that failed and was " +
    "never joined is reported as a warning when the run ends.",
  entries: [
    {
      kind: "class",
      name: "std.Task",
      local: "Task",
      doc: "A task handle, from `std.task.spawn`. `tostring(t)` is `task <id> (<status>)`.",
      fields: [],
    },
    {
      kind: "function",
      name: "std.Task:join",
      doc: "Waits for the task to finish.",
      returns: [{ type: "any", name: "...", doc: "The task function's return values." }],
      errors: "Re-raises the task's error (tables included); a cancelled task raises the cancel sentinel.",
      example: "local t = std.task.spawn(function() return 1, 2 end)\nlocal a, b = t:join()",
    },
    {
      kind: "function",
      name: "std.Task:cancel",
      doc: "Cancels the task: the host call it waits on is abandoned and the task receives the cancel " +
        "sentinel (a value whose `tostring` is `cancelled`, not a string), which unwinds it unless it " +
        "catches it. Cancelling does not end a running `sh.exec` command (use `sh.kill`).",
      returns: [{ type: "boolean", doc: "False when the task had already finished." }],
      example: "local t = std.task.spawn(std.time.sleep, 60)\nt:cancel()",
    },
    {
      kind: "function",
      name: "std.Task:done",
      doc: "True once the task has finished (returned, failed or been cancelled).",
      returns: [{ type: "boolean", doc: "Whether it finished." }],
      example: "while not t:done() do std.task.yield() end",
    },
    {
      kind: "function",
      name: "std.Task:status",
      doc: "Where the task is.",
      returns: [{ type: '"ready"|"running"|"done"|"failed"|"cancelled"', doc: "Its state." }],
      example: "print(t:status())",
    },
    {
      kind: "function",
      name: "std.task.spawn",
      doc: "Starts `fn(...)` as a new task; it first runs when the current task next waits or yields.",
      params: [
        { name: "fn", type: "function", doc: "The task's body." },
        { name: "...", type: "any", doc: "Its arguments." },
      ],
      returns: [{ type: "std.Task", doc: "The handle." }],
      example: 'local t = std.task.spawn(sh.exec, "make test")\nlocal r = t:join()',
    },
    {
      kind: "function",
      name: "std.task.sleep",
      doc: "Waits, yielding the calling task (like `std.time.sleep`).",
      params: [{ name: "seconds", type: "number", doc: "A non-negative number." }],
      example: "std.task.sleep(0.1)",
    },
    {
      kind: "function",
      name: "std.task.yield",
      doc: "Lets the other ready tasks run, then continues.",
      example: "for i = 1, 1000 do work(i); if i % 100 == 0 then std.task.yield() end end",
    },
    {
      kind: "function",
      name: "std.task.all",
      doc: "Joins every task in order and answers the first return value of each.",
      params: [{ name: "tasks", type: "std.Task[]", doc: "The handles." }],
      returns: [{ type: "any[]", doc: "The first value each task returned, in the same order." }],
      errors: "Raises the first error a joined task raises.",
      example: "local pages = std.task.all({ std.task.spawn(fetch, a), std.task.spawn(fetch, b) })",
    },
    {
      kind: "function",
      name: "std.task.join",
      doc: "Same as `t:join()`.",
      params: [{ name: "t", type: "std.Task", doc: "The handle." }],
      returns: [{ type: "any", name: "...", doc: "The task's return values." }],
      errors: "As `t:join()`.",
      example: "local v = std.task.join(t)",
    },
    {
      kind: "function",
      name: "std.task.cancel",
      doc: "Same as `t:cancel()`.",
      params: [{ name: "t", type: "std.Task", doc: "The handle." }],
      returns: [{ type: "boolean", doc: "False when the task had already finished." }],
      example: "std.task.cancel(t)",
    },
    {
      kind: "function",
      name: "std.task.is_task",
      doc: "True when `v` is a task handle.",
      params: [{ name: "v", type: "any", doc: "Any value." }],
      returns: [{ type: "boolean", doc: "Whether it is one." }],
      example: "assert(std.task.is_task(t))",
    },
    {
      kind: "function",
      name: "std.task.is_fatal",
      doc: 'Whether an error caught by `pcall` must be let through: `"cancelled"` for the cancel of the ' +
        'running task, `"exit"` for the end of the run (`os.exit`, `job.defer`), false for anything ' +
        "else, whatever its text. A library that turns failures into results re-raises the first two.",
      params: [{ name: "e", type: "any", doc: "A caught error." }],
      returns: [{ type: '"cancelled"|"exit"|false', doc: "Which fatal error it is, if any." }],
      example: "local ok, e = pcall(step)\nif not ok and std.task.is_fatal(e) then error(e, 0) end",
    },
  ],
};
