import {
  decodeRow,
  defaultStorePath,
  openExistingStore,
  readOnlyQuery,
  storePathFrom
} from "./chunk-PENIMNON.js";
import {
  stringifyJson
} from "./chunk-J4FUTWHQ.js";
import {
  loadDotenv
} from "./chunk-V4HDY3RR.js";
import {
  AgentBlockError,
  EXIT,
  UsageError,
  writeStderr,
  writeStdout
} from "./chunk-C44UDHAF.js";

// src/cli/knl_command.ts
import { parseArgs } from "node:util";
import { join, resolve } from "node:path";

// src/knl/export.ts
var UnknownSession = class extends Error {
  /**
   * An unknown-session error naming the database searched.
   * @param id the session asked for; @param path the database searched
   */
  constructor(id, path) {
    super(`no session '${id}' in ${path}`);
    this.name = "UnknownSession";
  }
};
var MESSAGE_KINDS = /* @__PURE__ */ new Set([
  "msg_user",
  "msg_assistant",
  "llm_response",
  "tool_call",
  "tool_result"
]);
function messageRecord(ev) {
  if (!MESSAGE_KINDS.has(ev.kind)) return void 0;
  const d = ev.data;
  const base = {
    kind: ev.kind,
    seq: ev.seq,
    beat: ev.meta.beat ?? null,
    epoch_ms: ev.epoch_ms
  };
  switch (ev.kind) {
    case "msg_user":
      return {
        ...base,
        role: "user",
        content: d.content
      };
    case "msg_assistant":
      return {
        ...base,
        role: "assistant",
        content: d.content
      };
    case "llm_response":
      return {
        ...base,
        role: "assistant",
        content: d.content,
        model: d.model ?? null,
        stop_reason: d.stop_reason ?? null,
        usage: d.usage ?? null
      };
    case "tool_call":
      return {
        ...base,
        role: "assistant",
        content: [
          {
            type: "tool_use",
            id: d.id,
            name: d.name,
            input: d.input
          }
        ]
      };
    default:
      return {
        ...base,
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: d.id,
            content: d.content,
            is_error: d.is_error === true
          }
        ]
      };
  }
}
function exportSession(store, id, shape) {
  if (!store.hasStream(id)) throw new UnknownSession(id, store.path);
  const events = store.read(id);
  if (shape === "events") return events;
  const out = [];
  for (const ev of events) {
    const r = messageRecord(ev);
    if (r) out.push(r);
  }
  return out;
}
function listSessions(store, opts = {}) {
  const where = [
    "o.kind = 'session_open'"
  ];
  const params = [];
  for (const [k, v] of Object.entries(opts.labels ?? {})) {
    where.push(`CAST(json_extract(o.meta, ?) AS TEXT) = ?`);
    params.push(`$."${k.replace(/"/g, '""')}"`, v);
  }
  params.push(opts.limit ?? -1);
  const rows = readOnlyQuery(store, `SELECT o.stream AS id, o.epoch_ms AS started, o.meta AS meta, o.data AS data, o.schema_version AS v,
       (SELECT json_extract(c.data, '$.status') FROM events c
         WHERE c.stream = o.stream AND c.kind = 'session_close' LIMIT 1) AS status,
       (SELECT COUNT(*) FROM events c WHERE c.stream = o.stream AND c.kind = 'session_close') AS closes,
       (SELECT COUNT(*) FROM events r WHERE r.stream = o.stream AND r.kind = 'llm_request') AS beats,
       (SELECT COALESCE(SUM(COALESCE(json_extract(r.data, '$.usage.total_tokens'),
                                     json_extract(r.data, '$.input_tokens') + json_extract(r.data, '$.output_tokens'),
                                     0)), 0)
          FROM events r WHERE r.stream = o.stream AND r.kind = 'llm_response') AS tokens
     FROM events o WHERE ${where.join(" AND ")}
     ORDER BY o.position DESC LIMIT ?`, params, {
    raw: true
  });
  return rows.map((r) => {
    const open = decodeRow({
      position: 0,
      stream: String(r.id),
      seq: 1,
      epoch_ms: Number(r.started),
      kind: "session_open",
      schema_version: Number(r.v),
      meta: String(r.meta),
      data: String(r.data)
    });
    return {
      id: String(r.id),
      owner: open.data.owner ?? null,
      labels: open.meta,
      started: Number(r.started),
      closed: Number(r.closes) > 0,
      status: r.status === null || r.status === void 0 ? null : String(r.status),
      beats: Number(r.beats),
      tokens: Number(r.tokens)
    };
  });
}

