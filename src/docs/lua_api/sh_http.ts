/** Reference entries: `sh` (shell commands) and `http`. */
import type { Section } from "./types.ts";

export const SH: Section = {
  id: "sh",
  title: "sh",
  file: "agent-block",
  tables: ["sh"],
  doc: "Shell commands as process groups of the run. A command runs `/bin/sh -c cmd` in a session and " +
    "process group of its own; children never inherit `ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or " +
    "`AGENT_BLOCK_MESH_SECRET_KEY` (`AGENT_BLOCK_CHILD_ENV=strip-secrets` or `allowlist:NAME,...` " +
    "strips more). Every group a run started ends with the run.",
  entries: [
    {
      kind: "class",
      name: "sh.ExecOpts",
      doc: "Options of `sh.exec`.",
      fields: [
        {
          name: "cwd",
          type: "string",
          optional: true,
          doc: "Working directory (default, and relative to: the project root).",
        },
        {
          name: "timeout",
          type: "number",
          optional: true,
          doc: "Seconds (default 30); then the whole group is SIGKILLed.",
        },
        {
          name: "stdin",
          type: "string",
          optional: true,
          doc: "Written to the command's standard input (default /dev/null).",
        },
        {
          name: "env",
          type: "table<string, string>",
          optional: true,
          doc: "Variables set for the command, after the credential removal.",
        },
        {
          name: "label",
          type: "string",
          optional: true,
          doc: "A name for the group, for `sh.kill` (unique among running commands).",
        },
        {
          name: "max_output_bytes",
          type: "integer",
          optional: true,
          doc: "Bytes kept of each of stdout and stderr (default 64 MiB); the rest is read and dropped " +
            "(the command runs on) and the result says `truncated`.",
        },
      ],
    },
    {
      kind: "class",
      name: "sh.ExecResult",
      doc: "What `sh.exec` answers. `ok` is true when the command ran and exited by itself, whatever its " +
        "code: test `code == 0` for success.",
      fields: [
        { name: "ok", type: "boolean", doc: "It ran and exited by itself." },
        { name: "code", type: "integer", optional: true, doc: "Its exit code (nil when a signal ended it)." },
        { name: "stdout", type: "string", doc: "Its standard output (exact bytes)." },
        { name: "stderr", type: "string", doc: "Its standard error." },
        { name: "error", type: "string", optional: true, doc: "When not ok: why." },
        { name: "signal", type: "string", optional: true, doc: "The signal that ended it (`SIGKILL`, ...)." },
        { name: "timed_out", type: "boolean", optional: true, doc: "True when `timeout` passed." },
        { name: "killed", type: "boolean", optional: true, doc: "True when `sh.kill` ended it." },
        {
          name: "truncated",
          type: "boolean",
          optional: true,
          doc: "True when output past `max_output_bytes` was dropped (`ok` is unchanged).",
        },
        {
          name: "stdout_truncated",
          type: "boolean",
          optional: true,
          doc: "True when stdout was cut at `max_output_bytes`.",
        },
        {
          name: "stderr_truncated",
          type: "boolean",
          optional: true,
          doc: "True when stderr was cut at `max_output_bytes`.",
        },
      ],
    },
    {
      kind: "function",
      name: "sh.exec",
      doc: "Runs a shell command and waits for it, yielding the calling task (other tasks run). stdout and " +
        "stderr are read concurrently; a background process still holding them 250 ms after the command " +
        "exited has its group ended. Cancelling the waiting task does not end the command: `sh.kill` does.",
      params: [
        { name: "cmd", type: "string", doc: "The command line, for `/bin/sh -c`." },
        {
          name: "opts",
          type: "sh.ExecOpts",
          optional: true,
          doc: "cwd, timeout, stdin, env, label, max_output_bytes.",
        },
      ],
      returns: [{ type: "sh.ExecResult", doc: "How it ended and what it wrote." }],
      errors:
        "Answers `{ ok = false, error }` for a missing cwd or a start failure; raises for bad options " +
        "or a label already in use.",
      example: 'local r = sh.exec("git status --short", { timeout = 10 })\n' +
        "if r.ok and r.code == 0 then print(r.stdout) else log.warn(r.error or r.stderr) end",
    },
    {
      kind: "function",
      name: "sh.kill",
      doc: "Ends the group of the command started with `opts.label = label`: SIGTERM, then SIGKILL after " +
        "twice the task grace if anything of it is left. Answers at once; the waiting `sh.exec` returns " +
        "with `killed = true`.",
      params: [{ name: "label", type: "string", doc: "The command's label." }],
      returns: [{ type: "boolean", doc: "Whether such a command was running." }],
      example: 'std.task.spawn(sh.exec, "npm run serve", { label = "server", timeout = 3600 })\n' +
        'std.time.sleep(5)\nsh.kill("server")',
    },
  ],
};

