/**
 * What a block declares itself to be over MCP: a tool, a resource (or resource template) or a
 * prompt, read from its header — the leading `---` comment, in the LuaCATS style the editor types
 * of `agent-block types` use.
 *
 * Owns the header grammar and its errors (file line numbers, 1-based). The header is the run of
 * comment lines (`--`, `---`) at the top of the file (after a shebang and blank lines); the first
 * other line ends it. Tag lines are `---@tag ...`; the other comment lines are the description.
 *
 * ```lua
 * --- Adds two numbers.
 * ---@tool add
 * ---@param a number the first
 * ---@param b? integer the second (optional)
 * ---@param mode "fast"|"slow" a string enum
 * ---@annotation readOnlyHint true
 * ---@output {"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}
 * ```
 *
 * - `---@tool NAME` / `---@resource URI [NAME]` / `---@prompt NAME`: what the block is; exactly
 *   one of the three (a second is an error: one block declares one thing). A URI holding `{var}`
 *   is a resource template (RFC 6570 level 1).
 * - `---@param NAME[?] TYPE [description]`: a tool's input property (or a prompt's argument,
 *   TYPE `string`, or `"a"|"b"`: its values are what `completion/complete` offers). TYPE: `string`, `number`, `integer`, `boolean`, `table`/`object`, `any`,
 *   `T[]`, or a union of string literals `"a"|"b"` (an enum). `?` makes it optional.
 * - `---@input JSON` / `---@output JSON`: a whole JSON Schema (the JSON may go on over the next
 *   `---` lines that are not tags); `@input` replaces what `@param` lines build.
 * - `---@input lshape MODULE[:FIELD]`: the input schema is an lshape shape a Lua module exports
 *   (`require(MODULE)`, or its field FIELD); the server turns it into JSON Schema by running the
 *   module (`src/mcp_server/lshape_input.ts`) — this parser only records where it is.
 * - `---@annotation KEY VALUE`: a tool annotation (`readOnlyHint`, `destructiveHint`,
 *   `idempotentHint`, `openWorldHint` take `true`/`false`; `title` takes text).
 * - `---@title TEXT`, `---@mime TYPE` (a resource's MIME type; default `text/plain`).
 * - `---@examples NAME JSON-ARRAY`: example values of a `@param` (a prompt's argument: strings,
 *   what `completion/complete` offers beside a `"a"|"b"` type's values; a tool's: the property's
 *   JSON Schema `examples`) or of a resource template's `{NAME}` variable (strings, what completion
 *   offers for it). The JSON may go on over the next `---` lines.
 * - `---@watch PATH` (a resource's; repeatable): a file or directory, relative to the project root,
 *   whose change changes the resource's content — a subscribed client is told
 *   (`notifications/resources/updated`) when it, or the block's own file, changes. A template's
 *   variables may appear in it (`notes/{id}.txt`). No absolute path, no `..` segment.
 * - Any other tag (`@meta`, `@diagnostic`, `@class`, ...) belongs to the editor and is ignored.
 *
 * Invariants: a pure function of the source; a header without `@tool`/`@resource`/`@prompt`
 * declares nothing (the block is still a `run_block` block); any error leaves the block with no
 * declaration and one `DeclarationError` naming the line.
 */

/**
 * A JSON Schema object (as MCP carries it).
 *
 * ```ts
 * import type { JsonSchema } from "@agent-block/agent-block";
 * const schema: JsonSchema = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
 * console.log(Object.keys(schema));
 * ```
 */
export type JsonSchema = Record<string, unknown>;

/**
 * A block that is an MCP tool (`---@tool NAME`).
 *
 * ```ts
 * import type { ToolDeclaration } from "@agent-block/agent-block";
 * const tool: ToolDeclaration = { kind: "tool", name: "word_count", description: "Counts words", inputSchema: { type: "object" } };
 * console.log(tool.name);
 * ```
 */
