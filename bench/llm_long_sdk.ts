/**
 * The Vercel AI SDK's side of the long-run benchmark (bench/llm_long_bench.ts), run as its own
 * process so its CPU and peak memory are measured like an agent-block run's.
 *
 * `deno run -A bench/llm_long_sdk.ts URL TURNS TOOL`: one `generateText` against the mock at URL
 * with one tool, `add` (answers `{ sum }` in process) or `sh` (runs `sh -c true`, as a shell tool
 * does), and a step limit of TURNS + 2; exits 1 unless the run made TURNS + 1 steps. Not a
 * benchmark of its own (the name does not end in `_bench.ts`).
 */
// deno-lint-ignore no-import-prefix -- bench-only package, kept out of deno.json's import map (tools/gen_run_lock.ts)
import { generateText, jsonSchema, stepCountIs, tool } from "npm:ai@7.0.173";
// deno-lint-ignore no-import-prefix -- bench-only package, kept out of deno.json's import map (tools/gen_run_lock.ts)
import { createOpenAI } from "npm:@ai-sdk/openai@4.0.118";

const [url, turnsText, which] = Deno.args;
const turns = Number(turnsText);

const SCHEMA = {
  type: "object",
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
} as const;

const add = tool({
  description: "Adds two numbers",
  inputSchema: jsonSchema<{ a: number; b: number }>(SCHEMA),
  execute: ({ a, b }) => Promise.resolve({ sum: a + b }),
});

const sh = tool({
  description: "Runs a shell command",
  inputSchema: jsonSchema<{ a: number; b: number }>(SCHEMA),
  execute: async () => {
    const out = await new Deno.Command("sh", { args: ["-c", "true"], stdout: "piped", stderr: "piped" })
      .output();
    return { code: out.code };
  },
});

const openai = createOpenAI({ baseURL: url, apiKey: "k" });
const r = await generateText({
  model: openai.chat("gpt-4o-mini"),
  prompt: "add things",
  maxRetries: 0,
  tools: which === "sh" ? { sh } : { add },
  stopWhen: stepCountIs(turns + 2),
});
if (r.steps.length !== turns + 1) {
  console.error(`AI SDK made ${r.steps.length} steps, expected ${turns + 1}`);
  Deno.exit(1);
}
