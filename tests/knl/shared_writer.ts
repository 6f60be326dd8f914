/**
 * A writer process for the concurrency test: appends `count` events to the stream `shared` of
 * the store at `path`, each carrying its writer id and its own counter. Not a test by itself.
 * Usage: deno run -A tests/knl/shared_writer.ts <path> <writer> <count>
 */
import { openStore } from "../../src/knl/store.ts";

const [path, writer, count] = Deno.args;
const store = openStore(path);
for (let i = 1; i <= Number(count); i++) {
  store.append({ stream: "shared", kind: "tick", data: JSON.stringify({ w: writer, i }), meta: "{}" });
}
store.close();
