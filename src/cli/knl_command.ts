/**
 * `agent-block knl sessions|show|export`: reading a run's session log from outside, no Lua involved.
 *
 * Owns flag parsing and output for the three commands; the reads themselves are
 * `src/knl/export.ts`, the layout of `show` is `transcript.ts`.
 * - `knl sessions [--label k=v]... [--limit N] [--json] [--store PATH] [-p DIR]`: one row per
 *   session, newest first — id, script, labels, start (local ISO 8601), duration, status, turns,
 *   tokens, cost (`-` unless the model calls carried one) — or with `--json` one JSON line each
 *   (`SessionSummary`: the same facts, times in epoch ms).
 * - `knl show SESSION [--width N]`: the session as a readable transcript.
 * - `knl export SESSION --as events|messages`: JSON Lines on stdout, one record per line.
 * Both take the session positionally or as `--session SESSION`. A usage error names the
 * subcommand, so the report points at its own `--help`.
 * An unknown session is a one-line `error:` on stderr and exit 1. `knl` alone prints the help on
 * stderr and exits 2 (a command is missing); an unknown command gets a "did you mean".
 * Without `--store`, the database is the one a script naming no store writes: the project's
 * `.env` is loaded first (it is where `AGENT_BLOCK_KNL_PATH` lives), then `AGENT_BLOCK_KNL_PATH`,
 * then `<project>/.agent-block/knl.sqlite`.
 * Everything printed — each JSON line, the sessions table, the transcript — is masked with this
 * process's credential variables (`Secrets.fromEnv` of the edge environment, the project's `.env`
 * included): a run masks its own secrets when it writes, this covers logs written by older
 * versions or with other keys in place.
 */
import { storePathsFromEnv } from "../config/env_settings.ts";
import { resolve } from "node:path";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { edgeEnvironment } from "./environment.ts";
import { didYouMean, type OptionSpec, parseFlags } from "./args.ts";
import { parseLabels } from "../config/settings.ts";
import { writeStderr, writeStdout } from "../obs/log.ts";
import { defaultStorePath, storePathFrom } from "../knl/paths.ts";
import { type EventRow, type EventStore, openExistingStore } from "../knl/store.ts";
import {
  exportLine,
  exportSession,
  type ExportShape,
  listSessions,
  type SessionSummary,
  UnknownSession,
} from "../knl/export.ts";
import { cost, duration, isoLocal, table } from "./format.ts";
import { labelText, transcript } from "./transcript.ts";
import { Secrets } from "../obs/secrets.ts";

const STORE_OPTIONS = `Options:
      --store PATH   the database to read (default: AGENT_BLOCK_KNL_PATH, else
                     <project>/.agent-block/knl.sqlite)
  -p, --project DIR  project root (default .)
  -h, --help         print this help`;

const SESSIONS_HELP = `agent-block knl sessions — the sessions in the log, newest first

Usage:
  agent-block knl sessions [--label K=V]... [--limit N] [--json] [--store PATH] [-p DIR]

One row per session: ID, SCRIPT (the block or script whose run opened it), LABELS, STARTED
(local time, ISO 8601), DURATION, STATUS (ok, error, exit, interrupted, ...; open while no close
is recorded), TURNS (model calls), TOKENS, COST (only when the model calls carried a cost: a
priced model). --json prints one JSON line per session instead, times in epoch ms.

      --label K=V    only sessions whose seed event has this label (repeatable: all must match)
      --limit N      at most N sessions
      --json         JSON Lines instead of the table
${STORE_OPTIONS}

Example:
  agent-block knl sessions --label job=nightly --limit 5
`;

const SHOW_HELP = `agent-block knl show — one session as a readable transcript

Usage:
  agent-block knl show (SESSION | --session SESSION) [--width N] [--store PATH] [-p DIR]

Prints the prompt and messages, each model turn (model, tokens in/out, time, cost) with its text,
each tool call with its arguments and its result, refusals, stops and errors, and the totals.
Tool calls, results and thinking are cut to one line of --width characters.

      --width N      width of one-line items (default 100; 0: no limit)
${STORE_OPTIONS}

Example:
  agent-block knl show s_mx5begzn_4c6a1b4cfd90 --width 160
`;

