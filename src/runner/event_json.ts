/**
 * The JSON Lines form of a run's `RunEvent` stream: what `--events FILE` writes and what the
 * child runner reads back from its child, line by line, as the run goes.
 *
 * Layer: runner. One object per line, canonical JSON (`src/json/codec.ts`: sorted keys), each
 * with `"v": 1` and the event's `type`:
 * - `{"type":"events","rows":[...]}`: one kernel transaction, each row exactly the record
 *   `agent-block knl export --as events` prints (`position`, `stream`, `seq`, `epoch_ms`, `kind`,
 *   `schema_version`, `meta`, `data`);
 * - `mcp_connect` (`server`, `transport`, `ms`, `ok`, `error`?), `mcp_call` (`server`, `tool`,
 *   `ms`, `ok`, `error`?), `a2a_call` (`agent`, `method`, `ms`, `ok`, `error`?), `session_open` (`session`), `artifact` (`name`, `id`, `content`? —
 *   `content_unencodable` instead when it has no JSON form);
 * - `end` (`ms`, `outcome`: the outcome's JSON object, `outcome_json.ts`), the stream's last line.
 *
 * Invariants: `parseEventLine(eventLine(e))` gives back `e` (an artifact's content as its JSON
 * form); one event is one line, written with one write, so a reader following the file never sees
 * half an event; the parser refuses an unknown version or type, a missing or wrong field, naming
 * where and the field. `EventLineReader` splits a byte stream into events without a bound on the
 * number of lines and with one on a line's length (`LINE_MAX`): a longer line is an error, never
 * a buffer growing without end.
 */
import { parseJson, stringifyJson } from "../json/codec.ts";
import type { EventRow } from "../knl/store.ts";
import type { RunEvent } from "../obs/run_events.ts";
import { outcomeToObject, parseOutcomeJson } from "./outcome_json.ts";

/** Version of the line form this module writes and reads. */
export const EVENT_JSON_VERSION = 1;

/** The longest line the reader takes, in characters. */
export const LINE_MAX = 256 * 1024 * 1024;

/** A malformed event line; the message says where and which field. */
export class EventLineError extends Error {
  /**
   * An error with `message`.
   * @param message says where and which field
   */
  constructor(message: string) {
    super(message);
    this.name = "EventLineError";
  }
}

/** The line for `event` (canonical JSON, trailing newline). */
export function eventLine(event: RunEvent): string {
  let obj: Record<string, unknown>;
  switch (event.type) {
    case "events":
      obj = { type: "events", rows: event.rows };
      break;
    case "end":
      obj = { type: "end", ms: event.ms, outcome: outcomeToObject(event.outcome) };
      break;
    case "artifact": {
      obj = { type: "artifact", name: event.name, id: event.id };
      if (event.content !== undefined) {
        try {
          stringifyJson(event.content);
          obj.content = event.content;
        } catch (e) {
          obj.content_unencodable = (e as Error).message;
        }
      }
      break;
    }
    default:
      obj = { ...event };
  }
  obj.v = EVENT_JSON_VERSION;
  return stringifyJson(obj) + "\n";
}

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

const FIELDS: Record<RunEvent["type"], string[]> = {
  events: ["rows"],
  mcp_connect: ["server", "transport", "ms", "ok", "error"],
  mcp_call: ["server", "tool", "ms", "ok", "error"],
  a2a_call: ["agent", "method", "ms", "ok", "error"],
  session_open: ["session"],
  artifact: ["name", "id", "content", "content_unencodable"],
  end: ["ms", "outcome"],
};

/**
 * Parses one line (without its newline). `where` names the stream (a file, "the child's events")
 * and the line number in errors.
 * @throws EventLineError naming where and the field
 */
