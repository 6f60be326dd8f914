/**
 * Host values larger than a `--memory-limit` heap can hold (issue 14 §4, last bullet): a real
 * `sh.exec` output and `http.request` body, a synchronous result, a table of many small values,
 * and a callback's arguments. Each must fail the one call with a Lua error `pcall` catches,
 * naming the limit, and the run must go on with a consistent state (src/lua/engine.ts,
 * `#pushProtected`; src/lua/convert.ts, `HeapLimitError`).
 */
import assert from "node:assert/strict";
import { returnedValue, runLua } from "../helpers.ts";
import type { HostModule } from "../../src/host/context.ts";

const LIMIT = { limits: { memoryBytes: 16 << 20 } };
const BIG = 40 << 20;

/** What the block does after the failed call: allocate, call the host, return. */
const GO_ON = `
  local t = {}
  for i = 1, 20000 do t[i] = tostring(i) .. "x" end
  local echo = sh.exec("echo still here").stdout
  return tostring(ok) .. " | " .. tostring(err) .. " | " .. #t .. " " .. echo`;

const NAMES_LIMIT = /does not fit in the Lua heap: the memory limit is 16 MiB \| 20000 still here\n$/;

Deno.test("attack: sh.exec with a 40 MB stdout under a 16 MiB heap", async () => {
  const out = returnedValue(
    await runLua(
      `local ok, err = pcall(sh.exec, "head -c ${BIG} /dev/zero | tr '\\\\0' x")${GO_ON}`,
      LIMIT,
    ),
  );
  assert.match(out, /^false \| test\.lua:1: sh\.exec: its result could not be passed into Lua: /);
  assert.match(out, NAMES_LIMIT);
});

Deno.test("attack: http.request with a 40 MB body under a 16 MiB heap", async () => {
  const body = new Uint8Array(BIG).fill(0x61);
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    () => new Response(body),
  );
  try {
    const url = `http://127.0.0.1:${server.addr.port}/big`;
    const out = returnedValue(
      await runLua(`local ok, err = pcall(http.request, { url = "${url}" })${GO_ON}`, LIMIT),
    );
    assert.match(out, /^false \| test\.lua:1: http\.request: its result could not be passed into Lua: /);
    assert.match(out, NAMES_LIMIT);
  } finally {
    ac.abort();
    await server.finished;
  }
});

const hostValues: HostModule = (engine) => {
  engine.define("t.big_sync", { sync: () => "y".repeat(BIG) });
  engine.define("t.many", {
    async: () => Promise.resolve(Array.from({ length: 2e6 }, (_, i) => ({ i, s: "abc" }))),
  });
  engine.define("t.call_back", {
    functions: "ref",
    async: async (a, cx) => {
      const fn = a.func(1, "fn");
      try {
        await cx.engine.callLua(fn, ["z".repeat(BIG)]);
        return "called";
      } catch (e) {
        return `refused: ${(e as Error).message}`;
      }
    },
  });
};

Deno.test("attack: a synchronous host result and a table of 2 million values under a 16 MiB heap", async () => {
  for (const call of ["t.big_sync()", "t.many()"]) {
    const out = returnedValue(
      await runLua(`local ok, err = pcall(function() return ${call} end)${GO_ON}`, {
        ...LIMIT,
        modules: [hostValues],
      }),
    );
    assert.match(
      out,
      new RegExp(
        `^false \\| test\\.lua:1: ${
          call.slice(0, -2).replace(".", "\\.")
        }: its result could not be passed into Lua: `,
      ),
    );
    assert.match(out, NAMES_LIMIT);
  }
});

Deno.test("attack: a callback's 40 MB argument under a 16 MiB heap: the host call sees the refusal", async () => {
  const out = returnedValue(
    await runLua(`local ok, err = true, t.call_back(function(s) return #s end)${GO_ON}`, {
      ...LIMIT,
      modules: [hostValues],
    }),
  );
  assert.match(out, /^true \| refused: the arguments could not be passed into Lua: .*memory limit is 16 MiB/);
});
