// The serde_json-compatible printer and parser: the cases where serde and JSON.stringify differ.
import assert from "node:assert/strict";
import {
  compareCodePoints,
  formatFloat,
  MAX_NESTING,
  parseSerde,
  reprintSerde,
  serdeStringify,
  SerdeSyntaxError,
} from "../../../src/clients/mesh/serde_json.ts";
import { LuaFloat } from "../../../src/json/values.ts";
import { MeshError } from "../../../src/clients/mesh/transport.ts";

Deno.test("serde_json: floats in zmij's layout (fixed for exponents -5..15, else e±N)", () => {
  const cases: [number, string][] = [
    [1, "1.0"],
    [-0, "-0.0"],
    [0, "0.0"],
    [0.1, "0.1"],
    [1.5, "1.5"],
    [123.456, "123.456"],
    [1e-5, "0.00001"],
    [1.25e-5, "0.0000125"],
    [1e-6, "1e-6"], // JS: 0.000001
    [1.5e-6, "1.5e-6"],
    [1e-7, "1e-7"],
    [1e15, "1000000000000000.0"],
    [1e16, "1e+16"],
    [2 ** 64, "1.8446744073709552e+19"], // JS: 18446744073709552000
    [-(2 ** 70), "-1.1805916207174113e+21"],
    [1e21, "1e+21"],
    [6.62607015e-34, "6.62607015e-34"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [5.444310685350916e14, "544431068535091.6"],
    [3.439070283483335e35, "3.439070283483335e+35"],
    [-4.932096661796888e-226, "-4.932096661796888e-226"],
    [123456789012345.6, "123456789012345.6"],
  ];
  for (const [x, want] of cases) assert.equal(formatFloat(x), want, String(x));
});

Deno.test("serde_json: converter values (integral LuaFloat keeps .0, bigint exact, sorted keys)", () => {
  assert.equal(serdeStringify(new LuaFloat(2)), "2.0");
  assert.equal(serdeStringify(2), "2");
  assert.equal(serdeStringify(2.5), "2.5");
  assert.equal(serdeStringify(2n ** 63n + 5n), "9223372036854775813");
  assert.equal(serdeStringify(-(2n ** 63n)), "-9223372036854775808");
  assert.equal(serdeStringify(2 ** 60), "1.152921504606847e+18", "a non-safe JS number is a float");
  assert.equal(
    serdeStringify({ b: 1, a: [true, null, undefined], "é": "\u00e9\n\u0001", c: {} }),
    '{"a":[true,null,null],"b":1,"c":{},"é":"é\\n\\u0001"}',
  );
  // Code point order, not UTF-16 order: U+FF61 sorts before U+1F600 (whose first unit is 0xD83D).
  assert.equal(serdeStringify({ "😀": 1, "｡": 2 }), '{"｡":2,"😀":1}');
  assert.equal(JSON.stringify(Object.keys({ "😀": 1, "｡": 2 }).sort()), '["😀","｡"]', "JS order differs");
  assert.ok(
    compareCodePoints("a", "ab") < 0 && compareCodePoints("b", "a") > 0 && compareCodePoints("x", "x") === 0,
  );
});

Deno.test("serde_json: values with no JSON form are refused with kind payload and the path", () => {
  const refused: [unknown, RegExp][] = [
    [NaN, /cannot send NaN/],
    [{ a: [1, Infinity] }, /cannot send Infinity .* at \.a\[2\]/],
    [new LuaFloat(-Infinity), /-Infinity/],
    [2n ** 64n, /outside the 64-bit range/],
    [{ s: new Uint8Array([0xff]) }, /not valid UTF-8 at \.s/],
    ["\ud800x", /lone UTF-16 surrogate/],
    [() => 1, /cannot send a function/],
    [new Date(0), /cannot send a Date/],
  ];
  for (const [v, re] of refused) {
    assert.throws(
      () => serdeStringify(v),
      (e) => e instanceof MeshError && e.kind === "payload" && re.test(e.message),
    );
  }
});

function nest(n: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = [v];
  return v;
}

Deno.test("serde_json: nesting stops where serde_json's recursion limit does (127 containers)", () => {
  const ok = serdeStringify(nest(MAX_NESTING));
  assert.equal(reprintSerde(ok), ok);
  assert.throws(
    () => serdeStringify(nest(MAX_NESTING + 1)),
    (e) => e instanceof MeshError && /nesting deeper/.test(e.message),
  );
  assert.throws(() => parseSerde("[".repeat(128) + "]".repeat(128)), /recursion limit exceeded/);
  assert.throws(() => serdeStringify({ a: nest(MAX_NESTING) }), /nesting deeper/);
  assert.equal(serdeStringify({ a: nest(MAX_NESTING - 1) }, MAX_NESTING).length > 0, true);
});

Deno.test("serde_json: re-printing keeps int vs float and normalises what serde normalises", () => {
  const cases: [string, string][] = [
    ['{"b":1,"a":2}', '{"a":2,"b":1}'],
    ["1.0", "1.0"],
    ["1", "1"],
    ["1e2", "100.0"],
    ["-0", "-0.0"],
    ["0.000001", "1e-6"],
    ["18446744073709551615", "18446744073709551615"],
    ["18446744073709551616", "1.8446744073709552e+19"],
    ["-9223372036854775809", "-9.223372036854776e+18"],
    ['"\\u00e9\\/\\t"', '"é/\\t"'],
    ['"\\ud83d\\ude00"', '"😀"'],
    ['{"a":1,"a":2}', '{"a":2}'],
    [' [ 1 , {"x" : null} ]\n', '[1,{"x":null}]'],
  ];
  for (const [text, want] of cases) assert.equal(reprintSerde(text), want, text);
  assert.deepEqual((parseSerde('{"a":1,"a":2}') as { duplicates: string[] }).duplicates, ["a"]);
  const v = { n: [1, new LuaFloat(3), 0.5, -7n], s: "x\u0000y", o: { z: false, "😀": null } };
  assert.equal(reprintSerde(serdeStringify(v)), serdeStringify(v));
});

Deno.test("serde_json: texts serde_json refuses are refused", () => {
  for (
    const bad of [
      '"\\ud800"',
      '"\\udc00x"',
      "1e400",
      "[1,]",
      "01",
      '"a\nb"',
      "{} x",
      "",
      "nul",
      '{"a"}',
      "'x'",
    ]
  ) {
    assert.throws(() => parseSerde(bad), SerdeSyntaxError, bad);
  }
});
