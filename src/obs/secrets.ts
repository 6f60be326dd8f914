/**
 * Secret values masked in what agent-block records or prints that came from elsewhere.
 *
 * Owns `Secrets`, the values one run must never write down: the host's credential variables
 * (`HOST_CREDENTIALS` of `src/proc/child_env.ts`, the one list, read from the run's environment
 * when the run starts), every key a block hands to a model call (`api_key`, or the value of the
 * variable `api_key_env` names, and credentials in its `base_url`), added when the call is made,
 * and what a block hands to an MCP server on purpose (credential headers and URL parameters of
 * `mcp.connect_http`, `*_KEY`/`*_TOKEN`/`*_SECRET`/`*_PASSWORD` variables of `mcp.connect`'s
 * `opts.env`), added at the connect — each with the forms it takes on the wire (base64,
 * base64url, percent-encoding; a URL's `user:password` also as the `Basic` credential a client
 * sends for it), since a server echoes those as readily. It offers `mask` (each value
 * replaced by `[redacted]` wherever it occurs), `maskJson` (the same over a JSON text, which
 * stays valid JSON), `maskValue` (the strings of a JSON-like value) and `scrub` (mask, then
 * `redactUrls`). `redactUrls` takes the userinfo and the values of credential-like query and
 * fragment parameters (`api_key`, `key`, `token`, `access_token`, `password`, `secret`,
 * `signature`, `X-Amz-Credential`, ...: a name ending in one of those words) out of every URL in
 * a text.
 *
 * Where it is applied — the seams where outside text enters records and logs, so that no later
 * reader has to remember: the run's logger (every line: MCP client logs of server messages and
 * stderr, obs lines, warnings), the error table of a failed model request, `http.request` errors,
 * MCP errors handed to Lua, the kernel's append path (the data and meta of every event a run
 * writes, so also the rows a watched run's observers get), the MCP connect and call failures
 * told to those observers, the run's outcome (message, traceback, the raised value), and
 * `knl export` / `knl sessions` / `knl show` (with the exporting process's own credentials).
 *
 * Invariants: only values of at least `MIN_SECRET_LENGTH` characters are kept (a shorter one
 * would mask ordinary words and cannot be a real key); longer values are replaced first, so a
 * key that contains another is never left half shown; without secrets `mask` and `maskJson`
 * return their input after one length check, with them they cost one substring search per
 * secret, and a replacement only on a hit.
 */
import { HOST_CREDENTIALS, SECRET_SUFFIX } from "../proc/child_env.ts";
import { parseJson, stringifyJson } from "../json/codec.ts";

/** What replaces a secret value. */
export const REDACTED = "[redacted]";

/** Shortest value treated as a secret. */
export const MIN_SECRET_LENGTH = 8;

/** Anything secrets can be read from by name (a run's `RunEnv`, an edge's record). */
export interface SecretSource {
  /** The value of the variable `name`, or `undefined` when it is unset. */
  get(name: string): string | undefined;
}

/** The secret values of one run (or of one command of the CLI). */
export class Secrets {
  /** The values, longest first. */
  #plain: string[] = [];
  /** The same values as they appear inside a JSON string (escaped), longest first. */
  #json: string[] = [];

  /** The values of the host's credential variables in `env`. */
  static fromEnv(env: SecretSource): Secrets {
    const s = new Secrets();
    for (const name of HOST_CREDENTIALS) s.add(env.get(name));
    return s;
  }

  /** The values added (their encoded forms are masked too, and not counted). */
  #values = new Set<string>();

  /** How many values are masked (not counting their encoded forms). */
  get size(): number {
    return this.#values.size;
  }

