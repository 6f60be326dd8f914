/**
 * SEP-1034: a form elicitation accepted with fields left out gets the schema's defaults, as the
 * MCP conformance suite's `elicitation-sep1034-client-defaults` scenario checks (its five fields:
 * string, integer, number, enum, boolean). Against `tests/fixtures/mcp/elicit_defaults_server.ts`
 * (the scenario's form on the v2 SDK) over stdio and Streamable HTTP, in both eras: what the
 * handler gave stands, only what it left out is filled in.
 */
import { join } from "node:path";
import assert from "node:assert/strict";
import { resultOf, runLua } from "../../helpers.ts";
import { DENO, FIXTURES, lq, type Peer, startPeer } from "./peers.ts";

const SERVER = join(FIXTURES, "elicit_defaults_server.ts");
const DEFAULTS = { name: "John Doe", age: 30, score: 95.5, status: "active", verified: true };

async function ask(connect: string): Promise<Record<string, unknown>> {
  const out = await runLua(`
    local answers = { {}, { name = "Ann", verified = false } }
    local n = 0
    mcp.set_elicitation_handler("d", function(server, message, schema_json)
      n = n + 1
      return { action = "accept", content = answers[n] }
    end)
    ${connect}
    local R = { era = mcp.server_info("d").server_info.era }
    for i = 1, 2 do
      local r = mcp.call("d", "test_client_elicitation_defaults", {})
      assert(r.ok, r.error)
      R[i] = std.json.decode(r.content[1].text)
    end
    mcp.disconnect("d")
    return std.json.encode(R)
  `);
  return resultOf(out);
}

function check(r: Record<string, unknown>, era: string): void {
  assert.deepEqual(r.era, era);
  assert.deepEqual(r["1"], { action: "accept", content: DEFAULTS }, "an empty answer gets every default");
  assert.deepEqual(
    r["2"],
    { action: "accept", content: { ...DEFAULTS, name: "Ann", verified: false } },
    "what the handler gave stands",
  );
}

Deno.test("an accepted form elicitation gets the schema's defaults for the fields left out (SEP-1034)", async (t) => {
  for (const [era, expect] of [["legacy", "legacy"], ["auto", "modern"]]) {
    await t.step(`stdio, era ${era}`, async () => {
      check(
        await ask(
          `assert(mcp.connect("d", ${lq(DENO)}, { "run", "-A", "--quiet", ${lq(SERVER)} }, { era = ${
            lq(era)
          } }))`,
        ),
        expect,
      );
    });
  }
  let http: Peer | undefined;
  try {
    http = await startPeer([SERVER, "--http"], (o) => o.match(/ELICIT_MCP_URL=(\S+)/)?.[1]);
    for (const [era, expect] of [["legacy", "legacy"], ["auto", "modern"]]) {
      await t.step(`Streamable HTTP, era ${era}`, async () => {
        check(await ask(`assert(mcp.connect_http("d", ${lq(http!.url)}, { era = ${lq(era)} }))`), expect);
      });
    }
  } finally {
    await http?.stop();
  }
});
