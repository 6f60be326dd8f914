/**
 * A2A round trips: sequential `a2a.send` of one text message to a trivial agent built with the
 * A2A SDK's own server (Express, `tests/a2a/a2a_helpers.ts`: it answers with one artifact and
 * `completed`), against the SDK's own client doing the same `sendMessageStream` in a TypeScript
 * loop, in one run, over JSON-RPC and HTTP+JSON. Both sides talk to the same agent in this
 * process, after warm-up, in alternating batches inside one Lua run (the SDK batches run from a
 * host function), so a change of load hits both alike.
 * Prints round trips per second for each and the ratio Lua / SDK (target at least 0.5×).
 *
 * What `a2a.send` does beyond the SDK loop: the Lua ↔ host round trip, the message built from
 * Lua, the wire-form conversions of every streamed event (`StreamResponse.toJSON`) and of the
 * final task into a Lua table. The card is fetched once per run and agent (the client cache), as
 * the SDK loop's client is made once.
 *
 * Run: `deno task bench a2a`.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { Role } from "@a2a-js/sdk";
import { runBlock } from "../src/runtime/run.ts";
import type { HostModule } from "../src/host/context.ts";
import { startSdkAgent } from "../tests/a2a/a2a_helpers.ts";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const N = 1000;
const WARMUP = 50;
const ROUNDS = 10;

interface Round {
  lua: number;
  sdk: number;
}

async function interleaved(url: string, binding: "JSONRPC" | "HTTP+JSON"): Promise<Round[]> {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
    preferredTransports: [binding],
  }));
  const sdk = await factory.createFromUrl(url);
  const send = async () => {
    for await (
      const _ of sdk.sendMessageStream({
        tenant: "",
        message: {
          messageId: crypto.randomUUID(),
          contextId: "",
          taskId: "",
          role: Role.ROLE_USER,
          parts: [{
            content: { $case: "text", value: "ping" },
            metadata: undefined,
            filename: "",
            mediaType: "",
          }],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: undefined,
        metadata: undefined,
      })
    ) { /* drain */ }
  };
  const per = N / ROUNDS;
  const host: HostModule = (engine) => {
    engine.define("bench.now", { sync: () => performance.now() });
    engine.define("bench.sdk_batch", {
      async: async (a) => {
        const n = a.integer(1, "n");
        const t0 = performance.now();
        for (let i = 0; i < n; i++) await send();
        return performance.now() - t0;
      },
    });
  };
  const outcome = await runBlock({
    script: {
      source: `
        local url, b = ${JSON.stringify(url)}, ${JSON.stringify(binding)}
        for i = 1, ${WARMUP} do assert(a2a.send(url, "ping", { binding = b }).ok) end
        bench.sdk_batch(${WARMUP})
        local rounds = {}
        for round = 1, ${ROUNDS} do
          local t0 = bench.now()
          for i = 1, ${per} do
            local r = a2a.send(url, "ping", { binding = b })
            if r.state ~= "completed" then error(r.error or r.state) end
          end
          local lua_ms = bench.now() - t0
          rounds[round] = { lua = lua_ms, sdk = bench.sdk_batch(${per}) }
        end
        return std.json.encode(rounds)
      `,
      name: "a2a_bench.lua",
    },
    projectRoot: ROOT,
    modules: [host],
    env: {},
    stdout: () => {},
  });
  if (outcome.status !== "returned") throw new Error(`Lua bench failed: ${JSON.stringify(outcome)}`);
  return JSON.parse(String(outcome.value));
}

/** Runs the benchmark and prints the ratios. */
export default async function a2aBench(): Promise<void> {
  console.log(`A2A: ${N} sequential sends (after ${WARMUP} warm-up), in ${ROUNDS} alternating batches`);
  const agent = await startSdkAgent();
  try {
    for (const binding of ["JSONRPC", "HTTP+JSON"] as const) {
      const rounds = await interleaved(agent.url, binding);
      const lua = rounds.reduce((a, r) => a + r.lua, 0);
      const sdk = rounds.reduce((a, r) => a + r.sdk, 0);
      const luaRps = N / (lua / 1000), sdkRps = N / (sdk / 1000);
      const ratio = luaRps / sdkRps;
      console.log(
        `${binding.padEnd(10)} a2a.send ${luaRps.toFixed(0)} round trips/s   SDK client ${
          sdkRps.toFixed(0)
        }/s   ` +
          `ratio ${ratio.toFixed(2)}x ${ratio >= 0.5 ? "ok, target >= 0.5x" : "BELOW the 0.5x target"}`,
      );
    }
  } finally {
    await agent.close();
  }
}

if (import.meta.main) await a2aBench();
