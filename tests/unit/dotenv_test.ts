/** `.env` parsing and layering (src/config/dotenv.ts), pure: no file, no environment. */
import assert from "node:assert/strict";
import { layerDotenv, parseDotenv } from "../../src/config/dotenv.ts";

const vars = (text: string) => Object.fromEntries(parseDotenv(text).vars);

Deno.test("dotenv: NAME=value, export prefix, spaces around '=', blank lines and comments", () => {
  assert.deepEqual(
    vars("A=1\n\n# a comment\n   # indented comment\nexport B=two\n  C  =  three  \nD=\n"),
    { A: "1", B: "two", C: "three", D: "" },
  );
});

Deno.test("dotenv: unquoted values are trimmed and lose a ' #' comment, but keep a '#' inside", () => {
  assert.deepEqual(vars("A=value # note\nB=a#b\nC=  spaced out  \nD=x\t# tab comment"), {
    A: "value",
    B: "a#b",
    C: "spaced out",
    D: "x",
  });
});

Deno.test("dotenv: single quotes are literal, up to the closing quote", () => {
  assert.deepEqual(vars(`A='a \\n b # not a comment'\nB='it'trailing\nC=''`), {
    A: "a \\n b # not a comment",
    B: "it",
    C: "",
  });
});

Deno.test('dotenv: double quotes take \\n \\t \\r \\" \\\\ escapes; another escaped char is itself', () => {
  assert.deepEqual(
    vars(
      `A="line1\\nline2"\nB="tab\\there"\nC="q\\"uote"\nD="back\\\\slash"\nE="cr\\r"\nF="\\x"\nG="# kept"`,
    ),
    {
      A: "line1\nline2",
      B: "tab\there",
      C: 'q"uote',
      D: "back\\slash",
      E: "cr\r",
      F: "x",
      G: "# kept",
    },
  );
});

Deno.test("dotenv: CRLF line ends; a later line wins in the record", () => {
  const p = parseDotenv("A=1\r\nB=2\r\nA=3\r\n");
  assert.deepEqual(p.vars, [["A", "1"], ["B", "2"], ["A", "3"]]);
  assert.deepEqual(Object.fromEntries(p.vars), { A: "3", B: "2" });
  assert.deepEqual(p.warnings, []);
});

Deno.test("dotenv: malformed lines are skipped with a warning naming the file and line", () => {
  const p = parseDotenv(
    "GOOD=1\nnot a line\n1BAD=x\nA='open\nB=\"open\nC-D=1\nLAST=ok",
    "proj/.env",
  );
  assert.deepEqual(Object.fromEntries(p.vars), { GOOD: "1", LAST: "ok" });
  assert.deepEqual(p.warnings, [
    "proj/.env:2: malformed line (expected NAME=value), skipped",
    "proj/.env:3: malformed line (expected NAME=value), skipped",
    "proj/.env:4: unterminated single quote in A, skipped",
    "proj/.env:5: unterminated double quote in B, skipped",
    "proj/.env:6: malformed line (expected NAME=value), skipped",
  ]);
});

Deno.test("dotenv: the default label is .env", () => {
  assert.deepEqual(parseDotenv("oops").warnings, [".env:1: malformed line (expected NAME=value), skipped"]);
});

Deno.test("layerDotenv: a variable already set is never overridden, even when empty", () => {
  const base = Object.freeze({ A: "process", EMPTY: "" });
  const out = layerDotenv(base, { A: "dotenv", EMPTY: "dotenv", NEW: "dotenv" });
  assert.deepEqual(out, { A: "process", EMPTY: "", NEW: "dotenv" });
  assert.deepEqual(base, { A: "process", EMPTY: "" }, "the base is not changed");
  assert.notEqual(out, base);
});

Deno.test("layerDotenv: an empty .env gives a copy of the base", () => {
  assert.deepEqual(layerDotenv({ A: "1" }, {}), { A: "1" });
});