const EXPORT_HELP = `agent-block knl export — one session as JSON Lines

Usage:
  agent-block knl export (SESSION | --session SESSION) [--as events|messages] [--store PATH] [-p DIR]

  --as events     every event upcast to today's shape (the default)
  --as messages   the conversation: msg_user / llm_response / tool_call / tool_result with beat,
                  seq, epoch_ms, kind, role and content
${STORE_OPTIONS}

Example:
  agent-block knl export --session s_mx5begzn_4c6a1b4cfd90 --as messages > run.jsonl
`;

export const KNL_HELP = `agent-block knl — read the kernel's session log from outside

Usage:
  agent-block knl sessions [--label K=V]... [--limit N] [--json] [--store PATH] [-p DIR]
  agent-block knl show SESSION [--width N] [--store PATH] [-p DIR]
  agent-block knl export SESSION [--as events|messages] [--store PATH] [-p DIR]

  sessions  the sessions, newest first: id, script, labels, start, duration, status, turns,
            tokens, cost (--json: JSON Lines)
  show      one session as a readable transcript
  export    one session as JSON Lines: every event (events) or the conversation (messages)

SESSION is positional or --session SESSION, for show and export alike. An unknown session is
an error (exit 1). agent-block knl COMMAND --help says more.

Examples:
  agent-block knl sessions --limit 10
  agent-block knl show s_mx5begzn_4c6a1b4cfd90
  agent-block knl export --session s_mx5begzn_4c6a1b4cfd90 --as messages
`;

const enc = new TextEncoder();

/** The store to read, and the secrets of this process its output is masked with. */
async function openFrom(
  project: string,
  store: string | undefined,
): Promise<{ store: EventStore; secrets: Secrets }> {
  const edge = await edgeEnvironment(project);
  for (const w of edge.warnings) {
    writeStderr(enc.encode(`[warn] agent-block: ${w}\n`));
  }
  const root = resolve(edge.cwd, project);
  const path = store !== undefined
    ? storePathFrom(edge.cwd, store)
    : defaultStorePath(root, storePathsFromEnv(edge.env).kernel);
  try {
    return { store: openExistingStore(path), secrets: Secrets.fromEnv({ get: (k) => edge.env[k] }) };
  } catch (e) {
    throw new AgentBlockError((e as Error).message);
  }
}

function printLines(records: unknown[], secrets: Secrets): void {
  const lines = records.map((r) => secrets.maskJson(exportLine(r))).join("\n");
  if (lines) writeStdout(enc.encode(lines + "\n"));
}

function parse(argv: string[], extra: Record<string, OptionSpec>, command: string, positionals = false) {
  return parseFlags(argv, {
    store: { type: "string" },
    project: { type: "string", short: "p" },
    help: { type: "boolean", short: "h" },
    ...extra,
  }, { command, allowPositionals: positionals });
}

function storeOf(v: Record<string, unknown>): Promise<{ store: EventStore; secrets: Secrets }> {
  return openFrom((v.project as string | undefined) ?? ".", v.store as string | undefined);
}

/** The session's records in `shape`; an unknown id is an `AgentBlockError` (exit 1). */
function exportOf(store: EventStore, id: string, shape: ExportShape): Record<string, unknown>[] {
  try {
    return exportSession(store, id, shape);
  } catch (e) {
    if (e instanceof UnknownSession) throw new AgentBlockError(e.message);
    throw e;
  }
}

/**
 * The session `show` and `export` read: given as `SESSION` or `--session SESSION`, either way (the
 * two agreeing when both are given).
 */
function sessionArg(command: string, flag: unknown, positionals: string[]): string {
  const named = typeof flag === "string" ? [flag, ...positionals] : positionals;
  const ids = [...new Set(named)];
  if (ids.length === 1 && ids[0] !== "") return ids[0];
  throw new UsageError(
    ids.length === 0 || ids[0] === ""
      ? `${command}: name the session: ${command} SESSION, or --session SESSION (knl sessions lists them)`
      : `${command}: one session at a time, got ${ids.length}: ${ids.join(" ")}`,
    command,
  );
}