export const HTTP: Section = {
  id: "http",
  title: "http",
  file: "agent-block",
  tables: ["http"],
  doc: "HTTP requests for scripts, with server-sent events. The calling task yields while a request runs; " +
    "cancelling the task aborts it.",
  entries: [
    {
      kind: "class",
      name: "http.Request",
      doc: "A request.",
      fields: [
        { name: "url", type: "string", doc: "The URL." },
        { name: "method", type: "string", optional: true, doc: "Default GET, or POST when a body is given." },
        { name: "headers", type: "table<string, string>", optional: true, doc: "Request headers." },
        {
          name: "body",
          type: "string|table",
          optional: true,
          doc: "A string, or a table sent as JSON (with `content-type: application/json` unless set).",
        },
        {
          name: "timeout",
          type: "number",
          optional: true,
          doc: "Seconds for the whole exchange (default 120).",
        },
        {
          name: "max_body_bytes",
          type: "integer",
          optional: true,
          doc: "The largest body read (default 64 MiB; with `on_event`, the largest event): past it the " +
            "answer is `{ ok = false }` naming the limit, the rest unread.",
        },
        {
          name: "on_event",
          type: "fun(ev: { event: string, data: string, id: string? }): boolean?",
          optional: true,
          doc: "Read the body as server-sent events: called once per event, in order, as a task (it may " +
            "yield); returning false closes the stream.",
        },
      ],
    },
    {
      kind: "class",
      name: "http.Response",
      doc: "What `http.request` answers. Every HTTP status is an answer (`ok = true`); `ok = false` means " +
        "no answer came (bad URL, refused connection, DNS, timeout, cancel).",
      fields: [
        { name: "ok", type: "boolean", doc: "An answer came." },
        { name: "status", type: "integer", optional: true, doc: "The HTTP status." },
        {
          name: "headers",
          type: "table<string, string>",
          optional: true,
          doc: "Lowercase names; repeated headers joined with `, `.",
        },
        { name: "body", type: "string", optional: true, doc: 'The exact bytes (`""` with `on_event`).' },
        {
          name: "error",
          type: "string",
          optional: true,
          doc: "When not ok: why, naming the method and the URL without its userinfo or the values of " +
            "credential-like parameters, and with the run's secrets replaced by `[redacted]`.",
        },
      ],
    },
    {
      kind: "function",
      name: "http.request",
      doc: "Sends one request: `http.request({ url = ..., ... })` or `http.request(url [, opts])`.",
      params: [
        { name: "req", type: "http.Request|string", doc: "The request, or its URL." },
        { name: "opts", type: "http.Request", optional: true, doc: "With a URL first: the other fields." },
      ],
      returns: [{ type: "http.Response", doc: "The answer, or `{ ok = false, error }`." }],
      errors: "Raises for wrong argument types and for an error raised by `on_event`; network failures " +
        "are answered, not raised.",
      example:
        'local r = http.request({ url = "https://example.com/api", method = "POST", body = { q = 1 } })\n' +
        "if r.ok and r.status == 200 then print(r.body) end",
    },
  ],
};
