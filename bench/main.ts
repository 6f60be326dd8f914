/**
 * `deno task bench`: runs every `bench/*_bench.ts`, in name order.
 *
 * Owns discovery only. A benchmark is a module whose default export is
 * `async function (): Promise<void>` that measures and prints its own lines; adding one is
 * dropping a file here, nothing to register. `deno task bench NAME...` runs only the files whose
 * name contains one of the given substrings. A benchmark that throws is reported and makes the
 * task exit 1 after the others have run.
 */
import { join } from "node:path";

const dir = new URL(".", import.meta.url);
const filters = Deno.args;
const files = [...Deno.readDirSync(dir)]
  .filter((e) => e.isFile && e.name.endsWith("_bench.ts"))
  .map((e) => e.name)
  .filter((n) => filters.length === 0 || filters.some((f) => n.includes(f)))
  .sort();

if (files.length === 0) {
  console.error(`no benchmark matched${filters.length ? `: ${filters.join(", ")}` : ""}`);
  Deno.exit(1);
}

let failed = 0;
for (const name of files) {
  console.log(`## ${name.replace(/\.ts$/, "")}`);
  try {
    const mod = await import(new URL(name, dir).href) as { default?: () => Promise<void> };
    if (typeof mod.default !== "function") {
      throw new Error(`${join("bench", name)} has no default export function`);
    }
    await mod.default();
  } catch (e) {
    failed++;
    console.error(`${name} failed: ${(e as Error)?.stack ?? e}`);
  }
}
Deno.exit(failed ? 1 : 0);