// src/cli/knl_command.ts
var KNL_HELP = `agent-block knl \u2014 read the kernel's session log from outside

Usage:
  agent-block knl export --session ID --as events|messages [--store PATH] [-p DIR]
  agent-block knl sessions [--label K=V]... [--limit N] [--store PATH] [-p DIR]

  export    JSON Lines on stdout: every event upcast to today's shape (events), or the
            conversation \u2014 msg_user / llm_response / tool_call / tool_result with beat, seq,
            epoch_ms, kind (messages). An unknown session is an error (exit 1).
  sessions  one JSON line per session, newest first: id, owner, labels, started, closed,
            status, beats, tokens. --label filters on the session's seed labels.

Options:
      --store PATH   the database to read (default: AGENT_BLOCK_KNL_PATH, else
                     <project>/.agent-block/knl.sqlite)
  -p, --project DIR  project root (default .)
  -h, --help         print this help
`;
var enc = new TextEncoder();
function openFrom(project, store) {
  for (const w of loadDotenv(join(project, ".env"), join(project, ".env"))) {
    writeStderr(enc.encode(`[warn] agent-block: ${w}
`));
  }
  const root = resolve(project);
  const path = store !== void 0 ? storePathFrom(Deno.cwd(), store) : defaultStorePath(root, (k) => Deno.env.get(k));
  try {
    return openExistingStore(path);
  } catch (e) {
    throw new AgentBlockError(e.message);
  }
}
function printLines(records) {
  const lines = records.map((r) => stringifyJson(r)).join("\n");
  if (lines) writeStdout(enc.encode(lines + "\n"));
}
function parse(argv, extra) {
  try {
    return parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        store: {
          type: "string"
        },
        project: {
          type: "string",
          short: "p"
        },
        help: {
          type: "boolean",
          short: "h"
        },
        ...extra
      }
    }).values;
  } catch (e) {
    throw new UsageError(`knl: ${e.message}`);
  }
}
async function exportCommand(argv) {
  const v = parse(argv, {
    session: {
      type: "string"
    },
    as: {
      type: "string"
    }
  });
  if (v.help) return help();
  if (typeof v.session !== "string" || v.session === "") {
    throw new UsageError("knl export: --session ID is required");
  }
  const as = v.as ?? "events";
  if (as !== "events" && as !== "messages") {
    throw new UsageError(`knl export: --as must be events or messages, got '${as}'`);
  }
  const store = openFrom(v.project ?? ".", v.store);
  try {
    printLines(exportSession(store, v.session, as));
  } catch (e) {
    if (e instanceof UnknownSession) throw new AgentBlockError(e.message);
    throw e;
  }
  return await Promise.resolve(EXIT.OK);
}
async function sessionsCommand(argv) {
  const v = parse(argv, {
    label: {
      type: "string",
      multiple: true
    },
    limit: {
      type: "string"
    }
  });
  if (v.help) return help();
  const labels = {};
  for (const l of v.label ?? []) {
    const eq = l.indexOf("=");
    if (eq <= 0) throw new UsageError(`knl sessions: --label must be KEY=VALUE, got '${l}'`);
    labels[l.slice(0, eq)] = l.slice(eq + 1);
  }
  let limit;
  if (v.limit !== void 0) {
    limit = Number(v.limit);
    if (!Number.isInteger(limit) || limit <= 0) {
      throw new UsageError(`knl sessions: --limit must be a positive integer, got '${v.limit}'`);
    }
  }
  const store = openFrom(v.project ?? ".", v.store);
  printLines(listSessions(store, {
    labels,
    limit
  }));
  return await Promise.resolve(EXIT.OK);
}
function help() {
  writeStdout(enc.encode(KNL_HELP));
  return EXIT.OK;
}
async function knlCommand(argv) {
  const [sub, ...rest] = argv;
  switch (sub) {
    case "export":
      return await exportCommand(rest);
    case "sessions":
      return await sessionsCommand(rest);
    case void 0:
    case "-h":
    case "--help":
    case "help":
      return help();
    default:
      throw new UsageError(`knl: unknown command '${sub}' (export, sessions)`);
  }
}
export {
  KNL_HELP,
  knlCommand
};
