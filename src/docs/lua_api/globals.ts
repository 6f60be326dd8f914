/** Reference entries: the run's input globals, `job` and `log`. */
import type { Section } from "./types.ts";

export const GLOBALS: Section = {
  id: "globals",
  title: "Globals of a run",
  file: "agent-block",
  doc: "Set before the script starts. `_PROMPT` and `_CONTEXT` are absent (nil) when the run was not " +
    "given them; an embedder may add globals of its own (`BlockConfig.extraGlobals`).",
  entries: [
    {
      kind: "value",
      name: "_PROMPT",
      type: "string?",
      doc: "The run's prompt: `--prompt`, the config file's `prompt`, or the MCP caller's `prompt`.",
    },
    {
      kind: "value",
      name: "_CONTEXT",
      type: "string?",
      doc: "The run's context (`-c/--context`), by convention the system prompt of an agent.",
    },
    {
      kind: "value",
      name: "_SCRIPT_NAME",
      type: "string",
      doc: "The file name of the running script (`hello_agent.lua`), also the name log lines carry.",
    },
  ],
};

export const JOB: Section = {
  id: "job",
  title: "job",
  file: "agent-block",
  tables: ["job"],
  doc: "How a run ends other than by returning or raising.",
  entries: [
    {
      kind: "function",
      name: "job.defer",
      doc: "Ends the run with exit code 75: what the script needs is not there yet and nothing was done. " +
        "The reason goes to stderr (and to the outcome file); cleanup runs as for `os.exit`. " +
        'No Lua runs past it: pcall does not catch it (`std.task.is_fatal` answers `"exit"`).',
      params: [{ name: "reason", type: "string", doc: "Why the run was deferred." }],
      example: 'if not std.fs.exists("inbox/next.json") then job.defer("nothing in the inbox") end',
    },
  ],
};

const logFn = (level: string, what: string) => ({
  kind: "function" as const,
  name: `log.${level}`,
  doc:
    `Writes one ${what} line to stderr: \`[${level}] <script>: <message>\`, unless \`AGENT_BLOCK_LOG\` (\`debug\`, ` +
    `\`info\` (default), \`warn\`, \`error\`, \`off\`) is set above \`${level}\`. The values are joined with spaces (tables as JSON); ` +
    "line breaks are written as `\\n`, so one call is one line. Never writes to stdout.",
  params: [{ name: "...", type: "any", doc: "What to log." }],
  example: `log.${level}("fetched", #items, "items")`,
});

export const LOG: Section = {
  id: "log",
  title: "log",
  file: "agent-block",
  tables: ["log"],
  doc: "Leveled logging to stderr (stdout belongs to `print`).",
  entries: [
    logFn("debug", "debug"),
    logFn("info", "info"),
    logFn("warn", "warning"),
    logFn("error", "error"),
  ],
};
