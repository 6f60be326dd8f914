/**
 * How the reference's names read: `std.fs.read` is the field `read` of the table `std.fs`;
 * `knl.Session:append` the method `append` of the class `knl.Session`.
 *
 * Owns that one rule for the renderers (`render_*.ts`) and the completeness test, so none of
 * them parses a name its own way.
 */
import type { ClassEntry, Entry, FunctionEntry, Section } from "./lua_api/types.ts";

/** A method's class and method name, or undefined for a plain function or value. */
export function methodOf(name: string): { cls: string; method: string } | undefined {
  const i = name.indexOf(":");
  return i < 0 ? undefined : { cls: name.slice(0, i), method: name.slice(i + 1) };
}

/** Every entry of `sections`, with the section it is in. */
export function allEntries(sections: readonly Section[]): { section: Section; entry: Entry }[] {
  return sections.flatMap((section) => section.entries.map((entry) => ({ section, entry })));
}

/** The functions whose class is `cls`. */
export function methodsOf(sections: readonly Section[], cls: ClassEntry): FunctionEntry[] {
  return allEntries(sections).flatMap(({ entry }) =>
    entry.kind === "function" && methodOf(entry.name)?.cls === cls.name ? [entry] : []
  );
}

/** The signature a reader sees: `std.fs.remove(path, opts?)`. */
export function signature(fn: FunctionEntry): string {
  const params = (fn.params ?? []).map((p) => p.name + (p.optional ? "?" : ""));
  return `${fn.name}(${params.join(", ")})`;
}

/** An anchor for a name (case kept: `std.Task` and `std.task` differ): `std.fs.read` → `std-fs-read`. */
export function anchor(name: string): string {
  return name.replace(/[^A-Za-z0-9_]+/g, "-").replace(/^-|-$/g, "");
}