export function parseEventLine(line: string, where: string): RunEvent {
  let data: unknown;
  try {
    data = parseJson(line);
  } catch (e) {
    throw new EventLineError(`${where}: not valid JSON: ${(e as Error).message}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new EventLineError(`${where}: must be a JSON object, got ${typeName(data)}`);
  }
  const o = data as Record<string, unknown>;
  if (o.v !== EVENT_JSON_VERSION) {
    throw new EventLineError(`${where}: field 'v' must be ${EVENT_JSON_VERSION}, got ${JSON.stringify(o.v)}`);
  }
  const type = o.type;
  if (typeof type !== "string" || !Object.hasOwn(FIELDS, type)) {
    throw new EventLineError(
      `${where}: field 'type' must be one of ${Object.keys(FIELDS).join(", ")}, got ${JSON.stringify(type)}`,
    );
  }
  const known = FIELDS[type as RunEvent["type"]];
  for (const k of Object.keys(o)) {
    if (k !== "v" && k !== "type" && !known.includes(k)) {
      throw new EventLineError(`${where}: unknown field '${k}' for type '${type}'`);
    }
  }
  const want = <T>(k: string, t: string, ok: (v: unknown) => boolean): T => {
    if (!ok(o[k])) throw new EventLineError(`${where}: field '${k}' must be ${t}, got ${typeName(o[k])}`);
    return o[k] as T;
  };
  const str = (k: string) => want<string>(k, "a string", (v) => typeof v === "string");
  const num = (k: string) => want<number>(k, "a number", (v) => typeof v === "number" && Number.isFinite(v));
  const bool = (k: string) => want<boolean>(k, "a boolean", (v) => typeof v === "boolean");
  const optStr = (k: string) => (o[k] === undefined ? undefined : str(k));
  switch (type as RunEvent["type"]) {
    case "events": {
      const rows = want<unknown[]>("rows", "an array", Array.isArray);
      rows.forEach((r, i) => checkRow(r, `${where}: rows[${i}]`));
      return { type: "events", rows: rows as EventRow[] };
    }
    case "mcp_connect": {
      const transport = str("transport");
      if (transport !== "stdio" && transport !== "http" && transport !== "sse") {
        throw new EventLineError(
          `${where}: field 'transport' must be stdio, http or sse, got '${transport}'`,
        );
      }
      const e: RunEvent = {
        type: "mcp_connect",
        server: str("server"),
        transport,
        ms: num("ms"),
        ok: bool("ok"),
      };
      const error = optStr("error");
      return error !== undefined ? { ...e, error } : e;
    }
    case "mcp_call": {
      const e: RunEvent = {
        type: "mcp_call",
        server: str("server"),
        tool: str("tool"),
        ms: num("ms"),
        ok: bool("ok"),
      };
      const error = optStr("error");
      return error !== undefined ? { ...e, error } : e;
    }
    case "a2a_call": {
      const e: RunEvent = {
        type: "a2a_call",
        agent: str("agent"),
        method: str("method"),
        ms: num("ms"),
        ok: bool("ok"),
      };
      const error = optStr("error");
      return error !== undefined ? { ...e, error } : e;
    }
    case "session_open":
      return { type: "session_open", session: str("session") };
    case "artifact":
      if (o.content_unencodable !== undefined) str("content_unencodable");
      return { type: "artifact", name: str("name"), id: str("id"), content: o.content };
    case "end": {
      const ms = num("ms");
      const outcome = want<Record<string, unknown>>(
        "outcome",
        "an object",
        (v) => typeof v === "object" && v !== null && !Array.isArray(v),
      );
      try {
        return { type: "end", ms, outcome: parseOutcomeJson(stringifyJson(outcome), "outcome") };
      } catch (e) {
        throw new EventLineError(`${where}: field ${(e as Error).message}`);
      }
    }
  }
}

const ROW: [string, string][] = [
  ["position", "number"],
  ["stream", "string"],
  ["seq", "number"],
  ["epoch_ms", "number"],
  ["kind", "string"],
  ["schema_version", "number"],
  ["meta", "object"],
  ["data", "object"],
];

function checkRow(r: unknown, where: string): void {
  if (typeof r !== "object" || r === null || Array.isArray(r)) {
    throw new EventLineError(`${where} must be an object, got ${typeName(r)}`);
  }
  for (const [k, t] of ROW) {
    const v = (r as Record<string, unknown>)[k];
    if (typeName(v) !== t) {
      throw new EventLineError(`${where}: field '${k}' must be a ${t}, got ${typeName(v)}`);
    }
  }
}

/**
 * Reads a byte stream of event lines and hands each event to `onEvent` as its line completes.
 * `done` settles when the stream ends, breaks, is cancelled or a line is malformed — it never
 * rejects; `error` then says what was wrong (a malformed or overlong line; the rest is not read).
 */
export class EventLineReader {
  /** Settles when reading has stopped. */
  readonly done: Promise<void>;
  /** Set when reading stopped on a bad line. */
  error: EventLineError | undefined;
  #reader: ReadableStreamDefaultReader<Uint8Array>;

  /**
   * Starts reading `stream`.
   * @param stream the bytes
   * @param where names the stream in errors
   * @param onEvent called with each event, in order
   */
  constructor(stream: ReadableStream<Uint8Array>, where: string, onEvent: (e: RunEvent) => void) {
    const reader = this.#reader = stream.getReader();
    const dec = new TextDecoder();
    let pending = "";
    let lineNo = 0;
    const take = (text: string): boolean => {
      pending += text;
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        lineNo++;
        if (line === "") continue;
        onEvent(parseEventLine(line, `${where}, line ${lineNo}`));
      }
      if (pending.length > LINE_MAX) {
        throw new EventLineError(`${where}, line ${lineNo + 1}: longer than ${LINE_MAX} characters`);
      }
      return true;
    };
    this.done = (async () => {
      try {
        while (true) {
          const { value, done } = await reader.read();
          if (done) break;
          take(dec.decode(value, { stream: true }));
        }
        take(dec.decode());
        if (pending !== "") {
          throw new EventLineError(`${where}, line ${lineNo + 1}: the stream ended inside a line`);
        }
      } catch (e) {
        if (e instanceof EventLineError) {
          this.error = e;
          this.cancel();
        }
        // otherwise the pipe broke or was cancelled: what arrived has been handed over
      }
    })();
  }

  /** Stops reading. */
  cancel(): void {
    this.#reader.cancel().catch(() => undefined);
  }
}