export interface ToolDeclaration {
  /** What it is. */
  kind: "tool";
  /** The tool's name (`---@tool NAME`). */
  name: string;
  /** `---@title`. */
  title?: string;
  /** The header's free text (and the rest of the `@tool` line). */
  description: string;
  /** Built from `---@param` lines, or `---@input`. */
  inputSchema: JsonSchema;
  /** `---@output`: the structured result's schema. */
  outputSchema?: JsonSchema;
  /** `---@annotation` lines. */
  annotations?: Record<string, boolean | string>;
  /**
   * `---@input lshape MODULE[:FIELD]`: the input schema is this lshape shape (until the server
   * resolves it, `inputSchema` is `{ type: "object" }`).
   */
  inputLshape?: { module: string; field?: string; line: number };
}

/**
 * A block that is an MCP resource or resource template (`---@resource URI`).
 *
 * ```ts
 * import type { ResourceDeclaration } from "@agent-block/agent-block";
 * const r: ResourceDeclaration = {
 *   kind: "resource",
 *   uri: "notes://{day}",
 *   template: true,
 *   name: "notes",
 *   description: "A day's notes",
 *   mimeType: "text/plain",
 * };
 * console.log(r.template ? `template ${r.uri}` : r.uri);
 * ```
 */
export interface ResourceDeclaration {
  /** What it is. */
  kind: "resource";
  /** The URI, or the URI template when `template`. */
  uri: string;
  /** The URI holds `{var}` variables. */
  template: boolean;
  /** The rest of the `@resource` line, else the URI. */
  name: string;
  /** `---@title`. */
  title?: string;
  /** The header's free text. */
  description: string;
  /** `---@mime` (default `text/plain`). */
  mimeType: string;
  /**
   * `---@watch` paths (relative to the project root; a template's `{var}` allowed): what the
   * content comes from, besides the block's own file.
   */
  watch?: string[];
  /** `---@examples VAR [...]`: example values of a template's variables, what completion offers. */
  examples?: Record<string, string[]>;
}

/**
 * One argument of a prompt (`---@param NAME[?] TYPE desc`).
 *
 * ```ts
 * import type { PromptArgument } from "@agent-block/agent-block";
 * const tone: PromptArgument = { name: "tone", required: false, values: ["formal", "casual"] };
 * console.log(tone.values);
 * ```
 */
export interface PromptArgument {
  /** Its name. */
  name: string;
  /** The rest of its `@param` line. */
  description?: string;
  /** False for `NAME?`. */
  required: boolean;
  /** Its values, when its type is a union of string literals (`"a"|"b"`): what completion offers. */
  values?: string[];
  /** `---@examples NAME [...]`: example values, offered by completion too. */
  examples?: string[];
}

/**
 * A block that is an MCP prompt (`---@prompt NAME`).
 *
 * ```ts
 * import type { PromptDeclaration } from "@agent-block/agent-block";
 * const p: PromptDeclaration = { kind: "prompt", name: "review", description: "Reviews a diff", arguments: [] };
 * console.log(p.arguments.length);
 * ```
 */
export interface PromptDeclaration {
  /** What it is. */
  kind: "prompt";
  /** The prompt's name (`---@prompt NAME`). */
  name: string;
  /** `---@title`. */
  title?: string;
  /** The header's free text. */
  description: string;
  /** From `---@param` lines (strings). */
  arguments: PromptArgument[];
}

/**
 * What a block declares in its header (`---@tool`, `---@resource`, `---@prompt`), as
 * `agent-block mcp --expose blocks` serves it; `BlockEntry.declaration` carries it.
 *
 * ```ts
 * import { type Declaration, scanBlocks } from "@agent-block/agent-block";
 * const describe = (d: Declaration) => d.kind === "resource" ? `resource ${d.uri}` : `${d.kind} ${d.name}`;
 * const served = scanBlocks([]).flatMap((b) => b.declaration ? [describe(b.declaration)] : []);
 * console.log(served); // [] — no block roots given
 * ```
 */
export type Declaration = ToolDeclaration | ResourceDeclaration | PromptDeclaration;

