/**
 * The chunk name of an embedded library file: `@embedded/<path relative to embedded/>`. One rule
 * for the two places that must agree on it — `require`, which loads the file under that name
 * (src/modules/embedded.ts), and the bytecode generator, which compiles it under that name
 * (tools/gen_precompiled.ts; a generated entry is looked up by it). Its own module so that the
 * generator need not import the table it generates.
 */

/** The chunk name an embedded file is loaded under. */
export function embeddedChunkName(path: string): string {
  return `@embedded/${path}`;
}
