/**
 * The JSON form of an Outcome (pure): every status round-trips, bytes that are not UTF-8 keep
 * their exact value, a non-string error value keeps its structure, and the parser refuses bad
 * input naming the file and the field.
 */
import assert from "node:assert/strict";
import type { Outcome } from "../../src/outcome.ts";
import {
  OutcomeFileError,
  outcomeToJson,
  outcomeToObject,
  parseOutcomeJson,
} from "../../src/runner/outcome_json.ts";
import { LuaFloat } from "../../src/json/values.ts";

const roundTrip = (o: Outcome) => parseOutcomeJson(outcomeToJson(o), "o.json");

Deno.test("outcome JSON: every status round-trips", () => {
  const all: Outcome[] = [
    { status: "returned", value: "the value" },
    { status: "returned", value: undefined },
    { status: "returned", value: "" },
    { status: "deferred", reason: "db down" },
    { status: "exited", code: 3 },
    { status: "exited", code: 0 },
    {
      status: "raised",
      code: "script",
      message: "x.lua:1: boom",
      traceback: "stack traceback:\n\tx.lua:1: in main chunk",
    },
    {
      status: "raised",
      code: "script",
      message: "{...}",
      traceback: "",
      error: { code: 3, list: [1, "two"], f: new LuaFloat(2) },
    },
    { status: "cancelled", reason: "received SIGTERM" },
    { status: "timed_out", seconds: 1.5 },
  ];
  for (const o of all) assert.deepEqual(roundTrip(o), o, JSON.stringify(outcomeToObject(o)));
  assert.equal(outcomeToJson({ status: "exited", code: 3 }), '{"code":3,"status":"exited","version":1}\n');
});

Deno.test("outcome JSON: bytes — UTF-8 as value, anything else exactly as value_base64", () => {
  const utf8 = new TextEncoder().encode("héllo");
  assert.deepEqual(outcomeToObject({ status: "returned", value: utf8 }), {
    version: 1,
    status: "returned",
    value: "héllo",
  });
  const raw = new Uint8Array([0xff, 0x00, 0x80, 0x41]);
  const obj = outcomeToObject({ status: "returned", value: raw });
  assert.equal(obj.value, undefined);
  assert.equal(obj.value_base64, "/wCAQQ==");
  assert.deepEqual(roundTrip({ status: "returned", value: raw }), { status: "returned", value: raw });
});

Deno.test("outcome JSON: a string error value is the message; one without a JSON form says why", () => {
  const s = outcomeToObject({
    status: "raised",
    code: "script",
    message: "boom",
    traceback: "",
    error: "boom",
  });
  assert.equal("error" in s, false);
  const f = outcomeToObject({
    status: "raised",
    code: "script",
    message: "table",
    traceback: "",
    error: { bad: new Uint8Array([0xff]) },
  });
  assert.equal("error" in f, false);
  assert.match(String(f.error_unencodable), /not valid UTF-8 at \.bad/);
  assert.deepEqual(parseOutcomeJson(JSON.stringify(f), "o.json"), {
    status: "raised",
    code: "script",
    message: "table",
    traceback: "",
  });
});

Deno.test("outcome JSON: the parser names the file and the field", () => {
  const bad = (text: string, re: RegExp) => {
    assert.throws(() => parseOutcomeJson(text, "/tmp/x/outcome.json"), (e: unknown) => {
      assert.ok(e instanceof OutcomeFileError, String(e));
      assert.match((e as Error).message, /^\/tmp\/x\/outcome\.json: /);
      assert.match((e as Error).message, re);
      return true;
    });
  };
  bad("{", /not valid JSON/);
  bad("[]", /must be a JSON object, got array/);
  bad('{"status":"returned"}', /field 'version' must be 1, got nothing/);
  bad('{"version":2,"status":"returned"}', /field 'version' must be 1, got 2/);
  bad('{"version":1}', /field 'status' must be one of returned, deferred, .*got nothing/);
  bad('{"version":1,"status":"won"}', /field 'status' .* got "won"/);
  bad('{"version":1,"status":"returned","value":3}', /field 'value' must be a string, got number/);
  bad('{"version":1,"status":"returned","value":"a","value_base64":"YQ=="}', /exclude each other/);
  bad('{"version":1,"status":"returned","value_base64":"@@"}', /field 'value_base64' is not base64/);
  bad('{"version":1,"status":"returned","reason":"x"}', /unknown field 'reason' for status 'returned'/);
  bad('{"version":1,"status":"deferred"}', /field 'reason' must be a string, got undefined/);
  bad(
    '{"version":1,"status":"raised","code":"disk","message":"m","traceback":""}',
    /field 'code' must be one of script, config, llm, mcp, got "disk"/,
  );
  bad('{"version":1,"status":"exited","code":1.5}', /field 'code' must be an integer 0\.\.255, got 1\.5/);
  bad('{"version":1,"status":"exited","code":"3"}', /field 'code' must be an integer 0\.\.255, got string/);
  bad('{"version":1,"status":"raised","code":"script","message":"m"}', /field 'traceback' must be a string/);
  bad('{"version":1,"status":"timed_out","seconds":0}', /field 'seconds' must be a positive number, got 0/);
  bad('{"version":1,"status":"cancelled","reason":null}', /field 'reason' must be a string, got null/);
});
