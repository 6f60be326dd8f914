/**
 * Confinement of the file tools: which real file a model-given path names, and whether the tools
 * may touch it.
 *
 * Owns the rule: a path resolves against the project root (absolute paths as they are) and must
 * stay inside one of the tool set's roots, both lexically (`..`) and after resolving symlinks —
 * the deepest existing ancestor is `realpath`ed and the rest kept as written; a dangling symlink
 * on the way is refused, since writing through it would land wherever it points.
 *
 * With `noSymlinks` (a tool set's `no_symlinks`) a path whose resolution differs from its lexical
 * form (a symbolic link anywhere on the way) is refused.
 *
 * Invariant: the answer is an absolute, symlink-free path inside a root, or a `ToolError` naming
 * the path as the model gave it. The answer is a check at one moment: the operation itself goes
 * through `confined_io.ts`, which opens that path without following a symlink anywhere, so a
 * change on disk after this check cannot redirect it. Nothing here depends on the process working directory: the
 * project root and the roots are absolute.
 */
import { basename, dirname, join, resolve, sep } from "node:path";
import { luaTypeName } from "../../json/values.ts";
import { osError } from "../os_error.ts";
import { ToolError } from "./tool_error.ts";

/** True when `p` is `root` or below it (both absolute and normalized). */
export function within(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * The real absolute path `path` names, when it is inside `roots`.
 * @param roots absolute, canonical roots of the tool set (the project root first)
 * @param projectRoot what a relative path is taken from (absolute)
 * @param tool the tool's name, for messages
 * @param path the model's input field, unchecked
 * @param noSymlinks refuse a path that goes through any symbolic link (the answer is then the
 *   lexical path itself, which the no-follow walk of `confined_io.ts` opens or refuses)
 */
export function confine(
  roots: readonly string[],
  projectRoot: string,
  tool: string,
  path: unknown,
  noSymlinks = false,
): string {
  if (typeof path !== "string" || path === "") {
    throw new ToolError(`${tool}: input field 'path' must be a non-empty string, got ${luaTypeName(path)}`);
  }
  const abs = resolve(projectRoot, path);
  const outside = () =>
    new ToolError(`${tool}: path '${path}' is outside the allowed roots (${roots.join(", ")})`);
  if (!roots.some((r) => within(r, abs))) throw outside();
  // Resolve symlinks on the deepest existing ancestor, keep the rest as written.
  let existing = abs;
  const rest: string[] = [];
  while (true) {
    let isLink = false;
    try {
      isLink = Deno.lstatSync(existing).isSymlink;
    } catch {
      // does not exist: go up
      rest.unshift(basename(existing));
      existing = dirname(existing);
      continue;
    }
    try {
      existing = Deno.realPathSync(existing);
      break;
    } catch (e) {
      if (isLink) throw new ToolError(`${tool}: path '${path}' goes through a dangling symbolic link`);
      throw new ToolError(`${tool}: ${path}: ${osError(e).message}`);
    }
  }
  const real = rest.length ? join(existing, ...rest) : existing;
  if (!roots.some((r) => within(r, real))) throw outside();
  if (noSymlinks && real !== abs) {
    throw new ToolError(
      `${tool}: path '${path}' goes through a symbolic link, and this tool set refuses them (no_symlinks)`,
    );
  }
  return real;
}
