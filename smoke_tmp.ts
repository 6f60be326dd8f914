import { runBlock } from "./src/runtime/run.ts";
const t = performance.now();
const r = await runBlock({ script: { path: Deno.args[0] }, projectRoot: "." });
console.log(JSON.stringify(r), performance.now() - t);
