/**
 * `agent-block knl export|sessions`: reading a run's session log from outside, no Lua involved.
 *
 * Owns flag parsing and output for the two commands; the reads themselves are `src/knl/export.ts`.
 * - `knl export --session ID --as events|messages [--store PATH] [-p DIR]`: JSON Lines on stdout,
 *   one record per line. An unknown session is a one-line `error:` on stderr and exit 1.
 * - `knl sessions [--label k=v]... [--limit N] [--store PATH] [-p DIR]`: one JSON line per session,
 *   newest first: id, owner, labels, started, closed, status, beats, tokens.
 * Without `--store`, the database is the one a script naming no store writes: the project's
 * `.env` is loaded first (it is where `AGENT_BLOCK_KNL_PATH` lives), then `AGENT_BLOCK_KNL_PATH`,
 * then `<project>/.agent-block/knl.sqlite`.
 */
import { resolve } from "node:path";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { edgeEnvironment } from "./environment.ts";
import { type OptionSpec, parseFlags } from "./args.ts";
import { parseLabels } from "../config/settings.ts";
import { writeStderr, writeStdout } from "../obs/log.ts";
import { defaultStorePath, storePathFrom } from "../knl/paths.ts";
import { type EventStore, openExistingStore } from "../knl/store.ts";
import { exportLine, exportSession, listSessions, UnknownSession } from "../knl/export.ts";

export const KNL_HELP = `agent-block knl — read the kernel's session log from outside

Usage:
  agent-block knl export --session ID --as events|messages [--store PATH] [-p DIR]
  agent-block knl sessions [--label K=V]... [--limit N] [--store PATH] [-p DIR]

  export    JSON Lines on stdout: every event upcast to today's shape (events), or the
            conversation — msg_user / llm_response / tool_call / tool_result with beat, seq,
            epoch_ms, kind (messages). An unknown session is an error (exit 1).
  sessions  one JSON line per session, newest first: id, owner, labels, started, closed,
            status, beats, tokens. --label filters on the session's seed labels.

Options:
      --store PATH   the database to read (default: AGENT_BLOCK_KNL_PATH, else
                     <project>/.agent-block/knl.sqlite)
  -p, --project DIR  project root (default .)
  -h, --help         print this help
`;

const enc = new TextEncoder();

function openFrom(project: string, store: string | undefined): EventStore {
  const edge = edgeEnvironment(project);
  for (const w of edge.warnings) {
    writeStderr(enc.encode(`[warn] agent-block: ${w}\n`));
  }
  const root = resolve(edge.cwd, project);
  const path = store !== undefined
    ? storePathFrom(edge.cwd, store)
    : defaultStorePath(root, (k) => edge.env[k]);
  try {
    return openExistingStore(path);
  } catch (e) {
    throw new AgentBlockError((e as Error).message);
  }
}

function printLines(records: unknown[]): void {
  const lines = records.map(exportLine).join("\n");
  if (lines) writeStdout(enc.encode(lines + "\n"));
}

function parse(argv: string[], extra: Record<string, OptionSpec>) {
  return parseFlags(argv, {
    store: { type: "string" },
    project: { type: "string", short: "p" },
    help: { type: "boolean", short: "h" },
    ...extra,
  }, { command: "knl" }).values;
}

async function exportCommand(argv: string[]): Promise<number> {
  const v = parse(argv, { session: { type: "string" }, as: { type: "string" } });
  if (v.help) return help();
  if (typeof v.session !== "string" || v.session === "") {
    throw new UsageError("knl export: --session ID is required");
  }
  const as = v.as ?? "events";
  if (as !== "events" && as !== "messages") {
    throw new UsageError(`knl export: --as must be events or messages, got '${as}'`);
  }
  const store = openFrom((v.project as string | undefined) ?? ".", v.store as string | undefined);
  try {
    printLines(exportSession(store, v.session, as));
  } catch (e) {
    if (e instanceof UnknownSession) throw new AgentBlockError(e.message);
    throw e;
  }
  return await Promise.resolve(EXIT.OK);
}

async function sessionsCommand(argv: string[]): Promise<number> {
  const v = parse(argv, { label: { type: "string", multiple: true }, limit: { type: "string" } });
  if (v.help) return help();
  const labels = parseLabels((v.label as string[] | undefined) ?? [], "knl sessions");
  let limit: number | undefined;
  if (v.limit !== undefined) {
    limit = Number(v.limit);
    if (!Number.isInteger(limit) || limit <= 0) {
      throw new UsageError(`knl sessions: --limit must be a positive integer, got '${v.limit}'`);
    }
  }
  const store = openFrom((v.project as string | undefined) ?? ".", v.store as string | undefined);
  printLines(listSessions(store, { labels, limit }));
  return await Promise.resolve(EXIT.OK);
}

function help(): number {
  writeStdout(enc.encode(KNL_HELP));
  return EXIT.OK;
}

/** `agent-block knl ...`; returns the exit code. */
export async function knlCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case "export":
      return await exportCommand(rest);
    case "sessions":
      return await sessionsCommand(rest);
    case undefined:
    case "-h":
    case "--help":
    case "help":
      return help();
    default:
      throw new UsageError(`knl: unknown command '${sub}' (export, sessions)`);
  }
}