  /**
   * Adds `value` (and its trimmed form) when it is at least `MIN_SECRET_LENGTH` characters, with
   * the forms it takes on the wire (`encodedForms`: base64, base64url, percent-encoding), which a
   * server may echo back as readily as the value.
   */
  add(value: string | undefined): void {
    if (value === undefined) return;
    for (const v of value === value.trim() ? [value] : [value, value.trim()]) {
      if (v.length < MIN_SECRET_LENGTH || this.#values.has(v)) continue;
      this.#values.add(v);
      for (const form of [v, ...encodedForms(v)]) this.#addOne(form);
    }
  }

  #addOne(v: string): void {
    if (v.length < MIN_SECRET_LENGTH || this.#plain.includes(v)) return;
    insertByLength(this.#plain, v);
    const escaped = JSON.stringify(v).slice(1, -1);
    if (!this.#json.includes(escaped)) insertByLength(this.#json, escaped);
  }

  /**
   * Adds the credentials a URL carries: its userinfo's password — and the userinfo as the
   * `Authorization: Basic` credential a client sends for it (base64 of `user:password`) — and the
   * values of credential-like parameters.
   */
  addUrl(url: string): void {
    const user = USERINFO.exec(url)?.[0];
    const start = (user?.indexOf("//") ?? -2) + 2;
    const colon = user?.indexOf(":", start) ?? -1;
    if (user && colon >= 0) {
      const name = user.slice(start, colon);
      const password = user.slice(colon + 1, -1);
      this.add(safeDecode(password));
      for (const pair of new Set([`${safeDecode(name)}:${safeDecode(password)}`, `${name}:${password}`])) {
        for (const form of encodedForms(pair)) this.#addOne(form);
      }
    }
    for (const m of url.matchAll(PARAM)) if (isCredentialParam(m[2])) this.add(safeDecode(m[3]));
  }

  /** Adds the values of credential headers (`authorization`, `x-api-key`, `cookie`, `*token*`, ...), scheme stripped too. */
  addHeaders(headers: Readonly<Record<string, string>>): void {
    for (const [k, v] of Object.entries(headers)) {
      if (!CREDENTIAL_HEADER.test(k)) continue;
      this.add(v);
      this.add(v.replace(/^(Bearer|Basic|Token|Bot)\s+/i, ""));
    }
  }

  /** Adds the values of variables named like credentials (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`). */
  addEnv(env: Readonly<Record<string, string>>): void {
    for (const [k, v] of Object.entries(env)) if (SECRET_SUFFIX.test(k)) this.add(v);
  }

  /** `text` with every secret value replaced by `[redacted]`. */
  mask(text: string): string {
    return replaceAll(text, this.#plain);
  }

  /**
   * A JSON text with every secret replaced inside it; the answer is valid JSON. A replacement
   * that would break the text (a value that is also the tail of an escape, or digits of a
   * number) falls back to masking the strings of the parsed value.
   */
  maskJson(json: string): string {
    const out = replaceAll(json, this.#json);
    if (out === json) return json;
    try {
      JSON.parse(out);
      return out;
    } catch {
      return stringifyJson(this.maskValue(parseJson(json)));
    }
  }

  /** `value` with the secrets masked in every string (object keys included); other values as they are. */
  maskValue(value: unknown): unknown {
    if (this.#plain.length === 0) return value;
    if (typeof value === "string") return this.mask(value);
    if (Array.isArray(value)) return value.map((v) => this.maskValue(v));
    if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[this.mask(k)] = this.maskValue(v);
      return out;
    }
    return value;
  }

  /** `mask`, then `redactUrls`: for errors and log lines. */
  scrub(text: string): string {
    return redactUrls(this.mask(text));
  }
}

/**
 * The forms `value` takes when a client encodes it: base64 and base64url of its UTF-8 bytes
 * (unpadded, so a padded echo is masked too — the padding is left), and percent-encoding.
 */
export function encodedForms(value: string): string[] {
  const bytes = new TextEncoder().encode(value);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  const b64 = btoa(bin).replace(/=+$/, "");
  const forms = new Set([b64, b64.replace(/\+/g, "-").replace(/\//g, "_"), encodeURIComponent(value)]);
  forms.delete(value);
  return [...forms];
}

function insertByLength(list: string[], v: string): void {
  const i = list.findIndex((x) => x.length < v.length);
  if (i < 0) list.push(v);
  else list.splice(i, 0, v);
}

function replaceAll(text: string, values: readonly string[]): string {
  if (values.length === 0 || text.length < MIN_SECRET_LENGTH) return text;
  let out = text;
  for (const v of values) if (out.includes(v)) out = out.replaceAll(v, REDACTED);
  return out;
}

/** A URL in running text: a scheme, `://`, then anything up to whitespace, a quote or a bracket. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;
/** The userinfo of a URL (up to the last `@` of the authority). */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;
/** One `name=value` parameter of a query or fragment. */
const PARAM = /([?&#;])([^=&#;\s]+)=([^&#;\s)"'<>]*)/g;
/** Parameter names that carry credentials: a name ending in one of these words. */
const CREDENTIAL_PARAM =
  /(?:key|token|secret|passw(?:or)?d|pwd|sig|signature|credentials?|auth|authorization|session(?:id)?)$/i;

/** Header names that carry credentials. */
const CREDENTIAL_HEADER = /authorization|api[-_]?key|cookie|token|secret|password/i;

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // not percent-encoded text: as written
  }
}

/** True when a query parameter named `name` carries a credential (see `redactUrls`). */
export function isCredentialParam(name: string): boolean {
  return CREDENTIAL_PARAM.test(safeDecode(name));
}

/** `url` without userinfo and with the values of credential-like parameters replaced. */
export function redactUrl(url: string): string {
  return url.replace(USERINFO, "$1").replace(
    PARAM,
    (all, sep: string, name: string) => isCredentialParam(name) ? `${sep}${name}=${REDACTED}` : all,
  );
}

/** `text` with every URL in it passed through `redactUrl`. */
export function redactUrls(text: string): string {
  return text.includes("://") ? text.replace(URL_IN_TEXT, redactUrl) : text;
}
