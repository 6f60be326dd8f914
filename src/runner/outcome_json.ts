/**
 * The JSON form of an `Outcome`: what `agent-block --outcome FILE` writes and what the child
 * runner (`child.ts`) reads back. The one place that form is defined, with its parser beside it.
 *
 * The form (an object; `version` and `status` always present, other fields per status):
 * - `{"version":1,"status":"returned"}` — the block returned nothing;
 *   `"value": "<text>"` when the value is valid UTF-8, else `"value_base64": "<bytes>"` (the
 *   exact bytes, never a lossy decoding);
 * - `"deferred"`: `reason` (string);
 * - `"exited"`: `code` (integer 0..255);
 * - `"raised"`: `code` (one of `RAISED_CODES`), `message`, `traceback` (strings) and, when the
 *   raised Lua value was not a string,
 *   `error`: that value in agent-block's JSON form (`src/json/codec.ts`, so a table keeps its
 *   structure). A value with no JSON form (a function inside it, non-UTF-8 bytes) is left out
 *   and `error_unencodable` says why; the message still carries the error's text;
 * - `"cancelled"`: `reason` (string);
 * - `"timed_out"`: `seconds` (a positive number).
 *
 * Invariants: `parseOutcomeJson(outcomeToJson(o))` gives back `o`, except that a string error
 * value is dropped (the message is that string) and bytes that are valid UTF-8 come back as a
 * string. The parser refuses anything else — an unknown version, status or field, a wrong type —
 * with an error naming the file and the field, so a child that wrote something unexpected is
 * reported as such and never read as a success.
 */
import { parseJson, stringifyJson } from "../json/codec.ts";
import { type Outcome, type OutcomeStatus, RAISED_CODES, type RaisedCode } from "../outcome.ts";

/** Version of the JSON form this module writes and reads. */
export const OUTCOME_JSON_VERSION = 1;

/** A malformed outcome file; the message names the file and the field. */
export class OutcomeFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutcomeFileError";
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

// The platform's base64 (V8 has had `Uint8Array.fromBase64` / `toBase64` since 14.x).
const toBase64 = (b: Uint8Array): string => (b as unknown as { toBase64(): string }).toBase64();
const fromBase64 = (s: string): Uint8Array =>
  (Uint8Array as unknown as { fromBase64(s: string): Uint8Array }).fromBase64(s);

/** The JSON object for `outcome` (key order does not matter: the text is written canonically). */
export function outcomeToObject(outcome: Outcome): Record<string, unknown> {
  const base = { version: OUTCOME_JSON_VERSION, status: outcome.status };
  switch (outcome.status) {
    case "returned": {
      const v = outcome.value;
      if (v === undefined) return base;
      if (typeof v === "string") return { ...base, value: v };
      try {
        return { ...base, value: utf8.decode(v) };
      } catch {
        return { ...base, value_base64: toBase64(v) };
      }
    }
    case "deferred":
    case "cancelled":
      return { ...base, reason: outcome.reason };
    case "exited":
      return { ...base, code: outcome.code };
    case "timed_out":
      return { ...base, seconds: outcome.seconds };
    case "raised": {
      const out: Record<string, unknown> = {
        ...base,
        code: outcome.code,
        message: outcome.message,
        traceback: outcome.traceback,
      };
      const e = outcome.error;
      if (e !== undefined && e !== null && typeof e !== "string") {
        try {
          // Encoded on its own first: a value without a JSON form must not spoil the rest.
          stringifyJson(e);
          out.error = e;
        } catch (err) {
          out.error_unencodable = (err as Error).message;
        }
      }
      return out;
    }
  }
}

/** The outcome file's text for `outcome` (canonical JSON, one line, trailing newline). */
export function outcomeToJson(outcome: Outcome): string {
  return stringifyJson(outcomeToObject(outcome)) + "\n";
}

const FIELDS: Record<OutcomeStatus, string[]> = {
  returned: ["value", "value_base64"],
  deferred: ["reason"],
  exited: ["code"],
  raised: ["code", "message", "traceback", "error", "error_unencodable"],
  cancelled: ["reason"],
  timed_out: ["seconds"],
};

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