async function exportCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    { session: { type: "string" }, as: { type: "string" } },
    "knl export",
    true,
  );
  if (v.help) return help(EXPORT_HELP);
  const session = sessionArg("knl export", v.session, positionals);
  const as = v.as ?? "events";
  if (as !== "events" && as !== "messages") {
    throw new UsageError(`knl export: --as must be events or messages, got '${as}'`, "knl export");
  }
  const { store, secrets } = await storeOf(v);
  printLines(exportOf(store, session, as), secrets);
  return await Promise.resolve(EXIT.OK);
}

/** The table row of one session. */
function sessionRow(s: SessionSummary): string[] {
  return [
    s.id,
    s.script ?? "-",
    labelText(s.labels),
    isoLocal(s.started),
    duration(s.duration_ms),
    s.closed ? s.status ?? "closed" : "open",
    String(s.beats),
    String(s.tokens),
    cost(s.cost_usd),
  ];
}

async function sessionsCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, {
    label: { type: "string", multiple: true },
    limit: { type: "string" },
    json: { type: "boolean" },
  }, "knl sessions");
  if (v.help) return help(SESSIONS_HELP);
  const labels = parseLabels((v.label as string[] | undefined) ?? [], "knl sessions");
  let limit: number | undefined;
  if (v.limit !== undefined) {
    limit = Number(v.limit);
    if (!Number.isInteger(limit) || limit <= 0) {
      throw new UsageError(
        `knl sessions: --limit must be a positive integer, got '${v.limit}'`,
        "knl sessions",
      );
    }
  }
  const { store, secrets } = await storeOf(v);
  const sessions = listSessions(store, { labels, limit });
  if (v.json) printLines(sessions, secrets);
  else if (sessions.length === 0) writeStdout(enc.encode(`no sessions in ${store.path}\n`));
  else {
    writeStdout(enc.encode(table(
      ["ID", "SCRIPT", "LABELS", "STARTED", "DURATION", "STATUS", "TURNS", "TOKENS", "COST"],
      // masked cell by cell, so the columns stay aligned
      sessions.map((s) => sessionRow(s).map((cell) => secrets.mask(cell))),
    )));
  }
  return await Promise.resolve(EXIT.OK);
}

async function showCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    { session: { type: "string" }, width: { type: "string" } },
    "knl show",
    true,
  );
  if (v.help) return help(SHOW_HELP);
  const session = sessionArg("knl show", v.session, positionals);
  const width = v.width === undefined ? 100 : Number(v.width);
  if (!Number.isInteger(width) || width < 0) {
    throw new UsageError(
      `knl show: --width must be a whole number of characters (0: no limit), got '${v.width}'`,
      "knl show",
    );
  }
  const { store, secrets } = await storeOf(v);
  // Masked before the layout cuts items to --width (no part of a key is left at a cut), and after.
  const events = secrets.maskValue(exportOf(store, session, "events")) as EventRow[];
  writeStdout(enc.encode(secrets.mask(transcript(events, width))));
  return await Promise.resolve(EXIT.OK);
}

function help(text: string): number {
  writeStdout(enc.encode(text));
  return EXIT.OK;
}

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  sessions: sessionsCommand,
  show: showCommand,
  export: exportCommand,
};

/** `agent-block knl ...`; returns the exit code. */
export async function knlCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) {
    writeStderr(enc.encode(KNL_HELP));
    return EXIT.USAGE;
  }
  if (sub === "-h" || sub === "--help" || sub === "help") return help(KNL_HELP);
  if (Object.hasOwn(COMMANDS, sub)) return await COMMANDS[sub](rest);
  const near = didYouMean(sub, Object.keys(COMMANDS));
  throw new UsageError(
    `knl: unknown command '${sub}'${near ? ` (did you mean '${near}'?)` : ""} (sessions, show, export)`,
    "knl",
  );
}
