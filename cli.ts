/**
 * The `agent-block` command. Thin by design: everything lives in `src/cli/main.ts`.
 * @module
 */
import { main } from "./src/cli/main.ts";

Deno.exit(await main(Deno.args));
