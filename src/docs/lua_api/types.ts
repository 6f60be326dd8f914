/**
 * The shapes of the Lua API reference: what one entry says.
 *
 * Owns the vocabulary the reference is written in. An entry is data — a function (arguments,
 * returns, errors, an example), a value (a global or a constant such as `std.json.null`), a
 * class (a table shape: an option table, a result, an object with methods) or an alias (a named
 * type). Types are LuaCATS type expressions (`string`, `integer?`, `table<string, string>`,
 * `sh.ExecResult`, `fun(input: table): any`), so one string serves the Markdown reference and
 * the annotation files alike.
 *
 * Names say where a thing lives: `std.fs.read` is the field `read` of the global table
 * `std.fs`; `knl.Session:append` is a method of the class `knl.Session`. A method's class is a
 * `ClassEntry`; when the class is not reachable as a value (a task handle, a kernel store), it
 * names the `local` the annotation file declares it under.
 */

/** An argument, or a field of a class. */
export interface Field {
  /** The name (`...` for varargs). */
  name: string;
  /** A LuaCATS type expression. */
  type: string;
  /** One line or more of Markdown. */
  doc: string;
  /** May be nil or absent. */
  optional?: boolean;
}

/** One return value. */
export interface Return {
  /** A LuaCATS type expression. */
  type: string;
  /** A name for it (shown in annotations). */
  name?: string;
  /** What it is. */
  doc: string;
}

/** A function or method. */
export interface FunctionEntry {
  kind: "function";
  /** `std.fs.read`, `knl.Session:append`, `describe`. */
  name: string;
  /** What it does (Markdown). */
  doc: string;
  /** Its arguments, in order (a method's `self` is implied by `:`). */
  params?: Field[];
  /** Its return values, in order; none when it returns nothing. */
  returns?: Return[];
  /** When and how it raises (beyond the argument checks every function has). */
  errors?: string;
  /** A short Lua example. */
  example?: string;
}

/** A value: a global or a field that is not a function. */
export interface ValueEntry {
  kind: "value";
  /** `_PROMPT`, `std.json.null`. */
  name: string;
  /** A LuaCATS type expression. */
  type: string;
  /** What it is. */
  doc: string;
}

/** A table shape: options, a result, or an object whose methods are `Name:method` entries. */
export interface ClassEntry {
  kind: "class";
  /** The class name (`sh.ExecResult`, `knl.Session`). */
  name: string;
  /** What it is. */
  doc: string;
  /** Its fields. */
  fields: Field[];
  /** A class whose fields it has too. */
  extends?: string;
  /**
   * For a class with methods that is not reachable as a value: the local name the annotation
   * file declares it under (`Task`). Absent: methods are defined on the value `name` itself.
   */
  local?: string;
}

/** A named type. */
export interface AliasEntry {
  kind: "alias";
  name: string;
  /** A LuaCATS type expression. */
  type: string;
  doc: string;
}

/** One entry of the reference. */
export type Entry = FunctionEntry | ValueEntry | ClassEntry | AliasEntry;

/** A section of the reference: one Lua table or module, or a group of globals. */
export interface Section {
  /** A stable id (the Markdown anchor). */
  id: string;
  /** The heading. */
  title: string;
  /** An introduction (Markdown). */
  doc: string;
  /**
   * The annotation file its entries go to (`agent-block`, `agent`, `knl`, `lspec`): sections of
   * one file are rendered together.
   */
  file: string;
  /** For a module reached with `require`: its name; the entries' first name segment is its local. */
  module?: string;
  /** Only in spec files (`agent-block test`): the globals lspec sets. */
  specOnly?: boolean;
  /**
   * Only in the run of a block serving a declared MCP call (`agent-block mcp --expose blocks`):
   * `mcp.client`. Editors and linters know it like any block global.
   */
  servedOnly?: boolean;
  /** The namespace tables it declares (`std.fs`), outermost first. */
  tables?: string[];
  /** Its entries, in the order the reference shows them. */
  entries: Entry[];
}