/**
 * A malformed header: the line (1-based) and what is wrong; `BlockEntry.declarationError`.
 *
 * ```ts
 * import type { DeclarationError } from "@agent-block/agent-block";
 * const where = (file: string, e: DeclarationError) => `${file}:${e.line}: ${e.message}`;
 * console.log(where("blocks/x.lua", { line: 2, message: "@tool needs a name" }));
 * ```
 */
export interface DeclarationError {
  /** The file's line, 1-based. */
  line: number;
  /** What is wrong. */
  message: string;
}

/** The header's result: a declaration, an error, or neither (a plain block). */
export type HeaderResult = { declaration?: Declaration; error?: DeclarationError };

const ANNOTATION_FLAGS = new Set(["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]);
const NAME_RE = /^[A-Za-z0-9_.-]{1,128}$/;

class HeaderError extends Error {
  constructor(readonly line: number, message: string) {
    super(message);
  }
}

/** The JSON Schema of a `@param` type. */
export function typeSchema(type: string): JsonSchema | undefined {
  const t = type.trim();
  if (t.endsWith("[]")) {
    const items = typeSchema(t.slice(0, -2));
    return items && { type: "array", items };
  }
  if (/^"[^"]*"(\s*\|\s*"[^"]*")*$/.test(t)) {
    return { type: "string", enum: [...t.matchAll(/"([^"]*)"/g)].map((m) => m[1]) };
  }
  switch (t) {
    case "string":
      return { type: "string" };
    case "number":
      return { type: "number" };
    case "integer":
      return { type: "integer" };
    case "boolean":
      return { type: "boolean" };
    case "table":
    case "object":
      return { type: "object" };
    case "any":
      return {};
  }
  return undefined;
}

interface HeaderLine {
  line: number;
  text: string;
}

/** The header's comment lines, their `--`/`---` markers removed. */
function headerLines(source: string): HeaderLine[] {
  const lines = source.replace(/^\uFEFF/, "").split(/\r?\n/);
  const out: HeaderLine[] = [];
  let i = lines[0]?.startsWith("#") ? 1 : 0;
  while (i < lines.length && lines[i].trim() === "") i++;
  for (; i < lines.length; i++) {
    const l = lines[i].trim();
    if (!l.startsWith("--") || l.startsWith("--[[") || /^--\[=*\[/.test(l)) break;
    out.push({ line: i + 1, text: l.replace(/^-+/, "") });
  }
  return out;
}

function parseJson(text: string, line: number, tag: string): JsonSchema {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new HeaderError(line, `@${tag}: not valid JSON: ${(e as Error).message}`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new HeaderError(line, `@${tag}: a JSON Schema must be an object`);
  }
  return v as JsonSchema;
}

/** Reads the declaration of a block's header. */
export function parseDeclaration(source: string): HeaderResult {
  try {
    return { declaration: parseHeader(headerLines(source)) };
  } catch (e) {
    if (e instanceof HeaderError) return { error: { line: e.line, message: e.message } };
    throw e;
  }
}

function parseHeader(lines: HeaderLine[]): Declaration | undefined {
  let kind: { kind: Declaration["kind"]; line: number; arg: string; rest: string } | undefined;
  const description: string[] = [];
  const params: { line: number; name: string; optional: boolean; schema: JsonSchema; desc: string }[] = [];
  let input: JsonSchema | undefined;
  let inputLshape: { module: string; field?: string; line: number } | undefined;
  let output: JsonSchema | undefined;
  let title: string | undefined;
  let mime: string | undefined;
  const watch: { line: number; path: string }[] = [];
  const examples = new Map<string, { line: number; values: unknown[] }>();
  const annotations: Record<string, boolean | string> = {};
  for (let k = 0; k < lines.length; k++) {
    const { line, text } = lines[k];
    const tag = /^\s*@(\w+)\s*(.*)$/.exec(text);
    if (!tag) {
      const t = text.trim();
      if (t && !(description.length === 0 && /^[\w./-]+\.lua$/.test(t))) description.push(t);
      continue;
    }
    const [, name, restRaw] = tag;
    const rest = restRaw.trim();
    switch (name) {
      case "tool":
      case "resource":
      case "prompt": {
        if (kind) {
          throw new HeaderError(
            line,
            `@${name}: this block already declares @${kind.kind} on line ${kind.line} (one block declares one thing)`,
          );
        }
        const m = /^(\S+)\s*(.*)$/.exec(rest);
        if (!m) throw new HeaderError(line, `@${name} needs a ${name === "resource" ? "URI" : "name"}`);
        kind = { kind: name, line, arg: m[1], rest: m[2].trim() };
        break;
      }
      case "param": {
        const m = /^([A-Za-z_][\w-]*)(\?)?\s+("[^"]*"(?:\s*\|\s*"[^"]*")*|\S+)\s*(.*)$/.exec(rest);
        if (!m) throw new HeaderError(line, `@param must be 'NAME[?] TYPE [description]', got '${rest}'`);
        const schema = typeSchema(m[3]);
        if (!schema) {
          throw new HeaderError(
            line,
            `@param ${m[1]}: unknown type '${
              m[3]
            }' (known: string, number, integer, boolean, table, any, T[], "a"|"b")`,
          );
        }
        if (params.some((p) => p.name === m[1])) {
          throw new HeaderError(line, `@param ${m[1]} is declared twice`);
        }
        params.push({ line, name: m[1], optional: m[2] === "?", schema, desc: m[4].trim() });
        break;
      }
      case "input":
      case "output": {
        if (name === "input" && /^lshape(\s|$)/.test(rest)) {
          const m = /^lshape\s+([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)(?::([A-Za-z_]\w*))?$/.exec(rest);
          if (!m) {
            throw new HeaderError(
              line,
              `@input lshape must be 'lshape MODULE[:FIELD]' (a require name), got '${rest}'`,
            );
          }
          if (input || inputLshape) throw new HeaderError(line, "@input is given twice");
          inputLshape = { module: m[1], ...(m[2] ? { field: m[2] } : {}), line };
          input = { type: "object" };
          break;
        }
        let json = rest;
        while (k + 1 < lines.length && !/^\s*@/.test(lines[k + 1].text) && lines[k + 1].text.trim()) {
          json += "\n" + lines[++k].text;
        }
        const schema = parseJson(json, line, name);
        if (schema.type !== undefined && schema.type !== "object") {
          throw new HeaderError(line, `@${name}: the schema's type must be "object"`);
        }
        if (name === "input") {
          if (input) throw new HeaderError(line, "@input is given twice");
          input = schema;
        } else output = schema;
        break;
      }
      case "annotation": {
        const m = /^(\w+)\s+(.+)$/.exec(rest);
        if (!m) throw new HeaderError(line, `@annotation must be 'KEY VALUE', got '${rest}'`);
        if (ANNOTATION_FLAGS.has(m[1])) {
          if (m[2] !== "true" && m[2] !== "false") {
            throw new HeaderError(line, `@annotation ${m[1]} takes true or false, got '${m[2]}'`);
          }
          annotations[m[1]] = m[2] === "true";
        } else if (m[1] === "title") annotations.title = m[2];
        else {
          throw new HeaderError(
            line,
            `@annotation: unknown key '${m[1]}' (known: ${[...ANNOTATION_FLAGS].join(", ")}, title)`,
          );
        }
        break;
      }
      case "title":
        if (!rest) throw new HeaderError(line, "@title needs text");
        title = rest;
        break;
      case "examples": {
        const m = /^([A-Za-z_][\w-]*)\s+([\s\S]*)$/.exec(rest);
        if (!m) {
          throw new HeaderError(line, `@examples must be 'NAME [values...]' (a JSON array), got '${rest}'`);
        }
        let json = m[2];
        while (k + 1 < lines.length && !/^\s*@/.test(lines[k + 1].text) && lines[k + 1].text.trim()) {
          json += "\n" + lines[++k].text;
        }
        let values: unknown;
        try {
          values = JSON.parse(json);
        } catch (e) {
          throw new HeaderError(line, `@examples ${m[1]}: not valid JSON: ${(e as Error).message}`);
        }
        if (!Array.isArray(values) || values.length === 0) {
          throw new HeaderError(line, `@examples ${m[1]}: a non-empty JSON array of values`);
        }
        if (examples.has(m[1])) throw new HeaderError(line, `@examples ${m[1]} is declared twice`);
        examples.set(m[1], { line, values });
        break;
      }
      case "watch":
        if (!rest) throw new HeaderError(line, "@watch needs a path (relative to the project root)");
        if (rest.startsWith("/") || /^[A-Za-z]:[\\/]/.test(rest) || rest.split(/[\\/]/).includes("..")) {
          throw new HeaderError(
            line,
            `@watch: '${rest}' must be a path relative to the project root, with no '..' segment`,
          );
        }
        watch.push({ line, path: rest });
        break;
      case "mime":
        if (!/^[\w.+-]+\/[\w.+-]+$/.test(rest)) {
          throw new HeaderError(line, `@mime: not a MIME type: '${rest}'`);
        }
        mime = rest;
        break;
      default:
        break; // an editor's tag (@meta, @class, @diagnostic, ...)
    }
  }
  if (!kind) return undefined;
  const desc = description.join(" ");
  const stray = (what: string, line: number) => {
    throw new HeaderError(line, `${what} does not apply to a @${kind!.kind}`);
  };
  if (kind.kind !== "tool") {
    if (input) stray("@input", lines.find((l) => /^\s*@input/.test(l.text))!.line);
    if (output) stray("@output", lines.find((l) => /^\s*@output/.test(l.text))!.line);
    if (Object.keys(annotations).length) {
      stray(
        "@annotation",
        lines.find((l) => /^\s*@annotation/.test(l.text))!.line,
      );
    }
  }
  if (kind.kind !== "resource" && mime) stray("@mime", lines.find((l) => /^\s*@mime/.test(l.text))!.line);
  if (kind.kind !== "resource" && watch.length) stray("@watch", watch[0].line);
  if (kind.kind === "tool") {
    if (!NAME_RE.test(kind.arg)) {
      throw new HeaderError(
        kind.line,
        `@tool: '${kind.arg}' is not a tool name (letters, digits, _ . -; 1-128)`,
      );
    }
    if (input && params.length) {
      throw new HeaderError(params[0].line, "@param and @input both give the input schema: use one");
    }
    if (input && examples.size) {
      throw new HeaderError(
        [...examples.values()][0].line,
        "@examples applies to @param lines: with @input, give them in the schema's own 'examples'",
      );
    }
    exampleTargets(examples, new Set(params.map((p) => p.name)), (n) => `no @param ${n}`, false);
    const properties: Record<string, JsonSchema> = {};
    for (const p of params) {
      properties[p.name] = p.desc ? { ...p.schema, description: p.desc } : p.schema;
      const ex = examples.get(p.name);
      if (ex) properties[p.name] = { ...properties[p.name], examples: ex.values };
    }
    const required = params.filter((p) => !p.optional).map((p) => p.name);
    const decl: ToolDeclaration = {
      kind: "tool",
      name: kind.arg,
      description: [desc, kind.rest].filter(Boolean).join(" "),
      inputSchema: input ?? { type: "object", properties, ...(required.length ? { required } : {}) },
    };
    if (title) decl.title = title;
    if (output) decl.outputSchema = output;
    if (Object.keys(annotations).length) decl.annotations = annotations;
    if (inputLshape) decl.inputLshape = inputLshape;
    return decl;
  }
  if (kind.kind === "prompt") {
    if (!NAME_RE.test(kind.arg)) {
      throw new HeaderError(
        kind.line,
        `@prompt: '${kind.arg}' is not a prompt name (letters, digits, _ . -)`,
      );
    }
    for (const p of params) {
      if (p.schema.type !== "string") {
        throw new HeaderError(
          p.line,
          `@param ${p.name}: a prompt's arguments are strings (string or "a"|"b")`,
        );
      }
    }
    exampleTargets(examples, new Set(params.map((p) => p.name)), (n) => `no @param ${n}`, true);
    for (const p of params) {
      const ex = examples.get(p.name);
      const allowed = p.schema.enum as unknown[] | undefined;
      const outside = allowed && ex?.values.find((v) => !allowed.includes(v));
      if (ex && outside !== undefined) {
        throw new HeaderError(ex.line, `@examples ${p.name}: '${outside}' is not one of its values`);
      }
    }
    const decl: PromptDeclaration = {
      kind: "prompt",
      name: kind.arg,
      description: [desc, kind.rest].filter(Boolean).join(" "),
      arguments: params.map((p) => ({
        name: p.name,
        ...(p.desc ? { description: p.desc } : {}),
        required: !p.optional,
        ...(Array.isArray(p.schema.enum) ? { values: p.schema.enum as string[] } : {}),
        ...(examples.has(p.name) ? { examples: examples.get(p.name)!.values as string[] } : {}),
      })),
    };
    if (title) decl.title = title;
    return decl;
  }
  if (params.length) stray("@param", params[0].line);
  if (!/^[A-Za-z][\w+.-]*:/.test(kind.arg)) {
    throw new HeaderError(
      kind.line,
      `@resource: '${kind.arg}' is not a URI (it needs a scheme, e.g. file:, test:)`,
    );
  }
  const template = /[{}]/.test(kind.arg);
  if (template && !/^([^{}]|\{[A-Za-z_][\w]*\})*$/.test(kind.arg)) {
    throw new HeaderError(kind.line, `@resource: bad URI template '${kind.arg}' (variables are {name})`);
  }
  const decl: ResourceDeclaration = {
    kind: "resource",
    uri: kind.arg,
    template,
    name: kind.rest || kind.arg,
    description: desc,
    mimeType: mime ?? "text/plain",
  };
  if (title) decl.title = title;
  const vars = new Set([...kind.arg.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
  for (const w of watch) {
    for (const m of w.path.matchAll(/\{(\w+)\}/g)) {
      if (!vars.has(m[1])) {
        throw new HeaderError(
          w.line,
          `@watch: {${m[1]}} is not a variable of ${kind.arg}${
            vars.size ? ` (its: ${[...vars].join(", ")})` : ""
          }`,
        );
      }
    }
  }
  if (watch.length) decl.watch = watch.map((w) => w.path);
  exampleTargets(examples, vars, (n) => `${kind!.arg} has no variable {${n}}`, true);
  if (examples.size) {
    decl.examples = Object.fromEntries([...examples].map(([n, e]) => [n, e.values as string[]]));
  }
  return decl;
}

/** Every `@examples` names one of `names` (`missing` says it does not); `strings`: its values are strings. */
function exampleTargets(
  examples: Map<string, { line: number; values: unknown[] }>,
  names: Set<string>,
  missing: (name: string) => string,
  strings: boolean,
): void {
  for (const [name, e] of examples) {
    if (!names.has(name)) {
      throw new HeaderError(
        e.line,
        `@examples ${name}: ${missing(name)}${names.size ? ` (known: ${[...names].join(", ")})` : ""}`,
      );
    }
    if (strings && e.values.some((v) => typeof v !== "string")) {
      throw new HeaderError(e.line, `@examples ${name}: the values must be strings`);
    }
  }
}

/** The variables of `uri` under `template` (`{name}` matches one or more characters but `/`), or undefined. */
export function matchTemplate(template: string, uri: string): Record<string, string> | undefined {
  const names: string[] = [];
  const re = template.split(/(\{[A-Za-z_]\w*\})/).map((part) => {
    const v = /^\{(\w+)\}$/.exec(part);
    if (v) {
      names.push(v[1]);
      return "([^/]+)";
    }
    return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }).join("");
  const m = new RegExp(`^${re}$`).exec(uri);
  if (!m) return undefined;
  const out: Record<string, string> = {};
  names.forEach((n, i) => {
    try {
      out[n] = decodeURIComponent(m[i + 1]);
    } catch {
      out[n] = m[i + 1];
    }
  });
  return out;
}