/**
 * Parses an outcome file's text. `file` names the file in errors.
 * @throws OutcomeFileError naming the file and the field
 */
export function parseOutcomeJson(text: string, file: string): Outcome {
  let data: unknown;
  try {
    data = parseJson(text);
  } catch (e) {
    throw new OutcomeFileError(`${file}: not valid JSON: ${(e as Error).message}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new OutcomeFileError(`${file}: must be a JSON object, got ${typeName(data)}`);
  }
  const obj = data as Record<string, unknown>;
  if (obj.version !== OUTCOME_JSON_VERSION) {
    throw new OutcomeFileError(
      `${file}: field 'version' must be ${OUTCOME_JSON_VERSION}, got ${
        JSON.stringify(obj.version) ?? "nothing"
      }`,
    );
  }
  const status = obj.status;
  if (typeof status !== "string" || !Object.hasOwn(FIELDS, status)) {
    throw new OutcomeFileError(
      `${file}: field 'status' must be one of ${Object.keys(FIELDS).join(", ")}, got ${
        JSON.stringify(status) ?? "nothing"
      }`,
    );
  }
  const known = FIELDS[status as OutcomeStatus];
  for (const k of Object.keys(obj)) {
    if (k !== "version" && k !== "status" && !known.includes(k)) {
      throw new OutcomeFileError(`${file}: unknown field '${k}' for status '${status}'`);
    }
  }
  const str = (k: string): string => {
    const v = obj[k];
    if (typeof v !== "string") {
      throw new OutcomeFileError(`${file}: field '${k}' must be a string, got ${typeName(v)}`);
    }
    return v;
  };
  switch (status as OutcomeStatus) {
    case "returned": {
      if (obj.value !== undefined && obj.value_base64 !== undefined) {
        throw new OutcomeFileError(`${file}: fields 'value' and 'value_base64' exclude each other`);
      }
      if (obj.value !== undefined) return { status: "returned", value: str("value") };
      if (obj.value_base64 === undefined) return { status: "returned", value: undefined };
      const b64 = str("value_base64");
      try {
        return { status: "returned", value: fromBase64(b64) };
      } catch (e) {
        throw new OutcomeFileError(`${file}: field 'value_base64' is not base64: ${(e as Error).message}`);
      }
    }
    case "deferred":
      return { status: "deferred", reason: str("reason") };
    case "cancelled":
      return { status: "cancelled", reason: str("reason") };
    case "exited": {
      const c = obj.code;
      if (typeof c !== "number" || !Number.isInteger(c) || c < 0 || c > 255) {
        throw new OutcomeFileError(
          `${file}: field 'code' must be an integer 0..255, got ${typeof c === "number" ? c : typeName(c)}`,
        );
      }
      return { status: "exited", code: c };
    }
    case "timed_out": {
      const s = obj.seconds;
      if (typeof s !== "number" || !(s > 0) || !Number.isFinite(s)) {
        throw new OutcomeFileError(
          `${file}: field 'seconds' must be a positive number, got ${
            typeof s === "number" ? s : typeName(s)
          }`,
        );
      }
      return { status: "timed_out", seconds: s };
    }
    case "raised": {
      const code = str("code") as RaisedCode;
      if (!RAISED_CODES.includes(code)) {
        throw new OutcomeFileError(
          `${file}: field 'code' must be one of ${RAISED_CODES.join(", ")}, got ${JSON.stringify(code)}`,
        );
      }
      const out: Outcome = { status: "raised", code, message: str("message"), traceback: str("traceback") };
      if (obj.error !== undefined) out.error = obj.error;
      if (obj.error_unencodable !== undefined) str("error_unencodable");
      return out;
    }
  }
}

/**
 * Reads and parses an outcome file; `undefined` when there is none (the run ended before writing it).
 * @throws OutcomeFileError when the file exists but cannot be read or is malformed
 */
export async function readOutcomeFile(path: string): Promise<Outcome | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw new OutcomeFileError(`cannot read outcome file ${path}: ${(e as Error).message}`);
  }
  return parseOutcomeJson(text, path);
}
